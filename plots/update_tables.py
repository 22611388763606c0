#!/usr/bin/env python3
"""Fills the measured-results tables of the READMEs from the committed CSVs.

    python plots/update_tables.py [--data plots/data/h200] [--root .] [--headline N] [--check]

A README marks where a table goes with a block

    <!-- results:02_naive_gpu -->
    (generated: do not edit by hand)
    <!-- /results -->

`results:<chapter>` (the CSV's chapter column, or just its number, "02") gets that
chapter's rows; `results:summary` (in the top README.md and docs/mainpage.md) gets one
row per chapter: its idea, its best kernel with its dtype and storage order, that
kernel's TFLOP/s at the headline size and its % of the baseline, named (chapter 01, the
CPU: of cuBLAS SGEMM at its size on the GPU); `results:summary-gpus` the same for several
GPUs side by side, one pair of columns per directory under plots/data/ (--gpus; "–" where
a GPU has no CSV); `results:ladder` every step of every chapter's main run at the headline
size (chapter 04's copies at their largest matrix, chapter 01 at its naive loop's largest
size), with its dtype, storage order and % of its named baseline; `results:limits` each
chapter's result steps (its best step of each type, and the best of a type in a storage
order that step does not run) over the headline size and larger and every storage order
(min–max % of the baseline), then where each loses: every problem it was measured on (its
chapter's run, the size sweeps, later chapters' runs of it), how many below its baseline,
those below LISTED_BELOW % and the worst; `results:cpu` one sentence: chapter 01's fastest
kernel over its naive loop; `results:<chapter>.classes` each step of that chapter by class of
shape (squares, prefill, M = 128, decode: results_data.shape_class), geometric mean and range
of its % of cuBLAS; `results:lib_model` the example model's measurements
(python/examples/llama_decoder.py's lib_model.csv in the data directory, a schema of its own): one
row per backend, phase and batch, and how far gemm_ladder's backends are from torch's.
Files searched: <root>/README.md, <root>/docs/*.md and <root>/chapters/*/README.md; the
links a table writes are relative to the page it is in.

--check changes nothing: it exits 1 (naming each stale block) when a block differs
from what the CSVs give, 0 when all are up to date. Only the standard library is
needed.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import results_data as rd  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"(<!--\s*results:(?P<id>[\w.-]+)\s*-->)(?P<body>.*?)(<!--\s*/results\s*-->)", re.S)
OPEN = re.compile(r"<!--\s*results:([\w.-]+)\s*-->")
CLOSE = re.compile(r"<!--\s*/results\s*-->")


class BlockError(Exception):
    """A README whose markers do not pair up."""


def fmt_rate(v: float | None) -> str:
    if v is None:
        return "–"
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def fmt_ms(v: float | None) -> str:
    return "–" if v is None else f"{v:.4g}"


def fmt_pct(v: float | None) -> str:
    return "–" if v is None else f"{v:.1f}%"


def fmt_err(v: float | None) -> str:
    return "–" if v is None else f"{v:.1e}"


def md_table(header: list[str], rows: list[list[str]], right: set[int]) -> str:
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def relative(path: str, root: pathlib.Path) -> str:
    try:
        return pathlib.Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return pathlib.Path(path).as_posix()


def provenance(rows: list[rd.Row], root: pathlib.Path) -> str:
    machines = sorted({r.gpu for r in rows if r.gpu})
    cuda = sorted({r.cuda_version for r in rows if r.cuda_version and not r.cuda_version.startswith("n/a")})
    dates = sorted({r.timestamp[:10] for r in rows if r.timestamp})
    files = sorted({relative(r.source, root) for r in rows})
    parts = ["Measured on " + (", ".join(machines) if machines else "an unnamed machine")]
    if cuda:
        parts.append("CUDA " + ", ".join(cuda))
    if dates:
        parts.append(dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}")
    return ("_" + ", ".join(parts) + "; from " + ", ".join(f"`{f}`" for f in files)
            + " by `plots/update_tables.py`. Medians of the binary's repetitions._")


def chapter_rows(rows: list[rd.Row], marker: str) -> list[rd.Row]:
    if rd.is_tuning(marker):  # a sweep's own block: its rows only
        return [r for r in rows if r.chapter == marker]
    return [r for r in rows if not rd.is_tuning(r.chapter)
            and (marker in (r.chapter, r.number) or r.chapter.startswith(marker + "_"))]


def chapter_table(all_rows: list[rd.Row], marker: str, data_dir: str, root: pathlib.Path) -> str:
    rows = chapter_rows(all_rows, marker)
    if not rows:
        return f"_No results for `{marker}` in `{data_dir}` yet._"
    chapter = rows[0].chapter
    base = rd.baseline_of(all_rows, chapter)
    out = []
    if base == rd.COPY_BASELINE:
        header = ["kernel", "dtype", "layout", "size", "median ms", "GB/s", "% of cudaMemcpy", "rel. error"]
        for r in rows:
            pct = rd.pct_of_baseline(all_rows, r)
            if pct is None and r.is_baseline:
                pct = 100.0
            out.append([r.kernel, r.dtype, r.layout, r.size_text, fmt_ms(r.median_ms), fmt_rate(r.gbps),
                        fmt_pct(pct), fmt_err(r.rel_error)])
    elif base == rd.GEMM_BASELINE:
        # Kernels of several types: each row's % is of the cuBLAS row of its own dtype.
        # A chapter with fp8 rows is timed against cuBLASLt for them (baseline_name says which call).
        lt = any((baseline_name(all_rows, r) or "").startswith("cuBLASLt") for r in rows)
        pct_name = ("% of cuBLAS or cuBLASLt" if lt else "% of cuBLAS") + (
            " (same dtype)" if len(rd.baseline_dtypes(all_rows, chapter)) > 1 else "")
        header = ["kernel", "dtype", "layout", "size", "median ms", "TFLOP/s", pct_name, "rel. error"]
        for r in rows:
            pct = rd.pct_of_baseline(all_rows, r)
            if pct is None and r.is_baseline:
                pct = 100.0
            out.append([r.kernel, r.dtype, r.layout, r.size_text, fmt_ms(r.median_ms), fmt_rate(r.tflops),
                        fmt_pct(pct), fmt_err(r.rel_error)])
    else:
        # The CPU chapter has no cuBLAS: its yardstick is the naive loop at the same size.
        header = ["kernel", "dtype", "layout", "size", "median ms", "GFLOP/s", "× naive", "rel. error"]
        naive = {(r.m, r.n, r.k): r for r in rows if r.kernel == rd.CPU_NAIVE[1]}
        for r in rows:
            n = naive.get((r.m, r.n, r.k))
            speedup = (f"{r.tflops / n.tflops:.1f}×" if n is not None and n.tflops and r.tflops else "–")
            out.append([r.kernel, r.dtype, r.layout, r.size_text, fmt_ms(r.median_ms),
                        fmt_rate(None if r.tflops is None else r.tflops * 1e3), speedup, fmt_err(r.rel_error)])
    return md_table(header, out, right={4, 5, 6, 7}) + "\n\n" + provenance(rows, root)


def short_gpu(rows: list[rd.Row]) -> str:
    # A chapter's baseline looked up once per chapter, not once per row (that was quadratic: seconds a call).
    measured = {c for c in {r.chapter for r in rows} if rd.baseline_of(rows, c)}
    names = sorted({r.gpu.replace("NVIDIA ", "") for r in rows if r.gpu and r.chapter in measured})
    return names[0] if len(names) == 1 else "GPU"


def chapter_cell(chapter: str, root: pathlib.Path, page_dir: str = "") -> str:
    """The chapter's name, linked to its page (relative to the directory `page_dir` of the page the
    table is in, itself relative to root: "" for the top README, "docs" for docs/*.md)."""
    readme = root / "chapters" / chapter / "README.md"
    num, _, name = chapter.partition("_")
    title = f"{num} {name}" if name else chapter
    up = "../" * len(pathlib.PurePosixPath(page_dir).parts) if page_dir else ""
    return f"[{title}]({up}chapters/{chapter}/README.md)" if readme.is_file() else title


# The idea of each chapter, for the summary table (by chapter number). A chapter without an entry
# shows "–"; keep each a few words, the page says the rest.
IDEAS = {
    "01": "loop order, cache blocking, threads (CPU)",
    "02": "one thread per element of C; coalesced loads",
    "03": "tiles of A and B in shared memory",
    "04": "layouts: tiles, thread partitions, banks and padding (a copy and a transpose)",
    "05": "an 8×8 register tile per thread, written with layouts",
    "06": "TiledCopy and TiledMMA: 128-bit loads, register prefetch",
    "07": "a cp.async ring of shared stages, swizzle, registers loaded one k ahead",
    "08": "tensor cores: mma.sync and ldmatrix on swizzled tiles",
    "09": "Hopper: wgmma from shared memory, TMA loads, an mbarrier ring",
    "10": "warp specialization, persistent blocks, a TMA-store epilogue, clusters",
    "11": "one kernel per shape: tile shapes, split-K (and stream-K, measured), A and B swapped for skinny M",
    "12": "tf32 and fp8 on wgmma: per-tensor and block scales, promotion",
    "13": "grouped GEMM: every expert of a mixture-of-experts layer in one persistent launch",
}


def fmt_small_pct(v: float) -> str:
    """A percentage that may be far below 1 (the CPU against cuBLAS): two significant digits there."""
    return f"{v:.2g}%" if v < 1 else fmt_pct(v)


# What each GEMM baseline is, by the dtype of its cuBLAS row (common/harness/cublas_gemm.cu): the short name
# the tables write after a % ("of cuBLAS bf16"), and how it is called, for the footnotes. A dtype not listed
# reads "cuBLAS <dtype>".
BASELINES_BY_DTYPE = {
    "fp32": ("cuBLAS SGEMM", "`cublasGemmEx`, `CUBLAS_COMPUTE_32F`, its default algorithm"),
    "bf16": ("cuBLAS bf16", "`cublasGemmEx`, `CUBLAS_COMPUTE_32F` (fp32 accumulation), its default algorithm"),
    "tf32": ("cuBLAS tf32", "`cublasGemmEx`, `CUBLAS_COMPUTE_32F_FAST_TF32`, its default algorithm"),
    "e4m3": ("cuBLASLt fp8, per-tensor scales",
             "`cublasLtMatmul`, the heuristic's first algorithm, per-tensor scales, fast accumulation"),
    "e4m3_block": ("cuBLASLt fp8, block scales",
                   "`cublasLtMatmul`, the heuristic's first algorithm, scales per 1×128 block of A and per "
                   "128×128 block of B"),
}


def baseline_dtype(rows: list[rd.Row], row: rd.Row) -> str:
    b = rd.baseline_row(rows, row)
    return b.dtype if b is not None else row.dtype


def baseline_name(rows: list[rd.Row], row: rd.Row) -> str | None:
    """What `row`'s % is of, named: "cudaMemcpy", "cuBLAS SGEMM", "cuBLASLt fp8, block scales", ...;
    None for a chapter without a baseline (the CPU)."""
    base = rd.baseline_of(rows, row.chapter)
    if base is None:
        return None
    if base == rd.COPY_BASELINE:
        return base
    dtype = baseline_dtype(rows, row)
    return BASELINES_BY_DTYPE.get(dtype, (f"cuBLAS {dtype}", ""))[0]


def baselines_note(rows: list[rd.Row], shown: list[rd.Row]) -> str:
    """How each GEMM baseline named in a table is called, for its footnote: "cuBLAS bf16: `cublasGemmEx`, ..."."""
    dtypes = []
    for r in shown:
        if rd.baseline_of(rows, r.chapter) == rd.GEMM_BASELINE:
            d = baseline_dtype(rows, r)
            if d not in dtypes:
                dtypes.append(d)
    parts = [f"{BASELINES_BY_DTYPE[d][0]}: {BASELINES_BY_DTYPE[d][1]}" for d in dtypes if d in BASELINES_BY_DTYPE]
    return "; ".join(parts)


def problem_text(row: rd.Row) -> str:
    """The dtype and storage order of a row, as the summary shows them: "bf16, RCR"; a copy: "fp32 copy"."""
    if row.is_copy:
        return f"{row.dtype} copy"
    return f"{row.dtype}, {row.layout}"


def summary_entry(rows: list[rd.Row], chapter: str, headline: int | None) -> tuple[str, str, str] | None:
    """(best kernel, its rate, its % of the baseline) of one chapter as the side-by-side summary shows
    them, from canonical rows (rd.best_row); None when the chapter has nothing to show."""
    found = rd.best_row(rows, chapter, headline)
    if found is None:
        return None
    best, note = found
    base = rd.baseline_of(rows, chapter)
    if base == rd.COPY_BASELINE:
        return (best.kernel, f"{fmt_rate(best.gbps)} GB/s ({best.size_text} copy)",
                f"{fmt_pct(rd.pct_of_baseline(rows, best))} of cudaMemcpy")
    if base == rd.GEMM_BASELINE:
        kernel = best.kernel
        if len({r.dtype for r in rows if r.chapter == chapter and not r.is_baseline and r.tflops}) > 1:
            kernel += f" ({best.dtype})"  # which type won, and so which cuBLAS the % is of
        pct = fmt_pct(rd.pct_of_baseline(rows, best))
        name = baseline_name(rows, best)
        if name and not name.startswith("cuBLAS "):  # not cuBLAS itself (chapter 12's fp8: cuBLASLt): say so
            pct += f" of {name}"
        return kernel, fmt_rate(best.tflops) + note, pct
    vs = rd.cpu_vs_cublas(rows, best)
    pct = "–" if vs is None else f"{fmt_small_pct(vs[0])} of cuBLAS SGEMM at {best.size_text}"
    return best.kernel, f"{fmt_rate(best.tflops * 1e3)} GFLOP/s (CPU, {best.size_text})", pct


def summary_table(rows: list[rd.Row], headline: int | None, data_dir: str, root: pathlib.Path,
                  page_dir: str = "") -> str:
    if not rows:
        return f"_No results in `{data_dir}` yet._"
    size = f"{headline}³" if headline else "largest size"
    header = ["chapter", "the idea", "best step", "dtype, layout", f"TFLOP/s on {short_gpu(rows)} at {size}",
              "% of the baseline"]
    out, shown = [], []
    rows = rd.canonical(rows)  # every chapter on its own problem (rd.canonical_layout)
    for chapter in rd.chapters(rows):
        found = rd.best_row(rows, chapter, headline)
        if found is None:
            continue
        best, note = found
        base = rd.baseline_of(rows, chapter)
        if base == rd.COPY_BASELINE:
            rate = f"{fmt_rate(best.gbps)} GB/s ({best.size_text} copy)"
            pct = f"{fmt_pct(rd.pct_of_baseline(rows, best))} of cudaMemcpy"
        elif base == rd.GEMM_BASELINE:
            rate = fmt_rate(best.tflops) + note
            pct = f"{fmt_pct(rd.pct_of_baseline(rows, best))} of {baseline_name(rows, best)}"
            shown.append(best)
        else:
            rate = f"{fmt_rate(best.tflops * 1e3)} GFLOP/s (CPU, {best.size_text})"
            vs = rd.cpu_vs_cublas(rows, best)
            pct = "–" if vs is None else f"{fmt_small_pct(vs[0])} of cuBLAS SGEMM at {best.size_text}"
        out.append([chapter_cell(chapter, root, page_dir), IDEAS.get(chapter[:2], "–"), best.kernel,
                    problem_text(best), rate, pct])
    grouped = grouped_summary(root, data_dir)
    if grouped:
        kernel, rate, pct = grouped
        out.append([chapter_cell(GROUPED_CHAPTER, root, page_dir), IDEAS.get(GROUPED_CHAPTER[:2], "–"), kernel,
                    "bf16, RCR", rate, pct])
    text = md_table(header, out, right={4, 5})
    apis = "cuBLASLt" if any(baseline_name(rows, r).startswith("cuBLASLt") for r in shown) else ""
    return text + ("\n\n_From `" + data_dir + "/*.csv` by `plots/update_tables.py`. Each chapter on its own problem: "
                   "RRR is C = A·B with A, B and C row-major, RCR is C = A·Bᵀ with B stored N×K (as `nn.Linear` "
                   "stores its weights); each chapter's table has the other storage orders it measured. The "
                   "baseline, named in each row, is measured side by side in each chapter's own run: cuBLAS of "
                   "the step's type" + (f" ({apis} for fp8)" if apis else "") + ", or `cudaMemcpy` for the copies._")


# The GPUs of the side-by-side summary (block `results:summary-gpus`), as directories under plots/data/
# (scripts/common.sh mm_gpu_slug of the name nvidia-smi gives) and the name of their column. A listed
# GPU without CSVs gets "–" in every row; any other directory under plots/data/ with CSVs is added after.
SUMMARY_GPUS = [("h200", "H200"), ("h100-80gb-hbm3", "H100 80GB HBM3")]


def gpu_dirs(root: pathlib.Path, names: list[str] | None) -> list[tuple[pathlib.Path, str]]:
    """(directory, column name) of each GPU of the side-by-side summary: `names` (directories under
    <root>/plots/data/, or paths) when given, else SUMMARY_GPUS and then every other directory there."""
    data = root / "plots" / "data"
    if names:
        return [(pathlib.Path(n) if pathlib.Path(n).is_absolute() or "/" in n else data / n,
                 pathlib.Path(n).name) for n in names]
    out = [(data / slug, label) for slug, label in SUMMARY_GPUS]
    known = {slug for slug, _ in SUMMARY_GPUS}
    if data.is_dir():
        out += [(d, d.name) for d in sorted(data.iterdir())
                if d.is_dir() and d.name not in known and rd.csv_files(d)]
    return out


def gpus_table(gpus: list[tuple[pathlib.Path, str, list[rd.Row]]], root: pathlib.Path, page_dir: str = "") -> str:
    """Per chapter, its best kernel and that kernel's rate (% of its baseline) on each GPU, each at that GPU's
    own headline size; "–" where a GPU has no row of the chapter."""
    per_gpu = []
    for d, label, rows in gpus:
        canon = [r for r in rd.canonical(rows) if not rd.is_tuning(r.chapter)]
        per_gpu.append((d, label, canon, rd.headline_size(canon)))
    chapters = sorted({c for _, _, canon, _ in per_gpu for c in rd.chapters(canon)})
    if not chapters:
        return "_No results in " + ", ".join(f"`{relative(str(d), root)}`" for d, _, _, _ in per_gpu) + " yet._"
    header = ["chapter"]
    for _, label, canon, headline in per_gpu:
        at = f" at {headline}³" if headline else ""
        header += [f"{label}: best kernel", f"{label}{at}: TFLOP/s (% of baseline)"]
    out = []
    for chapter in chapters:
        line = [chapter_cell(chapter, root, page_dir)]
        for _, _, canon, headline in per_gpu:
            entry = summary_entry(canon, chapter, headline) if chapter in rd.chapters(canon) else None
            if entry is None:
                line += ["–", "–"]
            else:
                kernel, rate, pct = entry
                if pct == "–":
                    line += [kernel, rate]
                elif rd.baseline_of(canon, chapter) == rd.COPY_BASELINE:
                    line += [kernel, f"{rate}, {pct}"]
                else:
                    line += [kernel, f"{rate} ({pct})"]
        out.append(line)
    if any(grouped_rows(root, d) for d, _, _, _ in per_gpu):
        line = [chapter_cell(GROUPED_CHAPTER, root, page_dir)]
        for d, _, _, _ in per_gpu:
            entry = grouped_summary(root, d)
            line += ["–", "–"] if entry is None else [entry[0], f"{entry[1]} ({entry[2]})"]
        out.append(line)
    text = md_table(header, out, right=set(range(2, len(header), 2)))
    sources = []
    for d, label, canon, _ in per_gpu:
        where = f"`{relative(str(d), root)}/`"
        sources.append(f"{label}: {where}" + ("" if canon else " (no CSV yet)"))
    return text + ("\n\n_Each GPU's best kernel per chapter, at that GPU's own headline size, % of the baseline "
                   "measured in the same run on the same GPU (cuBLAS of the kernel's dtype unless another is named); "
                   "from " + "; ".join(sources) + " by `plots/update_tables.py`._")


# --- The ladder: every step of every chapter (results:ladder) -----------------------------------------

# Kernels of a chapter's main run that are not steps of its ladder: chapter 01's thread sweep (its
# `threaded` kernel at 1, 2, 4, ... threads, --thread-sweep), by chapter number.
NOT_STEPS = {"01": re.compile(r"threaded_\d+$")}


def is_step(r: rd.Row) -> bool:
    """A step of its chapter's main run: not a baseline (nor another setting of it), not the previous
    chapter's best measured again, not a sweep; appendix runs are chapters of their own (rd.load)."""
    if r.is_baseline or r.is_other_baseline or r.is_previous_best or rd.is_tuning(r.chapter):
        return False
    pattern = NOT_STEPS.get(r.number)
    return pattern is None or pattern.match(r.kernel) is None


def ladder_steps(rows: list[rd.Row], chapter: str) -> list[tuple[str, str]]:
    """(kernel, dtype) of each step of the chapter, in the order its run wrote them."""
    out: list[tuple[str, str]] = []
    for r in rows:
        if r.chapter == chapter and is_step(r) and (r.kernel, r.dtype) not in out:
            out.append((r.kernel, r.dtype))
    return out


def layout_order(chapter: str):
    """Sort key of storage orders: the chapter's own first (rd.canonical_layout), then RRR, then the rest."""
    own = rd.canonical_layout(chapter)
    return lambda layout: (layout != own, layout != "RRR", layout)


def ladder_size(rows: list[rd.Row], chapter: str, headline: int | None) -> tuple[int, int, int] | None:
    """The problem a chapter's ladder rows are at: a GPU GEMM chapter's headline³ (else its largest square),
    the copy chapter's largest matrix, the CPU chapter's naive loop's largest size (as rd.best_row)."""
    found = rd.best_row(rd.canonical(rows), chapter, headline)
    if found is None:
        return None
    best = found[0]
    return best.m, best.n, best.k


# Chapter 13's tables (a schema of their own: one row per model, projection, tokens, routing and kernel;
# plots/results_data.is_table): its steps join the ladder and the limits as geometric means over the
# shapes they ran, against the faster of the two cuBLAS ways measured beside them. Step 2's decode run
# first, so that a decode shape's rows come from that one run (as plots/plot.py draws them).
GROUPED_CHAPTER = "13_grouped_moe"
GROUPED_BASELINE = "the faster of cuBLAS's loop and grouped call"


def grouped_rows(root: pathlib.Path, data_dir: str | pathlib.Path) -> list[dict[str, str]]:
    """Chapter 13's measured rows under data_dir (relative to root, or a path): rd.grouped_rows."""
    d = pathlib.Path(data_dir)
    return [r for r in rd.grouped_rows(d if d.is_absolute() else root / d) if r.get("pct_of_best_cublas")]


def grouped_summary(root: pathlib.Path, data_dir: str | pathlib.Path) -> tuple[str, str, str] | None:
    """(step, rate, % of the baseline) of chapter 13 for the summaries: its first step at prefill (4096 tokens
    and more), geometric means over those shapes; None without its CSVs."""
    steps = grouped_steps(grouped_rows(root, data_dir))
    if not steps:
        return None
    kernel, mine = steps[0]
    mine = [r for r in mine if int(r["tokens"]) >= 4096] or mine
    return (kernel, f"{fmt_rate(statistics.geometric_mean([float(r['tflops']) for r in mine]))} (geometric mean of {len(mine)} expert shapes)",
            f"{fmt_pct(statistics.geometric_mean([float(r['pct_of_best_cublas']) for r in mine]))} of {GROUPED_BASELINE}")


def grouped_shape(r: dict[str, str]) -> str:
    return f"{r['model']} {r['projection']} {r['tokens']} {r['routing']}"


def grouped_steps(rows: list[dict[str, str]]) -> list[tuple[str, list[dict[str, str]]]]:
    """[(kernel, its rows)] of chapter 13's own kernels, in the order of its runs."""
    kernels: list[str] = []
    for r in rows:
        if r["kernel"].startswith("grouped_") and r["kernel"] not in kernels:
            kernels.append(r["kernel"])
    order = {"grouped_contiguous": 0, "grouped_masked": 1, "grouped_contiguous_64": 2, "grouped_masked_64": 3}
    kernels.sort(key=lambda k: order.get(k, 9))
    return [(k, [r for r in rows if r["kernel"] == k]) for k in kernels]


def grouped_ladder_rows(root: pathlib.Path, data_dir: str, page_dir: str) -> list[list[str]]:
    """The ladder's rows of chapter 13: per step and phase it ran (prefill: 4096 tokens and more; decode: 256
    and fewer), geometric means over those shapes: TFLOP/s at prefill, the weights' GB/s at decode, and the %
    of the faster cuBLAS way."""
    out = []
    for kernel, rows in grouped_steps(grouped_rows(root, data_dir)):
        for phase, mine in (("prefill", [r for r in rows if int(r["tokens"]) >= 4096]),
                            ("decode", [r for r in rows if int(r["tokens"]) <= 256])):
            if not mine:
                continue
            tokens = sorted({int(r["tokens"]) for r in mine}, reverse=True)
            where = f"{len(mine)} expert shapes, {phase}: {', '.join(map(str, tokens))} tokens (geometric mean)"
            rate = (fmt_rate(statistics.geometric_mean([float(r["tflops"]) for r in mine])) if phase == "prefill"
                    else f"{fmt_rate(statistics.geometric_mean([float(r['weight_gbps']) for r in mine]))} GB/s of weights")
            out.append(["" if out else chapter_cell(GROUPED_CHAPTER, root, page_dir), kernel, "bf16", "RCR", where, rate,
                        fmt_pct(statistics.geometric_mean([float(r["pct_of_best_cublas"]) for r in mine])), GROUPED_BASELINE])
    return out


def grouped_losses_rows(root: pathlib.Path, data_dir: str, page_dir: str) -> list[list[str]]:
    """The limits' second table for chapter 13: its prefill step (grouped_contiguous at 4096 tokens and
    more) and its decode step (its last kernel, at 256 tokens and fewer), shape by shape."""
    steps = grouped_steps(grouped_rows(root, data_dir))
    if not steps:
        return []
    picks = [(steps[0][0], [r for r in steps[0][1] if int(r["tokens"]) >= 4096])]
    picks.append((steps[-1][0], [r for r in steps[-1][1] if int(r["tokens"]) <= 256]))
    out = []
    for i, (kernel, mine) in enumerate(p for p in picks if p[1]):
        pct = [float(r["pct_of_best_cublas"]) for r in mine]
        n = len(mine)
        low = sorted((r for r in mine if float(r["pct_of_best_cublas"]) < LISTED_BELOW), key=lambda r: float(r["pct_of_best_cublas"]))
        if not low:
            low_text = "none"
        elif len(low) <= LIST_AT_MOST:
            low_text = ", ".join(f"{grouped_shape(r)}: {fmt_pct(float(r['pct_of_best_cublas']))}" for r in low)
        else:
            low_text = f"{len(low)} of {n}"
        worst = min(mine, key=lambda r: float(r["pct_of_best_cublas"]))
        tokens = sorted({int(r["tokens"]) for r in mine})
        files = [f for f in (name[:-4] for name in reversed(rd.GROUPED_CSVS)) if any(r["_file"] == f for r in mine)]
        out.append([chapter_cell(GROUPED_CHAPTER, root, page_dir) if i == 0 else "", kernel, "bf16", GROUPED_BASELINE,
                    f"{n}: expert shapes at {', '.join(map(str, tokens))} tokens ({', '.join(f'`{f}`' for f in files)})",
                    pct_range(pct), f"{sum(v < 100.0 for v in pct)} of {n}", low_text,
                    f"{grouped_shape(worst)}: {fmt_pct(float(worst['pct_of_best_cublas']))}"])
    return out


def ladder_block(all_rows: list[rd.Row], headline: int | None, data_dir: str, root: pathlib.Path,
                 page_dir: str = "") -> str:
    """One row per step of every chapter's main run (ladder_steps), at the chapter's ladder_size, in its own
    storage order where the step ran several (layout_order), with its rate and its % of its baseline, named.
    A step that did not run at that size gets a row saying where it ran."""
    rows = [r for r in all_rows if not rd.is_tuning(r.chapter)]
    if not rows:
        return f"_No results in `{data_dir}` yet._"
    header = ["chapter", "step", "dtype", "layout", "size", "TFLOP/s", "% of the baseline", "baseline"]
    out, shown, kinds = [], [], set()
    for chapter in rd.chapters(rows):
        at = ladder_size(rows, chapter, headline)
        if at is None:
            continue
        base = rd.baseline_of(rows, chapter)
        kinds.add(base)
        for i, (kernel, dtype) in enumerate(ladder_steps(rows, chapter)):
            cell = chapter_cell(chapter, root, page_dir) if i == 0 else ""
            mine = [r for r in rows if r.chapter == chapter and (r.kernel, r.dtype) == (kernel, dtype)]
            here = sorted((r for r in mine if (r.m, r.n, r.k) == at), key=lambda r: layout_order(chapter)(r.layout))
            if not here:  # a step that does not run at this size (chapter 11's swap_ab: skinny M only)
                ms = sorted({r.m for r in mine})
                problems = len({(r.m, r.n, r.k) for r in mine})
                where = (f"not run at {size_of(at)}: {problems} problem{'s' if problems > 1 else ''} with M = {ms[0]}"
                         + (f"–{ms[-1]}" if len(ms) > 1 else ""))
                layouts = ", ".join(sorted({r.layout for r in mine}, key=layout_order(chapter)))
                out.append([cell, kernel, dtype, layouts, where, "–", "–", baseline_name(rows, mine[0]) or "–"])
                continue
            r = here[0]
            if base == rd.COPY_BASELINE:
                rate, pct, name = f"{fmt_rate(r.gbps)} GB/s", fmt_pct(rd.pct_of_baseline(rows, r)), base
            elif base == rd.GEMM_BASELINE:
                rate, pct, name = fmt_rate(r.tflops), fmt_pct(rd.pct_of_baseline(rows, r)), baseline_name(rows, r)
                shown.append(r)
            else:  # the CPU: against cuBLAS SGEMM on the GPU at the same size, from the GPU chapters' runs
                vs = rd.cpu_vs_cublas(all_rows, r)
                rate = f"{fmt_rate(r.tflops * 1e3)} GFLOP/s"
                pct = "–" if vs is None else fmt_small_pct(vs[0])
                name = f"cuBLAS SGEMM at {r.size_text} (GPU chapters' runs)"
            out.append([cell, kernel, r.dtype, r.layout, r.size_text, rate, pct, name])
    grouped = grouped_ladder_rows(root, data_dir, page_dir)
    out += grouped
    where = [f"GPU GEMMs at {headline}³ (else at their chapter's largest square)" if headline else
             "GPU GEMMs at their chapter's largest square"]
    if rd.COPY_BASELINE in kinds:
        where.append("the copies at their largest matrix")
    if None in kinds:
        where.append("the CPU's steps (no baseline of their own) at the naive loop's largest size, against cuBLAS "
                     "SGEMM at that size on the GPU (the median of the GPU chapters' runs)")
    if grouped:
        where.append("chapter 13's steps as geometric means over the expert shapes they ran, against "
                     + GROUPED_BASELINE + " on each shape")
    how = baselines_note(rows, shown)
    return md_table(header, out, right={5, 6}) + (
        "\n\n_Every step of each chapter's main run, in the order of that run: not the steps of its appendix "
        "(measured dead ends), not the previous chapter's best that it measures again, not chapter 01's thread "
        "sweep. " + "; ".join(where) + ". Each step in its chapter's own storage order where it ran several "
        "(RRR: C = A·B all row-major; RCR: C = A·Bᵀ with B stored N×K): the chapter's table has the others. % of "
        "the baseline measured in the same run on the same problem, ratio of medians" + (f" ({how})" if how else "")
        + "; from `" + data_dir + "/*.csv` by `plots/update_tables.py`._")


def size_of(at: tuple[int, int, int]) -> str:
    m, n, k = at
    return f"{m}³" if m == n == k else f"{m}×{n}×{k}"


# --- Claims and their limits (results:limits) ----------------------------------------------------------

# Where a result step that reaches its baseline somewhere (the claim "it matches cuBLAS") is below this
# share of it, the problems are listed one by one, up to LIST_AT_MOST of them, in the limits block's second
# table; elsewhere they are counted.
LISTED_BELOW = 90.0
LIST_AT_MOST = 10


def pct_range(values: list[float]) -> str:
    lo, hi = min(values), max(values)
    return fmt_pct(lo) if f"{lo:.1f}" == f"{hi:.1f}" else f"{lo:.1f}–{hi:.1f}%"


def result_steps(all_rows: list[rd.Row], chapter: str, headline: int | None) -> list[rd.Row]:
    """The steps a GPU GEMM chapter's claims are about, each as its row at the headline size (else the
    chapter's largest square): its best step of each type it measures a baseline of, in its own storage
    order (chapter 11's entry point where it has one, rd.ENTRY_POINTS); then, for a storage order in which
    the chapter measured that type's baseline but that step did not run, the best step there (chapter 12's
    tf32_transpose_b, the RRR tf32). In the order of the chapter's run."""
    rows = [r for r in all_rows if r.chapter == chapter]
    steps = [r for r in rows if is_step(r) and r.tflops is not None and rd.pct_of_baseline(all_rows, r) is not None]
    if chapter in rd.ENTRY_POINTS and any(r.kernel == rd.ENTRY_POINTS[chapter] for r in steps):
        entry = rd.ENTRY_POINTS[chapter]
        steps = [r for r in steps if r.kernel == entry or not any(
            x.kernel == entry and x.dtype == r.dtype for x in steps)]
    order = {(k, d): i for i, (k, d) in enumerate(ladder_steps(all_rows, chapter))}

    def best_of(cands: list[rd.Row]) -> rd.Row | None:
        squares = [r for r in cands if r.is_square]
        at = [r for r in squares if r.m == headline] or \
             [r for r in squares if r.m == max((x.m for x in squares), default=0)]
        return max(at, key=lambda r: r.tflops) if at else None

    out: list[rd.Row] = []
    dtypes = sorted({r.dtype for r in steps}, key=lambda d: min(order.get((r.kernel, r.dtype), 0)
                                                                for r in steps if r.dtype == d))
    for dtype in dtypes:
        mine = [r for r in steps if r.dtype == dtype]
        own = rd.canonical(mine)
        best = best_of(own)
        if best is None:
            continue
        out.append(best)
        ran = {r.layout for r in mine if r.kernel == best.kernel}
        base_layouts = {r.layout for r in rows if r.is_baseline and r.dtype == dtype}
        for layout in sorted(base_layouts - ran, key=layout_order(chapter)):
            other = best_of([r for r in mine if r.layout == layout])
            if other is not None:
                out.append(other)
    return sorted(out, key=lambda r: order.get((r.kernel, r.dtype), 0))


def measured_everywhere(all_rows: list[rd.Row], step: rd.Row) -> list[rd.Row]:
    """Every problem `step` (its kernel and dtype, every storage order) was measured on against a baseline
    in the same run: its chapter's main run first, then the size sweeps ("<chapter>_sizes", and any sweep
    or later chapter's run that measures it again as "chNN_<kernel>"); a problem measured in several runs
    counts once, from the first of these."""
    again = f"ch{step.number}_{step.kernel}"
    ranked = []
    for r in all_rows:
        if r.dtype != step.dtype or rd.pct_of_baseline(all_rows, r) is None:
            continue
        if r.chapter == step.chapter and r.kernel == step.kernel:
            rank = 0
        elif r.chapter == step.chapter + "_sizes" and r.kernel in (step.kernel, again):
            rank = 1
        elif r.kernel == again and (r.chapter.endswith("_sizes") or not rd.is_tuning(r.chapter)):
            rank = 2
        else:
            continue
        ranked.append((rank, r))
    seen, out = set(), []
    for _, r in sorted(ranked, key=lambda x: x[0]):
        key = (r.layout, r.m, r.n, r.k)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def losses_cells(all_rows: list[rd.Row], step: rd.Row) -> list[str] | None:
    """The second table's cells after the step's name: problems, % min–max, below 100%, below LISTED_BELOW %,
    the worst."""
    where = measured_everywhere(all_rows, step)
    if not where:
        return None
    pct = {id(r): rd.pct_of_baseline(all_rows, r) for r in where}
    layouts = sorted({r.layout for r in where}, key=layout_order(step.chapter))
    several = len(layouts) > 1

    def problem(r: rd.Row) -> str:
        return f"{r.size_text} {r.layout}" if several else r.size_text

    n = len(where)
    below = [r for r in where if pct[id(r)] < 100.0]
    low = sorted((r for r in where if pct[id(r)] < LISTED_BELOW), key=lambda r: pct[id(r)])
    if not low:
        low_text = "none"
    elif len(low) == n:
        low_text = f"all {n}"
    elif len(low) <= LIST_AT_MOST and max(pct.values()) >= 100.0:
        low_text = ", ".join(f"{problem(r)}: {fmt_pct(pct[id(r)])}" for r in low)
    else:
        low_text = f"{len(low)} of {n}"
    worst = min(where, key=lambda r: pct[id(r)])
    files = []
    for r in where:
        stem = pathlib.Path(r.source).stem
        if stem not in files:
            files.append(stem)
    return [f"{n}: {', '.join(layouts)} ({', '.join(f'`{f}`' for f in files)})",
            pct_range(list(pct.values())), f"{len(below)} of {n}", low_text,
            f"{problem(worst)}: {fmt_pct(pct[id(worst)])}"]


def limits_block(all_rows: list[rd.Row], headline: int | None, data_dir: str, root: pathlib.Path,
                 page_dir: str = "") -> str:
    """Two tables. Each GPU GEMM chapter's result steps (result_steps) over every square size from the
    headline up and every storage order they ran, as a min–max of % of the baseline (steps measured there at
    one size and order only are left to the summary and the ladder); then the same steps over every problem
    they were measured on (measured_everywhere): how many below the baseline, those below LISTED_BELOW %, the
    worst."""
    rows = [r for r in all_rows if not rd.is_tuning(r.chapter)]
    chapters = rd.gpu_gemm_chapters(rows)
    if not chapters or headline is None:
        return f"_No GPU GEMM results in `{data_dir}` yet._"
    steps = [(chapter, s) for chapter in chapters for s in result_steps(rows, chapter, headline)]
    # The second table has the copy chapter too: its best copy (the summary's) against cudaMemcpy.
    copies = [(c, found[0]) for c in rd.chapters(rows) if rd.baseline_of(rows, c) == rd.COPY_BASELINE
              for found in [rd.best_row(rows, c, headline)] if found is not None]
    steps2 = sorted(steps + copies, key=lambda x: x[0])  # stable: each chapter's steps keep their order
    header = ["chapter", "step", "dtype", "against", "sizes", "storage orders", "% of the baseline (min–max)"]
    out, last_chapter = [], None
    for chapter, best in steps:
        mine = [r for r in rows if (r.chapter, r.kernel, r.dtype) == (chapter, best.kernel, best.dtype)
                and r.is_square and r.m >= headline and rd.pct_of_baseline(rows, r) is not None]
        if len(mine) < 2:  # one size and order: the summary's row already says it
            continue
        sizes = sorted({r.m for r in mine})
        layouts = sorted({r.layout for r in mine}, key=layout_order(chapter))
        cell = chapter_cell(chapter, root, page_dir) if chapter != last_chapter else ""
        last_chapter = chapter
        out.append([cell, best.kernel, best.dtype, baseline_name(rows, best), ", ".join(f"{n}³" for n in sizes),
                    ", ".join(layouts), pct_range([rd.pct_of_baseline(rows, r) for r in mine])])
    text = md_table(header, out, right={6})
    header2 = ["chapter", "step", "dtype", "against", "problems measured (from)", "% of the baseline (min–max)",
               "below the baseline", f"below {LISTED_BELOW:g}%", "worst"]
    out2, last_chapter = [], None
    for chapter, best in steps2:
        cells = losses_cells(all_rows, best)
        if cells is None:
            continue
        cell = chapter_cell(chapter, root, page_dir) if chapter != last_chapter else ""
        last_chapter = chapter
        out2.append([cell, best.kernel, best.dtype, baseline_name(rows, best), *cells])
    out2 += grouped_losses_rows(root, data_dir, page_dir)
    how = baselines_note(rows, [s for _, s in steps])
    text += ("\n\nWhere they lose, every GPU chapter's result steps (the copy chapter's best copy too) over every "
             "problem each was measured on: in its chapter's run, the size sweeps, and later chapters' runs that "
             "measure it again as their point of departure (a problem "
             f"measured in several runs counts once, from the first of these). Below {LISTED_BELOW:g}%: the problems, "
             f"lowest first, for a step that reaches its baseline somewhere (up to {LIST_AT_MOST}), else how many."
             "\n\n" + md_table(header2, out2, right={5})
             + "\n\n_% of the baseline named in each row, measured in the same run on the same problem, ratio of medians"
             + (f" ({how})" if how else "") + "; from `" + data_dir + "/*.csv` by `plots/update_tables.py`._")
    return text


def cpu_sentence(rows: list[rd.Row], data_dir: str) -> str:
    """Chapter 01's fastest kernel over its naive loop at the naive loop's largest size, in one sentence."""
    naive = rd.cpu_naive(rows)
    if naive is None:
        return f"_No CPU results in `{data_dir}` yet._"
    same = [r for r in rows if r.chapter == naive.chapter and (r.m, r.n, r.k) == (naive.m, naive.n, naive.k) and r.tflops]
    best = max(same, key=lambda r: r.tflops)
    return (f"At {naive.size_text} chapter 01's naive loop runs at {fmt_rate(naive.tflops * 1e3)} GFLOP/s and its "
            f"fastest kernel, `{best.kernel}`, at {fmt_rate(best.tflops * 1e3)} GFLOP/s: "
            f"{best.tflops / naive.tflops:.1f}× faster (`{data_dir}/`, by `plots/update_tables.py`).")


CLASS_SUFFIX = ".classes"


def classes_table(all_rows: list[rd.Row], chapter: str, data_dir: str) -> str:
    """Block 'results:<chapter>.classes': each step of `chapter` (its cuBLAS left out) by class of
    shape (rd.SHAPE_CLASSES): the geometric mean of its % of cuBLAS, the worst and the best, over the
    shapes of the class it ran."""
    rows, seen = [], set()
    for r in all_rows:  # a problem measured in several runs counts once, from the first
        key = (r.kernel, r.layout, r.m, r.n, r.k)
        if r.chapter == chapter and r.pct is not None and key not in seen:
            seen.add(key)
            rows.append(r)
    if not rows:
        return f"_No results for chapter {chapter} in `{data_dir}` yet._"
    own = rd.canonical_layout(chapter)
    steps: list[tuple[str, str]] = []  # (kernel, layout): the chapter's own storage order first
    for r in sorted(rows, key=lambda r: r.layout != own):
        if not r.is_baseline and (r.kernel, r.layout) not in steps:
            steps.append((r.kernel, r.layout))
    counts = {c: len({(r.m, r.n, r.k) for r in rows if rd.shape_class(r.m, r.n, r.k) == c}) for c in rd.SHAPE_CLASSES}
    header = ["step"] + [f"{c} ({counts[c]})" for c in rd.SHAPE_CLASSES if counts[c]]
    out = []
    for step, layout in steps:
        cells = [f"`{step}`" + (f" ({layout})" if layout != own else "")]
        for c in rd.SHAPE_CLASSES:
            if not counts[c]:
                continue
            pcts = [r.pct for r in rows if (r.kernel, r.layout) == (step, layout) and rd.shape_class(r.m, r.n, r.k) == c]
            if not pcts:
                cells.append("–")
                continue
            geo = math.exp(sum(math.log(v) for v in pcts) / len(pcts))
            shown = f"{fmt_pct(geo)} ({fmt_pct(min(pcts))}–{fmt_pct(max(pcts))})"
            cells.append(shown if len(pcts) == counts[c] else f"{shown}, {len(pcts)} shapes")
        out.append(cells)
    note = ("Each cell: the geometric mean of the step's % of cuBLAS over the class's shapes (their number "
            "in the header), then the worst and the best; a step run on fewer shapes of a class says how many; a "
            "storage order other than the chapter's own is named beside the step. "
            f"From `{data_dir}/`, by `plots/update_tables.py`.")
    return md_table(header, out, set(range(1, len(header)))) + "\n\n" + note


MODEL_CSV = "lib_model.csv"  # python/examples/llama_decoder.py --csv, in plots/data/<gpu>/
MODEL_BACKENDS = {"torch_eager": "torch, eager", "ours_eager": "gemm_ladder, eager",
                  "torch_compile": "torch, compiled", "ours_compile": "gemm_ladder, compiled",
                  "torch_reduce_overhead": "torch, CUDA graphs", "ours_reduce_overhead": "gemm_ladder, CUDA graphs",
                  "torch_max_autotune": "torch, max-autotune"}
# gemm_ladder's backends and the torch backend of the same mode: (ours, peer, the mode's name, its column's header).
MODEL_PAIRS = (("ours_eager", "torch_eager", "Eager", "% of torch eager"),
               ("ours_compile", "torch_compile", "Compiled", "% of torch compiled"),
               ("ours_reduce_overhead", "torch_reduce_overhead", 'With CUDA graphs (mode="reduce-overhead")',
                "% of torch, CUDA graphs"))
# Issue 39's target: gemm_ladder's model at >= 97% of torch's tokens/s, eager against eager and
# compiled against compiled.
MODEL_TARGET_PCT = 97.0


def model_block(path: pathlib.Path, data_dir: str) -> str:
    """Block 'results:lib_model': the example model's CSV as a table, then gemm_ladder's backends
    against torch's of the same mode, and the logits' differences."""
    shown = f"{data_dir}/{MODEL_CSV}"
    if not path.is_file():
        return f"_No results in `{shown}` yet: run `python/examples/llama_decoder.py --csv {shown}` on the GPU._"
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    # Grouped by step (prefill, then each decode batch, as the script ran them), torch's backends first.
    steps = list(dict.fromkeys((r["phase"], r["batch"]) for r in rows))
    order = list(MODEL_BACKENDS)
    rows.sort(key=lambda r: (steps.index((r["phase"], r["batch"])),
                             order.index(r["backend"]) if r["backend"] in order else len(order)))

    def num(r, column):
        try:
            return float(r.get(column) or "")
        except ValueError:
            return None

    def phase(r):
        if r["phase"] == "prefill":
            return f"prefill, {int(num(r, 'tokens')):,} tokens"
        return f"decode, batch {r['batch']}"

    def diff(r):
        a, rel = num(r, "max_abs_diff"), num(r, "max_rel_diff")
        return "–" if a is None or rel is None else f"{a:.3g} ({100 * rel:.2f}%)"

    def seconds(v):
        return "–" if v is None else f"{v:.0f}"

    # a peer's column where the CSV has it (one from before the CUDA-graph backends has two)
    pairs = [p for p in MODEL_PAIRS if any(num(r, f"pct_of_{p[1]}") is not None for r in rows)]
    out = [["" if i and (rows[i - 1]["phase"], rows[i - 1]["batch"]) == (r["phase"], r["batch"]) else phase(r),
            MODEL_BACKENDS.get(r["backend"], r["backend"]), fmt_ms(num(r, "median_ms")),
            f"{num(r, 'tokens_per_s'):,.0f}", *(fmt_pct(num(r, f"pct_of_{p[1]}")) for p in pairs),
            diff(r), seconds(num(r, "compile_s"))] for i, r in enumerate(rows)]
    header = ["step", "linear layers, mode", "ms per step", "tokens/s", *(p[3] for p in pairs),
              "logits: largest difference (% of the largest logit)", "first call, s"]
    text = md_table(header, out, set(range(2, len(header))))
    sentences = []
    for ours, peer, mode, _ in pairs:
        pcts = [num(r, f"pct_of_{peer}") for r in rows if r["backend"] == ours]
        pcts = [v for v in pcts if v is not None]
        if pcts:
            met = sum(1 for v in pcts if v >= MODEL_TARGET_PCT)
            sentences.append(f"{mode}, gemm_ladder runs at {pct_range(pcts)} of torch's tokens/s, at or above "
                             f"issue 39's target of {MODEL_TARGET_PCT:.0f}% in {met} of {len(pcts)} steps.")
    outside = [r for r in rows if r.get("within_tolerance") == "no"]
    tolerance = num(rows[0], "tolerance_rel") if rows else None
    if tolerance is not None:
        sentences.append("Every backend's logits within the bf16 tolerance (" + f"{100 * tolerance:.2f}% of the largest "
                         "logit) of torch eager's." if not outside else
                         "Logits outside the bf16 tolerance: " + ", ".join(f"{r['backend']} {phase(r)}" for r in outside) + ".")
    gpus = sorted({r.get("gpu", "") for r in rows} - {""})
    versions = sorted({r.get("torch_version", "") for r in rows} - {""})
    dates = sorted({r.get("timestamp", "")[:10] for r in rows} - {""})
    layers = sorted({r.get("layers", "") for r in rows} - {""})
    where = ", ".join(gpus or ["an unnamed GPU"]) + (", torch " + ", ".join(versions) if versions else "") \
        + (", " + ", ".join(dates) if dates else "") + (", " + "/".join(layers) + " layers" if layers else "")
    note = (f"_Measured on {where}; medians of CUDA-event times per step; from `{shown}` by "
            "`plots/update_tables.py`._")
    return text + "\n\n" + " ".join(sentences) + ("\n\n" if sentences else "") + note


def render(text: str, rows: list[rd.Row], headline: int | None, data_dir: str, root: pathlib.Path,
           name: str, gpus=None) -> tuple[str, list[str]]:
    """The file's text with every block filled, and the ids of the blocks that changed."""
    opens, closes, blocks = len(OPEN.findall(text)), len(CLOSE.findall(text)), len(BLOCK.findall(text))
    if not (opens == closes == blocks):
        raise BlockError(f"{name}: {opens} '<!-- results:... -->' and {closes} '<!-- /results -->' markers do not pair up")
    changed: list[str] = []
    page_dir = pathlib.PurePosixPath(name).parent.as_posix()
    page_dir = "" if page_dir == "." else page_dir

    def fill(m: re.Match) -> str:
        marker = m.group("id")
        if marker == "summary":
            table = summary_table(rows, headline, data_dir, root, page_dir)
        elif marker == "summary-gpus":
            table = gpus_table(gpus() if gpus else [], root, page_dir)
        elif marker == "ladder":
            table = ladder_block(rows, headline, data_dir, root, page_dir)
        elif marker == "limits":
            table = limits_block(rows, headline, data_dir, root, page_dir)
        elif marker == "cpu":
            table = cpu_sentence(rows, data_dir)
        elif marker == "lib_model":
            table = model_block(root / data_dir / MODEL_CSV, data_dir)
        elif marker.endswith(CLASS_SUFFIX):
            table = classes_table(rows, marker[: -len(CLASS_SUFFIX)], data_dir)
        else:
            table = chapter_table(rows, marker, data_dir, root)
        body = "\n" + table + "\n"
        if m.group("body") != body:
            changed.append(marker)
        return m.group(1) + body + m.group(4)

    return BLOCK.sub(fill, text), changed


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Fill the README result tables from the chapters' CSVs.")
    p.add_argument("--data", type=pathlib.Path, default=None,
                   help="directory searched (recursively) for *.csv (default: <root>/plots/data/h200)")
    p.add_argument("--root", type=pathlib.Path, default=REPO,
                   help="repository root holding README.md, docs/*.md and chapters/*/README.md (default: this repository)")
    p.add_argument("--headline", type=int, default=None, metavar="N",
                   help="square size of the summary table (default: as plot.py chooses it)")
    p.add_argument("--gpus", default=None, metavar="DIR[,DIR...]",
                   help="the GPUs of the side-by-side block 'results:summary-gpus': directories under <root>/plots/data/ "
                        "(or paths), one column pair each (default: " + ", ".join(s for s, _ in SUMMARY_GPUS)
                        + ", then every other directory there with CSVs)")
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if a block is out of date")
    args = p.parse_args(argv)
    if args.headline is not None and args.headline < 1:
        p.exit(2, f"error: --headline: must be a positive size, got {args.headline}\n")
    root = args.root
    data = args.data if args.data is not None else root / "plots" / "data" / "h200"
    try:
        rows = rd.load(data, require=False)
    except (rd.DataError, OSError) as e:
        print(f"error: --data: {e}", file=sys.stderr)
        return 2
    if not rows:
        print(f"note: no CSV under {data}: the tables say so", file=sys.stderr)
    headline = args.headline if args.headline is not None else rd.headline_size(rows)
    data_text = relative(str(data), root)

    loaded = []  # the GPUs of the side-by-side block, read once, and only if a README has that block

    def gpus():
        if not loaded:
            for d, label in gpu_dirs(root, args.gpus.split(",") if args.gpus else None):
                loaded.append((d, label, rd.load(d, require=False)))
        return loaded

    files = [root / "README.md"] + sorted((root / "docs").glob("*.md")) + sorted((root / "chapters").glob("*/README.md"))
    updates = []  # all files are rendered before any is written: a bad marker leaves everything untouched
    for f in files:
        if not f.is_file():
            continue
        name = relative(str(f), root)
        try:
            new, changed = render(f.read_text(encoding="utf-8"), rows, headline, data_text, root, name, gpus)
        except (rd.DataError, OSError) as e:
            print(f"error: --gpus: {e}", file=sys.stderr)
            return 2
        except BlockError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        if changed:
            updates.append((f, name, new, changed))
    stale = len(updates)
    for f, name, new, changed in updates:
        for marker in changed:
            if args.check:
                print(f"{name}: block 'results:{marker}' is out of date (run: python plots/update_tables.py)")
            else:
                print(f"{name}: updated block 'results:{marker}'")
        if not args.check:
            f.write_text(new, encoding="utf-8")
    if args.check:
        if stale:
            return 1
        print("update_tables: every results block is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
