"""CTest plots.figures_reproducible: drawing the figures from the committed data with the pinned matplotlib
gives the committed figures, byte for byte, so that scripts/run_all.sh leaves the tree unchanged.

    python check_figures_reproducible.py REPO_ROOT

Draws plots/data/h200 (what run_all.sh draws without a GPU) into a temporary directory and compares every
PNG and SVG with docs/images. Every figure of docs/images that plot.py draws (all but layout_svg's
layout_*.svg, mma_*.svg and tools/diagrams' hopper_*.svg and ch08_*.svg, checked elsewhere) must be drawn again, and none may be extra.
Under any matplotlib the drawing must also hold every figure plots.plot_py expects from that data
(check_plot.check_committed_drawing: the one drawing of the committed data serves both tests). The byte
comparison is skipped (exit 77) when this Python's matplotlib is not the version plots/requirements.txt
pins: another version draws the same figures a few pixels apart, which says nothing about the figures. On
a difference it says whether the PNG's pixels still match (a different PNG encoder) or not (a different
drawing).
"""

import pathlib
import re
import subprocess
import sys
import tempfile

SKIP = 77  # CTest's SKIP_RETURN_CODE for this test (tests/plots/CMakeLists.txt)
LAYOUT_SVG_PREFIXES = ("layout_", "mma_", "hopper_", "ch08_")  # drawn by tools/layout_svg and tools/diagrams
#                           (checked by tests/cli, plots.diagrams_* and plots.ch08_diagrams_*), not plot.py


def pinned_version(repo: pathlib.Path) -> str:
    for line in (repo / "plots" / "requirements.txt").read_text().splitlines():
        m = re.match(r"\s*matplotlib\s*==\s*([0-9][0-9A-Za-z.]*)", line)
        if m:
            return m.group(1)
    print("FAIL: plots/requirements.txt does not pin matplotlib (matplotlib==X.Y.Z)")
    sys.exit(1)


def same_pixels(a: pathlib.Path, b: pathlib.Path) -> bool:
    import matplotlib.image as mpimg
    import numpy as np
    x, y = mpimg.imread(a), mpimg.imread(b)
    return x.shape == y.shape and bool(np.array_equal(x, y))


def main() -> int:
    repo = pathlib.Path(sys.argv[1])
    want = pinned_version(repo)
    try:
        import matplotlib
    except ImportError as e:
        print(f"SKIP: matplotlib is not importable by {sys.executable} ({e}; plots.plot_py is skipped too); "
              f"the committed figures are drawn with matplotlib {want}")
        return SKIP
    images = repo / "docs" / "images"
    committed = {f.name for f in images.iterdir()
                 if f.suffix in (".png", ".svg") and not f.name.startswith(LAYOUT_SVG_PREFIXES)}
    with tempfile.TemporaryDirectory(prefix="mm_figures_") as tmp:
        out = pathlib.Path(tmp)
        r = subprocess.run([sys.executable, str(repo / "plots" / "plot.py"), "--data",
                            str(repo / "plots" / "data" / "h200"), "--out", str(out)],
                           capture_output=True, text=True)
        print(r.stdout + r.stderr)
        if r.returncode != 0:
            print(f"FAIL: plot.py exited {r.returncode} on the committed data")
            return 1
        sys.path.insert(0, str(pathlib.Path(__file__).parent))
        import check_plot
        check_plot.check_committed_drawing(repo, out, r.stderr)  # exits 1 on a missing figure
        if matplotlib.__version__ != want:
            print(f"SKIP: not the pinned matplotlib: {sys.executable} has matplotlib {matplotlib.__version__}, "
                  f"the committed figures are drawn with {want} (plots/requirements.txt; scripts/test.sh "
                  f"installs it into .venv); the drawing itself has every figure")
            return SKIP
        drawn = {f.name for f in out.iterdir()}
        problems = []
        for name in sorted(committed - drawn):
            problems.append(f"docs/images/{name} is no longer drawn from plots/data/h200")
        for name in sorted(drawn - committed):
            problems.append(f"{name} is drawn but not committed in docs/images")
        for name in sorted(drawn & committed):
            if (out / name).read_bytes() == (images / name).read_bytes():
                print(f"same: {name}")
                continue
            why = "differs"
            if name.endswith(".png"):
                why += " (same pixels: only the PNG encoding differs)" if same_pixels(out / name, images / name) \
                    else " (different pixels)"
            problems.append(f"docs/images/{name} {why}")
    if problems:
        print("FAIL: drawing the committed data with matplotlib " + want + " does not give the committed figures:\n  "
              + "\n  ".join(problems)
              + "\n(redraw: .venv/bin/python plots/plot.py --data plots/data/h200 --out docs/images, and commit them)")
        return 1
    print(f"ok: {len(drawn)} figures drawn again with matplotlib {want} are the committed ones, byte for byte")
    return 0


if __name__ == "__main__":
    sys.exit(main())
