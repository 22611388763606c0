"""The speed predictions of the chapter pages, for plot.py's `predicted_vs_measured` figure.

Each entry is one quantitative prediction a page (chapters 02-10) wrote before measuring: a range of
TFLOP/s, of % of the chapter's baseline (cuBLAS; cudaMemcpy in chapter 04), or of the speed ratio to
another kernel, for a kernel at a stated size and storage order, with the page it is quoted from and
the quoted words. The quote is checked against the page by the plot test (whitespace and `**` ignored),
so an entry whose page no longer says it fails loudly instead of drifting; cite no line numbers, which
move when a page is edited.

Left out, as not comparable with one CSV row as a range: point estimates ("≈ 0.5 TFLOP/s", "about 2×",
"+~2%", "equal for CRR"), open-ended ones ("no faster", "as fast ... or faster"), "within ±10% of each
other" over several storage orders, chapter 04's "within ±5 of `copy_smem`" (a difference in points),
chapter 09's counters (tensor-pipe activity, instructions, L2 reads) and chapter 10's conditional
"time −0–5% if L2 limits". Chapter 01 is the CPU and outside this figure.

Change an entry only together with the page it quotes.
"""

from __future__ import annotations

from dataclasses import dataclass

# What a range is of.
TFLOPS = "tflops"          # TFLOP/s (median)
PCT = "pct"                # % of the chapter's baseline measured in the same run (the CSV's pct_of_cublas)
RATIO = "ratio"            # TFLOP/s of the kernel ÷ TFLOP/s of `ref`
TIME_RATIO = "time_ratio"  # median time of the kernel ÷ median time of `ref` (drawn as its inverse, a speed ratio)


@dataclass(frozen=True)
class Prediction:
    chapter: str                # the CSV's chapter column
    kernel: str
    metric: str                 # TFLOPS, PCT, RATIO or TIME_RATIO
    lo: float
    hi: float
    readme: str                 # the page, relative to the repository root
    quote: str                  # the prediction's words on that page (markdown `**` dropped)
    sizes: tuple[int, ...] = (4096,)      # square GEMM sizes (copies: N×N matrices); each is measured
    layouts: tuple[str, ...] = ("RRR",)   # storage orders; each is measured
    dtype: str = "fp32"
    ref: tuple[str, str] | None = None    # (chapter, kernel) of a ratio's denominator
    ref_layout: str | None = None         # the denominator's storage order if not the kernel's
    ref_size: int | None = None           # the denominator's size if not the kernel's
    sealed: bool = True                   # False: the page says it was not committed before the run
    note: str = ""

    @property
    def label(self) -> str:
        square = "²" if self.chapter.startswith("04") else "³"  # chapter 04's are N×N matrices
        sizes = "/".join(f"{s}{square}" for s in self.sizes)
        text = f"{self.kernel} {sizes} {'/'.join(self.layouts)}"
        if self.ref is not None:
            ref = self.ref[1] if self.ref[0] == self.chapter else f"ch{self.ref[0][:2]} {self.ref[1]}"
            if self.ref_layout:
                ref += f" {self.ref_layout}"
            if self.ref_size:
                ref += f" {self.ref_size}³"
            text += f" ÷ {ref}" if self.metric == RATIO else f" time ÷ {ref}"
        return text


CH02 = "chapters/02_naive_gpu/README.md"
CH03 = "chapters/03_tiled_shared_memory/README.md"
CH04 = "chapters/04_copy_and_transpose/README.md"
CH05 = "chapters/05_layout_matmul/README.md"
CH06 = "chapters/06_tiled_copy_mma/README.md"
CH07 = "chapters/07_pipelined_simt/README.md"
CH08 = "chapters/08_tensor_cores/README.md"
CH09 = "chapters/09_hopper_wgmma_tma/README.md"
CH10 = "chapters/10_hopper_persistent/README.md"

_02, _03, _04 = "02_naive_gpu", "03_tiled_shared_memory", "04_copy_and_transpose"
_05, _06, _07 = "05_layout_matmul", "06_tiled_copy_mma", "07_pipelined_simt"
_08, _09, _10 = "08_tensor_cores", "09_hopper_wgmma_tma", "10_hopper_persistent"

_CH02_Q = "Predicted: 3–6 TFLOP/s, 6–12% of cuBLAS, 6–12× the strided kernel"
_CH03_Q = "Predicted at 4096: tiled_32 ≈ 5–8 TFLOP/s, 10–16% of cuBLAS, 1.2–2× the `naive_coalesced` kernel"
_CH05_1D = "Predicted at 4096³: `blocktile_1d` 10–12.5 TFLOP/s for RRR, 19–24% of cuBLAS"
_CH05_S2 = "Predicted at 4096³: 22–32 TFLOP/s, 43–63% of cuBLAS SGEMM"
_CH05_PAD = "padded 0–10% faster than unpadded for RRR and CCR, 0–20% for RCR"
_CH04_SIZES = (8192, 16384)  # "at the large sizes (8192² and 16384² ...)"


def _copy(kernel: str, lo: float, hi: float) -> Prediction:
    return Prediction(_04, kernel, PCT, lo, hi, CH04, f"`{kernel}` | {lo:g}–{hi:g}", sizes=_CH04_SIZES,
                      layouts=("R",))


PREDICTIONS: list[Prediction] = [
    # --- 02: the size is the one the page's result compares at (4096³)
    Prediction(_02, "naive_coalesced", TFLOPS, 3, 6, CH02, _CH02_Q),
    Prediction(_02, "naive_coalesced", PCT, 6, 12, CH02, _CH02_Q),
    Prediction(_02, "naive_coalesced", RATIO, 6, 12, CH02, _CH02_Q, ref=(_02, "naive_strided")),
    # --- 03
    Prediction(_03, "tiled_32", TFLOPS, 5, 8, CH03, _CH03_Q),
    Prediction(_03, "tiled_32", PCT, 10, 16, CH03, _CH03_Q),
    Prediction(_03, "tiled_32", RATIO, 1.2, 2, CH03, _CH03_Q, ref=(_03, "ch02_naive_coalesced")),
    Prediction(_03, "tiled_16", RATIO, 0.75, 1.25, CH03, "Predicted: within ±25% of each other",
               ref=(_03, "tiled_32")),
    # --- 04: % of cudaMemcpy at the two large sizes
    _copy("copy_smem", 80, 95),
    _copy("copy_vec128", 85, 95),
    _copy("copy_vec128_64x64", 90, 100),
    _copy("transpose_naive", 30, 60),
    _copy("transpose_smem", 35, 50),
    _copy("transpose_smem_padded", 75, 90),
    _copy("transpose_smem_padded_64x64", 85, 95),
    # --- 05, step 1
    Prediction(_05, "blocktile_1d", TFLOPS, 10, 12.5, CH05, _CH05_1D),
    Prediction(_05, "blocktile_1d", PCT, 19, 24, CH05, _CH05_1D),
    Prediction(_05, "blocktile_1d", RATIO, 1.2, 1.5, CH05, "1.2–1.5× chapter 03's `tiled_32`",
               ref=(_03, "tiled_32")),
    Prediction(_05, "layout_unpadded", RATIO, 2.3, 2.9, CH05, "2.3–2.9× slower than step 2",
               ref=(_05, "blocktile_1d")),
    Prediction(_05, "blocktile_1d", RATIO, 1.15, 1.20, CH05, "CRR about 15–20% above RCR", layouts=("CRR",),
               ref=(_05, "blocktile_1d"), ref_layout="RCR"),
    Prediction(_05, "blocktile_1d", TFLOPS, 8, 12, CH05,
               "At 1024³ there are 256 blocks, about two per SM at once: 8–12 TFLOP/s", sizes=(1024,)),
    # --- 05, step 2 (the 8×8 tile; the page's "step 2" is `layout_unpadded`, padded is its variant)
    Prediction(_05, "layout_unpadded", TFLOPS, 22, 32, CH05, _CH05_S2),
    Prediction(_05, "layout_unpadded", PCT, 43, 63, CH05, _CH05_S2),
    Prediction(_05, "layout_padded", RATIO, 1.0, 1.1, CH05, _CH05_PAD, ref=(_05, "layout_unpadded")),
    Prediction(_05, "layout_padded", RATIO, 1.0, 1.1, CH05, _CH05_PAD, layouts=("CCR",),
               ref=(_05, "layout_unpadded")),
    Prediction(_05, "layout_padded", RATIO, 1.0, 1.2, CH05, _CH05_PAD, layouts=("RCR",),
               ref=(_05, "layout_unpadded")),
    # --- 06: one idea at a time (written after the 1.32× total was known), then the headline steps
    Prediction(_06, "tiled_ldg128", RATIO, 0.97, 1.08, CH06, "0.97–1.08× `layout_padded`, 29–32.5 TFLOP/s",
               ref=(_06, "ch05_layout_padded")),
    Prediction(_06, "tiled_ldg128", TFLOPS, 29, 32.5, CH06, "0.97–1.08× `layout_padded`, 29–32.5 TFLOP/s"),
    Prediction(_06, "tiled_ldg128_pad4", RATIO, 0.99, 1.05, CH06, "0.99–1.05× `tiled_ldg128`, 29–34 TFLOP/s",
               ref=(_06, "tiled_ldg128")),
    Prediction(_06, "tiled_ldg128_pad4", TFLOPS, 29, 34, CH06, "0.99–1.05× `tiled_ldg128`, 29–34 TFLOP/s"),
    Prediction(_06, "tiled_vec128", RATIO, 1.15, 1.30, CH06, "1.15–1.30× `tiled_ldg128_pad4`",
               ref=(_06, "tiled_ldg128_pad4")),
    Prediction(_06, "tiled_vec128", TFLOPS, 34, 40, CH06, "34–40 TFLOP/s, 66–78% of cuBLAS"),
    Prediction(_06, "tiled_vec128", PCT, 66, 78, CH06, "34–40 TFLOP/s, 66–78% of cuBLAS"),
    Prediction(_06, "tiled_vec128", RATIO, 1.1, 1.3, CH06, "(1.1–1.3× `layout_padded`)",
               ref=(_06, "ch05_layout_padded")),
    Prediction(_06, "tiled_vec128_uncoalesced", RATIO, 0.85, 1.0, CH06, "0.85–1.0× `tiled_vec128`",
               ref=(_06, "tiled_vec128")),
    Prediction(_06, "tiled_prefetch", RATIO, 1.05, 1.25, CH06,
               "1.05–1.25× `tiled_vec128`: 38–48 TFLOP/s, 75–93% of cuBLAS", ref=(_06, "tiled_vec128")),
    Prediction(_06, "tiled_prefetch", TFLOPS, 38, 48, CH06,
               "1.05–1.25× `tiled_vec128`: 38–48 TFLOP/s, 75–93% of cuBLAS"),
    Prediction(_06, "tiled_prefetch", PCT, 75, 93, CH06,
               "1.05–1.25× `tiled_vec128`: 38–48 TFLOP/s, 75–93% of cuBLAS"),
    Prediction(_06, "tiled_prefetch", RATIO, 0.9, 1.1, CH06, "2048³ | within 10% of 4096", sizes=(2048,),
               ref=(_06, "tiled_prefetch"), ref_size=4096),
    Prediction(_06, "tiled_prefetch", TFLOPS, 12, 18, CH06, "`tiled_prefetch` 12–18 TFLOP/s, 35–55% of cuBLAS",
               sizes=(1024,)),
    Prediction(_06, "tiled_prefetch", PCT, 35, 55, CH06, "`tiled_prefetch` 12–18 TFLOP/s, 35–55% of cuBLAS",
               sizes=(1024,)),
    Prediction(_06, "tiled_prefetch_pairs_share_a", RATIO, 0.97, 1.03, CH06,
               "0.97–1.03× `tiled_prefetch`, 41.9–44.5 TFLOP/s", ref=(_06, "tiled_prefetch")),
    Prediction(_06, "tiled_prefetch_pairs_share_a", TFLOPS, 41.9, 44.5, CH06,
               "0.97–1.03× `tiled_prefetch`, 41.9–44.5 TFLOP/s"),
    # --- 07: each step over the one it builds on, in the chapter's own run
    Prediction(_07, "pipelined_s2", RATIO, 1.02, 1.05, CH07, "`pipelined_s2` | +2–5%",
               ref=(_07, "ch06_tiled_prefetch")),
    Prediction(_07, "pipelined_s3", RATIO, 1.0, 1.03, CH07, "`pipelined_s3`, `s4` | +0–3% over `s2`",
               ref=(_07, "pipelined_s2")),
    Prediction(_07, "pipelined_s4", RATIO, 1.0, 1.03, CH07, "`pipelined_s3`, `s4` | +0–3% over `s2`",
               ref=(_07, "pipelined_s2")),
    Prediction(_07, "warp_tiled", RATIO, 1.05, 1.08, CH07, "`warp_tiled` | +5–8%",
               ref=(_07, "pipelined_s3"), note="warp_tiled is pipelined_s3 with its threads numbered by warps"),
    Prediction(_07, "big_tile", TFLOPS, 48, 50, CH07, "48–50 TFLOP/s, 93–97%"),
    Prediction(_07, "big_tile", PCT, 93, 97, CH07, "48–50 TFLOP/s, 93–97%"),
    Prediction(_07, "fragment_pipelined", RATIO, 1.05, 1.10, CH07, "FMA pipe 68 → 75%: +5–10%",
               ref=(_07, "pipelined_s3")),
    # --- 08: bf16, 4096³ RRR, each step over the one before
    Prediction(_08, "mma_fragments", TFLOPS, 150, 200, CH08, "`mma_fragments` | 150–200 TFLOP/s", dtype="bf16"),
    Prediction(_08, "big_tile", RATIO, 1.10, 1.20, CH08, "`big_tile` | +10–20%", dtype="bf16",
               ref=(_08, "swizzled")),
    Prediction(_08, "register_pipelined", RATIO, 1.05, 1.10, CH08, "`register_pipelined` | +5–10%", dtype="bf16",
               ref=(_08, "big_tile")),
    Prediction(_08, "deep_k", RATIO, 1.15, 1.20, CH08, "`deep_k` | +15–20%", dtype="bf16",
               ref=(_08, "register_pipelined")),
    Prediction(_08, "stage_in_pointer", RATIO, 1.10, 1.15, CH08, "`stage_in_pointer` | +10–15%", dtype="bf16",
               ref=(_08, "deep_k")),
    # written down before the run that measured them, not committed before it (the page says so)
    Prediction(_08, "zfill_edges", RATIO, 1.10, 1.20, CH08, "`zfill_edges` | +10–20%", dtype="bf16",
               ref=(_08, "stage_in_pointer"), sealed=False),
    Prediction(_08, "hoisted_swizzle", RATIO, 1.05, 1.10, CH08, "`hoisted_swizzle` | +5–10% over `zfill_edges`",
               dtype="bf16", ref=(_08, "zfill_edges"), sealed=False),
    Prediction(_08, "one_copy_path", RATIO, 1.05, 1.10, CH08, "`one_copy_path` | +5–10% over `hoisted_swizzle`",
               dtype="bf16", ref=(_08, "hoisted_swizzle"), sealed=False),
    Prediction(_08, "no_copy_branch", RATIO, 1.03, 1.08, CH08, "`no_copy_branch` | +3–8% over `one_copy_path`",
               dtype="bf16", ref=(_08, "one_copy_path"), sealed=False),
    Prediction(_08, "two_blocks_per_sm", RATIO, 0.90, 1.10, CH08, "within ±10% of `hoisted_swizzle`",
               dtype="bf16", ref=(_08, "hoisted_swizzle"), sealed=False),
    # (2026-11-26: committed before the run that measured them)
    Prediction(_08, "four_stages", RATIO, 1.03, 1.06, CH08, "`four_stages` | +3–6% over `no_copy_branch`",
               dtype="bf16", ref=(_08, "no_copy_branch")),
    Prediction(_08, "tf32_no_copy_branch", RATIO, 1.05, 1.12, CH08,
               "`tf32_no_copy_branch` | +5–12% over `tf32_hoisted_swizzle`", dtype="tf32", layouts=("RRR", "RCR"),
               ref=(_08, "tf32_hoisted_swizzle")),
    Prediction(_08, "tf32_conflict_free_b", RATIO, 1.05, 1.08, CH08,
               "`tf32_conflict_free_b` | RRR +5–8% over `tf32_no_copy_branch`", dtype="tf32",
               ref=(_08, "tf32_no_copy_branch")),
    Prediction(_08, "tf32_rounded_once", RATIO, 1.10, 1.20, CH08,
               "`tf32_rounded_once` | +10–20% over `tf32_no_copy_branch`", dtype="tf32", layouts=("RRR", "RCR"),
               ref=(_08, "tf32_no_copy_branch")),
    Prediction(_08, "tf32_deep_k", RATIO, 1.03, 1.08, CH08, "`tf32_deep_k` | RCR +3–8% over `tf32_rounded_once`",
               dtype="tf32", layouts=("RCR",), ref=(_08, "tf32_rounded_once")),
    Prediction(_08, "tf32_deep_k", RATIO, 0.85, 0.95, CH08, "RRR −5 to −15% (spills)", dtype="tf32",
               ref=(_08, "tf32_rounded_once")),
    # --- 09: the one prediction of time among the counters (both storage orders the page profiles)
    Prediction(_09, "two_consumers", TIME_RATIO, 0.90, 1.0, CH09, "time −0–10%", dtype="bf16",
               layouts=("RRR", "RCR"), ref=(_09, "tma")),
    # --- 10: an expectation the page says was written before the first run but not committed before it
    Prediction(_10, "persistent", RATIO, 1.02, 1.03, CH10, "the next tile's loads overlap the epilogue | +2–3%",
               dtype="bf16", layouts=("RRR", "RCR"), ref=(_10, "warp_specialized"), sealed=False,
               note="the page: 'read them as the reasoning, not as a sealed prediction'"),
]


def speed_range(p: Prediction) -> tuple[float, float]:
    """The predicted range as the figure draws it: a time ratio becomes the speed ratio it implies."""
    if p.metric == TIME_RATIO:
        return 1.0 / p.hi, 1.0 / p.lo
    return p.lo, p.hi
