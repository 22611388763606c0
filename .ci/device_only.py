#!/usr/bin/env python3
"""Compiles the device code of chapter sources for one GPU architecture, and nothing else (.ci/run, phase 7).

    python3 .ci/device_only.py BUILD_DIR ARCH PATH...

BUILD_DIR is a configured build (its compile_commands.json); ARCH a real architecture ("75", "120"); each
PATH a chapter directory or a .cu file of the build (the harness's kernels). For each .cu file under the
given directories but the mains, and each file given, the build's own nvcc command is run as
a device-only compilation (`-cubin -arch=sm_ARCH`): the front end, cicc and ptxas for that architecture,
which is what another architecture can break (a branch that only compiles there, a PTX instruction it
lacks), without the host pass (cudafe++ and g++), which does not depend on the architecture and which the
sm_90a build of the same run has compiled. Two at a time (the CI machine has 2 cores); every failure
is printed with its compiler output, and the exit status is 1 if any file failed.
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import pathlib
import shlex
import subprocess
import sys
import time


def device_only(command: str, arch: str, out: pathlib.Path) -> list[str]:
    """The compile command without its object output and architecture flags, as a cubin for sm_ARCH."""
    args = shlex.split(command)
    kept: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-c", "-o"):
            skip = a == "-o"
            continue
        if a.startswith(("--generate-code", "-gencode", "-arch", "--gpu-architecture", "-code")):
            continue
        kept.append(a)
    return kept + [f"-arch=sm_{arch}", "-cubin", "-o", str(out)]


def main() -> int:
    if len(sys.argv) < 4:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    build, arch, chapters = pathlib.Path(sys.argv[1]).resolve(), sys.argv[2], [pathlib.Path(c).resolve() for c in sys.argv[3:]]
    entries = json.loads((build / "compile_commands.json").read_text(encoding="utf-8"))
    jobs = []
    for e in entries:
        f = pathlib.Path(e["file"]).resolve()
        if f.suffix != ".cu" or not (f in chapters or (f.name != "main.cu" and any(c in f.parents for c in chapters))):
            continue
        if "nvcc" not in pathlib.Path(shlex.split(e["command"])[0]).name:
            continue  # a .cu file without kernels that the build compiles as C++ (chapters/CMakeLists.txt)
        out = build / "device_only" / f"{f.parent.name}_{f.stem}.sm_{arch}.cubin"
        jobs.append((f, e["directory"], device_only(e["command"], arch, out)))
    missing = [c for c in chapters if c.suffix == ".cu" and c not in {j[0] for j in jobs}]
    if missing:
        print(f"error: not in {build}/compile_commands.json: {' '.join(map(str, missing))}", file=sys.stderr)
        return 1
    if not jobs:
        print(f"error: no .cu file in {build}/compile_commands.json for {sys.argv[3:]}", file=sys.stderr)
        return 1
    (build / "device_only").mkdir(exist_ok=True)
    root = pathlib.Path.cwd()

    def run(job):
        f, cwd, cmd = job
        start = time.monotonic()
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        return f, r, time.monotonic() - start

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=int(os.environ.get("MM_JOBS", "2"))) as pool:
        for f, r, seconds in pool.map(run, sorted(jobs)):
            name = os.path.relpath(f, root)
            if r.returncode == 0:
                print(f"sm_{arch} device code: {name} ({seconds:.0f} s)")
            else:
                failed += 1
                print(f"error: sm_{arch} device code of {name} does not compile (exit {r.returncode}):\n"
                      f"{r.stdout}{r.stderr}", file=sys.stderr)
    print(f"sm_{arch}: {len(jobs) - failed} of {len(jobs)} files compiled")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
