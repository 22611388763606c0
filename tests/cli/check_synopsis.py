#!/usr/bin/env python3
"""CTest cli.readme_synopsis: the README's "Every chapter binary" synopsis is true of every chapter binary.

    python check_synopsis.py README.md BINARY...

Every flag of the synopsis must appear in each binary's --help, except where the README says a binary
lacks it (EXCEPTIONS below, each of which the README's section must name, and each of which the binary
must then really lack); a binary with a command line of its own (OWN_CLI) is only checked to be named
there. Every --help must exit 0 and show numeric values as INT, never as CLI11's TEXT.
"""
import pathlib
import re
import subprocess
import sys

# flag -> the binaries that do not take it, and the words of the README that say so.
EXCEPTIONS = {
    "--layout": ({"ch01_cpu_matmul", "ch02_naive_gpu", "ch03_tiled_shared_memory", "ch04_copy_and_transpose",
                  "ch06_sizes"}, ["chapters 01–04", "`ch06_sizes`"]),
    "--k": ({"ch04_copy_and_transpose"}, ["chapter 04"]),
    "--interleave": ({"ch01_cpu_matmul", "ch04_copy_and_transpose"},
                     ["chapter 01 always times in rounds", "chapter 04\ndoes not take it"]),
}
OWN_CLI = {"ch08_mma_ceiling", "ch12_wgmma_ceiling", "ch13_grouped_moe"}


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def main():
    readme, binaries = pathlib.Path(sys.argv[1]), sys.argv[2:]
    text = readme.read_text()
    m = re.search(r"^## Every chapter binary\n(.*?)(?=^## )", text, re.S | re.M)
    if not m:
        fail("no section '## Every chapter binary' in the README")
    section = m.group(1)
    block = re.search(r"```text\n(.*?)```", section, re.S)
    if not block:
        fail("no ```text synopsis block in the README's 'Every chapter binary'")
    flags = sorted(set(re.findall(r"--[a-z][a-z-]*", block.group(1))))
    print("synopsis flags:", " ".join(flags))
    for flag, (_, words) in EXCEPTIONS.items():
        for w in words:
            if w.lower() not in section.lower():
                fail(f"the README's section should say where {flag} is missing ('{w}' not found)")
    for name in OWN_CLI:
        if f"`{name}`" not in section:
            fail(f"the README's section should name `{name}`, whose command line is its own")
    problems = []
    for path in binaries:
        name = pathlib.Path(path).name
        r = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            problems.append(f"{name} --help exited {r.returncode}: {r.stderr.strip()}")
            continue
        if re.search(r"\bTEXT\b", r.stdout):
            problems.append(f"{name} --help shows a value as TEXT: {r.stdout}")
        if name in OWN_CLI:
            print(f"ok: {name} (own command line, named in the README)")
            continue
        shown = set(re.findall(r"--[a-z][a-z-]*", r.stdout))
        for flag in flags:
            lacking = flag in EXCEPTIONS and name in EXCEPTIONS[flag][0]
            if lacking and flag in shown:
                problems.append(f"{name} takes {flag}, which the README says it does not")
            elif not lacking and flag not in shown:
                problems.append(f"{name} lacks {flag} of the README's synopsis")
        print(f"ok: {name}" if not any(p.startswith(name + " ") for p in problems) else f"FAIL: {name}")
    if problems:
        fail("\n  " + "\n  ".join(problems))
    print(f"the synopsis holds for all {len(binaries)} binaries")


if __name__ == "__main__":
    main()
