#!/usr/bin/env python3
"""Draws the figures of gemm-ladder from the CSVs the chapter binaries write.

    python plots/plot.py [--data plots/data/h200] [--out docs/images] [--headline N]

Reads every *.csv under --data (schema: common/harness/results.hpp) and writes,
as PNG and SVG, into --out:

  gemm_tflops       TFLOP/s of every kernel at the headline size, grouped by chapter,
                    each bar labelled with its % of cuBLAS measured in the same run
                    (of the cuBLAS of the kernel's dtype, where a chapter has several),
                    cuBLAS as a reference line per dtype;
  speedup_vs_cpu    speedup over chapter 01's naive CPU loop (log scale);
  tflops_vs_size    TFLOP/s against the (square) matrix size, cuBLAS dashed (one style per dtype);
  copy_bandwidth    GB/s of the copy chapter's kernels against cudaMemcpy
                    (only when copy rows exist);
  vs_cublas_sizes   % of cuBLAS against the problem, for a chapter's size sweep
                    (rows of a chapter named *_sizes; only when such rows exist).

A figure whose data is missing is skipped with a note; a directory without any
CSV is an error (exit 2).
"""

from __future__ import annotations

import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import results_data as rd  # noqa: E402

try:
    import matplotlib
except ImportError:
    sys.exit("error: matplotlib is not installed for " + sys.executable
             + " (pip install -r plots/requirements.txt; scripts/test.sh does it in .venv)")
matplotlib.use("Agg")  # files only, no display needed
import matplotlib.colors  # noqa: E402
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
    names = sorted({r.gpu for r in rows if r.chapter in rd.gpu_gemm_chapters(rows) or r.is_copy} - {""})
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


def plot_headline(rows, headline, colors, out_dir) -> bool:
    name = "gemm_tflops"
    if headline is None:
        skip(name, "no square GEMM size measured on the GPU", out_dir)
        return False
    at = [r for r in rows if r.is_square and r.m == headline and r.tflops is not None]
    kernels = [r for r in at if not r.is_baseline]
    if not kernels:
        skip(name, f"no kernel measured at {headline}³", out_dir)
        return False
    labels = kernel_labels([r for r in rows if not r.is_copy])
    groups = []
    for chapter in rd.chapters(kernels):
        bars = []
        for r in (x for x in kernels if x.chapter == chapter):
            pct = rd.pct_of_baseline(rows, r)
            bars.append((labels[r], r.tflops, None if pct is None else f"{pct:.0f}%\nof {rd.baseline_label(rows, r)}"))
        groups.append((chapter, bars))
    fig, ax = plt.subplots(figsize=(max(7.0, 0.75 * sum(len(b) for _, b in groups) + 3), 4.8))
    grouped_bars(ax, groups, colors)
    extra = []
    levels = sorted(baseline_levels(rows, rd.GEMM_BASELINE, lambda r: r.is_square and r.m == headline).items())
    for i, (dtype, level) in enumerate(levels):
        style = BASELINE_STYLES[i % len(BASELINE_STYLES)]
        ax.axhline(level, color=BASELINE_COLOR, linestyle=style, linewidth=1.2)
        extra.append(Line2D([], [], color=BASELINE_COLOR, linestyle=style, label=f"cuBLAS {dtype}: {level:.1f} TFLOP/s"))
    ax.set_ylim(0, ax.get_ylim()[1] * 1.08)
    dtypes = "/".join(sorted({r.dtype for r in kernels}))
    ax.set_ylabel("TFLOP/s (median)")
    # A chapter with kernels of several types measures each against the cuBLAS of its type.
    own_dtype = any(len(rd.baseline_dtypes(rows, c)) > 1 for c, _ in groups)
    ax.set_title(f"{dtypes} GEMM at {headline}×{headline}×{headline} on {gpu_name(rows)}\n"
                 "% of cuBLAS" + (" of the same dtype" if own_dtype else "")
                 + " measured side by side in each chapter's run")
    chapter_legend(ax, [g for g, _ in groups], colors, extra)
    save(fig, out_dir, name)
    return True


def plot_speedup(rows, headline, colors, out_dir) -> bool:
    name = "speedup_vs_cpu"
    naive = rd.cpu_naive(rows)
    if naive is None:
        skip(name, "no chapter 01 'naive' row (the CPU baseline)", out_dir)
        return False
    base_gflops = naive.tflops * 1e3
    groups, cpu_size, gpu_sizes = [], naive.size_text, set()
    labels = kernel_labels([r for r in rows if not r.is_copy])
    for chapter in rd.chapters(rows):
        bars = []
        cands = [r for r in rows if r.chapter == chapter and r.tflops and not r.is_baseline]
        if chapter == naive.chapter:
            # The CPU variants at naive's own size; a variant not run there at its largest size.
            for kernel in dict.fromkeys(r.kernel for r in cands):
                mine = [r for r in cands if r.kernel == kernel]
                same = [r for r in mine if (r.m, r.n, r.k) == (naive.m, naive.n, naive.k)]
                for r in same or [max(mine, key=lambda r: r.m * r.n * r.k)]:
                    bars.append((labels[r], r.tflops * 1e3 / base_gflops, r))
        elif headline is not None:
            for r in cands:
                if r.is_square and r.m == headline:
                    bars.append((labels[r], r.tflops * 1e3 / base_gflops, r))
                    gpu_sizes.add(r.size_text)
        if bars:
            groups.append((chapter, [(lbl, s, f"{s:,.0f}×" if s >= 10 else f"{s:.1f}×") for lbl, s, _ in bars]))
    if len(groups) == 0:
        skip(name, "nothing to compare", out_dir)
        return False
    fig, ax = plt.subplots(figsize=(max(7.0, 0.75 * sum(len(b) for _, b in groups) + 3), 4.8))
    grouped_bars(ax, groups, colors)
    ax.set_yscale("log")
    extra = []
    if headline is not None:
        levels = sorted(baseline_levels(rows, rd.GEMM_BASELINE, lambda r: r.is_square and r.m == headline).items())
        for i, (dtype, level) in enumerate(levels):
            style = BASELINE_STYLES[i % len(BASELINE_STYLES)]
            s = level * 1e3 / base_gflops
            ax.axhline(s, color=BASELINE_COLOR, linestyle=style, linewidth=1.2)
            extra.append(Line2D([], [], color=BASELINE_COLOR, linestyle=style, label=f"cuBLAS {dtype}: {s:,.0f}×"))
    ax.axhline(1.0, color="#888888", linewidth=0.8)
    lo, hi = ax.get_ylim()
    ax.set_ylim(min(lo, 0.5), hi * 3)
    where = f"CPU kernels at {cpu_size}"
    if gpu_sizes:
        where += f", GPU kernels at {', '.join(sorted(gpu_sizes))}"
    ax.set_ylabel(f"speedup over CPU naive (log scale)\nGFLOP/s ÷ naive's {base_gflops:.2g} GFLOP/s at {cpu_size}")
    ax.set_title(f"From a CPU triple loop to the GPU ({where}: sizes differ)")
    chapter_legend(ax, [g for g, _ in groups], colors, extra)
    save(fig, out_dir, name)
    return True


def plot_vs_size(rows, colors, out_dir) -> bool:
    name = "tflops_vs_size"
    square = [r for r in rows if r.is_square and r.tflops is not None]
    series: dict[tuple, list[rd.Row]] = {}
    for r in square:
        if not r.is_baseline:
            series.setdefault((r.chapter, r.kernel, r.dtype, r.layout), []).append(r)
    if not series:
        skip(name, "no square GEMM sizes measured", out_dir)
        return False
    labels = kernel_labels([r for r in rows if not r.is_copy])
    fig, ax = plt.subplots(figsize=(9, 5.2))
    markers = "osD^v<>ph*"
    index_in_chapter: dict[str, int] = {}
    per_chapter = {c: sum(1 for k in series if k[0] == c) for c in colors}
    for key, pts in series.items():
        chapter = key[0]
        i = index_in_chapter.get(chapter, 0)
        index_in_chapter[chapter] = i + 1
        pts = sorted(pts, key=lambda r: r.m)
        # The chapter's colour, from darker to lighter along its kernels, so that its lines stay apart.
        t = 0.0 if per_chapter[chapter] < 2 else -0.35 + 0.8 * i / (per_chapter[chapter] - 1)
        rgb = matplotlib.colors.to_rgb(colors[chapter])
        shade = tuple(c + (1 - c) * t if t > 0 else c * (1 + t) for c in rgb)
        ax.plot([r.m for r in pts], [r.tflops for r in pts], marker=markers[i % len(markers)],
                linestyle=["-", "-.", ":"][i // len(markers) % 3], color=shade, markersize=5,
                label=f"{chapter_label(chapter)}: {labels[pts[0]]}")
    per_dtype: dict[str, dict[int, list[float]]] = {}
    for r in square:
        if r.kernel == rd.GEMM_BASELINE:
            per_dtype.setdefault(r.dtype, {}).setdefault(r.m, []).append(r.tflops)
    for i, (dtype, by_size) in enumerate(sorted(per_dtype.items())):
        xs = sorted(by_size)
        ax.plot(xs, [rd.median(by_size[x]) for x in xs], color=BASELINE_COLOR,
                linestyle=BASELINE_STYLES[i % len(BASELINE_STYLES)],
                linewidth=1.8, marker="x", label=f"cuBLAS {dtype}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    sizes = sorted({r.m for r in square})
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(s) for s in sizes], rotation=45 if len(sizes) > 8 else 0)
    ax.minorticks_off()
    ax.set_xlabel("matrix size n (M = N = K = n)")
    ax.set_ylabel("TFLOP/s (median, log scale)")
    ax.set_title("Throughput against problem size (CPU: chapter 01; GPU: " + gpu_name(rows) + ")")
    ax.legend(fontsize=8, frameon=False, loc="center left", bbox_to_anchor=(1.01, 0.5))
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


def plot_vs_cublas_sizes(all_rows, out_dir) -> bool:
    """% of cuBLAS of each kernel of a size sweep (chapter "NN_name_sizes") at every problem it ran,
    in the order the binary ran them; one line per kernel and storage order, 100% drawn."""
    name = "vs_cublas_sizes"
    sweeps = sorted({r.chapter for r in all_rows if r.chapter.endswith("_sizes")})
    if not sweeps:
        skip(name, "no size-sweep rows (a chapter named *_sizes)", out_dir)
        return False
    rows = [r for r in all_rows if r.chapter == sweeps[-1]]
    problems: list[tuple[int, int, int]] = []
    for r in rows:
        if (r.m, r.n, r.k) not in problems:
            problems.append((r.m, r.n, r.k))
    labels = [f"{m}³" if m == n == k else f"{m}×{n}×{k}" for m, n, k in problems]
    fig, ax = plt.subplots(figsize=(max(7.5, 0.75 * len(problems) + 2.5), 4.8))
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
    ax.set_xticklabels(labels, rotation=35, ha="right")
    ax.set_ylabel("% of cuBLAS (ratio of median times)")
    ax.set_xlabel("problem (M×N×K)")
    gpus = " / ".join(sorted({r.gpu for r in rows} - {""})) or "GPU"
    ax.set_title(f"Against cuBLAS at every size (chapter {chapter_label(sweeps[-1].rsplit('_', 1)[0])}, {gpus})")
    ax.legend(fontsize=8, frameon=False, loc="center left", bbox_to_anchor=(1.01, 0.5))
    save(fig, out_dir, name)
    return True


def parse_args(argv):
    p = argparse.ArgumentParser(description="Draw gemm-ladder's figures from the chapters' result CSVs.")
    p.add_argument("--data", type=pathlib.Path, default=REPO / "plots" / "data" / "h200",
                   help="directory searched (recursively) for *.csv (default: plots/data/h200)")
    p.add_argument("--out", type=pathlib.Path, default=REPO / "docs" / "images",
                   help="where the PNG and SVG files go (default: docs/images)")
    p.add_argument("--headline", type=int, default=None, metavar="N",
                   help="square size N of the headline figure (default: the size most GPU chapters measured, largest on a tie)")
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
    drawn = [plot_headline(rows, headline, colors, args.out), plot_speedup(rows, headline, colors, args.out),
             plot_vs_size(rows, colors, args.out), plot_copy(rows, colors, args.out),
             plot_vs_cublas_sizes(all_rows, args.out)]
    if not any(drawn):
        print(f"error: --data: nothing to plot in {args.data}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
