#!/usr/bin/env python3
"""Draws the figures of gemm-ladder from the CSVs the chapter binaries write.

    python plots/plot.py [--data plots/data/h200] [--out docs/images] [--headline N]

Reads every *.csv under --data (schema: common/harness/results.hpp) and writes,
as PNG and SVG, into --out:

  ladder            the README's figure: one bar per chapter, its best step (the summary
                    table's) as % of the baseline measured in the same run: GPU GEMMs at the
                    headline size against the cuBLAS of their dtype, chapter 04's copy against
                    cudaMemcpy, chapter 01 (the CPU) against cuBLAS SGEMM at its size;
  ladder_chNN       one per chapter: every step, a bar at the first of the headline sizes and
                    storage orders (4096³ and 8192³, RRR and RCR, those measured; 16384² and
                    8192² for the copies; GFLOP/s for the CPU), markers for the others, and
                    every value written in a column per size and order;
  speedup_vs_cpu    speedup over chapter 01's fastest CPU kernel, every bar at one size that
                    chapter 01 and the most GPU chapters measured (log scale);
  best_vs_size      each GPU chapter's best kernel against the square size, one panel per
                    dtype (fp32, bf16), linear TFLOP/s, cuBLAS dashed;
  roofline_fp32     the fp32 kernels of chapters 02-07 at 4096³ under the FMA peak, the
                    L1/shared-memory and the DRAM roofs (inputs: plots/ceilings.py, ch04's CSV);
  copy_bandwidth    GB/s of the copy chapter's kernels against cudaMemcpy
                    (only when copy rows exist);
  vs_cublas_sizes   % of cuBLAS against the problem, for a chapter's size sweep
                    (rows of a chapter named *_sizes other than the fp32 one; only when such rows exist),
                    each problem labelled with its 128×256 tiles per 132 SMs;
  fp32_sizes        TFLOP/s and % of cuBLAS of the fp32 sweep (chapter 06_tiled_copy_mma_sizes,
                    build/bin/ch06_sizes) at non-multiples and rectangular shapes, each problem
                    labelled with its 128×128 tiles per 132 SMs (only when its rows exist);
  predicted_vs_measured  every speed prediction of the chapter pages (plots/predictions.py) as its
                    range, the measured value of each of its CSV rows as a marker, in range or not
                    (only when the predicted kernels' rows exist).

A figure whose data is missing is skipped with a note; a directory without any
CSV is an error (exit 2).
"""

from __future__ import annotations

import argparse
import csv
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import ceilings  # noqa: E402
import predictions as pr  # noqa: E402
import results_data as rd  # noqa: E402

try:
    import matplotlib
except ImportError:
    sys.exit("error: matplotlib is not installed for " + sys.executable
             + " (pip install -r plots/requirements.txt; scripts/test.sh does it in .venv)")
matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent
BASELINE_COLOR = "#222222"
# One line style per baseline dtype (a chapter of bf16 and tf32 kernels draws both cuBLAS levels).
BASELINE_STYLES = ["--", ":", "-."]

matplotlib.rcParams.update({
    "svg.hashsalt": "gemm-ladder",  # stable element ids: committed SVGs change only when the data does
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.axisbelow": True,
})


def chapter_label(chapter: str) -> str:
    num, _, name = chapter.partition("_")
    return f"{num} {name.replace('_', ' ')}" if name else chapter


def chapter_colors(chapters: list[str]) -> dict[str, str]:
    cmap = plt.get_cmap("tab10")
    return {c: cmap(i % 10) for i, c in enumerate(chapters)}


def gpu_name(rows: list[rd.Row]) -> str:
    gemm_chapters = set(rd.gpu_gemm_chapters(rows))  # once, not once per row (that was quadratic: half the drawing's time)
    names = sorted({r.gpu for r in rows if r.chapter in gemm_chapters or r.is_copy} - {""})
    return " / ".join(names) if names else "GPU"


def kernel_labels(rows: list[rd.Row]) -> dict[rd.Row, str]:
    """Kernel name, plus dtype and layout where a chapter measured the kernel in several."""
    out = {}
    for r in rows:
        same = [x for x in rows if x.chapter == r.chapter and x.kernel == r.kernel]
        label = r.kernel
        if len({x.dtype for x in same}) > 1:
            label += f" {r.dtype}"
        if len({x.layout for x in same}) > 1:
            label += f" {r.layout}"
        out[r] = label
    return out


def save(fig, out_dir: pathlib.Path, name: str) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for ext, meta in (("png", {"Software": None}), ("svg", {"Date": None})):
        path = out_dir / f"{name}.{ext}"
        fig.savefig(path, dpi=150 if ext == "png" else None, bbox_inches="tight", metadata=meta)
        print(f"wrote {path}")
    plt.close(fig)


def skip(name: str, why: str, out_dir: pathlib.Path) -> None:
    print(f"{name}: skipped: {why}", file=sys.stderr)
    # A figure left over from older data would no longer match the CSVs: remove it.
    for ext in ("png", "svg"):
        stale = out_dir / f"{name}.{ext}"
        if stale.is_file():
            stale.unlink()
            print(f"{name}: removed the stale {stale}", file=sys.stderr)


def baseline_levels(rows: list[rd.Row], kernel: str, pick) -> dict[str, float]:
    """Per dtype, the median over chapters of the baseline's value at the rows `pick` accepts
    (each chapter measures its own baseline; they agree to a few percent)."""
    per_dtype: dict[str, list[float]] = {}
    for r in rows:
        if r.kernel == kernel and pick(r):
            value = r.tflops if kernel == rd.GEMM_BASELINE else r.gbps
            if value is not None:
                per_dtype.setdefault(r.dtype, []).append(value)
    return {d: rd.median(v) for d, v in per_dtype.items()}


def grouped_bars(ax, groups: list[tuple[str, list[tuple[str, float, str | None]]]], colors: dict[str, str]):
    """Bars grouped by chapter, a gap between groups. Returns (x positions, bar rects)."""
    x, ticks, ticklabels, spans = 0.0, [], [], []
    for chapter, bars in groups:
        start = x
        for label, value, text in bars:
            rect = ax.bar(x, value, width=0.8, color=colors[chapter], edgecolor="white")[0]
            if text:
                ax.annotate(text, (x, value), xytext=(0, 3), textcoords="offset points",
                            ha="center", va="bottom", fontsize=8,
                        bbox=dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none", alpha=0.85))
            ticks.append(x)
            ticklabels.append(label)
            x += 1
        spans.append((chapter, start, x - 1))
        x += 0.7
    ax.set_xticks(ticks)
    ax.set_xticklabels(ticklabels, rotation=30, ha="right")
    ax.set_xlim(-0.7, ticks[-1] + 0.7)
    return spans


def chapter_legend(ax, chapters: list[str], colors: dict[str, str], extra=(), **kw):
    handles = [Patch(color=colors[c], label=chapter_label(c)) for c in chapters] + list(extra)
    ax.legend(handles=handles, fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0), **kw)


# --- The ladder: each chapter's best step, and each chapter's steps ---------------------------------
KIND_COLORS = {"cpu": "#9e9e9e", "fp32": "#1f77b4", "copy": "#e6a23c", "bf16": "#2ca02c", "tf32": "#17becf",
               "e4m3": "#8e24aa", "e4m3_promoted": "#ce93d8", "e4m3_block": "#d81b60"}
KIND_LABELS = {"cpu": "CPU (chapter 01): of cuBLAS SGEMM on the GPU at the same size",
               "fp32": "fp32 on the CUDA cores: of cuBLAS SGEMM",
               "copy": "a copy (chapter 04): of cudaMemcpy, not of a GEMM",
               "bf16": "bf16 on the tensor cores: of cuBLAS bf16",
               "tf32": "tf32 on the tensor cores: of cuBLAS tf32",
               "e4m3": "fp8 e4m3 on the tensor cores: of cuBLASLt fp8 (fast accumulation)",
               "e4m3_promoted": "fp8 e4m3, partial sums promoted to fp32: of cuBLASLt fp8 (fast accumulation)",
               "e4m3_block": "fp8 e4m3 with 1×128/128×128 block scales: of cuBLASLt's block-scaled fp8"}


def fmt_tflops(v: float) -> str:
    """TFLOP/s as the README's tables write them: three significant digits, thousands separated."""
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def ladder_data(rows: list[rd.Row], headline: int | None):
    """[(chapter, best row, % of its baseline, kind, what the % is of)] for every chapter with a best step
    (rd.best_row, the summary table's choice): GPU GEMMs against their cuBLAS, the copy against
    cudaMemcpy, the CPU against cuBLAS SGEMM at its size (rd.cpu_vs_cublas)."""
    out = []
    for chapter in rd.chapters(rows):
        found = rd.best_row(rows, chapter, headline)
        if found is None:
            continue
        r, _ = found
        base = rd.baseline_of(rows, chapter)
        if base == rd.COPY_BASELINE:
            pct, kind = rd.pct_of_baseline(rows, r), "copy"
        elif base == rd.GEMM_BASELINE:
            pct, kind = rd.pct_of_baseline(rows, r), r.dtype if r.dtype in KIND_COLORS else "fp32"
        else:
            vs = rd.cpu_vs_cublas(rows, r)
            pct, kind = (None if vs is None else vs[0]), "cpu"
        if pct is not None:
            out.append((chapter, r, pct, kind))
    return out


def plot_ladder(rows, headline, out_dir) -> bool:
    """The README's figure: one bar per chapter, its best step's % of the baseline measured in the same
    run, chapter 01 at the top; each bar says its kernel, its rate and what the % is of."""
    name = "ladder"
    data = ladder_data(rows, headline)
    if headline is None or not data:
        skip(name, "no chapter with a best step and a baseline", out_dir)
        return False
    fig, ax = plt.subplots(figsize=(8.4, 0.42 * len(data) + 1.9))
    ys = list(range(len(data)))[::-1]
    ax.axvline(100, color=BASELINE_COLOR, linestyle="--", linewidth=1.1, zorder=1)
    for y, (chapter, r, pct, kind) in zip(ys, data):
        ax.barh(y, pct, height=0.62, color=KIND_COLORS[kind], hatch="//" if kind == "copy" else None,
                edgecolor="white" if kind != "copy" else "#8a5a00", linewidth=0.6, zorder=2)
        if kind == "copy":
            rate = f"{r.gbps:,.0f} GB/s ({r.size_text} copy)"
        elif kind == "cpu":
            rate = f"{r.tflops * 1e3:.3g} GFLOP/s at {r.size_text} (CPU)"
        else:
            rate = f"{fmt_tflops(r.tflops)} TFLOP/s"
        pct_text = f"{pct:.2g}%" if pct < 1 else f"{pct:.1f}%"
        ax.annotate(f"{pct_text}  {rate}", (pct, y), xytext=(4, 0), textcoords="offset points", va="center",
                    fontsize=9, zorder=4,
                    bbox=dict(boxstyle="square,pad=0.15", facecolor="white", edgecolor="none"))
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{c.split('_', 1)[0]}  {r.kernel}" + (f" ({r.layout})" if kind not in ("copy", "cpu") and r.layout != "RRR" else "")
                        for c, r, _, kind in data], fontsize=9.5)
    ax.set_xlim(0, 150)
    ax.set_xticks([0, 20, 40, 60, 80, 100])
    ax.set_ylim(-0.6, len(data) - 0.4)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel(f"% of the baseline measured in the same run (ratio of median times)\n"
                  f"GPU GEMMs: C = A·B at {headline}³, A, B and C row-major (RCR: C = A·Bᵀ, where a chapter takes only that)")
    ax.set_title(f"Each chapter's best step on {gpu_name(rows)} (100% = the baseline, dashed)", fontsize=11, loc="left")
    kinds = [k for k in KIND_COLORS if any(kind == k for *_, kind in data)]
    ax.legend(handles=[Patch(facecolor=KIND_COLORS[k], hatch="//" if k == "copy" else None,
                             edgecolor="white" if k != "copy" else "#8a5a00", label=KIND_LABELS[k]) for k in kinds],
              fontsize=8.5, frameon=False, loc="upper left", bbox_to_anchor=(-0.3, -0.15), ncol=2)
    save(fig, out_dir, name)
    return True


# A chapter's own ladder figure draws its steps at these square sizes and storage orders (those the
# chapter measured); with fewer than two of them, every square size it measured instead.
LADDER_SIZES = (4096, 8192)
LADDER_LAYOUTS = ("RRR", "RCR")
COPY_LADDER_SIZES = (16384, 8192)  # chapter 04's large matrices, the sizes its predictions are about
COMBO_COLORS = ["#37474f", "#d81b60", "#1e88e5", "#ffb300", "#43a047", "#8e24aa"]
COMBO_MARKERS = ["|", "o", "s", "D", "^", "v"]


def chapter_ladder_data(all_rows: list[rd.Row], chapter: str):
    """(combinations, [(kernel label, dtype, {combination: value})], unit) of one chapter's ladder figure:
    its kernels in the order the binary ran them; a GEMM's value is its % of the cuBLAS of its dtype, a
    copy's its % of cudaMemcpy, the CPU's its GFLOP/s. A combination is (size text, layout); the first is
    the bar, the others are markers."""
    rows = [r for r in all_rows if r.chapter == chapter and not r.is_baseline]
    base = rd.baseline_of(all_rows, chapter)
    if base == rd.COPY_BASELINE:
        sizes = [n for n in COPY_LADDER_SIZES if any(r.m == r.n == n for r in rows)]
        combos = [(f"{n}²", r0.layout) for n in sizes for r0 in rows[:1]]
        pick = {c: [r for r in rows if f"{r.m}²" == c[0] and r.m == r.n] for c in combos}
        unit = "% of cudaMemcpy (same run, same matrix)"
    else:
        squares = sorted({r.m for r in rows if r.is_square}, reverse=True)
        order = sorted(LADDER_LAYOUTS, key=lambda x: x != rd.canonical_layout(chapter))  # the chapter's own first
        layouts = [x for x in order if any(r.layout == x for r in rows)] or sorted({r.layout for r in rows})
        sizes = [n for n in LADDER_SIZES if n in squares]
        combos = [(f"{n}³", x) for n in sizes for x in layouts]
        if len(combos) < 2:
            combos = [(f"{n}³", x) for n in squares for x in layouts]
        pick = {c: [r for r in rows if r.is_square and f"{r.m}³" == c[0] and r.layout == c[1]] for c in combos}
        unit = "GFLOP/s (median)" if base is None else "% of cuBLAS of the step's dtype (same run, same problem)"
    steps = []
    for kernel, dtype in dict.fromkeys((r.kernel, r.dtype) for r in rows):
        values = {}
        for c in combos:
            found = [r for r in pick[c] if (r.kernel, r.dtype) == (kernel, dtype)]
            if found:
                r = found[0]
                values[c] = r.tflops * 1e3 if base is None else rd.pct_of_baseline(all_rows, r)
        if values:
            steps.append((kernel, dtype, values))
    combos = [c for c in combos if any(c in v for *_, v in steps)]
    return combos, steps, unit


def combo_text(combo: tuple[str, str], sep: str = " ", layout: bool = True) -> str:
    """"4096³ RRR"; the size alone where the chapter has one storage order (a copy's matrix, "16384²")."""
    size, order = combo
    return f"{size}{sep}{order}" if layout and not size.endswith("²") else size


def plot_chapter_ladder(all_rows, chapter: str, out_dir) -> bool:
    """One chapter's steps as horizontal bars (the first combination of size and storage order), markers
    for the others, and every value written in a column per combination to the right of the plot."""
    import matplotlib.transforms as mtransforms
    name = f"ladder_ch{chapter[:2]}"
    combos, steps, unit = chapter_ladder_data(all_rows, chapter)
    if not steps or not combos:
        skip(name, f"no rows of chapter {chapter}", out_dir)
        return False
    n = len(steps)
    height = 0.3 * n + 1.9
    col = 0.07  # width of one value column, as a fraction of the figure's width
    right = 0.985 - col * len(combos)
    fig, ax = plt.subplots(figsize=(10.0, height))
    fig.subplots_adjust(left=0.27, right=right, top=1 - 0.95 / height, bottom=0.75 / height)
    ys = list(range(n))[::-1]
    cpu = unit.startswith("GFLOP")
    copy = rd.baseline_of(all_rows, chapter) == rd.COPY_BASELINE
    vmax = max(v for *_, vals in steps for v in vals.values())
    xmax = vmax * 1.08 if cpu else max(110.0, vmax * 1.05)
    dtypes = list(dict.fromkeys(d for _, d, _ in steps))
    columns = mtransforms.blended_transform_factory(fig.transFigure, ax.transData)
    orders = len({r.layout for r in all_rows if r.chapter == chapter}) > 1

    def label(c, sep=" "):
        return combo_text(c, sep, orders)

    def bar_color(dtype):
        return KIND_COLORS["cpu"] if cpu else KIND_COLORS["copy"] if copy else KIND_COLORS.get(dtype, KIND_COLORS["fp32"])

    for y, (kernel, dtype, values) in zip(ys, steps):
        if combos[0] in values:
            ax.barh(y, values[combos[0]], height=0.6, color=bar_color(dtype), alpha=0.85, edgecolor="none")
        for i, c in enumerate(combos[1:], start=1):
            if c in values:
                ax.plot([values[c]], [y], marker=COMBO_MARKERS[i % len(COMBO_MARKERS)], linestyle="none",
                        markersize=6, color=COMBO_COLORS[i % len(COMBO_COLORS)], markeredgecolor="white",
                        markeredgewidth=0.5, zorder=3)
        for i, c in enumerate(combos):
            if c in values:
                v = values[c]
                text = (f"{v:,.0f}" if v >= 100 else f"{v:#.3g}") if cpu else f"{v:.1f}"
                ax.text(right + col * (i + 0.85), y, text, transform=columns, ha="right", va="center", fontsize=8)
    for i, c in enumerate(combos):
        ax.text(right + col * (i + 0.85), n - 0.5, label(c, "\n"), transform=columns, ha="right", va="bottom",
                fontsize=8, fontweight="bold", color=COMBO_COLORS[i % len(COMBO_COLORS)])
    if not cpu:
        ax.axvline(100, color=BASELINE_COLOR, linestyle="--", linewidth=1.0)
    ax.set_yticks(ys)
    ax.set_yticklabels([k if len(dtypes) == 1 or k.startswith(d) else f"{k} ({d})" for k, d, _ in steps], fontsize=9)
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlim(0, xmax)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel(unit)
    legend = [Patch(facecolor=bar_color(dtypes[0]), label=f"bar: {label(combos[0])}"
                    + (f" ({dtypes[0]})" if len(dtypes) > 1 else ""))]
    legend += [Patch(facecolor=bar_color(d), label=f"bar: {label(combos[0])} ({d})") for d in dtypes[1:]]
    legend += [Line2D([], [], marker=COMBO_MARKERS[i % len(COMBO_MARKERS)], linestyle="none",
                      color=COMBO_COLORS[i % len(COMBO_COLORS)], label=label(c))
               for i, c in enumerate(combos[1:], start=1)]
    # Above the plot, under the title: never over a bar, and in two rows when one would run into the
    # column headers of the numbers on the right (chapter 08: two bar colours and three markers).
    ncol = len(legend) if len(legend) <= 4 else 3
    rows = -(-len(legend) // ncol)
    ax.legend(handles=legend, fontsize=8, frameon=False, loc="lower left", bbox_to_anchor=(-0.01, 1.0),
              ncol=ncol, handlelength=1.5, columnspacing=1.2, borderaxespad=0.2)
    what = {rd.COPY_BASELINE: "against cudaMemcpy", rd.GEMM_BASELINE: "against cuBLAS", None: "on the CPU"}
    where = " / ".join(sorted({r.gpu.split(" (")[0] for r in all_rows if r.chapter == chapter} - {""})) or "GPU"
    ax.set_title(f"Chapter {chapter_label(chapter)}: every step {what[rd.baseline_of(all_rows, chapter)]} ({where})",
                 fontsize=10.5, loc="left", pad=30 + 14 * (rows - 1))
    save(fig, out_dir, name)
    return True


# Chapter 01's thread-count sweep (threaded_1 … threaded_16): only the fastest of it is drawn.
THREAD_SWEEP_PREFIX = "threaded_"


def speedup_size(rows: list[rd.Row]) -> int | None:
    """The one square size of the speedup figure: of the sizes chapter 01 (the CPU) measured, the one the
    most GPU GEMM chapters also measured, the largest on a tie. None when they share no size."""
    cpu = {r.m for r in rows if r.number == rd.CPU_NAIVE[0] and r.is_square and r.tflops}
    gpu = set(rd.gpu_gemm_chapters(rows))
    count = {n: len({r.chapter for r in rows if r.chapter in gpu and r.is_square and r.m == n
                     and r.tflops and not r.is_baseline}) for n in cpu}
    count = {n: c for n, c in count.items() if c > 0}
    return max(count, key=lambda n: (count[n], n)) if count else None


def speedup_bars(rows: list[rd.Row], size: int):
    """(CPU baseline row, [(chapter, [rows])]) of the speedup figure, every row at size³: chapter 01's
    kernels (its thread sweep reduced to its fastest point) and every GPU GEMM kernel measured there.
    The baseline is chapter 01's fastest kernel at that size, not its naive loop."""
    at = [r for r in rows if r.is_square and r.m == size and r.tflops and not r.is_baseline]
    cpu = [r for r in at if r.number == rd.CPU_NAIVE[0]]
    if not cpu:
        return None, []
    best = max(cpu, key=lambda r: r.tflops)
    cpu = [r for r in cpu if not r.kernel.startswith(THREAD_SWEEP_PREFIX) or r is best]
    gpu = set(rd.gpu_gemm_chapters(rows))
    groups = [(cpu[0].chapter, cpu)]
    for chapter in rd.chapters(at):
        if chapter in gpu:
            groups.append((chapter, [r for r in at if r.chapter == chapter]))
    return best, groups


def plot_speedup(rows, colors, out_dir) -> bool:
    name = "speedup_vs_cpu"
    size = speedup_size(rows)
    if size is None:
        skip(name, "no square size measured both by chapter 01 (CPU) and by a GPU chapter", out_dir)
        return False
    best, groups = speedup_bars(rows, size)
    base = best.tflops * 1e3  # GFLOP/s
    labels = kernel_labels([r for r in rows if not r.is_copy])
    drawn = []
    for chapter, mine in groups:
        drawn.append((chapter, [(labels[r], r.tflops * 1e3 / base,
                                 f"{r.tflops * 1e3 / base:,.0f}×" if r.tflops * 1e3 / base >= 10
                                 else f"{r.tflops * 1e3 / base:.2g}×") for r in mine]))
    fig, ax = plt.subplots(figsize=(max(7.0, 0.62 * sum(len(b) for _, b in drawn) + 3), 4.8))
    grouped_bars(ax, drawn, colors)
    ax.set_yscale("log")
    extra = []
    levels = sorted(baseline_levels(rows, rd.GEMM_BASELINE, lambda r: r.is_square and r.m == size).items())
    for i, (dtype, level) in enumerate(levels):
        style = BASELINE_STYLES[i % len(BASELINE_STYLES)]
        s = level * 1e3 / base
        ax.axhline(s, color=BASELINE_COLOR, linestyle=style, linewidth=1.2)
        extra.append(Line2D([], [], color=BASELINE_COLOR, linestyle=style, label=f"cuBLAS {dtype}: {s:,.0f}×"))
    ax.axhline(1.0, color="#888888", linewidth=0.8)
    lo, hi = ax.get_ylim()
    ax.set_ylim(min(lo, 0.5), hi * 3)
    missing = [c for c in rd.gpu_gemm_chapters(rows) if c not in {g for g, _ in groups}]
    ax.set_ylabel(f"speedup over {best.kernel} (log scale)\nGFLOP/s ÷ {base:.3g} GFLOP/s")
    cpu_name = best.gpu or "the CPU"
    # Each chapter multiplies in its own type and storage order (chapter 01-07 fp32 RRR, the tensor-core
    # chapters bf16, chapter 11 RCR): the size is the same for every bar, the problem is the chapter's.
    kinds: list[tuple[list[str], str]] = []
    for chapter, mine in groups:
        kind = ", ".join(sorted({f"{r.dtype} {r.layout}" for r in mine}))
        number = chapter.split("_", 1)[0]
        if kinds and kinds[-1][1] == kind:
            kinds[-1][0].append(number)
        else:
            kinds.append(([number], kind))
    span = lambda nums: nums[0] if len(nums) == 1 else f"{nums[0]}–{nums[-1]}"  # noqa: E731
    title = (f"C = A·B at {size}×{size}×{size} in each chapter's own type and storage order: "
             + "; ".join(f"{span(nums)} {kind}" for nums, kind in kinds) + "\n"
             f"baseline: chapter 01's fastest CPU kernel, {best.kernel} ({base:.3g} GFLOP/s on {cpu_name}),"
             f" not its naive loop")
    if missing:
        nums = ", ".join(c.split("_", 1)[0] for c in missing)
        title += f"\nchapters {nums} do not run {size}³ and are not shown"
    ax.set_title(title, fontsize=9.5)
    chapter_legend(ax, [g for g, _ in drawn], colors, extra)
    save(fig, out_dir, name)
    return True


def best_kernels(rows: list[rd.Row], headline: int | None) -> dict[str, rd.Row]:
    """Per GPU GEMM chapter, its best kernel: the summary table's choice (rd.best_row: the fastest at
    the headline size, else at the chapter's largest square size; a chapter's entry point where it
    has one)."""
    out = {}
    for chapter in rd.gpu_gemm_chapters(rows):
        found = rd.best_row(rows, chapter, headline)
        if found is not None and found[0].is_square and found[0].tflops:
            out[chapter] = found[0]
    return out


def plot_best_vs_size(rows, headline, colors, out_dir) -> bool:
    """Each GPU chapter's best kernel against the square size, one panel per dtype (fp32 on the CUDA
    cores, bf16 on the tensor cores), linear TFLOP/s, cuBLAS of the panel's dtype drawn dashed."""
    name = "best_vs_size"
    best = best_kernels(rows, headline)
    if not best:
        skip(name, "no square GEMM measured on the GPU", out_dir)
        return False
    dtypes = sorted({r.dtype for r in best.values()}, key=lambda d: (d != "fp32", d))
    fig, axes = plt.subplots(1, len(dtypes), figsize=(6.2 * len(dtypes), 4.6), squeeze=False)
    markers = "osD^v<>ph*"
    for ax, dtype in zip(axes[0], dtypes):
        chapters = [c for c, r in best.items() if r.dtype == dtype]
        sizes = set()
        for i, chapter in enumerate(chapters):
            b = best[chapter]
            pts = sorted((r for r in rows if (r.chapter, r.kernel, r.dtype, r.layout) == (chapter, b.kernel, b.dtype, b.layout)
                          and r.is_square and r.tflops), key=lambda r: r.m)
            sizes |= {r.m for r in pts}
            ax.plot([r.m for r in pts], [r.tflops for r in pts], marker=markers[i % len(markers)], color=colors[chapter],
                    linewidth=1.8, markersize=6, label=f"{chapter_label(chapter)}: {b.kernel}")
        by_size: dict[int, list[float]] = {}
        for r in rows:
            if r.kernel == rd.GEMM_BASELINE and r.dtype == dtype and r.is_square and r.tflops and r.chapter in chapters:
                by_size.setdefault(r.m, []).append(r.tflops)
        xs = sorted(by_size)
        if xs:
            ax.plot(xs, [rd.median(by_size[x]) for x in xs], color=BASELINE_COLOR, linestyle="--", linewidth=1.6,
                    marker="x", label=f"cuBLAS {dtype} (median of the chapters' runs)")
        ax.set_xscale("log", base=2)
        ticks = sorted(sizes | set(xs))
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"{s}³" for s in ticks])
        ax.minorticks_off()
        ax.set_ylim(0, ax.get_ylim()[1] * 1.05)
        ax.set_xlabel("problem M = N = K")
        ax.set_ylabel("TFLOP/s (median)")
        unit = "CUDA cores" if dtype == "fp32" else "tensor cores"
        nums = (f"chapters {chapters[0].split('_')[0]}–{chapters[-1].split('_')[0]}" if len(chapters) > 1
                else f"chapter {chapters[0].split('_')[0]}")
        ax.set_title(f"{dtype} on the {unit}: {nums}", fontsize=10)
        ax.legend(fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    fig.suptitle(f"Each chapter's best kernel (fastest at {headline}³) against the size, {gpu_name(rows)}",
                 fontsize=11)
    fig.tight_layout()
    save(fig, out_dir, name)
    return True


def roofline_data(rows: list[rd.Row], size: int = 4096):
    """The roofline's inputs: (ceilings, points, size). ceilings: {"fp32 FMA peak": TFLOP/s,
    "L1/shared": TB/s, "DRAM": TB/s or None}; points: [(row, FLOP/byte, page ceiling or None)], each
    chapter's best kernel among those plots/ceilings.py gives a tile for, at size³, all row-major."""
    dram = [r for r in rows if (r.chapter, r.kernel) == ceilings.DRAM_KERNEL and r.gbps]
    dram_tbps = max(dram, key=lambda r: (r.m * r.n, r.gbps)).gbps / 1e3 if dram else None
    roofs = {"fp32 FMA peak": ceilings.fp32_peak_tflops(), "L1/shared": ceilings.l1_shared_tbps(), "DRAM": dram_tbps}
    points = []
    for chapter in rd.chapters(rows):
        cands = [r for r in rows if (r.chapter, r.kernel) in ceilings.TILES and r.chapter == chapter
                 and r.is_square and r.m == size and r.tflops]
        if not cands:
            continue
        r = max(cands, key=lambda r: r.tflops)
        bm, bn, _ = ceilings.TILES[(r.chapter, r.kernel)]
        page = ceilings.KERNEL_CEILINGS.get((r.chapter, r.kernel))
        points.append((r, ceilings.intensity(bm, bn), None if page is None else page[0]))
    return roofs, points, size


def plot_roofline(rows, colors, out_dir) -> bool:
    name = "roofline_fp32"
    roofs, points, size = roofline_data(rows)
    if not points:
        skip(name, "no fp32 kernel of plots/ceilings.py's TILES measured at 4096³", out_dir)
        return False
    import numpy as np  # matplotlib's own dependency
    peak, l1 = roofs["fp32 FMA peak"], roofs["L1/shared"]
    x = np.logspace(np.log10(0.1), np.log10(200), 400)
    fig, ax = plt.subplots(figsize=(8.6, 5.4))
    ax.plot(x, np.minimum(peak, x * l1), color="#1f4e79", linewidth=2.2,
            label=f"L1/shared pipe: 132 SMs × 128 B/clk × 1.98 GHz = {l1:.1f} TB/s (calculated)")
    if roofs["DRAM"]:
        d = roofs["DRAM"]
        ax.plot(x, np.minimum(peak, x * d), color="#b03a2e", linewidth=2.2,
                label=f"DRAM: cudaMemcpy = {d:.2f} TB/s (measured, chapter 04)")
    ax.axhline(peak, color="#222222", linewidth=1.2, linestyle="-",
               label=f"fp32 FMA peak: 132 × 128 FMA/clk × 2 × 1.98 GHz = {peak:.1f} TFLOP/s (calculated)")
    cublas = [r.tflops for r in rows if r.kernel == rd.GEMM_BASELINE and r.dtype == "fp32" and r.is_square
              and r.m == size and r.tflops]
    if cublas:
        ax.axhline(rd.median(cublas), color=BASELINE_COLOR, linestyle="--", linewidth=1.0,
                   label=f"cuBLAS SGEMM at {size}³: {rd.median(cublas):.1f} TFLOP/s (measured; its tile is unknown)")
    page_drawn = False
    # Points of the same intensity (the 128×128 tiles of chapters 05-07) get their labels stacked
    # below-right of the group, fastest first, each with a leader line.
    same_x: dict[float, list] = {}
    for r, ai, _ in points:
        same_x.setdefault(ai, []).append(r)
    for r, ai, page in points:
        ax.plot([ai], [r.tflops], marker="o", markersize=8, color=colors.get(r.chapter, "C0"), zorder=5,
                linestyle="none")
        group = sorted(same_x[ai], key=lambda x: -x.tflops)
        j = next(i for i, x in enumerate(group) if x is r)
        if len(group) == 1:
            ax.annotate(f"{r.number} {r.kernel}\n{r.tflops:.1f} TFLOP/s", (ai, r.tflops), xytext=(7, -4),
                        textcoords="offset points", fontsize=8, va="top")
        else:
            top_y = group[0].tflops
            ax.annotate(f"{r.number} {r.kernel}: {r.tflops:.1f} TFLOP/s", (ai, r.tflops),
                        xytext=(ai * 1.5, top_y / 1.25 / (1.4 ** j)), textcoords="data", fontsize=8,
                        ha="left", va="center", color=colors.get(r.chapter, "black"),
                        arrowprops=dict(arrowstyle="-", color=colors.get(r.chapter, "gray"), linewidth=0.7))
        if page is not None:
            ax.plot([ai / 1.25, ai * 1.25], [page, page], color=colors.get(r.chapter, "C0"), linewidth=2.5)
            if not page_drawn:  # one legend entry, in grey: each dash has its kernel's colour
                ax.plot([], [], color="#777777", linewidth=2.5,
                        label="a kernel's own ceiling, computed on its chapter's page (plots/ceilings.py)")
            page_drawn = True
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(0.1, 200)
    ax.set_ylim(0.1, peak * 2)
    ax.set_xlabel("arithmetic intensity: FLOP per byte a block requests from global memory\n"
                  "(from the block tile BM×BN: BM·BN / (2·(BM+BN)) for fp32; the L2 absorbs part of these bytes)")
    ax.set_ylabel("TFLOP/s (log scale)")
    ax.set_title(f"fp32 roofline: each chapter's best kernel at {size}³ (RRR) on {gpu_name(rows)}\n"
                 "no L2 roof: no page of this repository measures the L2's bandwidth", fontsize=10)
    ax.legend(fontsize=7.5, frameon=True, framealpha=0.9, edgecolor="none", loc="lower right")
    save(fig, out_dir, name)
    return True


def plot_copy(rows, colors, out_dir) -> bool:
    name = "copy_bandwidth"
    copy_chapters = [c for c in rd.chapters(rows) if rd.baseline_of(rows, c) == rd.COPY_BASELINE]
    copies = [r for r in rows if r.chapter in copy_chapters and r.is_copy]
    kernels = [r for r in copies if not r.is_baseline]
    if not kernels:
        skip(name, "no copy-chapter rows (GB/s with a cudaMemcpy baseline)", out_dir)
        return False
    # The size most kernels were measured at, the largest on a tie.
    per_size: dict[tuple[int, int], set[str]] = {}
    for r in kernels:
        per_size.setdefault((r.m, r.n), set()).add(r.kernel)
    size = max(per_size, key=lambda s: (len(per_size[s]), s[0] * s[1]))
    at = [r for r in kernels if (r.m, r.n) == size]
    labels = kernel_labels(copies)
    groups = []
    for chapter in rd.chapters(at):
        bars = []
        for r in (x for x in at if x.chapter == chapter):
            pct = rd.pct_of_baseline(rows, r)
            bars.append((labels[r], r.gbps, None if pct is None else f"{pct:.0f}%\nof cudaMemcpy"))
        groups.append((chapter, bars))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(at) + 3), 4.6))
    grouped_bars(ax, groups, colors)
    extra = []
    for dtype, level in sorted(baseline_levels(copies, rd.COPY_BASELINE, lambda r: (r.m, r.n) == size).items()):
        ax.axhline(level, color=BASELINE_COLOR, linestyle="--", linewidth=1.2)
        extra.append(Line2D([], [], color=BASELINE_COLOR, linestyle="--",
                            label=f"cudaMemcpy device→device: {level:,.0f} GB/s"))
    ax.set_ylim(0, ax.get_ylim()[1] * 1.12)
    ax.set_ylabel("GB/s (bytes read + written ÷ median time)")
    ax.set_title(f"Copy and transpose of a {size[0]}×{size[1]} matrix on {gpu_name(rows)}")
    chapter_legend(ax, [g for g, _ in groups], colors, extra)
    save(fig, out_dir, name)
    return True


# The fp32 size sweep (chapters/06_tiled_copy_mma/sizes.cu): its own figure, fp32_sizes.
FP32_SWEEP = "06_tiled_copy_mma_sizes"
SMS = ceilings.SMS
TILE = 128  # the block tile of chapters 05, 06 and 07's deep_k (128×128); chapter 03's is 32×32


def tiles_128(m: int, n: int) -> int:
    """Blocks of a 128×128 tiling of an M×N output: ceil(M/128)·ceil(N/128)."""
    return tiles_of(m, n, (TILE, TILE))


def tiles_of(m: int, n: int, tile: tuple[int, int]) -> int:
    """Tiles of tile[0]×tile[1] that cover an M×N output: ceil(M/tile[0])·ceil(N/tile[1])."""
    return -(-m // tile[0]) * -(-n // tile[1])


# The bf16 size sweep (chapter 10's sizes.cu): chapters 09 and 10 compute 128×256 tiles of C, one
# block of chapter 10 per SM at a time.
SWEEP_TILE = (128, 256)


def plot_fp32_sizes(all_rows, out_dir) -> bool:
    """The fp32 sweep: TFLOP/s (top) and % of cuBLAS (bottom) of each kernel at every problem, in the
    order the binary ran them, each tick labelled with its number of 128×128 tiles and tiles ÷ 132 SMs."""
    name = "fp32_sizes"
    rows = [r for r in all_rows if r.chapter == FP32_SWEEP and r.tflops is not None and r.layout == "RRR"]
    if not rows:
        skip(name, f"no rows of chapter {FP32_SWEEP} (build/bin/ch06_sizes writes them)", out_dir)
        return False
    problems: list[tuple[int, int, int]] = []
    for r in rows:
        if (r.m, r.n, r.k) not in problems:
            problems.append((r.m, r.n, r.k))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(8.5, 0.72 * len(problems) + 2.5), 7.2), sharex=True)
    kernels = [k for k in dict.fromkeys(r.kernel for r in rows) if k != rd.GEMM_BASELINE]
    palette = plt.get_cmap("tab10")
    xs_all = list(range(len(problems)))
    for i, kernel in enumerate([rd.GEMM_BASELINE] + kernels):
        mine = {(r.m, r.n, r.k): r for r in rows if r.kernel == kernel}
        xs = [j for j, pr in enumerate(problems) if pr in mine]
        if not xs:
            continue
        base = kernel == rd.GEMM_BASELINE
        style = dict(color=BASELINE_COLOR, linestyle="--", marker="x") if base else dict(color=palette(i - 1), marker="o")
        top.plot(xs, [mine[problems[j]].tflops for j in xs], markersize=4, label=kernel, **style)
        if not base:
            pct = [rd.pct_of_baseline(all_rows, mine[problems[j]]) for j in xs]
            keep = [(j, p) for j, p in zip(xs, pct) if p is not None]
            bottom.plot([j for j, _ in keep], [p for _, p in keep], markersize=4, label=kernel, **style)
    bottom.axhline(100, color=BASELINE_COLOR, linestyle="--", linewidth=1.2)
    top.set_ylim(0, top.get_ylim()[1] * 1.05)
    bottom.set_ylim(0, max(110, bottom.get_ylim()[1]))
    top.set_ylabel("TFLOP/s (median)")
    bottom.set_ylabel("% of cuBLAS SGEMM\n(same run)")
    labels = []
    for m, n, k in problems:
        size = f"{m}³" if m == n == k else f"{m}×{n}\n×{k}"
        tiles = tiles_128(m, n)
        labels.append(f"{size}\n{tiles} tiles\n÷{SMS} = {tiles / SMS:.2f}")
    bottom.set_xticks(xs_all)
    bottom.set_xticklabels(labels, rotation=0, fontsize=7)
    bottom.set_xlabel(f"problem M×N×K; below it, its 128×128 output tiles and how many times they fill {SMS} SMs")
    for ax in (top, bottom):
        for j, (m, n, k) in enumerate(problems):
            if m % TILE or n % TILE or k % TILE:
                ax.axvspan(j - 0.4, j + 0.4, color="#f3e3c3", zorder=0, linewidth=0)
    top.legend(fontsize=8, frameon=False, loc="center left", bbox_to_anchor=(1.01, 0.5))
    gpus = " / ".join(sorted({r.gpu for r in rows} - {""})) or "GPU"
    top.set_title(f"fp32 kernels of chapters 03, 05, 06, 07 and cuBLAS across sizes ({gpus})\n"
                  "shaded: M, N or K not a multiple of 128 (partial tiles take the predicated path)", fontsize=10)
    fig.tight_layout()
    save(fig, out_dir, name)
    return True


def plot_vs_cublas_sizes(all_rows, out_dir) -> bool:
    """% of cuBLAS of each kernel of a size sweep (chapter "NN_name_sizes") at every problem it ran,
    in the order the binary ran them; one line per kernel and storage order, 100% drawn.
    The fp32 sweep (FP32_SWEEP) has a figure of its own, fp32_sizes."""
    name = "vs_cublas_sizes"
    sweeps = sorted({r.chapter for r in all_rows if r.chapter.endswith("_sizes") and r.chapter != FP32_SWEEP})
    if not sweeps:
        skip(name, "no size-sweep rows (a chapter named *_sizes)", out_dir)
        return False
    rows = [r for r in all_rows if r.chapter == sweeps[-1]]
    problems: list[tuple[int, int, int]] = []
    for r in rows:
        if (r.m, r.n, r.k) not in problems:
            problems.append((r.m, r.n, r.k))
    labels = []
    for m, n, k in problems:
        size = f"{m}³" if m == n == k else f"{m}×{n}\n×{k}"
        tiles = tiles_of(m, n, SWEEP_TILE)
        labels.append(f"{size}\n{tiles} tiles\n÷{SMS} = {tiles / SMS:.2f}")
    fig, ax = plt.subplots(figsize=(max(7.5, 0.8 * len(problems) + 2.5), 5.2))
    kernels = [k for k in dict.fromkeys(r.kernel for r in rows) if k != rd.GEMM_BASELINE]
    palette = plt.get_cmap("tab10")
    for i, kernel in enumerate(kernels):
        for layout, style in zip(sorted({r.layout for r in rows}), ["-", "--", ":"]):
            pts = {(r.m, r.n, r.k): rd.pct_of_baseline(all_rows, r) for r in rows
                   if r.kernel == kernel and r.layout == layout}
            xs = [j for j, pr in enumerate(problems) if pts.get(pr) is not None]
            if xs:
                ax.plot(xs, [pts[problems[j]] for j in xs], marker="o", markersize=4, linestyle=style,
                        color=palette(i), label=f"{kernel} ({layout})")
    ax.axhline(100, color=BASELINE_COLOR, linestyle="--", linewidth=1.2, label="cuBLAS (same run)")
    ax.set_xticks(range(len(problems)))
    ax.set_xticklabels(labels, rotation=0, fontsize=7)
    ax.set_ylabel("% of cuBLAS (ratio of median times)")
    ax.set_xlabel(f"problem M×N×K; below it, its {SWEEP_TILE[0]}×{SWEEP_TILE[1]} output tiles (one per block, "
                  f"one block per SM) and how many times they fill {SMS} SMs")
    gpus = " / ".join(sorted({r.gpu for r in rows} - {""})) or "GPU"
    ax.set_title(f"Against cuBLAS at every size (chapter {chapter_label(sweeps[-1].rsplit('_', 1)[0])}, {gpus})")
    ax.legend(fontsize=8, frameon=False, loc="center left", bbox_to_anchor=(1.01, 0.5))
    save(fig, out_dir, name)
    return True


# --- Chapter 11: the shape suite ------------------------------------------------------------------
CH11 = "11_every_shape"
CH11_STEPS = ("ch10_tma_store", "tile_shapes", "split_k", "stream_k", "swap_ab", "every_shape")
CH11_KERNELS = ("tile_shapes", "split_k", "stream_k", "swap_ab")  # the steps every_shape picks among (or measured beside)


def ch11_problems(rows: list[rd.Row]) -> list[tuple[int, int, int]]:
    """The suite's problems by group (squares, prefill, decode and M = 128, then K or N % 8 ≠ 0), each
    group in the order the binary ran them."""
    problems: list[tuple[int, int, int]] = []
    for r in rows:
        if (r.m, r.n, r.k) not in problems:
            problems.append((r.m, r.n, r.k))
    groups = [c for c in rd.SHAPE_CLASSES if c != "M = 128"]
    return sorted(problems, key=lambda pr: groups.index(ch11_group(*pr)))  # stable: the run's order within a group


def ch11_group(m: int, n: int, k: int) -> str:
    """Which part of the suite a problem belongs to (the figure draws M = 128 with decode)."""
    c = rd.shape_class(m, n, k)
    return "decode" if c == "M = 128" else c


def ch11_label(m: int, n: int, k: int) -> str:
    return f"{m}³" if m == n == k else f"{m}×{n}×{k}"


def suite_x_axis(ax, problems: list[tuple[int, int, int]], group_of, fontsize: float) -> None:
    """A suite figure's x axis: a tick per problem (M×N×K, rotated), the groups of consecutive problems
    separated by a line and named above the axes."""
    start = 0
    for j in range(1, len(problems) + 1):
        if j == len(problems) or group_of(*problems[j]) != group_of(*problems[start]):
            ax.text((start + j - 1) / 2, 1.01, group_of(*problems[start]), transform=ax.get_xaxis_transform(),
                    ha="center", va="bottom", fontsize=9)
            if j < len(problems):
                ax.axvline(j - 0.5, color="#bdbdbd", linewidth=0.8)
            start = j
    ax.set_xticks(range(len(problems)))
    ax.set_xticklabels([ch11_label(*pr) for pr in problems], rotation=90, fontsize=fontsize)
    ax.set_xlim(-0.7, len(problems) - 0.3)


def plot_ch11_suite(all_rows, out_dir) -> bool:
    """Chapter 11's figure: % of cuBLAS of every_shape (RCR and RRR) and of chapter 10's best at every
    problem of the shape suite, grouped into squares, prefill, decode and the ragged K or N."""
    name = "ch11_suite"
    all_ch11 = [r for r in all_rows if r.chapter == CH11]
    if not all_ch11:
        skip(name, f"no rows of chapter {CH11}", out_dir)
        return False
    rows = [r for r in all_ch11 if r.layout == "RCR"]
    problems = ch11_problems(rows)
    fig, ax = plt.subplots(figsize=(max(8.0, 0.28 * len(problems) + 2.5), 5.0))
    series = [("ch10_tma_store", "RCR", "chapter 10's best (tma_store, one 128×256 tile)", "#9e9e9e", "s"),
              ("every_shape", "RCR", "chapter 11's every_shape (kernel picked per shape)", "#1565c0", "o"),
              ("every_shape", "RRR", "every_shape in RRR (C = A·B)", "#ef6c00", "x")]
    for kernel, layout, label, color, marker in series:
        pts = {}
        for r in all_ch11:  # a problem measured in several runs: the first
            if r.kernel == kernel and r.layout == layout and r.pct is not None:
                pts.setdefault((r.m, r.n, r.k), r.pct)
        xs = [j for j, pr in enumerate(problems) if pr in pts]
        ax.plot(xs, [pts[problems[j]] for j in xs], marker=marker, markersize=4.5, linestyle="none", color=color, label=label)
    ax.axhline(100, color=BASELINE_COLOR, linestyle="--", linewidth=1.2, label="cuBLAS (same run)")
    suite_x_axis(ax, problems, ch11_group, 7)
    ax.set_ylim(0, max(115, max((r.pct or 0) for r in all_ch11) + 5))
    ax.set_ylabel("% of cuBLAS (ratio of median times)")
    ax.set_xlabel("problem M×N×K (bf16; C = A·Bᵀ, RCR, and C = A·B, RRR)")
    gpus = " / ".join(sorted({r.gpu for r in rows} - {""})) or "GPU"
    ax.set_title(f"Chapter 11 against cuBLAS over the shape suite ({gpus})", pad=18)
    ax.legend(fontsize=8, frameon=False, loc="lower right")
    fig.tight_layout()
    save(fig, out_dir, name)
    return True


CH13_MODELS = {"deepseek-v3": "DeepSeek-V3", "mixtral-8x7b": "Mixtral-8×7B", "qwen3-30b-a3b": "Qwen3-30B-A3B"}


def label_runs(ax, configs, width, label, fontsize) -> None:
    """Above the axes, one label per run of consecutive configs that share their first `width` fields
    (label(config) of the run's first), and a thin line between runs."""
    start = 0
    for j in range(1, len(configs) + 1):
        if j == len(configs) or configs[j][:width] != configs[start][:width]:
            ax.text((start + j - 1) / 2, 1.01, label(configs[start]), transform=ax.get_xaxis_transform(), ha="center",
                    va="bottom", fontsize=fontsize)
            if j < len(configs):
                ax.axvline(j - 0.5, color="#bdbdbd", linewidth=0.8)
            start = j


def plot_ch13_grouped(data_dir: pathlib.Path, out_dir) -> bool:
    """Chapter 13's figure: % of each shape's roofline of the two cuBLAS ways and of the grouped kernel
    (the faster of its tiles and layouts at decode), for every model, projection, token count and routing."""
    name = "ch13_grouped"
    rows = rd.grouped_rows(data_dir)
    if not rows:
        skip(name, "no chapter 13 CSV", out_dir)
        return False
    configs = []
    for r in rows:
        c = (r["model"], r["projection"], int(r["tokens"]), r["routing"])
        if c not in configs:
            configs.append(c)
    order = list(CH13_MODELS)
    configs.sort(key=lambda c: (order.index(c[0]) if c[0] in order else 9, c[1] != "gate_up", -c[2], c[3]))
    pct = {}
    for r in rows:
        if r["pct_of_roof"]:
            c = (r["model"], r["projection"], int(r["tokens"]), r["routing"])
            kind = "ours" if r["kernel"].startswith("grouped_") else r["kernel"]
            pct[(kind, c)] = max(pct.get((kind, c), 0.0), float(r["pct_of_roof"]))
    fig, ax = plt.subplots(figsize=(max(8.0, 0.2 * len(configs) + 2.5), 5.0))
    series = [("cublas_loop", "cuBLAS: one GEMM per expert", "#9e9e9e", "s"),
              ("cublas_grouped", "cuBLAS: cublasGemmGroupedBatchedEx", "#ef6c00", "^"),
              ("ours", "grouped kernel (best of its tiles and layouts)", "#1565c0", "o")]
    for kind, label, color, marker in series:
        xs = [j for j, c in enumerate(configs) if (kind, c) in pct]
        ax.plot(xs, [pct[(kind, configs[j])] for j in xs], marker=marker, markersize=4.5, linestyle="none", color=color,
                label=label)
    ax.axhline(100, color=BASELINE_COLOR, linestyle="--", linewidth=1.2, label="roofline (dense cuBLAS or cudaMemcpy)")
    ax.axhline(85, color="#bdbdbd", linestyle=":", linewidth=1.0)
    label_runs(ax, configs, 2, lambda c: f"{CH13_MODELS.get(c[0], c[0])}\n{c[1]}", 7.5)
    ax.set_xticks(range(len(configs)))
    ax.set_xticklabels([f"{c[2]} {c[3][0]}" for c in configs], rotation=90, fontsize=7)
    ax.set_xlim(-0.7, len(configs) - 0.3)
    ax.set_ylim(0, 115)
    ax.set_ylabel("% of the shape's roofline")
    ax.set_xlabel("tokens per batch, routing (b balanced, s skewed); bf16, C_g = A_g·B_gᵀ per expert")
    gpus = " / ".join(sorted({r["gpu"] for r in rows} - {""})) or "GPU"
    ax.set_title(f"Chapter 13: one projection of every expert, against its roofline ({gpus})", pad=26)
    ax.legend(fontsize=8, frameon=True, framealpha=0.9, loc="lower left", ncol=2)
    fig.tight_layout()
    save(fig, out_dir, name)
    return True


def plot_ch13_moe_layer(data_dir: pathlib.Path, out_dir) -> bool:
    """Chapter 13's step 4: the whole MoE pass on the chapter's kernels, % of the fastest of the four
    cuBLAS layers in the same run, per model, token count and routing (the median of the runs, and
    their spread as a bar)."""
    name = "ch13_moe_layer"
    path = data_dir / "ch13_grouped_moe_layer.csv"
    if not path.is_file():
        skip(name, "no ch13_grouped_moe_layer.csv", out_dir)
        return False
    with open(path, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["kernel"] == "moe_layer"]
    if not rows:
        skip(name, "no moe_layer rows", out_dir)
        return False
    order = list(CH13_MODELS)
    configs = sorted({(r["model"], int(r["tokens"]), r["routing"]) for r in rows},
                     key=lambda c: (order.index(c[0]) if c[0] in order else 9, -c[1], c[2]))
    fig, ax = plt.subplots(figsize=(9.0, 4.6))
    for j, c in enumerate(configs):
        v = sorted(float(r["pct_of_best_cublas"]) for r in rows if (r["model"], int(r["tokens"]), r["routing"]) == c)
        med = v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2])
        color = "#1565c0" if c[1] > 256 else "#6a1b9a"
        ax.plot([j, j], [v[0], v[-1]], color=color, linewidth=2.0, alpha=0.5)
        ax.plot(j, med, marker="o", markersize=5, color=color, linestyle="none")
    ax.axhline(100, color=BASELINE_COLOR, linestyle="--", linewidth=1.2, label="the fastest cuBLAS layer (same run)")
    ax.axhline(130, color="#bdbdbd", linestyle=":", linewidth=1.0, label="the issue's target at prefill: 1.3×")
    label_runs(ax, configs, 1, lambda c: CH13_MODELS.get(c[0], c[0]), 8)
    ax.set_xticks(range(len(configs)))
    ax.set_xticklabels([f"{c[1]} {c[2][0]}" for c in configs], rotation=90, fontsize=7.5)
    ax.set_xlim(-0.7, len(configs) - 0.3)
    lo = min(float(r["pct_of_best_cublas"]) for r in rows)
    ax.set_ylim(min(80.0, lo - 5), 175)
    ax.set_ylabel("% of the fastest cuBLAS layer")
    ax.set_xlabel("tokens per batch, routing (b balanced, s skewed); prefill blue, decode purple; dot: median of the runs, bar: their range")
    gpus = " / ".join(sorted({r["gpu"] for r in rows} - {""})) or "GPU"
    ax.set_title(f"Chapter 13, step 4: the whole MoE pass, routing to output ({gpus})", pad=20)
    ax.legend(fontsize=8, frameon=True, framealpha=0.9, loc="upper left")
    fig.tight_layout()
    save(fig, out_dir, name)
    return True


def plot_ch11_which_kernel(all_rows, out_dir) -> bool:
    """Chapter 11's "which kernel wins where": % of cuBLAS of each step at each problem of the suite,
    one row per problem, the fastest of the kernels (CH11_KERNELS) outlined."""
    name = "ch11_which_kernel"
    rows = [r for r in all_rows if r.chapter == CH11 and r.layout == "RCR"]
    if not rows:
        skip(name, f"no rows of chapter {CH11}", out_dir)
        return False
    steps = [k for k in CH11_STEPS if any(r.kernel == k for r in rows)]
    pct: dict = {}
    for r in rows:  # a problem measured in several runs: the first
        pct.setdefault((r.kernel, (r.m, r.n, r.k)), r.pct)
    # The problems the steps ran side by side (the suite's every_shape-only shapes have nothing to compare).
    problems = [pr for pr in ch11_problems(rows) if sum((k, pr) in pct for k in steps) >= 2]
    import numpy as np
    grid = np.full((len(problems), len(steps)), np.nan)
    for i, pr in enumerate(problems):
        for j, k in enumerate(steps):
            v = pct.get((k, pr))
            if v is not None:
                grid[i, j] = v
    fig, ax = plt.subplots(figsize=(7.4, 0.22 * len(problems) + 1.6))
    ax.imshow(grid, aspect="auto", cmap="RdYlGn", vmin=40, vmax=110)
    kernels = [j for j, k in enumerate(steps) if k in CH11_KERNELS]
    for i, pr in enumerate(problems):
        for j in range(len(steps)):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.0f}", ha="center", va="center", fontsize=6.5)
            else:
                ax.text(j, i, "–", ha="center", va="center", fontsize=6.5, color="#757575")
        vals = [(grid[i, j], j) for j in kernels if not np.isnan(grid[i, j])]
        if vals:
            best = max(vals)[1]
            ax.add_patch(plt.Rectangle((best - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.3))
    ax.set_xticks(range(len(steps)))
    ax.set_xticklabels(steps, fontsize=8)
    ax.xaxis.tick_top()
    ax.set_yticks(range(len(problems)))
    ax.set_yticklabels([ch11_label(*pr) for pr in problems], fontsize=6.5)
    ax.set_title("% of cuBLAS at each shape; outlined: the fastest of tile_shapes, split_k, stream_k, swap_ab\n"
                 "(– : the kernel does not take the shape: swap_ab takes M ≤ 64)", fontsize=8.5, pad=22)
    fig.tight_layout()
    save(fig, out_dir, name)
    return True


# --- Predicted against measured (inputs: plots/predictions.py) -------------------------------------
HIT_COLOR, MISS_COLOR, PARTLY_COLOR = "#2e7d32", "#c62828", "#ef6c00"


# --- Chapter 12: the datatypes -----------------------------------------------------------------
CH12 = "12_hopper_datatypes"
# Each datatype's baseline and steps as the figure shows them: (dtype, its label, [(kernel, label)]).
CH12_GROUPS = [
    ("bf16", "bf16", [("cuBLAS", "cuBLAS"), ("ch10_tma_store", "chapter 10's tma_store")]),
    ("tf32", "tf32", [("cuBLAS", "cuBLAS"), ("tf32_wgmma", "tf32_wgmma")]),
    ("e4m3", "fp8, per-tensor scales", [("cuBLAS", "cuBLASLt, fast accumulation"),
                                        ("cuBLAS_e4m3_promoted", "cuBLASLt, promoted"),
                                        ("fp8_per_tensor", "fp8_per_tensor")]),
    ("e4m3_block", "fp8, 1×128 / 128×128 block scales", [("cuBLAS", "cuBLASLt"), ("fp8_block_scaled", "fp8_block_scaled")]),
]


def plot_ch12_datatypes(all_rows, out_dir) -> bool:
    """Chapter 12's figure: TFLOP/s of each datatype's baseline and steps at one size (8192³, else the
    largest square), with the wgmma ceiling the probe measured for the datatype as a line over its group."""
    name = "ch12_datatypes"
    rows = [r for r in all_rows if r.chapter == CH12 and r.layout == rd.canonical_layout(CH12) and r.tflops]
    squares = sorted({r.m for r in rows if r.is_square})
    if not squares:
        skip(name, f"no rows of chapter {CH12}", out_dir)
        return False
    size = 8192 if 8192 in squares else squares[-1]
    ceiling = {r.dtype: r.tflops for r in all_rows if r.chapter == CH12 + "_ceiling" and r.kernel.endswith("_warpgroups2")}
    fig, ax = plt.subplots(figsize=(10.0, 4.8))
    x, ticks, labels = 0.0, [], []
    for dtype, group_label, members in CH12_GROUPS:
        start = x
        for kernel, label in members:
            want = "e4m3_promoted" if kernel == "cuBLAS_e4m3_promoted" else dtype  # its own row's dtype
            found = [r for r in rows if r.kernel == kernel and r.dtype == want and r.is_square and r.m == size]
            if not found:
                continue
            v = found[0].tflops
            color = BASELINE_COLOR if kernel.startswith("cuBLAS") else KIND_COLORS.get(dtype, KIND_COLORS["fp32"])
            ax.bar(x, v, width=0.8, color=color, alpha=0.55 if kernel == "cuBLAS_e4m3_promoted" else 0.9, edgecolor="none")
            ax.text(x, v + 15, f"{v:,.0f}", ha="center", va="bottom", fontsize=7.5)
            ticks.append(x)
            labels.append(label)
            x += 1
        if x > start and dtype in ceiling:
            ax.hlines(ceiling[dtype], start - 0.45, x - 0.55, colors="black", linestyles=":", linewidth=1.2)
            ax.text(x - 0.55, ceiling[dtype] + 15, f"wgmma ceiling {ceiling[dtype]:,.0f}", ha="right", va="bottom", fontsize=7)
        if x > start:
            ax.text((start + x - 1) / 2, -0.28, group_label, transform=ax.get_xaxis_transform(), ha="center", va="top",
                    fontsize=9, fontweight="bold")
        x += 0.8
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels, rotation=25, ha="right", fontsize=8)
    ax.set_ylabel(f"TFLOP/s at {size}³ (median)")
    ax.grid(axis="x", visible=False)
    gpus = " / ".join(sorted({r.gpu for r in rows} - {""})) or "GPU"
    ax.set_title(f"Chapter 12: each datatype against its cuBLAS (C = A·Bᵀ, {gpus}; grey: cuBLAS/cuBLASLt)", fontsize=10)
    fig.tight_layout()
    save(fig, out_dir, name)
    return True


CH12_SUITE = "ch12_hopper_datatypes_suite"


def ch12_suite_group(m: int, n: int, k: int) -> str:
    """Which part of issue 35's DeepSeek-V3 suite a problem belongs to: its M, or the squares."""
    return "squares" if m == n == k else f"M = {m}"


def plot_ch12_suite(all_rows, out_dir) -> bool:
    """Chapter 12's suite figure: % of cuBLASLt (the same scaling) of fp8_block_scaled, its small-M step,
    fp8_per_tensor and its small-M step at every problem of DeepSeek-V3's suite, grouped by M."""
    name = "ch12_suite"
    rows = [r for r in all_rows if pathlib.Path(r.source).stem == CH12_SUITE and r.pct is not None]
    if not rows:
        skip(name, f"no {CH12_SUITE}.csv", out_dir)
        return False
    problems: list[tuple[int, int, int]] = []
    for r in rows:
        if (r.m, r.n, r.k) not in problems:
            problems.append((r.m, r.n, r.k))
    # By M, the squares last; the run's order within a group (a stable sort).
    problems.sort(key=lambda pr: (pr[0] == pr[1] == pr[2], pr[0]))
    fig, ax = plt.subplots(figsize=(max(8.0, 0.34 * len(problems) + 2.5), 5.0))
    series = [("fp8_per_tensor", "e4m3", "fp8_per_tensor (against cuBLASLt per-tensor)", "#9575cd", "x"),
              ("fp8_block_scaled", "e4m3_block", "fp8_block_scaled (128×256 whole tiles)", "#9e9e9e", "s"),
              ("fp8_block_scaled_small_m", "e4m3_block", "fp8_block_scaled_small_m (split K, narrower tiles)", "#c2185b", "o"),
              ("fp8_per_tensor_small_m", "e4m3", "fp8_per_tensor_small_m (64-row tiles, split K)", "#4527a0", "+")]
    for kernel, dtype, label, color, marker in series:
        pts = {(r.m, r.n, r.k): r.pct for r in rows if r.kernel == kernel and r.dtype == dtype}
        xs = [j for j, pr in enumerate(problems) if pr in pts]
        ax.plot(xs, [pts[problems[j]] for j in xs], marker=marker, markersize=5, linestyle="none", color=color, label=label)
    ax.axhline(100, color=BASELINE_COLOR, linestyle="--", linewidth=1.2, label="cuBLASLt (same run, same scaling)")
    suite_x_axis(ax, problems, ch12_suite_group, 7.5)
    ax.set_ylim(0, max(115, max(r.pct for r in rows) + 5))
    ax.set_ylabel("% of cuBLASLt (ratio of median times)")
    ax.set_xlabel("problem M×N×K (e4m3 A and B, bf16 C, C = A·Bᵀ)")
    gpus = " / ".join(sorted({r.gpu for r in rows} - {""})) or "GPU"
    ax.set_title(f"Chapter 12 over DeepSeek-V3's fp8 shapes ({gpus})", pad=18)
    ax.legend(fontsize=8, frameon=False, loc="lower right")
    fig.tight_layout()
    save(fig, out_dir, name)
    return True


def find_row(all_rows: list[rd.Row], chapter: str, kernel: str, dtype: str, layout: str, size: int) -> rd.Row | None:
    """The one row of a kernel at size³ (a copy: size×size) in one storage order, or None (absent or ambiguous).
    A chapter's step before ("ch05_layout_padded") is also found under its former name ("layout_padded"),
    and a measured dead end in the chapter's appendix run ("<chapter>_appendix", results_data.load)."""
    for ch in (chapter, chapter + rd.APPENDIX_SUFFIX):
        for name in (kernel, rd.STEP_BEFORE_FORMER_NAMES.get((chapter, kernel))):
            found = [r for r in all_rows if r.chapter == ch and r.kernel == name and r.dtype == dtype
                     and r.layout == layout and r.m == r.n == size and (r.k == size or r.is_copy)]
            if found:
                return found[0] if len(found) == 1 else None
    return None


def measured_value(all_rows: list[rd.Row], p: pr.Prediction, layout: str, size: int) -> float | None:
    """What `p` predicts, measured at one storage order and size: TFLOP/s, % of the baseline, or the
    speed ratio to p.ref (a time ratio is drawn as the speed ratio it implies). None where a row is missing."""
    r = find_row(all_rows, p.chapter, p.kernel, p.dtype, layout, size)
    if r is None:
        return None
    if p.metric == pr.TFLOPS:
        return r.tflops
    if p.metric == pr.PCT:
        return rd.pct_of_baseline(all_rows, r)
    ref = find_row(all_rows, p.ref[0], p.ref[1], p.dtype, p.ref_layout or layout, p.ref_size or size)
    if ref is None or not r.median_ms or not ref.median_ms:
        return None
    # The same problem on both sides (or, for a size ratio, speeds): a ratio of TFLOP/s.
    return r.tflops / ref.tflops if p.metric == pr.RATIO else ref.median_ms / r.median_ms


def prediction_data(all_rows: list[rd.Row]):
    """[(prediction, [(what, value or None)], status)] for every entry of plots/predictions.py, in its order.
    status: "hit" (every measurement in the predicted range), "miss" (none), "partly", or None (no row)."""
    out = []
    for p in pr.PREDICTIONS:
        lo, hi = pr.speed_range(p)
        values = [(f"{layout} {size}", measured_value(all_rows, p, layout, size))
                  for size in p.sizes for layout in p.layouts]
        known = [v for _, v in values if v is not None]
        inside = sum(lo <= v <= hi for v in known)
        status = None if len(known) < len(values) else "hit" if inside == len(known) else \
            "miss" if inside == 0 else "partly"
        out.append((p, values, status))
    return out


def fmt_value(v: float, metric: str) -> str:
    """A measured value: ratios to three decimals (ranges such as 1.02–1.05× need them), % to one."""
    if metric in (pr.RATIO, pr.TIME_RATIO):
        return f"{v:.3f}×"
    if metric == pr.PCT:
        return f"{v:.1f}%"
    return f"{v:.3g}"


def fmt_range(lo: float, hi: float, metric: str) -> str:
    """A predicted range as the page writes it (a time ratio: the speed ratio it implies)."""
    if metric == pr.TFLOPS:
        return f"{lo:g}–{hi:g} TFLOP/s"
    if metric == pr.PCT:
        return f"{lo:g}–{hi:g}%"
    return f"{lo:.3g}–{hi:.3g}×"


def plot_predictions(all_rows, colors, out_dir) -> bool:
    """One row per prediction: its range drawn from 0 to 1, each measured value placed on that scale
    (x = (value − low) / (high − low)), so ranges of TFLOP/s, % and ratios share one axis; the numbers
    themselves are written beside each row."""
    name = "predicted_vs_measured"
    data = [d for d in prediction_data(all_rows) if d[2] is not None]
    if not data:
        skip(name, "no CSV row of a kernel that plots/predictions.py lists", out_dir)
        return False
    lo_clip, hi_clip = -2.5, 3.5
    n = len(data)
    fig, ax = plt.subplots(figsize=(11.5, 0.25 * n + 1.6))
    chapters_seen: list[str] = []
    for i, (p, values, status) in enumerate(data):
        y = n - 1 - i
        if p.chapter not in chapters_seen:
            chapters_seen.append(p.chapter)
        if len(chapters_seen) % 2 == 0:
            ax.axhspan(y - 0.5, y + 0.5, color="#f2f2f2", zorder=0, linewidth=0)
        ax.barh(y, 1.0, left=0.0, height=0.55, color="#b0bec5", edgecolor="none", zorder=1)
        lo, hi = pr.speed_range(p)
        for _, v in values:
            x = (v - lo) / (hi - lo)
            inside = lo <= v <= hi
            marker = "o" if inside else (">" if x > 1 else "<")
            ax.plot([min(max(x, lo_clip), hi_clip)], [y], marker=marker, markersize=7, linestyle="none",
                    color=HIT_COLOR if inside else MISS_COLOR, markeredgecolor="white", markeredgewidth=0.6, zorder=3)
        pred = fmt_range(lo, hi, p.metric)
        meas = " / ".join(fmt_value(v, p.metric) for _, v in values)
        mark = {"hit": "in range", "miss": "missed", "partly": "partly"}[status]
        color = {"hit": HIT_COLOR, "miss": MISS_COLOR, "partly": PARTLY_COLOR}[status]
        ax.annotate(f"{pred} → {meas}", (1.0, y), xycoords=("axes fraction", "data"), xytext=(6, 0),
                    textcoords="offset points", va="center", fontsize=7.5)
        ax.annotate(mark, (0.0, y), xycoords=("axes fraction", "data"), xytext=(-4, 0), textcoords="offset points",
                    va="center", ha="right", fontsize=7, color=color, fontweight="bold")
    ax.set_yticks([n - 1 - i for i in range(n)])
    what = {pr.TFLOPS: "TFLOP/s", pr.PCT: "% of base", pr.RATIO: "ratio", pr.TIME_RATIO: "time ratio"}
    ax.set_yticklabels([f"{p.chapter[:2]} {p.label} ({what[p.metric]}){'' if p.sealed else ' *'}"
                        for p, _, _ in data], fontsize=7.5)
    for tick, (p, _, _) in zip(ax.get_yticklabels(), data):
        tick.set_color(colors.get(p.chapter, "black"))
    ax.tick_params(axis="y", pad=48, length=0)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlim(lo_clip - 0.2, hi_clip + 0.2)
    ax.axvline(0, color="#607d8b", linewidth=0.8, zorder=2)
    ax.axvline(1, color="#607d8b", linewidth=0.8, zorder=2)
    ax.set_xticks([-2, -1, 0, 1, 2, 3])
    ax.set_xticklabels(["−2", "−1", "0\nlow end", "1\nhigh end", "2", "3"])
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("measured value placed on its predicted range (0 = the range's low end, 1 = its high end, "
                  "in widths of the range;\nbeyond −2.5 or 3.5 drawn at the edge); the numbers: predicted → measured")
    counts = {s: sum(1 for _, _, st in data if st == s) for s in ("hit", "partly", "miss")}
    ax.set_title(f"The chapter pages' speed predictions against the measurements on {gpu_name(all_rows)}: "
                 f"{counts['hit']} of {n} in range, {counts['partly']} partly, {counts['miss']} missed\n"
                 "% of base: of cuBLAS measured in the same run (chapter 04: of cudaMemcpy); "
                 "ratio: speed over the kernel after ÷ (time ratio: drawn as a speed ratio); "
                 "*: an expectation the page says was not committed before the run", fontsize=9.5)
    ax.legend(handles=[Patch(color="#b0bec5", label="predicted range"),
                       Line2D([], [], marker="o", linestyle="none", color=HIT_COLOR, label="measured, in range"),
                       Line2D([], [], marker=">", linestyle="none", color=MISS_COLOR, label="measured, above the range"),
                       Line2D([], [], marker="<", linestyle="none", color=MISS_COLOR, label="measured, below the range")],
              fontsize=7.5, frameon=True, framealpha=0.95, edgecolor="none", loc="lower right")
    save(fig, out_dir, name)
    return True


def parse_args(argv):
    p = argparse.ArgumentParser(description="Draw gemm-ladder's figures from the chapters' result CSVs.")
    p.add_argument("--data", type=pathlib.Path, default=REPO / "plots" / "data" / "h200",
                   help="directory searched (recursively) for *.csv (default: plots/data/h200)")
    p.add_argument("--out", type=pathlib.Path, default=REPO / "docs" / "images",
                   help="where the PNG and SVG files go (default: docs/images)")
    p.add_argument("--headline", type=int, default=None, metavar="N",
                   help="square size N of the ladder figure (default: the size most GPU chapters measured, largest on a tie)")
    args = p.parse_args(argv)
    if args.headline is not None and args.headline < 1:
        p.exit(2, f"error: --headline: must be a positive size, got {args.headline}\n")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        # Figures compare chapters on C = A·B, all row-major; tuning sweeps are not chapters.
        all_rows = rd.load(args.data)
        rows = [r for r in rd.canonical(all_rows) if not rd.is_tuning(r.chapter)]
    except (rd.DataError, OSError) as e:
        print(f"error: --data: {e}", file=sys.stderr)
        return 2
    headline = args.headline if args.headline is not None else rd.headline_size(rows)
    if args.headline is not None and not any(r.is_square and r.m == headline and r.tflops for r in rows):
        print(f"error: --headline: no kernel was measured at {headline}³ in {args.data}", file=sys.stderr)
        return 2
    colors = chapter_colors(rd.chapters(rows))
    drawn = [plot_ladder(rows, headline, args.out), plot_speedup(rows, colors, args.out),
             plot_best_vs_size(rows, headline, colors, args.out), plot_roofline(rows, colors, args.out),
             plot_copy(rows, colors, args.out), plot_vs_cublas_sizes(all_rows, args.out),
             plot_fp32_sizes(all_rows, args.out), plot_predictions(all_rows, colors, args.out),
             plot_ch11_suite(all_rows, args.out), plot_ch11_which_kernel(all_rows, args.out),
             plot_ch12_datatypes(all_rows, args.out), plot_ch12_suite(all_rows, args.out),
             plot_ch13_grouped(args.data, args.out),
             plot_ch13_moe_layer(args.data, args.out)]
    drawn += [plot_chapter_ladder(all_rows, chapter, args.out) for chapter in rd.chapters(all_rows)]
    if not any(drawn):
        print(f"error: --data: nothing to plot in {args.data}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
