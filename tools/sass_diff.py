#!/usr/bin/env python3
"""Compares the SASS of kernels across two builds: is a restructured step the same machine code?

    tools/sass_diff.py --list  BUILD_OR_FILE                 # the kernels in a binary, object or library
    tools/sass_diff.py OLD NEW --pair OLD_PATTERN=NEW_PATTERN [--pair ...] [--show] [--loose]

OLD and NEW are anything `cuobjdump -sass` reads (an executable, a .o, a static library .a). Each
--pair names one kernel on each side by a substring of its demangled name (cuobjdump prints the
mangled name; c++filt demangles it); the pattern must pick exactly one kernel on its side. The two
instruction streams are compared after removing what a rename or a move changes but the code does
not: addresses, the /*offset*/ column, encodings, and the names of functions and constant banks.

Prints, per pair, "same SASS (N instructions)" or the instruction counts, the opcodes whose counts
differ, and the first lines that differ (all of them with --show). --loose also forgets register
numbers and constant-bank offsets (a kernel parameter block laid out differently, a register
allocation that moved): "same up to registers" then means the same instructions in the same order.
Exits 1 when a pair differs or a pattern does not match once.

cuobjdump comes from the CUDA toolkit (PATH, or $CUDA_HOME/bin) or from NVIDIA's wheels
nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm (tests/requirements.txt), found in site-packages.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig


def find_cuobjdump():
    """The toolkit's cuobjdump, or the wheel's; its nvdisasm must sit beside it or be on PATH."""
    candidates = [shutil.which("cuobjdump")]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            candidates.append(os.path.join(os.environ[var], "bin", "cuobjdump"))
    candidates.append("/usr/local/cuda/bin/cuobjdump")
    site = sysconfig.get_paths()["purelib"]
    candidates += sorted(glob.glob(os.path.join(site, "nvidia", "cu*", "bin", "cuobjdump")))
    for c in candidates:
        if c and os.access(c, os.X_OK) and (os.access(os.path.join(os.path.dirname(c), "nvdisasm"), os.X_OK)
                                            or shutil.which("nvdisasm")):
            return c
    sys.exit("sass_diff: no cuobjdump with an nvdisasm beside it (install the toolkit's, or "
             "pip install -r tests/requirements.txt)")


def demangle(names):
    if not names or not shutil.which("c++filt"):
        return {n: n for n in names}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    return dict(zip(names, out.splitlines()))


def kernels(path, cuobjdump):
    """{demangled name: [normalized instruction lines]} of every function in `path`."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(cuobjdump) + os.pathsep + env.get("PATH", "")
    text = subprocess.run([cuobjdump, "-sass", path], capture_output=True, text=True, env=env, check=True).stdout
    funcs, current = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            current = m.group(1)
            funcs.setdefault(current, [])
            continue
        if current is None:
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;?\s*(/\*.*\*/)?\s*$", line)
        if not m:
            continue
        ins = m.group(1).rstrip(" ;")
        ins = re.sub(r"\b0x[0-9a-f]+\b", "ADDR", ins) if re.match(r"^(@!?U?P\d\s+)?(BRA|CALL|JMP|BSSY|SSY|PBK|RET)", ins) else ins
        ins = re.sub(r"`\([^)]*\)", "`(SYM)", ins)  # relocated symbols: function and constant-bank names
        funcs[current].append(ins)
    names = demangle(list(funcs))
    return {names[k]: v for k, v in funcs.items()}


def pick(table, pattern, side):
    hits = [k for k in table if pattern in k]
    if len(hits) != 1:
        print(f"{side}: '{pattern}' matches {len(hits)} kernels" + (":" if hits else ""))
        for h in hits[:10]:
            print("   ", h)
        return None
    return hits[0]


def loosen(lines):
    """The instructions with register numbers and constant-bank offsets replaced by placeholders."""
    out = []
    for x in lines:
        x = re.sub(r"\bU?R\d+\b", "R", x)
        x = re.sub(r"\bU?P\d\b", "P", x)
        x = re.sub(r"c\[0x[0-9a-f]+\]\[0x[0-9a-f]+\]", "c[]", x)
        out.append(x)
    return out


def opcode_counts(lines):
    """How many times each opcode (predicate and modifiers dropped) occurs."""
    import collections
    c = collections.Counter()
    for x in lines:
        x = re.sub(r"^@!?U?P(T|\d)\s+", "", x)
        c[x.split()[0].split(".")[0] if x.split() else ""] += 1
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new", nargs="?")
    ap.add_argument("--list", action="store_true", help="list the kernels of OLD and exit")
    ap.add_argument("--pair", action="append", default=[], metavar="OLD=NEW")
    ap.add_argument("--show", action="store_true", help="print every differing line")
    ap.add_argument("--loose", action="store_true", help="ignore register numbers and constant-bank offsets")
    a = ap.parse_args()
    cuobjdump = find_cuobjdump()
    old = kernels(a.old, cuobjdump)
    if a.list:
        for k, v in sorted(old.items()):
            print(f"{len(v):6d}  {k}")
        return 0
    if not a.new or not a.pair:
        ap.error("give OLD, NEW and at least one --pair (or --list)")
    new = kernels(a.new, cuobjdump)
    status = 0
    for pair in a.pair:
        po, _, pn = pair.partition("=")
        ko, kn = pick(old, po, "old"), pick(new, pn or po, "new")
        if ko is None or kn is None:
            status = 1
            continue
        so, sn = old[ko], new[kn]
        if so == sn:
            print(f"same SASS ({len(so)} instructions): {po} = {pn or po}")
            continue
        if a.loose and loosen(so) == loosen(sn):
            print(f"same SASS up to registers and constant offsets ({len(so)} instructions): {po} = {pn or po}")
            continue
        status = 1
        diffs = [(i, x, y) for i, (x, y) in enumerate(zip(so, sn)) if x != y]
        print(f"DIFFERENT: {po} ({len(so)} instructions) vs {pn or po} ({len(sn)}), "
              f"{len(diffs)} differing lines in the common prefix")
        hist = opcode_counts(sn)
        hist.subtract(opcode_counts(so))
        moved = {op: n for op, n in sorted(hist.items()) if n != 0}
        print("  opcode counts new - old:", ", ".join(f"{op} {n:+d}" for op, n in moved.items()) or "none")
        if a.loose:
            so, sn = loosen(so), loosen(sn)
            diffs = [(i, x, y) for i, (x, y) in enumerate(zip(so, sn)) if x != y]
        for i, x, y in diffs[: None if a.show else 8]:
            print(f"  {i:5d}  old: {x}\n         new: {y}")
    return status


if __name__ == "__main__":
    sys.exit(main())
