"""CTest plots.results_data: plots/results_data.py finds each row's baseline where a chapter has
several cuBLAS rows per size and layout (kernels of several types, each against the cuBLAS of its
type), on the synthetic CSVs of make_synthetic_csv.py.

    python check_results_data.py REPO_ROOT

Standard library only, like results_data.py itself.
"""

import dataclasses
import pathlib
import subprocess
import sys
import tempfile


def fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def expect(got, want, what: str) -> None:
    if isinstance(want, float) and got is not None and abs(got - want) <= 1e-3 * abs(want):
        got = want
    if got != want:
        fail(f"{what}: got {got!r}, want {want!r}")
    print(f"ok: {what}")


def main() -> None:
    if len(sys.argv) != 2:
        fail("usage: check_results_data.py REPO_ROOT")
    repo = pathlib.Path(sys.argv[1])
    sys.path.insert(0, str(repo / "plots"))
    import results_data as rd

    with tempfile.TemporaryDirectory(prefix="mm_results_data_test_") as tmp:
        data = pathlib.Path(tmp)
        subprocess.run([sys.executable, str(pathlib.Path(__file__).with_name("make_synthetic_csv.py")), str(data)],
                       check=True)
        # The example model's CSV, of another schema, sits beside the chapters' and is not read as one.
        (data / "lib_model.csv").write_text("backend,phase,batch,tokens_per_s\ntorch_eager,decode,1,100\n", encoding="utf-8")
        rows = rd.load(data)
        expect([f.name for f in rd.csv_files(data) if f.name.startswith("lib_")], [], "lib_*.csv are not chapters' CSVs")

    def row(chapter, kernel, dtype, layout, n):
        found = [r for r in rows if (r.chapter, r.kernel, r.dtype, r.layout, r.m) == (chapter, kernel, dtype, layout, n)]
        if len(found) != 1:
            fail(f"expected one row {chapter} {kernel} {dtype} {layout} {n}, found {len(found)}")
        return found[0]

    tc = "08_tensor_cores"
    # load() keeps both cuBLAS rows of a size and layout: they differ by dtype.
    cublas = sorted(r.dtype for r in rows if r.chapter == tc and r.kernel == "cuBLAS" and r.layout == "RRR" and r.m == 1024)
    expect(cublas, ["bf16", "tf32"], "two cuBLAS rows at 08 RRR 1024³")
    expect(rd.baseline_of(rows, tc), "cuBLAS", "chapter 08's baseline")
    expect(rd.gpu_gemm_chapters(rows).count(tc), 1, "chapter 08 is a GPU GEMM chapter")
    expect(rd.baseline_dtypes(rows, tc), ["bf16", "tf32"], "chapter 08's baseline dtypes")
    expect(rd.baseline_dtypes(rows, "02_naive_gpu"), ["fp32"], "chapter 02's baseline dtypes")

    # A kernel's baseline is the cuBLAS row of its dtype, layout and size.
    tf32_rrr, tf32_rcr = row(tc, "mma_tf32", "tf32", "RRR", 1024), row(tc, "mma_tf32", "tf32", "RCR", 1024)
    expect(rd.baseline_row(rows, tf32_rrr), row(tc, "cuBLAS", "tf32", "RRR", 1024), "mma_tf32 RRR's baseline row")
    expect(rd.baseline_row(rows, tf32_rcr), row(tc, "cuBLAS", "tf32", "RCR", 1024), "mma_tf32 RCR's baseline row")
    expect(rd.pct_of_baseline(rows, tf32_rrr), 50.0, "mma_tf32 RRR 1024: % of cuBLAS tf32 (not 25% of bf16)")
    expect(rd.pct_of_baseline(rows, tf32_rcr), 80.0, "mma_tf32 RCR 1024: % of RCR's cuBLAS tf32 (not RRR's)")
    expect(rd.pct_of_baseline(rows, row(tc, "mma_bf16", "bf16", "RRR", 1024)), 75.0, "mma_bf16 RRR 1024")
    expect(rd.pct_of_baseline(rows, row(tc, "cuBLAS", "tf32", "RRR", 1024)), 100.0, "a cuBLAS row against itself")
    expect(rd.pct_of_baseline(rows, row(tc, "mma_tf32", "tf32", "RRR", 4096)), 100.0 / 3.0,
           "a pct the CSV gives is taken as it is")
    expect(rd.baseline_label(rows, tf32_rrr), "cuBLAS tf32", "label of a % in a chapter of several types")
    expect(rd.baseline_label(rows, row("02_naive_gpu", "coalesced", "fp32", "RRR", 4096)), "cuBLAS",
           "label of a % in a chapter of one type")
    expect(rd.baseline_label(rows, row("01_cpu_matmul", "naive", "fp32", "RRR", 256)), None, "the CPU chapter")

    # With one baseline row only, a kernel of another dtype is measured against it (a tf32 kernel
    # in an fp32 chapter); with several and none of its dtype, there is no baseline to pick.
    fp32_chapter = row("02_naive_gpu", "coalesced", "fp32", "RRR", 4096)
    tf32_in_fp32 = dataclasses.replace(fp32_chapter, kernel="tf32_kernel", dtype="tf32", pct=None)
    expect(rd.baseline_row(rows, tf32_in_fp32), row("02_naive_gpu", "cuBLAS", "fp32", "RRR", 4096),
           "the only baseline of a one-type chapter")
    fp16 = dataclasses.replace(tf32_rrr, kernel="mma_fp16", dtype="fp16", pct=None)
    expect(rd.baseline_row(rows, fp16), None, "no baseline of the row's dtype among several")
    expect(rd.pct_of_baseline(rows, fp16), None, "no % without a baseline")
    print("PASS")


if __name__ == "__main__":
    main()
