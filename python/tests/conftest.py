"""pytest's setup for python/tests: the package imports from this checkout (python/), no install needed."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
