#!/usr/bin/env python3
"""The pictures of chapter 08's page (mma.sync, ldmatrix, the swizzle), as plain SVG.

    python3 tools/diagrams/ch08_diagrams.py [--out docs/images] [--data plots/data/h200]
    python3 tools/diagrams/ch08_diagrams.py --check-layout DUMP   # DUMP: what ch08_layout_dump printed

Writes (each drawn from the PTX ISA's formulas, which --check-layout compares with the layout library's
own answer, or from the committed measurements):

  ch08_ldmatrix_x4.svg     ldmatrix.x4 loading the A operand of one mma.sync m16n8k16: which lane gives
                           the address of which 16-byte row of shared memory, and which lane receives
                           each element in which register (make_tiled_copy_A of the chapter's atoms)
  ch08_swizzle_banks.svg   the `swizzled` step's A stage (64-byte rows of bf16), plain and with
                           Swizzle<2,3,3>: the bank group of every 16-byte unit, and the 8 rows one
                           ldmatrix matrix reads (KernelTraits::k_major_smem)
  ch08_bf16_ceilings.svg   chapter 08's bf16 steps at 4096³ RRR against mma.sync's measured ceilings
                           (64 and 8 warps per SM), cuBLAS and the datasheet peak (CSVs)

Only the standard library is used (and the drawing class of hopper_diagrams.py). The output is
deterministic, and every picture checks that none of its labels overlap before it is written. CTest
plots.ch08_diagrams_reproducible draws them into a temporary directory and compares them with the
committed files byte for byte: after a new measurement, run this script and commit docs/images.
"""

from __future__ import annotations

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import hopper_diagrams as hd  # noqa: E402  (Svg, colours, the datasheet peak; it puts plots/ on the path)
import results_data as rd  # noqa: E402

Svg, Overlap, TINTS = hd.Svg, hd.Overlap, hd.TINTS
BLUE, ORANGE, GREEN, RED, GREY, DARK = hd.BLUE, hd.ORANGE, hd.GREEN, hd.RED, hd.GREY, hd.DARK
REPO = hd.REPO

# Four strong-ish tints for the four 8×8 matrices of an ldmatrix.x4 (= its four registers).
MATRIX_TINTS = ["#cfe2f3", "#fce5cd", "#d9ead3", "#ead1dc"]
HIGHLIGHT_LANE = 5


# ---- ldmatrix.x4 of an A operand (PTX ISA, "Warp-level matrix load instruction: ldmatrix", and the
# mma.m16n8k16 A fragment) ---------------------------------------------------------------------------
#
# Matrix j of the four is A's rows 8·(j % 2) .. +7 at k 8·(j / 2) .. +7 (register j of the fragment:
# a0 rows 0-7 k 0-7, a1 rows 8-15, a2 k 8-15, a3 both). Lanes 8j .. 8j+7 give the addresses of its rows;
# lane t receives, in register j, its row t/4 and columns 2(t%4), 2(t%4)+1 (the lower column in the
# lower half).

def ldsm_src(lane: int) -> tuple[int, int]:
    """(m, k) where the 16-byte row whose address `lane` gives starts."""
    j, r = lane // 8, lane % 8
    return 8 * (j % 2) + r, 8 * (j // 2)


def ldsm_dst(lane: int, reg: int, half: int) -> tuple[int, int]:
    """(m, k) of the element `lane` receives in register `reg`, half `half`."""
    return 8 * (reg % 2) + lane // 4, 8 * (reg // 2) + 2 * (lane % 4) + half


# ---- The `swizzled` step's A stage: (128,32) bf16, K-major, 64-byte rows ----------------------------
#
# KernelTraits::k_major_smem: the (8,32):(32,1) atom composed with Swizzle<2,3,3> (B = log2 of 4 units a
# row, M = 3: 8 bf16 = 16 bytes, S = 3), tiled over the stage. Swizzle<2,3,3> XORs bits 6-7 of the
# element offset (the row's index within its 8-row atom, halved) into bits 3-4 (the 16-byte unit).

ROW_ELEMS = 32  # bf16 of one K-major row (BK of the `swizzled` step)


def swizzle_233(offset: int) -> int:
    return offset ^ ((offset & (3 << 6)) >> 3)


def bank_group(m: int, unit: int, swizzled: bool) -> int:
    """The 16-byte slot (0-7) of a 128-byte line holding unit `unit` (k = 8·unit ..) of row m: the bank
    group, banks 4·group .. 4·group+3."""
    offset = m * ROW_ELEMS + 8 * unit
    if swizzled:
        offset = swizzle_233(offset)
    return (2 * offset // 16) % 8


def wavefronts(groups: list[int]) -> int:
    """Wavefronts of one ldmatrix matrix: its 8 rows of 16 bytes, one per bank group per wavefront."""
    return max(groups.count(g) for g in set(groups))


def check_layout(dump: pathlib.Path) -> int:
    """Compares ch08_layout_dump's output with the formulas above; 0 if every fact agrees."""
    bad = seen = 0
    for line in dump.read_text().splitlines():
        f = line.split()
        if not f:
            continue
        if f[0] == "src":
            got, want = (int(f[2]), int(f[3])), ldsm_src(int(f[1]))
        elif f[0] == "dst":
            got, want = (int(f[4]), int(f[5])), ldsm_dst(int(f[1]), int(f[2]), int(f[3]))
        elif f[0] == "bank":
            got, want = int(f[4]), bank_group(int(f[2]), int(f[3]), f[1] == "swizzled")
        else:
            print(f"FAIL: unexpected line {line!r}")
            return 1
        seen += 1
        if got != want:
            bad += 1
            if bad <= 10:
                print(f"FAIL: {line!r}: the script draws {want}")
    if seen < 32 + 32 * 8 + 2 * 16 * 4:
        print(f"FAIL: only {seen} facts in {dump}")
        return 1
    if bad:
        print(f"FAIL: {bad} of {seen} facts differ")
        return 1
    print(f"ok: {seen} ldmatrix addresses, register contents and bank groups agree with the layout library")
    return 0


def draw_ldmatrix() -> Svg:
    row_h, box_w, lx = 22, 96, 60             # left: the shared rows
    cell_w, rx = 40, 330                     # right: the 16×16 elements
    y0 = 130
    s = Svg("ch08_ldmatrix_x4", rx + 16 * cell_w + 20, y0 + 16 * row_h + 136)
    s.text(20, 24, "ldmatrix.x4: one instruction loads the A operand of an mma.sync m16n8k16 (bf16) for the "
                   "warp", 14, weight="bold")
    s.text(20, 46, "left: A's 16×16 tile in shared memory (K-major); a box = one 16-byte row of 8 bf16, named "
                   "by the lane that gives its address", 12)
    s.text(20, 64, "right: the same tile; a cell = one element, named by the lane T that receives it and its "
                   "register r", 12)
    s.text(20, 82, "colour = which of the four 8×8 matrices (matrix j arrives in register j)", 12)
    # Left panel.
    s.text(lx, y0 - 26, "addresses (shared memory)", 12, weight="bold")
    for u in range(2):
        s.text(lx + u * box_w + box_w / 2, y0 - 8, f"k {8 * u}–{8 * u + 7}", 11, anchor="middle")
    where = {}
    for lane in range(32):
        where[ldsm_src(lane)] = lane
    for m in range(16):
        y = y0 + m * row_h
        s.text(lx - 8, y + 15, f"m {m}", 11, anchor="end")
        for u in range(2):
            lane = where[(m, 8 * u)]
            x = lx + u * box_w
            hot = lane == HIGHLIGHT_LANE
            s.rect(x, y, box_w, row_h, fill=MATRIX_TINTS[lane // 8], stroke=DARK if hot else "#ffffff",
                   sw=2.5 if hot else 1)
            s.text(x + box_w / 2, y + 15, f"lane {lane}", 10, anchor="middle",
                   weight="bold" if hot else "normal")
    # Right panel.
    s.text(rx, y0 - 26, "registers (lane T, register r)", 12, weight="bold")
    for k in range(16):
        s.text(rx + k * cell_w + cell_w / 2, y0 - 8, f"{k}", 10, anchor="middle", fill=GREY)
    s.text(rx - 8, y0 - 8, "k", 10, anchor="end", fill=GREY)
    owner = {}
    for lane in range(32):
        for reg in range(4):
            for half in range(2):
                owner[ldsm_dst(lane, reg, half)] = (lane, reg)
    for m in range(16):
        y = y0 + m * row_h
        s.text(rx - 8, y + 15, f"{m}", 10, anchor="end", fill=GREY)
        for k in range(16):
            lane, reg = owner[(m, k)]
            hot = lane == HIGHLIGHT_LANE
            s.rect(rx + k * cell_w, y, cell_w, row_h, fill=MATRIX_TINTS[reg], stroke=DARK if hot else "#ffffff",
                   sw=2.5 if hot else 1)
            s.text(rx + k * cell_w + cell_w / 2, y + 15, f"T{lane} r{reg}", 9, anchor="middle",
                   weight="bold" if hot else "normal")
    yb = y0 + 16 * row_h + 26
    s.text(20, yb, "Lanes 8j–8j+7 give the 8 row addresses of matrix j; every lane receives two "
                   "neighbouring elements of matrix j in register j.", 12)
    a = ldsm_src(HIGHLIGHT_LANE)
    got = sorted(ldsm_dst(HIGHLIGHT_LANE, r, h) for r in range(4) for h in range(2))
    rows = sorted({m for m, _ in got})
    cols = sorted({k for _, k in got})
    s.text(20, yb + 20, f"Lane {HIGHLIGHT_LANE} (outlined) gives the address of row m {a[0]}, k {a[1]}–{a[1] + 7}, "
                        f"and receives rows {rows[0]} and {rows[1]} at k {cols[0]}–{cols[1]} and "
                        f"{cols[2]}–{cols[3]}:", 12)
    s.text(20, yb + 38, f"the values of lane {HIGHLIGHT_LANE}'s mma.sync fragment, in the registers the "
                        "instruction reads them from.", 12)
    s.text(20, yb + 60, "From the PTX ISA's formulas; CTest plots.ch08_diagrams_layout checks every cell against "
                        "make_tiled_copy_A of the chapter's atoms, emulated on the host.", 10, fill=GREY)
    s.text(20, yb + 76, "B: one ldmatrix.x4 loads two n8 atoms (16 n × 16 k) the same way; an N-major B (RRR) "
                        "takes ldmatrix.x4.trans: the same fragment.", 10, fill=GREY)
    return s


def draw_swizzle() -> Svg:
    cell_w, row_h, y0 = 96, 22, 122
    panels = ((70, False, "plain (mma_fragments, ldmatrix)"), (560, True, "Swizzle<2,3,3> (swizzled)"))
    s = Svg("ch08_swizzle_banks", 560 + 4 * cell_w + 40, y0 + 16 * row_h + 80)
    s.text(20, 24, "Where ldmatrix's 8 rows fall: the first 16 rows of an A stage (128 × 32 bf16, K-major, "
                   "64-byte rows)", 14, weight="bold")
    s.text(20, 46, "a cell = 16 bytes (8 bf16 of one row); its label and colour = the 4 banks it occupies "
                   "(its 16-byte slot in a 128-byte line)", 12)
    s.text(20, 64, "outlined: the 8 rows of k 0–7 that one ldmatrix matrix reads (rows 0–7, then rows 8–15 "
                   "for the next matrix)", 12)
    for x0, swz, title in panels:
        s.text(x0, y0 - 30, title, 12, weight="bold")
        for u in range(4):
            s.text(x0 + u * cell_w + cell_w / 2, y0 - 8, f"k {8 * u}–{8 * u + 7}", 11, anchor="middle")
        for m in range(16):
            y = y0 + m * row_h
            s.text(x0 - 8, y + 15, f"m {m}", 11, anchor="end")
            for u in range(4):
                g = bank_group(m, u, swz)
                s.rect(x0 + u * cell_w, y, cell_w, row_h, fill=TINTS[g], stroke="#ffffff")
                s.text(x0 + u * cell_w + cell_w / 2, y + 15, f"banks {4 * g}–{4 * g + 3}", 10, anchor="middle")
        for first in (0, 8):
            s.rect(x0, y0 + first * row_h, cell_w, 8 * row_h, fill="none", stroke=DARK, sw=2.5)
        per_matrix = set()
        for first in (0, 8):
            groups = [bank_group(m, 0, swz) for m in range(first, first + 8)]
            per_matrix.add((tuple(sorted(set(groups))), wavefronts(groups)))
        if len(per_matrix) != 1:
            raise SystemExit("ch08_diagrams: the two outlined matrices differ; say so in the picture")
        (distinct, n), = per_matrix
        names = ("all 32 banks" if len(distinct) == 8
                 else "banks " + " and ".join(f"{4 * g}–{4 * g + 3}" for g in distinct))
        s.text(x0 - 40, y0 + 16 * row_h + 26, f"each outlined matrix: {names}, {n} wavefront{'s' if n > 1 else ''}",
               12, weight="bold")
    s.text(20, y0 + 16 * row_h + 60, "Drawn from the swizzle's formula; the CTest plots.ch08_diagrams_layout "
                                     "checks every cell against the layout library (KernelTraits::k_major_smem's "
                                     "layouts).", 10, fill=GREY)
    return s


# ---- chapter 08's bf16 steps against the ceilings ------------------------------------------------------

CEILING_SIZE, CEILING_LAYOUT = 4096, "RRR"
CH08_STEPS = ["mma_fragments", "ldmatrix", "swizzled", "register_pipelined", "hoisted_swizzle", "no_copy_branch"]
TARGET = 0.70  # the chapter's bf16 target, a share of cuBLAS bf16
TWO_WARPS_PER_SCHEDULER = "mma_sync_bf16_chains4_warps8"  # 8 warps per SM: what a 255-register kernel gets


def ceiling_data(data: pathlib.Path):
    steps = rd.read_csv(data / "ch08_tensor_cores.csv")
    probe = rd.read_csv(data / "ch08_mma_ceiling.csv")

    def at(kernel):
        for r in steps:
            if (r.kernel == kernel and r.dtype == "bf16" and r.layout == CEILING_LAYOUT
                    and r.m == r.n == r.k == CEILING_SIZE):
                return r.tflops
        raise SystemExit(f"ch08_diagrams: no bf16 {CEILING_LAYOUT} {CEILING_SIZE}³ row of {kernel!r} in {data}")

    best = max(r.tflops for r in probe if r.dtype == "bf16")
    eight = [r.tflops for r in probe if r.kernel == TWO_WARPS_PER_SCHEDULER]
    if len(eight) != 1:
        raise SystemExit(f"ch08_diagrams: no single row {TWO_WARPS_PER_SCHEDULER!r} in {data}")
    return [(k, at(k)) for k in CH08_STEPS], at("cuBLAS"), best, eight[0]


def draw_ceilings(data: pathlib.Path) -> Svg:
    steps, cublas, best, eight = ceiling_data(data)
    x0, w_axis, bar_h, y0 = 170, 640, 22, 168
    top = 1000.0
    X = lambda v: x0 + v / top * w_axis  # noqa: E731
    bottom = y0 + len(steps) * (bar_h + 8)
    s = Svg("ch08_bf16_ceilings", x0 + w_axis + 100, bottom + 110)
    s.text(20, 24, f"Chapter 08's bf16 steps at {CEILING_SIZE}³ ({CEILING_LAYOUT}), H200, against what the "
                   "instructions can reach", 14, weight="bold")
    s.text(20, 44, "bars: medians of the chapter's run; dashed: mma.sync alone (the chapter's probe), "
                   "cuBLAS (wgmma), the datasheet's peak", 12)
    target = TARGET * cublas
    lines = ((target, f"the chapter's target, 70% of cuBLAS: {hd.fmt(target)}", GREEN, 142),
             (eight, f"mma.sync, 8 warps/SM {hd.fmt(eight)}", ORANGE, 124),
             (best, f"mma.sync, 64 warps/SM {hd.fmt(best)}", ORANGE, 106),
             (cublas, f"cuBLAS {hd.fmt(cublas)}", DARK, 88),
             (hd.DATASHEET_BF16_DENSE, f"datasheet peak {hd.DATASHEET_BF16_DENSE}", RED, 70))
    for v, label, colour, ty in lines:
        s.line(X(v), ty + 4, X(v), bottom, stroke=colour, sw=2, dash="6,4")
        s.text(X(v) - 4, ty, label, 11, anchor="end", fill=colour, weight="bold")
    y = y0
    for k, v in steps:
        s.text(x0 - 8, y + 16, k, 12, anchor="end")
        s.rect(x0, y, X(v) - x0, bar_h, fill=GREY if k != CH08_STEPS[-1] else BLUE, stroke="none")
        s.text(x0 + 6, y + 16, hd.fmt(v), 11, fill="white", weight="bold", check=False)
        y += bar_h + 8
    ya = bottom + 6
    hd.tflops_axis(s, X, x0, top, ya)
    s.text(20, ya + 60, "from plots/data/h200: ch08_tensor_cores.csv, ch08_mma_ceiling.csv; 8 warps per SM = 2 per "
                        "scheduler, what a kernel of ~255 registers gets", 10, fill=GREY)
    s.text(20, ya + 76, "the datasheet's 1,979 TFLOP/s for bf16 assumes 2:4 sparsity; dense is half", 10, fill=GREY)
    return s


PICTURES = {
    "ch08_ldmatrix_x4": lambda data: draw_ldmatrix(),
    "ch08_swizzle_banks": lambda data: draw_swizzle(),
    "ch08_bf16_ceilings": draw_ceilings,
}


def main(argv=None) -> int:
    return hd.run(argv, "ch08_diagrams", "Draw chapter 08's pictures (plain SVG).", PICTURES, check_layout,
                  "ch08_layout_dump")


if __name__ == "__main__":
    sys.exit(main())
