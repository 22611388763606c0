"""Runs one pytest file as one CTest test (tests/python/CMakeLists.txt registers one per file).

    python python/tests/run_pytest.py python/tests/test_gpu.py [--junitxml FILE]

Exit status, as CTest reads it: 0 when the file's tests passed (some may have been skipped: their reasons
are listed), 1 when one failed or pytest could not run, 77 (SKIP_RETURN_CODE) when every test of the file
was skipped or pytest is not importable, with a "SKIP: <reason>" line that scripts/test_summary.py groups
(a GPU test file without a GPU: "SKIP: needs a CUDA GPU: ...").
"""

import collections
import sys


def main() -> int:
    try:
        import pytest
    except ImportError:
        print(f"SKIP: pytest is not importable by {sys.executable} (scripts/test.sh installs "
              "python/requirements-test.txt into .venv; offline pip cannot)")
        return 77

    class Outcomes:
        def __init__(self):
            self.passed, self.failed = 0, 0
            self.skipped = collections.Counter()

        def pytest_runtest_logreport(self, report):
            if report.failed:
                self.failed += 1
            elif report.skipped:
                reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
                self.skipped[reason.removeprefix("Skipped: ")] += 1
            elif report.when == "call":
                self.passed += 1

    outcomes = Outcomes()
    rc = pytest.main(["-q", "-rs", "-p", "no:cacheprovider", *sys.argv[1:]], plugins=[outcomes])
    if rc not in (0, 5) or outcomes.failed:
        return 1
    if outcomes.passed == 0:
        reason = outcomes.skipped.most_common(1)[0][0] if outcomes.skipped else "no test collected"
        print(f"SKIP: {reason}")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
