"""The inputs of the roofline figure (plot.py's `roofline_fp32`), each with the README line it comes from.

Nothing here is measured by this file: the machine numbers are the ones the chapter pages compute
with, the DRAM roof is read from chapter 04's CSV (cudaMemcpy, measured), and the kernels' points are
read from the chapters' CSVs. Change a number here only together with the page it cites.
"""

from __future__ import annotations

# --- The H200 as the chapter pages count it ---------------------------------------------------------
SMS = 132            # chapters/02_naive_gpu/README.md:214 ("The H200 has 132 SMs at up to about 1.98 GHz")
CLOCK_GHZ = 1.98     # same line; the boost clock the pages use for every ceiling
FMA_PER_CLK_SM = 128  # chapters/02_naive_gpu/README.md:213-214 ("128 FMAs per clock per SM")
L1_BYTES_PER_CLK_SM = 128  # chapters/02_naive_gpu/README.md:211-212 (L1: "one 128-byte line per clock per SM");
#                            chapters/03_tiled_shared_memory/README.md:190-192 (shared memory: "128 bytes/clock")


def fp32_peak_tflops() -> float:
    """132 SMs × 128 FMA/clk × 2 FLOP × 1.98 GHz ≈ 66.9 TFLOP/s: chapters/02_naive_gpu/README.md:214-215,
    chapters/05_layout_matmul/README.md:432, chapters/06_tiled_copy_mma/README.md:418."""
    return SMS * FMA_PER_CLK_SM * 2 * CLOCK_GHZ / 1e3


def l1_shared_tbps() -> float:
    """132 SMs × 128 B/clk × 1.98 GHz ≈ 33.5 TB/s: the L1/shared-memory pipe, one 128-byte wavefront per
    clock per SM (same lines as L1_BYTES_PER_CLK_SM)."""
    return SMS * L1_BYTES_PER_CLK_SM * CLOCK_GHZ / 1e3


# DRAM: not a number here. The roof is chapter 04's cudaMemcpy device→device at its largest size, read
# from plots/data/<gpu>/ch04_copy_and_transpose.csv (GB/s = bytes read + written ÷ time), the figure
# chapters/02_naive_gpu/README.md:233 and chapters/03_tiled_shared_memory/README.md:177 round to 4.3 TB/s.
DRAM_KERNEL = ("04_copy_and_transpose", "cudaMemcpy")

# L2: no page of this repository measures or computes the L2's bandwidth, so the figure draws no L2 roof
# (and says so) rather than a number from elsewhere.

# --- Where each kernel sits on the x axis -------------------------------------------------------------
# Arithmetic intensity from the block tile: per K step a BM×BN block fetches (BM + BN)·BK floats and does
# 2·BM·BN·BK FLOP, so FLOP per byte requested from global memory = BM·BN / (2·(BM + BN)) for fp32,
# whatever BK is (chapters/03_tiled_shared_memory/README.md:165-175, the table "TILE / 4"). These are
# bytes *requested* by the blocks; the L2 serves most of them, so a kernel's DRAM intensity is higher.
# (chapter, kernel): (BM, BN, where the tile is stated)
TILES = {
    ("02_naive_gpu", "naive_strided"): (1, 1, "chapters/03_tiled_shared_memory/README.md:172 (0.25 FLOP/byte)"),
    ("02_naive_gpu", "naive_coalesced"): (1, 1, "chapters/03_tiled_shared_memory/README.md:172 (0.25 FLOP/byte)"),
    ("03_tiled_shared_memory", "tiled_16"): (16, 16, "chapters/03_tiled_shared_memory/README.md:174"),
    ("03_tiled_shared_memory", "tiled_32"): (32, 32, "chapters/03_tiled_shared_memory/README.md:175"),
    ("05_layout_matmul", "layout_unpadded"): (128, 128, "ncu_ch05.log: tuple<C<128>, C<128>, C<8>>"),
    ("05_layout_matmul", "layout_padded"): (128, 128, "ncu_ch05.log: tuple<C<128>, C<128>, C<8>>"),
    ("06_tiled_copy_mma", "tiled_vec128"): (128, 128, "chapters/06_tiled_copy_mma/tiled_copy_mma.hpp: 128x128x8 tiles"),
    ("06_tiled_copy_mma", "tiled_vec128_uncoalesced"): (128, 128, "chapters/06_tiled_copy_mma/tiled_copy_mma.hpp"),
    ("06_tiled_copy_mma", "tiled_prefetch"): (128, 128, "chapters/06_tiled_copy_mma/tiled_copy_mma.hpp"),
    ("07_pipelined_simt", "pipelined_s2"): (128, 128, "chapters/07_pipelined_simt/pipelined.cuh (PipelinedS2Cfg)"),
    ("07_pipelined_simt", "deep_k"): (128, 128, "chapters/07_pipelined_simt/fragment_pipelined.cuh (DeepKCfg 128x128x16)"),
    ("07_pipelined_simt", "big_tile"): (128, 256, "chapters/07_pipelined_simt/README.md:175 (128x256x16)"),
}


def intensity(bm: int, bn: int) -> float:
    """FLOP per byte of fp32 requested from global memory by a BM×BN block tile."""
    return bm * bn / (2.0 * (bm + bn))


# --- Ceilings a chapter page computes for one kernel (drawn as a short dash above its point) ------------
# (chapter, kernel): (TFLOP/s, what limits it, where the page computes it)
KERNEL_CEILINGS = {
    ("02_naive_gpu", "naive_coalesced"): (
        8.4, "2 L1 requests per FMA instruction", "chapters/02_naive_gpu/README.md:224-225"),
    ("03_tiled_shared_memory", "tiled_32"): (
        11.1, "48 shared wavefronts per 32 FFMA", "chapters/03_tiled_shared_memory/README.md:270-276"),
    ("05_layout_matmul", "layout_padded"): (
        50.0, "instruction issue (FFMA 74% of instructions)", "chapters/05_layout_matmul/README.md:435-436"),
}
