"""CTest plots.plot_py: plots/plot.py draws every figure from a small synthetic CSV set.

    python check_plot.py REPO_ROOT

Skipped (exit 77, CTest's SKIP_RETURN_CODE for it) when this Python cannot import matplotlib: offline,
scripts/test.sh runs every other test and reports this one as skipped with that reason, never as passed.
With matplotlib, fails (exit 1) if a figure is missing or empty, or if a directory without CSVs is not
rejected with exit 2. Then checks, on the committed H200 results (plots/data/h200), what the new figures
claim: one size in the speedup figure, every roofline point under its roofs, every prediction of
plots/predictions.py quoted from its page and found in the CSVs. The drawing of those results (every
figure written, the fp32 size sweep skipped cleanly when its CSV is absent) is checked by
plots.figures_reproducible, which draws them anyway (check_committed_drawing below): one drawing, not two.
"""

import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

FIGURES = ["ladder", "speedup_vs_cpu", "best_vs_size", "copy_bandwidth", "vs_cublas_sizes", "fp32_sizes",
           "ladder_ch01", "ladder_ch02", "ladder_ch03", "ladder_ch04", "ladder_ch05", "ladder_ch06", "ladder_ch08"]
# Drawn from the committed H200 results (the roofline needs the chapters' real kernel names).
COMMITTED_FIGURES = ["ladder", "speedup_vs_cpu", "best_vs_size", "roofline_fp32", "copy_bandwidth",
                     "vs_cublas_sizes", "predicted_vs_measured", "ch11_suite", "ch11_which_kernel"] + [
                         f"ladder_ch{n:02d}" for n in range(1, 12)]

SKIP = 77  # CTest's SKIP_RETURN_CODE for this test (tests/plots/CMakeLists.txt)


def fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def main() -> None:
    if len(sys.argv) != 2:
        fail("usage: check_plot.py REPO_ROOT")
    repo = pathlib.Path(sys.argv[1])
    try:
        import matplotlib  # noqa: F401  (what plot.py needs; importing it is the test of "importable")
    except ImportError as e:
        # Skipped, not failed: without matplotlib nothing here can be checked, and offline that is expected
        # (scripts/run_all.sh then skips the figures too). scripts/test_summary.py groups this reason.
        print(f"SKIP: matplotlib is not importable by {sys.executable} ({e}): to run this test, install "
              "plots/requirements.txt into that Python (scripts/test.sh does, into .venv, when PyPI is reachable), "
              "or configure with -DMM_PYTHON=/path/to/a/python/with/matplotlib")
        sys.exit(SKIP)
    plot = repo / "plots" / "plot.py"
    with tempfile.TemporaryDirectory(prefix="mm_plot_test_") as tmp:
        tmp = pathlib.Path(tmp)
        data, out = tmp / "data", tmp / "images"
        subprocess.run([sys.executable, str(pathlib.Path(__file__).with_name("make_synthetic_csv.py")), str(data)],
                       check=True)
        r = subprocess.run([sys.executable, str(plot), "--data", str(data), "--out", str(out)],
                           capture_output=True, text=True)
        print(r.stdout + r.stderr)
        if r.returncode != 0:
            fail(f"plot.py exited {r.returncode} on the synthetic data")
        for name in FIGURES:
            for ext, magic in (("png", b"\x89PNG"), ("svg", b"<svg")):
                f = out / f"{name}.{ext}"
                if not f.is_file() or f.stat().st_size == 0:
                    fail(f"{f.name} was not written (or is empty)")
                head = f.read_bytes()[:4096]
                if magic not in head:
                    fail(f"{f.name} is not a {ext.upper()} file")
                print(f"ok: {f.name} ({f.stat().st_size} bytes)")

        # --headline picks another size; a size nobody measured is a one-line error, exit 2. Only the ladder and
        # best_vs_size depend on it, and one chapter's CSV draws both: drawn from that CSV alone, not every figure
        # a second time (CI time: 8.0 -> 1.9 s of CPU).
        one = tmp / "one_chapter"
        one.mkdir()
        shutil.copy(data / "ch05_layout_matmul.csv", one)
        r = subprocess.run([sys.executable, str(plot), "--data", str(one), "--out", str(tmp / "h2048"),
                            "--headline", "2048"], capture_output=True, text=True)
        if r.returncode != 0 or not all((tmp / "h2048" / f).is_file() for f in ("ladder.png", "best_vs_size.png")):
            fail(f"--headline 2048 failed: {r.stderr.strip()}")
        r = subprocess.run([sys.executable, str(plot), "--data", str(one), "--out", str(tmp / "bad"),
                            "--headline", "3000"], capture_output=True, text=True)
        if r.returncode != 2 or "--headline" not in r.stderr:
            fail(f"--headline 3000 (not measured) should exit 2 naming the flag, got {r.returncode}: {r.stderr.strip()}")

        # No CSV at all: one clear line, exit 2, nothing drawn.
        empty = tmp / "empty"
        empty.mkdir()
        r = subprocess.run([sys.executable, str(plot), "--data", str(empty), "--out", str(tmp / "none")],
                           capture_output=True, text=True)
        lines = r.stderr.strip().splitlines()
        if r.returncode != 2 or len(lines) != 1 or "no .csv" not in lines[0]:
            fail(f"an empty data dir should give one line and exit 2, got {r.returncode}: {r.stderr!r}")
        if (tmp / "none").exists():
            fail("plot.py wrote images although there was no data")
        print(f"ok: empty data dir rejected: {lines[0]}")
        # The synthetic kernels are not the pages' kernels: the predictions figure is skipped, not an error.
        if (out / "predicted_vs_measured.png").exists():
            fail("predicted_vs_measured was drawn from synthetic data that has none of the predicted kernels")
        print("ok: predicted_vs_measured skipped on the synthetic data")
        check_committed(repo)
    print("PASS")


def check_files(out: pathlib.Path, names) -> None:
    for name in names:
        for ext, magic in (("png", b"\x89PNG"), ("svg", b"<svg")):
            f = out / f"{name}.{ext}"
            if not f.is_file() or f.stat().st_size == 0:
                fail(f"{f.name} was not written (or is empty)")
            if magic not in f.read_bytes()[:4096]:
                fail(f"{f.name} is not a {ext.upper()} file")


def check_committed_drawing(repo: pathlib.Path, out: pathlib.Path, stderr: str) -> None:
    """What plot.py drew from the committed H200 results into `out` (its stderr given): every figure, none
    that was replaced, the fp32 size sweep exactly when its rows exist. Called by
    check_figures_reproducible.py on the drawing it compares with docs/images, under any matplotlib."""
    sys.path.insert(0, str(repo / "plots"))
    import plot
    import results_data as rd

    check_files(out, COMMITTED_FIGURES)
    for gone, by in (("tflops_vs_size", "best_vs_size"), ("gemm_tflops", "ladder and the ladder_chNN of each chapter")):
        if (out / f"{gone}.png").exists():
            fail(f"{gone} is replaced by {by} and must no longer be drawn")
    # The fp32 size sweep: drawn exactly when its rows exist, else skipped with a note (not an error).
    has_sweep = any(x.chapter == plot.FP32_SWEEP for x in rd.load(repo / "plots" / "data" / "h200"))
    if has_sweep != (out / "fp32_sizes.png").is_file():
        fail(f"fp32_sizes drawn={(out / 'fp32_sizes.png').is_file()} but sweep rows present={has_sweep}")
    if not has_sweep and "fp32_sizes: skipped" not in stderr:
        fail("without the sweep's CSV plot.py must say it skipped fp32_sizes")
    print(f"ok: the committed data's drawing has all {len(COMMITTED_FIGURES)} figures")


def check_committed(repo: pathlib.Path) -> None:
    """The data behind the figures of the committed H200 results (their drawing: check_committed_drawing)."""
    sys.path.insert(0, str(repo / "plots"))
    import plot
    import results_data as rd
    import ceilings

    data = repo / "plots" / "data" / "h200"
    all_rows = rd.load(data)
    rows = [x for x in rd.canonical(all_rows) if not rd.is_tuning(x.chapter)]

    if plot.tiles_128(2049, 2049) != 289 or plot.tiles_128(2048, 2048) != 256 or plot.tiles_128(8192, 256) != 128:
        fail("tiles_128 miscounts the 128×128 tiles")

    # The ladder: one bar per chapter, the summary table's best step, the CPU against cuBLAS SGEMM at its
    # size and the copy against cudaMemcpy; every chapter's own figure draws every one of its kernels.
    headline = rd.headline_size(rows)
    ladder = plot.ladder_data(rows, headline)
    if [c[:2] for c, *_ in ladder] != [f"{n:02d}" for n in range(1, 13)]:
        fail(f"ladder: expected chapters 01-12, got {[c for c, *_ in ladder]}")
    kinds = {c[:2]: kind for c, _, _, kind in ladder}
    if kinds["01"] != "cpu" or kinds["04"] != "copy" or kinds["07"] != "fp32" or kinds["10"] != "bf16" or kinds["12"] != "e4m3":
        fail(f"ladder: chapter 01 is the CPU, 04 a copy, 07 fp32, 10 bf16, 12 e4m3 (fp8), got {kinds}")
    for c, r, pct, kind in ladder:
        if r != rd.best_row(rows, c, headline)[0] or not 0 < pct < 110:
            fail(f"ladder: {c} {r.kernel} at {pct}% is not the summary's best step")
    for chapter in rd.chapters(all_rows):
        combos, steps, _ = plot.chapter_ladder_data(all_rows, chapter)
        # Every kernel the chapter ran at the figure's sizes (chapter 11's swap_ab takes only M <= 64).
        sizes = {(x.m, x.n, x.k, x.layout) for x in all_rows if x.chapter == chapter and x.is_baseline}
        drawn_at = {x.kernel for x in all_rows if x.chapter == chapter and x.is_square and x.m in plot.LADDER_SIZES}
        kernels = {x.kernel for x in all_rows if x.chapter == chapter and not x.is_baseline
                   and (x.kernel in drawn_at or not any(y.is_square and y.m in plot.LADDER_SIZES
                                                        for y in all_rows if y.chapter == chapter))}
        if {k for k, _, _ in steps} != kernels or not combos:
            fail(f"ladder_ch{chapter[:2]}: draws {[k for k, _, _ in steps]}, the chapter has {sorted(kernels)}")
    print(f"ok: ladder: {len(ladder)} chapters; each chapter's own ladder draws all of its kernels")

    # Speedup: every bar at one size, which chapter 01 measured; the baseline is its fastest kernel there.
    size = plot.speedup_size(rows)
    best, groups = plot.speedup_bars(rows, size)
    bars = [x for _, g in groups for x in g]
    if {(x.m, x.n, x.k) for x in bars} != {(size, size, size)}:
        fail(f"speedup_vs_cpu mixes sizes: {sorted({x.size_text for x in bars})}")
    cpu = [x for x in rows if x.number == "01" and x.is_square and x.m == size and x.tflops]
    if best.tflops != max(x.tflops for x in cpu) or best.kernel == "naive":
        fail(f"the speedup baseline must be chapter 01's fastest kernel at {size}³, got {best.kernel}")
    if len(groups) < 4:
        fail(f"speedup_vs_cpu at {size}³ shows only {[g for g, _ in groups]}")
    print(f"ok: speedup_vs_cpu: {len(bars)} bars, all at {size}³, baseline {best.kernel}")

    # Roofline: the ceilings are the documented calculation and ch04's cudaMemcpy; every measured point
    # lies under the lowest roof at its intensity (a wrong tile or ceiling would put one above).
    roofs, points, at = plot.roofline_data(rows)
    if abs(roofs["fp32 FMA peak"] - 132 * 128 * 2 * 1.98 / 1e3) > 1e-9 or abs(roofs["L1/shared"] - 132 * 128 * 1.98 / 1e3) > 1e-9:
        fail(f"roofline ceilings are not the pages' calculation: {roofs}")
    memcpy = [x.gbps for x in all_rows if x.kernel == "cudaMemcpy" and x.gbps]
    if roofs["DRAM"] is None or not any(abs(roofs["DRAM"] * 1e3 - g) < 1e-6 for g in memcpy):
        fail(f"the DRAM roof {roofs['DRAM']} TB/s is not a cudaMemcpy row of chapter 04")
    chapters = sorted(x.number for x, _, _ in points)
    if chapters != ["02", "03", "05", "06", "07"]:
        fail(f"roofline points should be chapters 02, 03, 05, 06, 07, got {chapters}")
    for x, ai, page in points:
        roof = min(roofs["fp32 FMA peak"], ai * roofs["L1/shared"])
        if not (0 < x.tflops <= roof) or (page is not None and x.tflops > page * 1.05):
            fail(f"{x.chapter} {x.kernel}: {x.tflops} TFLOP/s above its roof {roof:.1f} or page ceiling {page}")
    if abs(ceilings.intensity(32, 32) - 8.0) > 1e-12 or abs(ceilings.intensity(1, 1) - 0.25) > 1e-12:
        fail("intensity() does not give chapter 03's 8 (TILE 32) and 0.25 (naive) FLOP/byte")
    print(f"ok: roofline_fp32: {len(points)} kernels under their roofs at {at}³, DRAM {roofs['DRAM']:.2f} TB/s")

    # best_vs_size draws the summary table's best kernel of each GPU chapter.
    headline = rd.headline_size(rows)
    best_k = plot.best_kernels(rows, headline)
    if best_k.get("10_hopper_persistent") is None or best_k["07_pipelined_simt"].dtype != "fp32":
        fail(f"best_vs_size's kernels: { {c: r.kernel for c, r in best_k.items()} }")
    for c, x in best_k.items():
        if x != rd.best_row(rows, c, headline)[0]:
            fail(f"best_vs_size: {c}'s {x.kernel} is not the summary's best step")
    print(f"ok: best_vs_size: {len(best_k)} chapters, best kernels {sorted(x.kernel for x in best_k.values())}")
    check_predictions(repo, all_rows)


def check_predictions(repo: pathlib.Path, all_rows) -> None:
    """Every prediction is quoted from its page and finds exactly one CSV row per size and storage order
    (and one for its reference kernel); the drawn range and values are the ones the rows give."""
    import plot
    import predictions as pr

    def norm(text: str) -> str:
        return re.sub(r"\s+", " ", text.replace("**", "")).strip()

    pages = {}
    for p in pr.PREDICTIONS:
        if not re.match(r"chapters/(0[2-9]|10)_", p.readme) or p.chapter[:2] != p.readme[9:11]:
            fail(f"{p.kernel}: {p.readme} is not a GPU chapter page, or not the page of chapter {p.chapter}")
        if p.metric not in (pr.TFLOPS, pr.PCT, pr.RATIO, pr.TIME_RATIO) or not p.lo < p.hi:
            fail(f"{p.chapter} {p.kernel}: bad range {p.lo}–{p.hi} of {p.metric}")
        if (p.ref is None) != (p.metric in (pr.TFLOPS, pr.PCT)):
            fail(f"{p.chapter} {p.kernel}: a ratio needs a reference kernel, a TFLOP/s or % range none")
        text = pages.setdefault(p.readme, norm((repo / p.readme).read_text(encoding="utf-8")))
        if norm(p.quote) not in text:
            fail(f"{p.readme} no longer says {p.quote!r} ({p.kernel})")
        for size in p.sizes:
            for layout in p.layouts:
                if plot.find_row(all_rows, p.chapter, p.kernel, p.dtype, layout, size) is None:
                    fail(f"no single CSV row for {p.chapter} {p.kernel} {p.dtype} {layout} {size}")
                if p.ref and plot.find_row(all_rows, p.ref[0], p.ref[1], p.dtype, p.ref_layout or layout,
                                           p.ref_size or size) is None:
                    fail(f"no single CSV row for the reference {p.ref} of {p.kernel} ({layout} {size})")
    data = plot.prediction_data(all_rows)
    if len(data) != len(pr.PREDICTIONS) or any(status is None for _, _, status in data):
        fail("a prediction has no measured value")
    # Spot checks against the rows themselves: chapter 02's coalesced kernel over the strided one, and
    # chapter 09's time ratio drawn as a speed ratio (inverse range, inverse value).
    by = {(p.chapter, p.kernel, p.metric): (p, v, s) for p, v, s in data}
    p, values, status = by[("02_naive_gpu", "naive_coalesced", pr.RATIO)]
    a = plot.find_row(all_rows, "02_naive_gpu", "naive_coalesced", "fp32", "RRR", 4096)
    b = plot.find_row(all_rows, "02_naive_gpu", "naive_strided", "fp32", "RRR", 4096)
    if abs(values[0][1] - a.tflops / b.tflops) > 1e-9 or status != ("hit" if 6 <= a.tflops / b.tflops <= 12 else "miss"):
        fail(f"chapter 02's ratio drawn as {values}, {status}")
    p, values, _ = by[("09_hopper_wgmma_tma", "two_consumers", pr.TIME_RATIO)]
    a = plot.find_row(all_rows, p.chapter, "two_consumers", "bf16", "RRR", 4096)
    b = plot.find_row(all_rows, p.chapter, "tma", "bf16", "RRR", 4096)
    if abs(values[0][1] - b.median_ms / a.median_ms) > 1e-9 or pr.speed_range(p) != (1 / p.hi, 1 / p.lo):
        fail(f"chapter 09's time ratio is not drawn as the speed ratio: {values}, {pr.speed_range(p)}")
    counts = {s: sum(1 for *_, st in data if st == s) for s in ("hit", "partly", "miss")}
    print(f"ok: predicted_vs_measured: {len(data)} predictions quoted from their pages, every one measured: "
          f"{counts['hit']} in range, {counts['partly']} partly, {counts['miss']} missed")


if __name__ == "__main__":
    main()
