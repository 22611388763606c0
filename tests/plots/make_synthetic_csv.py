"""Writes small, made-up result CSVs (the schema of common/harness/results.hpp) for the plot tests.

The numbers are invented and labelled "synthetic" in the gpu column: they exist only to
exercise plot.py and update_tables.py, and must never be copied into plots/data/.

    python make_synthetic_csv.py OUT_DIR
"""

import pathlib
import sys

HEADER = ("chapter,kernel,dtype,layout,M,N,K,median_ms,min_ms,tflops,gbps,pct_of_cublas,"
          "rel_error,gpu,cuda_version,timestamp")
GPU = "Synthetic GPU (test data)"
CPU = "Synthetic CPU (test data)"
STAMP = "2000-01-01T00:00:00Z"


def gemm_row(chapter, kernel, n, tflops, cublas_tflops=None, layout="RRR", gpu=GPU, cuda="13.0", dtype="fp32"):
    ms = 2.0 * n ** 3 / (tflops * 1e12) * 1e3
    pct = "" if cublas_tflops is None else f"{100.0 * tflops / cublas_tflops:.6g}"
    err = "" if kernel == "cuBLAS" else "1e-07"
    return f"{chapter},{kernel},{dtype},{layout},{n},{n},{n},{ms:.6g},{ms * 0.98:.6g},{tflops:.6g},,{pct},{err},{gpu},{cuda},{STAMP}"


def copy_row(kernel, m, n, gbps, memcpy_gbps):
    ms = 2.0 * 4 * m * n / (gbps * 1e9) * 1e3
    return (f"04_copy_and_transpose,{kernel},fp32,RR,{m},{n},1,{ms:.6g},{ms * 0.98:.6g},,{gbps:.6g},"
            f"{100.0 * gbps / memcpy_gbps:.6g},,{GPU},13.0,{STAMP}")


def main(out_dir: pathlib.Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    sizes = [1024, 2048, 4096]
    cublas = {1024: 30.0, 2048: 48.0, 4096: 50.0}
    files = {}

    cpu = []
    # 1024 is the one size the CPU shares with GPU chapters: the speedup figure draws every bar there.
    for n, naive, ikj, tiled, threads in [(256, 1.2e-3, 9e-3, 1.3e-2, 2.4e-2), (512, 1.0e-3, 8.5e-3, 1.3e-2, 2.5e-2),
                                          (1024, 4e-4, 8e-3, 1.2e-2, 2.6e-2)]:
        for kernel, t in [("naive", naive), ("ikj", ikj), ("blocked", tiled), ("threaded", threads)]:
            cpu.append(gemm_row("01_cpu_matmul", kernel, n, t, gpu=CPU, cuda=""))
    files["ch01_cpu_matmul.csv"] = cpu

    ch02 = []
    for n in sizes:
        ch02 += [gemm_row("02_naive_gpu", "strided", n, 0.4, cublas[n]),
                 gemm_row("02_naive_gpu", "coalesced", n, 3.0 * n / 4096, cublas[n]),
                 gemm_row("02_naive_gpu", "cuBLAS", n, cublas[n])]
    files["ch02_naive_gpu.csv"] = ch02

    # Chapter 03 measured only two sizes: the headline must still be 4096 (most chapters have it).
    files["ch03_tiled_shared_memory.csv"] = [
        r for n in sizes[1:] for r in (gemm_row("03_tiled_shared_memory", "tiled", n, 6.5, cublas[n]),
                                       gemm_row("03_tiled_shared_memory", "cuBLAS", n, cublas[n]))]

    files["ch04_copy_and_transpose.csv"] = [
        copy_row("copy", 8192, 8192, 3900.0, 4200.0), copy_row("transpose_naive", 8192, 8192, 1100.0, 4200.0),
        copy_row("transpose_smem", 8192, 8192, 3600.0, 4200.0),
        f"04_copy_and_transpose,cudaMemcpy,fp32,RR,8192,8192,1,0.127,0.125,,4200,,,{GPU},13.0,{STAMP}"]

    ch05 = []
    for n in sizes:
        for layout in ("RRR", "RCR"):
            ch05.append(gemm_row("05_layout_matmul", "layout_128x128x8", n, 0.45 * cublas[n], cublas[n], layout))
        ch05.append(gemm_row("05_layout_matmul", "cuBLAS", n, cublas[n]))
    files["ch05_layout_matmul.csv"] = ch05

    # A non-square size must be ignored by the size plot and the headline.
    files["extra/ch06_tiled_copy_mma.csv"] = [
        gemm_row("06_tiled_copy_mma", "tiled_mma", 4096, 33.0, 50.0),
        gemm_row("06_tiled_copy_mma", "cuBLAS", 4096, 50.0),
        gemm_row("06_tiled_copy_mma", "tiled_mma", 1024, 18.0, 30.0),
        gemm_row("06_tiled_copy_mma", "cuBLAS", 1024, 30.0),
        "06_tiled_copy_mma,tiled_mma,fp32,RRR,4096,1,4096,1.0,0.9,0.0335,,50,1e-07,"
        f"{GPU},13.0,{STAMP}",
    ]

    # Kernels of two types in one chapter, each against the cuBLAS of its type: per size and layout
    # a bf16 group (cuBLAS bf16, mma_bf16) then a tf32 group (cuBLAS tf32, mma_tf32). At 1024 the
    # kernels' pct is left empty, so that readers compute it: mma_tf32 is 50% of cuBLAS tf32 in RRR
    # (25% of cuBLAS bf16) and 80% in RCR, whose cuBLAS differs.
    ch08, tc = [], "08_tensor_cores"
    for n, layout, bf16_cublas, tf32_cublas in [(4096, "RRR", 600.0, 300.0), (1024, "RRR", 400.0, 200.0),
                                                (1024, "RCR", 400.0, 125.0)]:
        given = n == 4096
        ch08 += [gemm_row(tc, "cuBLAS", n, bf16_cublas, layout=layout, dtype="bf16"),
                 gemm_row(tc, "mma_bf16", n, 0.75 * bf16_cublas, bf16_cublas if given else None, layout, dtype="bf16"),
                 gemm_row(tc, "cuBLAS", n, tf32_cublas, layout=layout, dtype="tf32"),
                 gemm_row(tc, "mma_tf32", n, 100.0, tf32_cublas if given else None, layout, dtype="tf32")]
    files["ch08_tensor_cores.csv"] = ch08

    # A size sweep (chapter "*_sizes"): its own figure, never a chapter of the summary.
    sz = "10_hopper_persistent_sizes"
    files["ch10_sizes.csv"] = [row for n in (1024, 2048, 4096) for layout in ("RRR", "RCR") for row in (
        gemm_row(sz, "cuBLAS", n, 700.0, layout=layout, dtype="bf16"),
        gemm_row(sz, "tma_store", n, 0.5 * n / 40.96 + 600.0, 700.0, layout, dtype="bf16"))]

    # The fp32 size sweep (chapter "06_tiled_copy_mma_sizes"): its own figure, fp32_sizes; a non-multiple
    # of 128 and a rectangular shape among its problems.
    f32 = "06_tiled_copy_mma_sizes"
    files["ch06_sizes.csv"] = [
        f"{f32},{kernel},fp32,RRR,{m},{n},{k},{2.0 * m * n * k / (tf * 1e12) * 1e3:.6g},"
        f"{2.0 * m * n * k / (tf * 1e12) * 1e3:.6g},{tf:.6g},,{'' if kernel == 'cuBLAS' else f'{100 * tf / cb:.6g}'},,"
        f"{GPU},13.0,{STAMP}"
        for m, n, k, cb in [(2048, 2048, 2048, 48.0), (2049, 2049, 2049, 40.0), (8192, 256, 4096, 30.0)]
        for kernel, tf in [("cuBLAS", cb), ("ch06_tiled_prefetch", 0.8 * cb), ("ch07_deep_k", 0.9 * cb)]]

    for name, rows in files.items():
        path = out_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(HEADER + "\n" + "\n".join(rows) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_synthetic_csv.py OUT_DIR")
    main(pathlib.Path(sys.argv[1]))
