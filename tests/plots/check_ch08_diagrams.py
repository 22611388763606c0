"""CTests of chapter 08's pictures (tools/diagrams/ch08_diagrams.py, standard library only):

    python check_ch08_diagrams.py REPO_ROOT                   plots.ch08_diagrams_reproducible
    python check_ch08_diagrams.py REPO_ROOT CH08_LAYOUT_DUMP  plots.ch08_diagrams_layout

plots.ch08_diagrams_reproducible draws every picture into a temporary directory and compares it with
docs/images byte for byte; every committed docs/images/ch08_*.svg must be drawn again, and none may be
extra. plots.ch08_diagrams_layout runs tools/diagrams' ch08_layout_dump (the layout library's ldmatrix.x4
of an A operand, emulated on the host, and the bank groups of the `swizzled` step's A stage) and checks
that the pictures' formulas give the same facts.
"""

import pathlib
import subprocess
import sys
import tempfile

PREFIX = "ch08_"
SCRIPT = ("tools", "diagrams", "ch08_diagrams.py")


def reproducible(repo: pathlib.Path) -> int:
    images = repo / "docs" / "images"
    committed = {f.name for f in images.glob(PREFIX + "*.svg")}
    with tempfile.TemporaryDirectory(prefix="mm_ch08_diagrams_") as tmp:
        out = pathlib.Path(tmp)
        r = subprocess.run([sys.executable, str(repo.joinpath(*SCRIPT)), "--out", str(out),
                            "--data", str(repo / "plots" / "data" / "h200")], capture_output=True, text=True)
        print(r.stdout + r.stderr)
        if r.returncode != 0:
            print(f"FAIL: ch08_diagrams.py exited {r.returncode}")
            return 1
        drawn = {f.name for f in out.iterdir()}
        problems = [f"docs/images/{n} is no longer drawn" for n in sorted(committed - drawn)]
        problems += [f"{n} is drawn but not committed in docs/images" for n in sorted(drawn - committed)]
        for name in sorted(drawn & committed):
            if (out / name).read_bytes() != (images / name).read_bytes():
                problems.append(f"docs/images/{name} differs")
            else:
                print(f"same: {name}")
    if problems:
        print("FAIL: the committed chapter 08 pictures are not what the script draws:\n  " + "\n  ".join(problems)
              + "\n(redraw: python3 tools/diagrams/ch08_diagrams.py, and commit docs/images)")
        return 1
    print(f"ok: {len(drawn)} pictures drawn again are the committed ones, byte for byte")
    return 0


def layout(repo: pathlib.Path, dump_binary: str) -> int:
    r = subprocess.run([dump_binary], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: {dump_binary} exited {r.returncode}\n{r.stderr}")
        return 1
    with tempfile.TemporaryDirectory(prefix="mm_ch08_dump_") as tmp:
        dump = pathlib.Path(tmp) / "dump.txt"
        dump.write_text(r.stdout)
        c = subprocess.run([sys.executable, str(repo.joinpath(*SCRIPT)), "--check-layout", str(dump)],
                           capture_output=True, text=True)
        print(c.stdout + c.stderr)
        return c.returncode


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print("FAIL: usage: check_ch08_diagrams.py REPO_ROOT [CH08_LAYOUT_DUMP]")
        return 1
    repo = pathlib.Path(sys.argv[1])
    return reproducible(repo) if len(sys.argv) == 2 else layout(repo, sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
