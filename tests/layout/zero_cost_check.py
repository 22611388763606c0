#!/usr/bin/env python3
"""Zero-cost check of the layout library (run by CTest; needs nvcc and cuobjdump, no GPU).

Compiles zero_cost_kernels.cu for sm_90: a tiled transpose written with static layouts
(transpose_layout) and its hand-indexed twin (transpose_by_hand), and disassembles the cubin
with `cuobjdump -sass`. Checks:
  1. no integer division or remainder in the layout kernel (PTX div/rem), and no division
     sequence in its loop (SASS I2F.RP/MUFU.RCP, or the multiply-high of a division by a
     constant);
  2. the layout kernel has at most 110% of the twin's SASS instructions, whole kernel and loop.
cuobjdump comes from the CUDA toolkit (PATH, $CUDA_HOME, $CUDA_PATH, the nvcc directory,
/usr/local/cuda/bin), else from the pip package nvidia-cuda-cuobjdump of the Python running this
script (tests/requirements.txt; scripts/test.sh installs it only when the toolkit has no cuobjdump).
Without it the PTX check still runs (and fails the test if it fails); the SASS checks cannot, and the
test is then reported as skipped (exit 77, CTest's SKIP_RETURN_CODE) with that reason.
Usage: <python> zero_cost_check.py <nvcc> <include dir> <kernels.cu> <work dir>
"""
import os
import re
import shutil
import subprocess
import sys

LAYOUT, HAND = "transpose_layout", "transpose_by_hand"
SKIP = 77  # CTest's SKIP_RETURN_CODE for this test (tests/layout/CMakeLists.txt)


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
    return [l for l in lines if re.search(r"/\*[0-9a-f]{4,}\*/", l) and not re.search(r"\bNOP\b", l)]


def sass_loop(lines):
    """Instructions of the first loop: from a backward branch's target to the branch.
    cuobjdump writes targets as addresses (`@P0 BRA 0x1a0`), nvdisasm as labels (`.L_x_0`)."""
    labels, addr = {}, {}
    for i, l in enumerate(lines):
        m = re.match(r"\s*(\.L_x_\d+):", l)
        if m:
            labels[m.group(1)] = i
        m = re.search(r"/\*([0-9a-f]{4,})\*/", l)
        if m:
            addr.setdefault(int(m.group(1), 16), i)
    for j, l in enumerate(lines):
        m = re.search(r"\bBRA\s+`?\(?(\.L_x_\d+|0x[0-9a-f]+)", l)
        if not m:
            continue
        t = m.group(1)
        i = labels.get(t) if t.startswith(".") else addr.get(int(t, 16))
        if i is not None and i < j:  # backward; the `BRA self` trap after EXIT is not a loop
            return sass_instructions(lines[i:j + 1])
    return []


def find_cuobjdump(nvcc):
    """The CUDA toolkit's cuobjdump (PATH, $CUDA_HOME/bin, $CUDA_PATH/bin, next to nvcc with and
    without following symlinks, /usr/local/cuda/bin: the places scripts/common.sh looks), else the
    one from the pip packages of the Python that runs this script (nvidia-cuda-cuobjdump puts it in
    site-packages/nvidia/cu13/bin). `cuobjdump -sass` runs nvdisasm, a separate toolkit package: a
    toolkit cuobjdump counts only with nvdisasm next to it, on PATH or at $NVDISASM_PATH."""
    dirs = [os.path.dirname(p) for p in [shutil.which("cuobjdump")] if p]
    dirs += [os.path.join(os.environ[v], "bin") for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    dirs += [os.path.dirname(nvcc), os.path.dirname(os.path.realpath(nvcc)), "/usr/local/cuda/bin"]
    nvp = os.environ.get("NVDISASM_PATH") or ""
    nvdisasm_elsewhere = bool(shutil.which("nvdisasm")) or os.path.isfile(nvp) or (
        bool(nvp) and os.access(os.path.join(nvp, "nvdisasm"), os.X_OK))
    for d in dirs:
        cand = os.path.join(d, "cuobjdump")
        if os.access(cand, os.X_OK) and (os.access(os.path.join(d, "nvdisasm"), os.X_OK) or nvdisasm_elsewhere):
            return cand
    try:
        import nvidia  # the namespace package of NVIDIA's CUDA wheels
    except ImportError:
        return None
    for root in nvidia.__path__:
        for sub in sorted(os.listdir(root), reverse=True):  # cu13 before cu12
            cand = os.path.join(root, sub, "bin", "cuobjdump")
            if os.access(cand, os.X_OK):
                return cand
    return None


def within(a, b):
    """a is at most 110% of b."""
    return a * 100 <= b * 110


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
    print(f"PTX  whole kernel: layout {len(instructions(lay))}, hand {len(instructions(hand))}")
    print(f"PTX  main loop:    layout {len(ptx_loop(lay))}, hand {len(ptx_loop(hand))}")

    cuobjdump = find_cuobjdump(nvcc)
    if not cuobjdump:
        if not ok:
            print("zero-cost check FAILED (PTX); the SASS checks need cuobjdump, which was not found")
            return 1
        print(f"SKIP: missing tool: cuobjdump (with nvdisasm) not found: not on PATH, not in $CUDA_HOME/bin, "
              f"$CUDA_PATH/bin, /usr/local/cuda/bin or next to {nvcc}, not in the pip package "
              f"nvidia-cuda-cuobjdump of {sys.executable}. The PTX check passed; the SASS checks need it: "
              f"`{sys.executable} -m pip install -r tests/requirements.txt` (scripts/test.sh does, online), or "
              f"the CUDA toolkit's cuda-cuobjdump and cuda-nvdisasm packages.")
        return SKIP
    print("cuobjdump:", cuobjdump)

    cubin = os.path.join(work, "k.cubin")
    run([nvcc, *flags, "-cubin", src, "-o", cubin])
    sass = run([cuobjdump, "-sass", cubin])
    with open(os.path.join(work, "k.sass"), "w") as f:
        f.write(sass)
    sl, sh = sass_function(sass, LAYOUT), sass_function(sass, HAND)
    whole_l, whole_h = len(sass_instructions(sl)), len(sass_instructions(sh))
    loop_l, loop_h = sass_loop(sl), sass_loop(sh)
    print(f"SASS whole kernel: layout {whole_l}, hand {whole_h} (NOP padding not counted)")
    print(f"SASS main loop:    layout {len(loop_l)}, hand {len(loop_h)}")
    if not (whole_l and whole_h and loop_l and loop_h):
        print(f"FAIL: both kernels and their loops not found in cuobjdump's output ({work}/k.sass)")
        ok = False
    # Division by a run-time value is I2F.RP + MUFU.RCP; by a constant, a multiply-high.
    bad = [l.strip() for l in loop_l if re.search(r"MUFU\.RCP|I2F(\.[A-Z0-9]+)*\.RP|IMAD\.HI|\bIDIV", l)]
    if bad:
        print("FAIL: integer-division sequence in the layout kernel's loop (SASS):", *bad[:5], sep="\n  ")
        ok = False
    if not within(whole_l, whole_h):
        print("FAIL: the layout kernel has more than 110% of the twin's SASS instructions")
        ok = False
    if not within(len(loop_l), len(loop_h)):
        print("FAIL: the layout kernel's loop has more than 110% of the twin's SASS instructions")
        ok = False
    print("zero-cost check passed" if ok else "zero-cost check FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
