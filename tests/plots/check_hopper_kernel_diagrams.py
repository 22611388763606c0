"""CTests of the pictures of chapters 10-12's composed kernels (tools/diagrams/hopper_kernel_diagrams.py,
standard library only):

    python check_hopper_kernel_diagrams.py REPO_ROOT                     plots.hopper_kernel_diagrams_reproducible
    python check_hopper_kernel_diagrams.py REPO_ROOT HOPPER_KERNEL_DUMP  plots.hopper_kernel_diagrams_facts

plots.hopper_kernel_diagrams_reproducible draws every picture of the script, from the committed
tools/diagrams/hopper_kernel_facts.txt, into a temporary directory and compares it with docs/images byte
for byte. plots.hopper_kernel_diagrams_facts runs tools/diagrams' hopper_kernel_dump (the library's
schedulers walked for every block, the cluster pipeline's counts and TMA boxes, the wgmma accumulator
layout, the stmatrix epilogue and swap-AB's store, computed on the CPU) and checks that it prints the
committed facts: a change of the code that changes a picture fails here until the facts and the pictures
are regenerated. It skips (exit 77) when the dump program is not there (not built yet).
"""

import os
import pathlib
import subprocess
import sys
import tempfile

SCRIPT = ("tools", "diagrams", "hopper_kernel_diagrams.py")
SKIP = 77


def drawn_names(repo: pathlib.Path) -> list[str]:
    sys.path.insert(0, str(repo.joinpath(*SCRIPT[:-1])))
    import hopper_kernel_diagrams as hk  # noqa: E402  (standard library only)
    return [f"{n}.svg" for n in hk.PICTURES]


def reproducible(repo: pathlib.Path) -> int:
    images = repo / "docs" / "images"
    names = drawn_names(repo)
    with tempfile.TemporaryDirectory(prefix="mm_hopper_kernel_diagrams_") as tmp:
        out = pathlib.Path(tmp)
        r = subprocess.run([sys.executable, str(repo.joinpath(*SCRIPT)), "--out", str(out)], capture_output=True,
                           text=True)
        print(r.stdout + r.stderr)
        if r.returncode != 0:
            print(f"FAIL: hopper_kernel_diagrams.py exited {r.returncode}")
            return 1
        drawn = {f.name for f in out.iterdir()}
        problems = [f"{n} was not drawn" for n in names if n not in drawn]
        problems += [f"{n} is drawn but not in the script's PICTURES" for n in sorted(drawn - set(names))]
        for name in sorted(drawn & set(names)):
            if not (images / name).exists():
                problems.append(f"docs/images/{name} is not committed")
            elif (out / name).read_bytes() != (images / name).read_bytes():
                problems.append(f"docs/images/{name} differs")
            else:
                print(f"same: {name}")
    if problems:
        print("FAIL: the committed pictures of chapters 10-12's kernels are not what the script draws:\n  "
              + "\n  ".join(problems) + "\n(redraw: python3 tools/diagrams/hopper_kernel_diagrams.py, and commit "
              "docs/images)")
        return 1
    print(f"ok: {len(names)} pictures drawn again are the committed ones, byte for byte")
    return 0


def facts(repo: pathlib.Path, dump_binary: str) -> int:
    if not os.access(dump_binary, os.X_OK):
        print(f"SKIP: {dump_binary} is not there (build it: cmake --build build --target hopper_kernel_dump)")
        return SKIP
    r = subprocess.run([dump_binary], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: {dump_binary} exited {r.returncode}\n{r.stderr}")
        return 1
    with tempfile.TemporaryDirectory(prefix="mm_hopper_kernel_dump_") as tmp:
        dump = pathlib.Path(tmp) / "dump.txt"
        dump.write_text(r.stdout, encoding="utf-8")
        c = subprocess.run([sys.executable, str(repo.joinpath(*SCRIPT)), "--check-dump", str(dump)],
                           capture_output=True, text=True)
        print(c.stdout + c.stderr)
        return c.returncode


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print("FAIL: usage: check_hopper_kernel_diagrams.py REPO_ROOT [HOPPER_KERNEL_DUMP]")
        return 1
    repo = pathlib.Path(sys.argv[1])
    return reproducible(repo) if len(sys.argv) == 2 else facts(repo, sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
