"""CTests of the Hopper pictures (tools/diagrams/hopper_diagrams.py, standard library only):

    python check_diagrams.py REPO_ROOT                 plots.diagrams_reproducible
    python check_diagrams.py REPO_ROOT GMMA_LAYOUT_DUMP  plots.diagrams_layout

plots.diagrams_reproducible draws every picture into a temporary directory and compares it with
docs/images byte for byte; every committed docs/images/hopper_*.svg must be drawn again, and none may
be extra (but for the pictures of chapters 10-12's composed kernels, which hopper_kernel_diagrams.py
draws and check_hopper_kernel_diagrams.py checks). plots.diagrams_layout runs tools/diagrams'
gmma_layout_dump (the layout library's byte offsets of chapter 09's shared-memory stages and the
descriptors of their k16 slices) and checks that the descriptor pictures' formulas give the same numbers.
"""

import pathlib
import subprocess
import sys
import tempfile

PREFIX = "hopper_"


def other_scripts_pictures(repo: pathlib.Path) -> set[str]:
    """The hopper_*.svg that tools/diagrams/hopper_kernel_diagrams.py draws (its own test checks them)."""
    sys.path.insert(0, str(repo / "tools" / "diagrams"))
    import hopper_kernel_diagrams as hk  # noqa: E402  (standard library only)
    return {f"{n}.svg" for n in hk.PICTURES}


def reproducible(repo: pathlib.Path) -> int:
    images = repo / "docs" / "images"
    committed = {f.name for f in images.glob(PREFIX + "*.svg")} - other_scripts_pictures(repo)
    with tempfile.TemporaryDirectory(prefix="mm_diagrams_") as tmp:
        out = pathlib.Path(tmp)
        r = subprocess.run([sys.executable, str(repo / "tools" / "diagrams" / "hopper_diagrams.py"), "--out", str(out),
                            "--data", str(repo / "plots" / "data" / "h200")], capture_output=True, text=True)
        print(r.stdout + r.stderr)
        if r.returncode != 0:
            print(f"FAIL: hopper_diagrams.py exited {r.returncode}")
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
        print("FAIL: the committed Hopper pictures are not what the script draws:\n  " + "\n  ".join(problems)
              + "\n(redraw: python3 tools/diagrams/hopper_diagrams.py, and commit docs/images)")
        return 1
    print(f"ok: {len(drawn)} pictures drawn again are the committed ones, byte for byte")
    return 0


def layout(repo: pathlib.Path, dump_binary: str) -> int:
    r = subprocess.run([dump_binary], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: {dump_binary} exited {r.returncode}\n{r.stderr}")
        return 1
    with tempfile.TemporaryDirectory(prefix="mm_gmma_dump_") as tmp:
        dump = pathlib.Path(tmp) / "dump.txt"
        dump.write_text(r.stdout)
        c = subprocess.run([sys.executable, str(repo / "tools" / "diagrams" / "hopper_diagrams.py"),
                            "--check-layout", str(dump)], capture_output=True, text=True)
        print(c.stdout + c.stderr)
        return c.returncode


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print("FAIL: usage: check_diagrams.py REPO_ROOT [GMMA_LAYOUT_DUMP]")
        return 1
    repo = pathlib.Path(sys.argv[1])
    return reproducible(repo) if len(sys.argv) == 2 else layout(repo, sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
