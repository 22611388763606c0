#!/usr/bin/env python3
"""Zero-cost check of the layout library (run by CTest; needs nvcc, no GPU).

Compiles zero_cost_kernels.cu for sm_90: a tiled transpose written with static layouts
(transpose_layout) and its hand-indexed twin (transpose_by_hand). Checks:
  1. no integer division or remainder in the layout kernel (PTX div/rem; SASS MUFU.RCP/I2F.RP);
  2. the main loop of the layout kernel has at most 110% of the twin's instructions
     (SASS from cuobjdump -sass when installed, else PTX);
  3. reports the whole-kernel SASS instruction counts (cuobjdump, or the cubin's .text
     sections without NOP padding when cuobjdump is missing).
Usage: zero_cost_check.py <nvcc> <include dir> <kernels.cu> <work dir>
"""
import os
import re
import shutil
import subprocess
import sys

LAYOUT, HAND = "transpose_layout", "transpose_by_hand"
NOP = bytes.fromhex("18790000000000000000000000c00f00")  # sm_90 NOP (section padding)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"command failed: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return r.stdout


def ptx_entry(ptx, name):
    m = re.search(r"\.entry " + name + r"\((.*?)\n}\n", ptx, re.S)
    return [l.strip() for l in m.group(1).splitlines()] if m else []


def instructions(lines):
    return [l for l in lines if l and not l.startswith((".", "//", "{", "}", ")", "$")) and not l.endswith(":")]


def ptx_loop(lines):
    """Instructions between the loop label and the branch back to it."""
    for i, l in enumerate(lines):
        m = re.match(r"(\$L__\w+):", l)
        if m:
            for j in range(i + 1, len(lines)):
                if re.search(r"\bbra(\.uni)?\s+" + re.escape(m.group(1)) + ";", lines[j]):
                    return instructions(lines[i + 1:j + 1])
    return []


def sass_function(sass, name):
    m = re.search(r"Function : " + name + r"\n(.*?)(?=\n\s*Function : |\Z)", sass, re.S)
    return m.group(1).splitlines() if m else []


def sass_instructions(lines):
    return [l for l in lines if re.search(r"/\*[0-9a-f]{4}\*/", l) and not re.search(r"\bNOP\b", l)]


def sass_loop(lines):
    labels = {}
    for i, l in enumerate(lines):
        m = re.match(r"\s*(\.L_x_\d+):", l)
        if m:
            labels[m.group(1)] = i
    for j, l in enumerate(lines):
        m = re.search(r"BRA\s+`?\(?(\.L_x_\d+)", l)
        if m and m.group(1) in labels and labels[m.group(1)] < j:
            return sass_instructions(lines[labels[m.group(1)]:j + 1])
    return []


def cubin_counts(path):
    out = run(["readelf", "-SW", path])
    data = open(path, "rb").read()
    counts = {}
    for line in out.splitlines():
        m = re.search(r"\]\s+\.text\.(\S+)\s+PROGBITS\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m:
            off, size = int(m.group(2), 16), int(m.group(3), 16)
            counts[m.group(1)] = sum(1 for i in range(0, size, 16) if data[off + i:off + i + 16] != NOP)
    return counts


def main():
    nvcc, inc, src, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    flags = ["-std=c++20", "--expt-relaxed-constexpr", "-O3", "-arch=sm_90", "-I" + inc]
    ok = True

    ptx_file = os.path.join(work, "k.ptx")
    run([nvcc, *flags, "-ptx", src, "-o", ptx_file])
    ptx = open(ptx_file).read()
    lay, hand = ptx_entry(ptx, LAYOUT), ptx_entry(ptx, HAND)
    divs = [l for l in instructions(lay) if re.match(r"(div|rem)\.(s|u)(32|64)", l)]
    if divs:
        print("FAIL: integer division in the layout kernel (PTX):", *divs[:5], sep="\n  ")
        ok = False
    lay_loop, hand_loop = ptx_loop(lay), ptx_loop(hand)
    print(f"PTX  whole kernel: layout {len(instructions(lay))}, hand {len(instructions(hand))}")
    print(f"PTX  main loop:    layout {len(lay_loop)}, hand {len(hand_loop)}")

    cubin = os.path.join(work, "k.cubin")
    run([nvcc, *flags, "-cubin", src, "-o", cubin])
    cuobjdump = shutil.which("cuobjdump") or os.path.join(os.path.dirname(nvcc), "cuobjdump")
    if os.path.exists(cuobjdump):
        sass = run([cuobjdump, "-sass", cubin])
        sl, sh = sass_function(sass, LAYOUT), sass_function(sass, HAND)
        print(f"SASS whole kernel: layout {len(sass_instructions(sl))}, hand {len(sass_instructions(sh))}")
        loop_l, loop_h = sass_loop(sl), sass_loop(sh)
        print(f"SASS main loop:    layout {len(loop_l)}, hand {len(loop_h)}")
        bad = [l.strip() for l in loop_l if re.search(r"MUFU\.RCP|I2F(\.[A-Z0-9]+)*\.RP", l)]
        if bad:
            print("FAIL: integer-division sequence in the layout kernel's loop (SASS):", *bad[:5], sep="\n  ")
            ok = False
        if not loop_l or not loop_h or len(loop_l) * 100 > len(loop_h) * 110:
            print("FAIL: the layout kernel's loop has more than 110% of the twin's SASS instructions")
            ok = False
    else:
        c = cubin_counts(cubin)
        print(f"SASS whole kernel (cubin .text, NOPs dropped; cuobjdump not installed): "
              f"layout {c.get(LAYOUT)}, hand {c.get(HAND)}")
        if not lay_loop or not hand_loop or len(lay_loop) * 100 > len(hand_loop) * 110:
            print("FAIL: the layout kernel's loop has more than 110% of the twin's PTX instructions")
            ok = False
    print("zero-cost check passed" if ok else "zero-cost check FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
