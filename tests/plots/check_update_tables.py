"""CTest plots.update_tables: plots/update_tables.py fills marker blocks in a temporary checkout.

    python check_update_tables.py REPO_ROOT

Also the side-by-side block `results:summary-gpus`: on synthetic data with a second GPU directory,
and on the committed pages and H200 results, with and without a temporary H100 copy; the blocks
`results:ladder` (every step of every chapter), `results:limits` (the claims, then where each chapter
loses, with its baseline named) and `results:cpu`; and a block in docs/*.md, whose links are relative
to docs/; and `results:lib_model`, the example model's CSV of its own schema (lib_model.csv, which the
chapters' tables must not read), grouped by step, with gemm_ladder against torch.
"""

import pathlib
import shutil
import subprocess
import sys
import tempfile

TOP = """# Project

Intro text that must survive.

<!-- results:summary -->
stale text
<!-- /results -->

<!-- results:summary-gpus -->
<!-- /results -->

Closing text.
"""
# A page under docs/: its links to the chapters go up one directory.
DOCS = """# Results

<!-- results:summary -->
<!-- /results -->

<!-- results:ladder -->
<!-- /results -->

<!-- results:limits -->
<!-- /results -->

<!-- results:cpu -->
<!-- /results -->
"""
CH02 = """# Chapter 02

<!-- results:02_naive_gpu -->
<!-- /results -->

More tutorial text.

<!-- results:02_naive_gpu_sweep -->
<!-- /results -->
"""
# A tuning sweep's rows (chapter "<chapter>_sweep"): in their own block only, never in the summary or
# in the chapter's table.
SWEEP = ("chapter,kernel,dtype,layout,M,N,K,median_ms,min_ms,tflops,gbps,pct_of_cublas,rel_error,gpu,cuda_version,"
         "timestamp\n"
         "02_naive_gpu_sweep,cuBLAS,fp32,RRR,4096,4096,4096,2.7,2.6,50,,100,,Synthetic GPU (test data),13.0,"
         "2000-01-01T00:00:00Z\n"
         "02_naive_gpu_sweep,tile_point_x,fp32,RRR,4096,4096,4096,2.7,2.6,49.5,,99,,Synthetic GPU (test data),13.0,"
         "2000-01-01T00:00:00Z\n")
HEADER = ("chapter,kernel,dtype,layout,M,N,K,median_ms,min_ms,tflops,gbps,pct_of_cublas,rel_error,gpu,cuda_version,"
          "timestamp\n")


def gemm(chapter, kernel, dtype, layout, m, n, k, tflops, pct=""):
    """One row of a made-up GEMM (the synthetic GPU of make_synthetic_csv.py); pct empty for a baseline."""
    ms = 2.0 * m * n * k / (tflops * 1e12) * 1e3
    return (f"{chapter},{kernel},{dtype},{layout},{m},{n},{k},{ms:.6g},{ms:.6g},{tflops:.6g},,{pct},1e-07,"
            "Synthetic GPU (test data),13.0,2000-01-01T00:00:00Z\n")


# The last two chapters' shapes of claim: chapter 11 (RCR only) with its entry point every_shape, which
# passes cuBLAS at the large squares and loses at 1024³ and a decode shape; swap_ab, a step of skinny M
# only; chapter 10's best measured again (a point of departure, never a step of chapter 11). Chapter 12:
# tf32 and two kinds of fp8 against cuBLAS tf32 and cuBLASLt's fp8 GEMMs, and the tf32 of a row-major B
# (RRR), a step of its own.
CH11_CSV = HEADER + "".join(
    [gemm("11_every_shape", "cuBLAS", "bf16", "RCR", m, n, k, 700.0) + gemm("11_every_shape", "ch10_tma_store", "bf16",
                                                                            "RCR", m, n, k, 0.5 * tf, f"{50 * tf / 700:.6g}")
     + (gemm("11_every_shape", "every_shape", "bf16", "RCR", m, n, k, tf, f"{100 * tf / 700:.6g}"))
     + (gemm("11_every_shape", "swap_ab", "bf16", "RCR", m, n, k, tf, f"{100 * tf / 700:.6g}") if m == 16 else "")
     for m, n, k, tf in [(4096, 4096, 4096, 707.0), (8192, 8192, 8192, 700.0), (1024, 1024, 1024, 560.0),
                         (16, 4096, 4096, 595.0)]])
CH12_CSV = HEADER + "".join(
    [gemm("12_hopper_datatypes", "cuBLAS", "tf32", "RCR", n, n, n, 400.0)
     + gemm("12_hopper_datatypes", "tf32_wgmma", "tf32", "RCR", n, n, n, 392.0, "98")
     + gemm("12_hopper_datatypes", "cuBLAS", "e4m3_block", "RCR", n, n, n, 1300.0)
     + gemm("12_hopper_datatypes", "fp8_block_scaled", "e4m3_block", "RCR", n, n, n, 0.01 * pct * 1300.0, f"{pct}")
     + gemm("12_hopper_datatypes", "cuBLAS", "tf32", "RRR", n, n, n, 400.0)
     + gemm("12_hopper_datatypes", "tf32_transpose_b", "tf32", "RRR", n, n, n, 0.01 * tt * 400.0, f"{tt}")
     for n, pct, tt in [(4096, 75, 89.5), (8192, 72, 90)]])
# Rows the ladder leaves out: chapter 01's thread sweep, and a dead end of chapter 05's appendix run.
THREADS_CSV = HEADER + gemm("01_cpu_matmul", "threaded_2", "fp32", "RRR", 1024, 1024, 1024, 0.002)
APPENDIX_CSV = HEADER + gemm("05_layout_matmul", "cuBLAS", "fp32", "RRR", 4096, 4096, 4096, 50.0) + gemm(
    "05_layout_matmul", "dead_end_step", "fp32", "RRR", 4096, 4096, 4096, 10.0, "20")

CH04 = """# Chapter 04

<!-- results:04 -->
<!-- /results -->
"""
# Kernels of two types, each against the cuBLAS of its type (make_synthetic_csv.py's chapter 08).
CH08 = """# Chapter 08

<!-- results:08 -->
<!-- /results -->
"""
# Chapter 11's steps by class of shape: three squares and one decode shape (on a page of docs/, so that
# chapter 11 keeps no README of its own and the other tables keep their unlinked cells).
CH11 = """# Chapter 11

<!-- results:11_every_shape.classes -->
<!-- /results -->
"""
# The example model's CSV (python/examples/llama_decoder.py's columns): two steps, four backends.
MODEL = """# The model

<!-- results:lib_model -->
<!-- /results -->
"""
MODEL_COLUMNS = ("backend,linear,compile_mode,phase,batch,tokens,context,layers,median_ms,min_ms,tokens_per_s,"
                 "pct_of_torch_eager,pct_of_torch_compile,max_abs_diff,max_rel_diff,tolerance_rel,within_tolerance,"
                 "compile_s,gpu,torch_version,timestamp\n")
MODEL_CSV = MODEL_COLUMNS + "".join(
    f"{b},{lin},{mode},{ph},{batch},{tok},{ctx},4,{ms},{ms},{tps},{pe},{pc},{d},{rel},0.03125,yes,{cs},Synthetic GPU,2.11.0,2026-01-01T00:00:00Z\n"
    for b, lin, mode, ph, batch, tok, ctx, ms, tps, pe, pc, d, rel, cs in [
        ("torch_eager", "torch", "eager", "prefill", 1, 4096, 0, 10, 409600, 100, 95, 0, 0, ""),
        ("ours_eager", "gemm_ladder", "eager", "prefill", 1, 4096, 0, 10.2, 401568.6, 98.04, 93.14, 0.0469, 0.0098, ""),
        ("torch_compile", "torch", "default", "prefill", 1, 4096, 0, 9.5, 431157.9, 105.26, 100, 0.03, 0.006, 35.2),
        ("ours_compile", "gemm_ladder", "default", "prefill", 1, 4096, 0, 9.6, 426666.7, 104.17, 98.96, 0.04, 0.008, 30.4),
        ("torch_eager", "torch", "eager", "decode", 64, 64, 512, 3, 21333.33, 100, 90, 0, 0, ""),
        ("ours_eager", "gemm_ladder", "eager", "decode", 64, 64, 512, 3.2, 20000, 93.75, 84.38, 0.05, 0.01, ""),
        ("torch_compile", "torch", "default", "decode", 64, 64, 512, 2.7, 23703.7, 111.11, 100, 0.03, 0.006, 20.1),
        ("ours_compile", "gemm_ladder", "default", "decode", 64, 64, 512, 2.6, 24615.38, 115.38, 103.85, 0.04, 0.008, 21.7)])
CH09 = """# Chapter 09 (no results yet)

<!-- results:09_hopper -->
<!-- /results -->
"""


def fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def main() -> None:
    repo = pathlib.Path(sys.argv[1])
    script = repo / "plots" / "update_tables.py"
    with tempfile.TemporaryDirectory(prefix="mm_tables_test_") as tmp:
        root = pathlib.Path(tmp)
        data = root / "plots" / "data" / "h200"
        subprocess.run([sys.executable, str(pathlib.Path(__file__).with_name("make_synthetic_csv.py")), str(data)],
                       check=True)
        (data / "02_naive_gpu_sweep.csv").write_text(SWEEP, encoding="utf-8")
        (data / "ch11_every_shape.csv").write_text(CH11_CSV, encoding="utf-8")
        (data / "ch12_hopper_datatypes.csv").write_text(CH12_CSV, encoding="utf-8")
        (data / "ch01_thread_sweep.csv").write_text(THREADS_CSV, encoding="utf-8")
        (data / "ch05_layout_matmul_appendix.csv").write_text(APPENDIX_CSV, encoding="utf-8")
        (data / "lib_model.csv").write_text(MODEL_CSV, encoding="utf-8")
        files = {"docs/model.md": MODEL, "README.md": TOP, "chapters/02_naive_gpu/README.md": CH02,
                 "chapters/04_copy_and_transpose/README.md": CH04, "chapters/08_tensor_cores/README.md": CH08,
                 "chapters/09_hopper/README.md": CH09, "docs/classes.md": CH11,
                 "docs/results.md": DOCS}
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text, encoding="utf-8")

        def run(*args):
            r = subprocess.run([sys.executable, str(script), "--root", str(root), *args], capture_output=True, text=True)
            print(f"$ update_tables.py {' '.join(args)} -> {r.returncode}\n{r.stdout}{r.stderr}")
            return r

        if run("--check").returncode != 1:
            fail("--check should exit 1 while blocks are stale")
        if (root / "README.md").read_text(encoding="utf-8") != TOP:
            fail("--check modified a file")
        if run().returncode != 0:
            fail("updating the blocks failed")
        if run("--check").returncode != 0:
            fail("--check should exit 0 right after an update")

        top = (root / "README.md").read_text(encoding="utf-8")
        ch02 = (root / "chapters/02_naive_gpu/README.md").read_text(encoding="utf-8")
        ch04 = (root / "chapters/04_copy_and_transpose/README.md").read_text(encoding="utf-8")
        ch08 = (root / "chapters/08_tensor_cores/README.md").read_text(encoding="utf-8")
        ch09 = (root / "chapters/09_hopper/README.md").read_text(encoding="utf-8")
        docs = (root / "docs/results.md").read_text(encoding="utf-8")
        ch11 = (root / "docs/classes.md").read_text(encoding="utf-8")
        model = (root / "docs/model.md").read_text(encoding="utf-8")
        expect = [
            (model, "| prefill, 4,096 tokens | torch, eager | 10 | 409,600 | 100.0% | 95.0% | 0 (0.00%) | – |",
             "model: a step's first row names it"),
            (model, "|  | gemm_ladder, eager | 3.2 | 20,000 | 93.8% | 84.4% | 0.05 (1.00%) | – |",
             "model: the step's other backends leave the step's cell empty"),
            (model, "Eager, gemm_ladder runs at 93.8–98.0% of torch's tokens/s, at or above issue 39's target of 97% "
                    "in 1 of 2 steps. Compiled, gemm_ladder runs at 99.0–103.8% of torch's tokens/s, at or above "
                    "issue 39's target of 97% in 2 of 2 steps.", "model: gemm_ladder against torch in the same mode"),
            # By class of shape: the squares' geometric mean of 101, 100 and 80% is 93.1%.
            (ch11, "| step | squares (3) | decode (1) |", "classes: only the classes the suite has, with their counts"),
            (ch11, "| `every_shape` | 93.1% (80.0%–101.0%) | 85.0% (85.0%–85.0%) |",
             "classes: geometric mean, worst and best of a step per class"),
            (ch11, "| `swap_ab` | – | 85.0% (85.0%–85.0%) |", "classes: a step not run on a class shows a dash"),
            (top, "Intro text that must survive.", "text before the block is kept"),
            (top, "Closing text.", "text after the block is kept"),
            (top, "| [02 naive_gpu](chapters/02_naive_gpu/README.md) | one thread per element of C; coalesced loads "
                  "| coalesced | fp32, RRR | 3.00 | 6.0% of cuBLAS SGEMM |",
             "summary row of chapter 02 (its idea, best kernel at the headline size 4096, its problem, its baseline)"),
            (top, "| 03 tiled_shared_memory | tiles of A and B in shared memory | tiled | fp32, RRR | 6.50 | 13.0% of "
                  "cuBLAS SGEMM |",
             "summary row of a chapter without README"),
            (top, "| every_shape | bf16, RCR | 707 | 101.0% of cuBLAS bf16 |",
             "summary: chapter 11 on its own problem (RCR), its entry point, not chapter 10's best it measures again"),
            (top, "| fp8_block_scaled | e4m3_block, RCR | 975 | 75.0% of cuBLASLt fp8, block scales |",
             "summary: chapter 12's fastest step against cuBLASLt's block-scaled GEMM, named"),
            (top, "| 26.0 GFLOP/s (CPU, 1024³) | 0.087% of cuBLAS SGEMM at 1024³ |",
             "the CPU chapter against cuBLAS SGEMM at its size (30 TFLOP/s in chapters 02 and 05 at 1024³)"),
            (docs, "| [02 naive_gpu](../chapters/02_naive_gpu/README.md) |", "a docs/ page links up one directory"),
            (docs, "| 05 layout_matmul | layout_128x128x8 | fp32 | cuBLAS SGEMM | 4096³ | RRR, RCR | 45.0% |",
             "limits: the best kernel over the headline size and every order, its baseline named"),
            (docs, "| 11 every_shape | every_shape | bf16 | cuBLAS bf16 | 4096³, 8192³ | RCR | 100.0–101.0% |",
             "limits: chapter 11's entry point at the large squares"),
            (docs, "|  | fp8_block_scaled | e4m3_block | cuBLASLt fp8, block scales | 4096³, 8192³ | RCR | 72.0–75.0% |",
             "limits: chapter 12's block-scaled fp8 against cuBLASLt's block-scaled GEMM"),
            (docs, "|  | tf32_transpose_b | tf32 | cuBLAS tf32 | 4096³, 8192³ | RRR | 89.5–90.0% |",
             "limits: chapter 12's RRR tf32, the best tf32 step in an order its best tf32 step does not run"),
            # Where each chapter loses: every chapter with a baseline, every problem its step was measured on.
            (docs, "| [02 naive_gpu](../chapters/02_naive_gpu/README.md) | coalesced | fp32 | cuBLAS SGEMM | 3: RRR "
                   "(`ch02_naive_gpu`) | 2.5–6.0% | 3 of 3 | all 3 | 1024³: 2.5% |",
             "losses: a chapter below its baseline everywhere"),
            (docs, "| [04 copy_and_transpose](../chapters/04_copy_and_transpose/README.md) | copy | fp32 | cudaMemcpy |",
             "losses: the copy chapter against cudaMemcpy"),
            (docs, "| 11 every_shape | every_shape | bf16 | cuBLAS bf16 | 4: RCR (`ch11_every_shape`) | 80.0–101.0% | "
                   "2 of 4 | 1024³: 80.0%, 16×4096×4096: 85.0% | 1024³: 80.0% |",
             "losses: a step that passes its baseline somewhere lists each problem below 90%, lowest first"),
            (docs, "| 06 tiled_copy_mma | tiled_mma | fp32 | cuBLAS SGEMM | 3: RRR (`ch06_tiled_copy_mma`) | 50.0–66.0% | 3 of 3 | all 3 | 4096×1×4096: 50.0% |",
             "losses: a non-square problem of the chapter's run counts (the 4096×1×4096 row)"),
            (docs, "|  | fp8_block_scaled | e4m3_block | cuBLASLt fp8, block scales | 2: RCR (`ch12_hopper_datatypes`) | "
                   "72.0–75.0% | 2 of 2 | all 2 | 8192³: 72.0% |",
             "losses: chapter 12's block-scaled fp8, its baseline named"),
            # The ladder: every step of every chapter, at 4096³ (the copies at their largest matrix, the CPU
            # at 1024³), in the chapter's own order, against the baseline of its type.
            (docs, "| [02 naive_gpu](../chapters/02_naive_gpu/README.md) | strided | fp32 | RRR | 4096³ | 0.4 | 0.8% "
                   "| cuBLAS SGEMM |\n|  | coalesced | fp32 | RRR | 4096³ | 3.00 | 6.0% | cuBLAS SGEMM |",
             "ladder: chapter 02's two steps in the order of its run"),
            (docs, "| 01 cpu_matmul | naive | fp32 | RRR | 1024³ | 0.4 GFLOP/s | "
                   "0.0013% | cuBLAS SGEMM at 1024³ (GPU chapters' runs) |",
             "ladder: the CPU at its naive loop's largest size against cuBLAS SGEMM there"),
            (docs, "| transpose_naive | fp32 | RR | 8192×8192 | 1,100 GB/s | 26.2% | cudaMemcpy |",
             "ladder: the copy chapter in GB/s against cudaMemcpy"),
            (docs, "|  | mma_tf32 | tf32 | RRR | 4096³ | 100 | 33.3% | cuBLAS tf32 |",
             "ladder: a tf32 step against cuBLAS tf32, not bf16"),
            (docs, "|  | swap_ab | bf16 | RCR | not run at 4096³: 1 problem with M = 16 | – | – | cuBLAS bf16 |",
             "ladder: a step that does not run at the headline size says where it runs"),
            (docs, "|  | fp8_block_scaled | e4m3_block | RCR | 4096³ | 975 | 75.0% | cuBLASLt fp8, block scales |",
             "ladder: block-scaled fp8 against cuBLASLt's block-scaled GEMM"),
            (docs, "|  | tf32_transpose_b | tf32 | RRR | 4096³ | 358 | 89.5% | cuBLAS tf32 |",
             "ladder: a step of its chapter's other order in that order"),
            (docs, "naive loop runs at 0.4 GFLOP/s and its fastest kernel, `threaded`, at 26.0 GFLOP/s: 65.0× faster",
             "the CPU sentence"),
            (top, "of cudaMemcpy", "the copy chapter's summary row is against cudaMemcpy"),
            (ch02, "| coalesced | fp32 | RRR | 4096³ |", "chapter 02's 4096 row"),
            (ch02, "| cuBLAS | fp32 | RRR | 4096³ |", "chapter 02's cuBLAS row"),
            (ch02, "More tutorial text.", "chapter text after the block is kept"),
            (ch04, "| GB/s | % of cudaMemcpy |", "copy chapter reports GB/s against cudaMemcpy"),
            (ch09, "_No results for `09_hopper`", "a chapter without data says so"),
            # Two cuBLAS rows per size and layout; each kernel's % is of the one of its dtype.
            (ch08, "| % of cuBLAS (same dtype) |", "a chapter of several types says which cuBLAS"),
            (ch08, "| cuBLAS | bf16 | RRR | 4096³ |", "chapter 08's bf16 cuBLAS row"),
            (ch08, "| cuBLAS | tf32 | RRR | 4096³ |", "chapter 08's tf32 cuBLAS row"),
            (ch08, "| mma_tf32 | tf32 | RRR | 1024³ | 0.02147 | 100 | 50.0% |", "% of cuBLAS tf32, not of bf16 (25%)"),
            (ch08, "| mma_tf32 | tf32 | RCR | 1024³ | 0.02147 | 100 | 80.0% |", "% of RCR's cuBLAS tf32, not RRR's"),
            (ch08, "| mma_bf16 | bf16 | RRR | 1024³ | 0.007158 | 300 | 75.0% |", "% of cuBLAS bf16"),
            (top, "| [08 tensor_cores](chapters/08_tensor_cores/README.md) | tensor cores: mma.sync and ldmatrix on swizzled "
                  "tiles | mma_bf16 | bf16, RRR | 450 | 75.0% of cuBLAS bf16 |",
             "summary of a chapter of several types: the winner's dtype, % of its own cuBLAS"),
        ]
        expect.append((ch02, "| tile_point_x | fp32 | RRR | 4096³ |", "the sweep's own block has its rows"))
        for text, needle, what in expect:
            if needle not in text:
                fail(f"{what}: '{needle}' not found in:\n{text}")
        limits = docs.split("<!-- results:limits -->")[1].split("<!-- /results -->")[0]
        claims, losses = limits.split("Where they lose")
        if "08_tensor_cores" in claims:
            fail("limits: chapter 08 measured its best kernel at one size and order only: no row of its own")
        if "08_tensor_cores" not in losses or "02_naive_gpu" not in losses:
            fail(f"limits: every GPU chapter has a row where it loses, one size or many:\n{losses}")
        if "every_shape" not in losses.split("11 every_shape")[1].split("\n")[0]:
            fail(f"limits: chapter 11's row is its entry point's:\n{losses}")
        ladder = docs.split("<!-- results:ladder -->")[1].split("<!-- /results -->")[0]
        for left_out, why in [("threaded_2", "chapter 01's thread sweep"), ("dead_end_step", "an appendix's dead end"),
                              ("ch10_tma_store", "the previous chapter's best measured again"),
                              ("tile_point_x", "a tuning sweep"), ("| cuBLAS |", "the baseline")]:
            if left_out in ladder:
                fail(f"ladder: {why} is not a step ('{left_out}' found):\n{ladder}")
        if "| 1024³ | 0.4 GFLOP/s |" not in ladder or "| RCR | 1024³ |" in ladder:
            fail(f"ladder: the CPU at 1024³, the GPU chapters at 4096³ only:\n{ladder}")
        if "sweep" in top:
            fail("a tuning sweep must not appear in the summary")
        if ch02.split("<!-- results:02_naive_gpu_sweep -->")[0].count("tile_point_x"):
            fail("a tuning sweep's rows must not appear in its chapter's table")
        if "| % of cuBLAS |" not in ch02:
            fail(f"a chapter of one type keeps the plain '% of cuBLAS' header:\n{ch02}")
        if "(fp32)" in top:
            fail(f"a chapter of one type shows no dtype after its best kernel:\n{top}")
        if "stale text" in top:
            fail("the old block content was not replaced")

        # Side by side: the H100 column exists before its data does, "–" in every row.
        gpus = top.split("<!-- results:summary-gpus -->")[1]
        for needle, what in [("| H200: best kernel | H200 at 4096³: TFLOP/s (% of baseline) | H100 80GB HBM3: best kernel |",
                              "one pair of columns per GPU"),
                             ("| [02 naive_gpu](chapters/02_naive_gpu/README.md) | coalesced | 3.00 (6.0%) | – | – |",
                              "chapter 02 on the H200, nothing yet on the H100"),
                             ("`plots/data/h100-80gb-hbm3/` (no CSV yet)", "a GPU without CSVs says so")]:
            if needle not in gpus:
                fail(f"summary-gpus: {what}: '{needle}' not found in:\n{gpus}")
        # An H100 directory appears: the block is stale until updated, then shows its numbers and a "–"
        # for the chapter it lacks.
        h100 = root / "plots" / "data" / "h100-80gb-hbm3"
        h100.mkdir(parents=True)
        for f in sorted(data.rglob("*.csv")):
            if f.name in ("ch03_tiled_shared_memory.csv",):
                continue
            text = f.read_text(encoding="utf-8").replace(",3,,6,1e-07,", ",2.4,,4.8,1e-07,")
            (h100 / f.name).write_text(text.replace("Synthetic GPU (test data)", "Synthetic H100 (test data)"),
                                       encoding="utf-8")
        if run("--check").returncode != 1:
            fail("--check should exit 1 once an H100 directory has CSVs the block does not show")
        if run().returncode != 0 or run("--check").returncode != 0:
            fail("updating the side-by-side block failed")
        gpus = (root / "README.md").read_text(encoding="utf-8").split("<!-- results:summary-gpus -->")[1]
        for needle, what in [("| [02 naive_gpu](chapters/02_naive_gpu/README.md) | coalesced | 3.00 (6.0%) | coalesced | 2.40 (4.8%) |",
                              "chapter 02 on both GPUs, each its own numbers"),
                             ("| 03 tiled_shared_memory | tiled | 6.50 (13.0%) | – | – |",
                              "a chapter the H100 has no CSV of")]:
            if needle not in gpus:
                fail(f"summary-gpus with an H100: {what}: '{needle}' not found in:\n{gpus}")
        if run("--gpus", "no-such-gpu").returncode != 0:
            fail("--gpus naming a directory without CSVs should fill its column with '–', not fail")
        run()

        # Editing a table by hand makes --check fail again.
        (root / "chapters/02_naive_gpu/README.md").write_text(ch02.replace("6.0%", "60.0%"), encoding="utf-8")
        if run("--check").returncode != 1:
            fail("--check missed a hand-edited table")

        # Unpaired markers: an error naming the file, exit 2.
        (root / "chapters/09_hopper/README.md").write_text("<!-- results:09_hopper -->\nno end\n", encoding="utf-8")
        r = run()
        if r.returncode != 2 or "chapters/09_hopper/README.md" not in r.stderr:
            fail("unpaired markers should exit 2 naming the file")
        check_committed(repo, script, pathlib.Path(tmp))
    print("PASS")


def check_committed(repo: pathlib.Path, script: pathlib.Path, tmp: pathlib.Path) -> None:
    """The committed READMEs and results: --check passes on them (CI's case); with a relabelled H200
    copy as the H100 directory it fails until updated, and the block then shows both."""
    root = tmp / "committed"
    for f in [repo / "README.md", *sorted((repo / "docs").glob("*.md")), *sorted((repo / "chapters").glob("*/README.md"))]:
        dest = root / f.relative_to(repo)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(f, dest)
    # Every committed GPU directory (the H200's and, once measured, the H100's): the README shows them all.
    for gpu_dir in sorted(p for p in (repo / "plots" / "data").iterdir() if p.is_dir()):
        shutil.copytree(gpu_dir, root / "plots" / "data" / gpu_dir.name, ignore=shutil.ignore_patterns("profiles"))

    def run(*args):
        r = subprocess.run([sys.executable, str(script), "--root", str(root), *args], capture_output=True, text=True)
        print(f"$ update_tables.py (committed) {' '.join(args)} -> {r.returncode}\n{r.stdout}{r.stderr}")
        return r

    # The two GPUs side by side are on docs/results.md, linked from the README.
    gpus_page = root / "docs" / "results.md"
    if "<!-- results:summary-gpus -->" not in gpus_page.read_text(encoding="utf-8"):
        fail("docs/results.md has no 'results:summary-gpus' block")
    if run("--check").returncode != 0:
        fail("--check must pass on the committed READMEs and data")
    # The top README and the documentation's main page quote the ladder's numbers only through blocks
    # that update_tables fills (so none goes stale): a percentage or a FLOP rate outside a block fails.
    import re
    for page in ("README.md", "docs/mainpage.md"):
        text = (repo / page).read_text(encoding="utf-8")
        for block in ("summary", "limits"):
            if f"<!-- results:{block} -->" not in text:
                fail(f"{page} has no 'results:{block}' block")
        prose = re.sub(r"<!--\s*results:[\w.-]+\s*-->.*?<!--\s*/results\s*-->", "", text, flags=re.S)
        typed = re.findall(r"\d[\d.,–-]*\s*%|\d[\d.,]*\s*[TG]FLOP/s", prose)
        if typed:
            fail(f"{page}: numbers typed by hand outside the generated blocks: {typed}")
    # The whole ladder (docs/results.md): a row of every chapter with a page, and no step of an appendix run
    # (chNN_*_appendix.csv) that the chapter's main run does not have; where each loses (the limits block's
    # second table, on the README): every GPU chapter.
    import csv
    results = (repo / "docs" / "results.md").read_text(encoding="utf-8")
    if "<!-- results:ladder -->" not in results:
        fail("docs/results.md has no 'results:ladder' block")
    ladder = results.split("<!-- results:ladder -->")[1].split("<!-- /results -->")[0]
    losses = (repo / "README.md").read_text(encoding="utf-8").split("<!-- results:limits -->")[1] \
        .split("<!-- /results -->")[0].split("Where they lose")[-1]
    data = repo / "plots" / "data" / "h200"
    for page in sorted((repo / "chapters").glob("*/README.md")):
        chapter = page.parent.name
        if f"(../chapters/{chapter}/README.md)" not in ladder:
            fail(f"the ladder has no row of chapter {chapter}:\n{ladder}")
        if chapter[:2] not in ("01",) and f"(chapters/{chapter}/README.md)" not in losses:
            fail(f"the README's limits do not say where chapter {chapter} loses:\n{losses}")
    steps, chapter = set(), ""  # (chapter number, step): a row with an empty chapter cell is the one above's
    for line in ladder.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) > 1:
            chapter = cells[0].lstrip("[")[:2] or chapter
            steps.add((chapter, cells[1]))
    for appendix in sorted(data.glob("*_appendix.csv")):
        with open(appendix, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            if "kernel" not in (reader.fieldnames or []):
                continue  # not a chapter's kernels (the Python model's runs: lib_model_*_appendix.csv)
            dead_ends = {r["kernel"] for r in reader}
        # Its dead ends: the kernels no main run of the chapter has (its main files, chNN_*.csv: the one
        # beside it, and those of an appendix run of its own, such as chapter 12's suite in clusters).
        for main_run in sorted(data.glob(appendix.name[:4] + "*.csv")):
            if main_run.stem.endswith("_appendix"):
                continue
            with open(main_run, newline="", encoding="utf-8") as f:
                dead_ends -= {r.get("kernel") for r in csv.DictReader(f)}
        shown = {k for k in dead_ends if (appendix.name[2:4], k) in steps}
        if shown:
            fail(f"the ladder shows appendix steps {sorted(shown)} of {appendix.name}")
    if not any(num == "12" for num, _ in steps) or ("05", "layout_padded") not in steps:
        fail(f"the ladder's rows were not read: {sorted(steps)}")
    # From here on the H100 directory is a relabelled copy of the H200's (minus chapter 10), so the
    # cells it must give are known; the committed H100 results, if any, make way for it.
    h100 = root / "plots" / "data" / "h100-80gb-hbm3"
    shutil.rmtree(h100, ignore_errors=True)
    shutil.copytree(root / "plots" / "data" / "h200", h100)
    (h100 / "ch10_hopper_persistent.csv").unlink()
    for f in h100.glob("*.csv"):
        f.write_text(f.read_text(encoding="utf-8").replace("NVIDIA H200", "NVIDIA H100 80GB HBM3"), encoding="utf-8")
    if run("--check").returncode != 1:
        fail("--check must fail once an H100 directory has CSVs the README does not show")
    if run().returncode != 0 or run("--check").returncode != 0:
        fail("update with the H100 copy failed")
    top = (root / "README.md").read_text(encoding="utf-8")
    block = gpus_page.read_text(encoding="utf-8").split("<!-- results:summary-gpus -->")[1].split("<!-- /results -->")[0]
    rows = [line for line in block.splitlines() if line.startswith("| [")]
    ch10 = [line for line in rows if "10_hopper_persistent" in line]
    chapters = len({p.name for p in (root / "chapters").iterdir() if (p / "README.md").is_file()})
    if len(rows) != chapters or not ch10 or not ch10[0].endswith("| – | – |"):
        fail(f"expected {chapters} chapter rows, chapter 10 with '–' on the H100 copy:\n{block}")
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if "10_hopper" not in line and (cells[1] != cells[3] or cells[2] != cells[4]):
            fail(f"the H100 copy of the H200 data must give the same cells: {line}")
    # The chapter tables are untouched by the second GPU.
    if top.split("<!-- results:summary -->")[1].split("<!-- /results -->")[0] != \
            (repo / "README.md").read_text(encoding="utf-8").split("<!-- results:summary -->")[1].split("<!-- /results -->")[0]:
        fail("the single-GPU summary changed when an H100 directory appeared")
    print("ok: summary-gpus on the committed data, with and without an H100 copy")


if __name__ == "__main__":
    main()
