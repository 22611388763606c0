"""CTest plots.update_tables: plots/update_tables.py fills marker blocks in a temporary checkout.

    python check_update_tables.py REPO_ROOT
"""

import pathlib
import subprocess
import sys
import tempfile

TOP = """# Project

Intro text that must survive.

<!-- results:summary -->
stale text
<!-- /results -->

Closing text.
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
CH04 = """# Chapter 04

<!-- results:04 -->
<!-- /results -->
"""
# Kernels of two types, each against the cuBLAS of its type (make_synthetic_csv.py's chapter 08).
CH08 = """# Chapter 08

<!-- results:08 -->
<!-- /results -->
"""
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
        files = {"README.md": TOP, "chapters/02_naive_gpu/README.md": CH02,
                 "chapters/04_copy_and_transpose/README.md": CH04, "chapters/08_tensor_cores/README.md": CH08,
                 "chapters/09_hopper/README.md": CH09}
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
        expect = [
            (top, "Intro text that must survive.", "text before the block is kept"),
            (top, "Closing text.", "text after the block is kept"),
            (top, "| [02 naive_gpu](chapters/02_naive_gpu/README.md) | coalesced | 3.00 | 6.0% |",
             "summary row of chapter 02 (best kernel at the headline size 4096)"),
            (top, "| 03 tiled_shared_memory | tiled | 6.50 | 13.0% |", "summary row of a chapter without README"),
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
            (top, "| [08 tensor_cores](chapters/08_tensor_cores/README.md) | mma_bf16 (bf16) | 450 | 75.0% |",
             "summary of a chapter of several types: the winner's dtype, % of its own cuBLAS"),
        ]
        expect.append((ch02, "| tile_point_x | fp32 | RRR | 4096³ |", "the sweep's own block has its rows"))
        for text, needle, what in expect:
            if needle not in text:
                fail(f"{what}: '{needle}' not found in:\n{text}")
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

        # Editing a table by hand makes --check fail again.
        (root / "chapters/02_naive_gpu/README.md").write_text(ch02.replace("6.0%", "60.0%"), encoding="utf-8")
        if run("--check").returncode != 1:
            fail("--check missed a hand-edited table")

        # Unpaired markers: an error naming the file, exit 2.
        (root / "chapters/09_hopper/README.md").write_text("<!-- results:09_hopper -->\nno end\n", encoding="utf-8")
        r = run()
        if r.returncode != 2 or "chapters/09_hopper/README.md" not in r.stderr:
            fail("unpaired markers should exit 2 naming the file")
    print("PASS")


if __name__ == "__main__":
    main()
