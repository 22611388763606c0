#!/usr/bin/env python3
"""Fills the measured-results tables of the READMEs from the committed CSVs.

    python plots/update_tables.py [--data plots/data/h200] [--root .] [--headline N] [--check]

A README marks where a table goes with a block

    <!-- results:02_naive_gpu -->
    (generated: do not edit by hand)
    <!-- /results -->

`results:<chapter>` (the CSV's chapter column, or just its number, "02") gets that
chapter's rows; `results:summary` (in the top README.md and docs/mainpage.md) gets one
row per chapter: its idea, its best kernel, that kernel's TFLOP/s at the headline size
and its % of cuBLAS (chapter 01, the CPU: of cuBLAS SGEMM at its size on the GPU);
`results:summary-gpus` the same for several GPUs side by side, one pair of columns
per directory under plots/data/ (--gpus; "–" where a GPU has no CSV); `results:limits`
each GPU GEMM chapter's best kernel over the headline size and larger and every storage
order (min–max % of cuBLAS), and where the last chapter's best kernel loses in its size
sweep; `results:cpu` one sentence: chapter 01's fastest kernel over its naive loop.
Files searched: <root>/README.md, <root>/docs/*.md and <root>/chapters/*/README.md; the
links a table writes are relative to the page it is in.

--check changes nothing: it exits 1 (naming each stale block) when a block differs
from what the CSVs give, 0 when all are up to date. Only the standard library is
needed.
"""

from __future__ import annotations

import argparse
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
        pct_name = "% of cuBLAS" + (" (same dtype)" if len(rd.baseline_dtypes(all_rows, chapter)) > 1 else "")
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
    names = sorted({r.gpu.replace("NVIDIA ", "") for r in rows if r.gpu and rd.baseline_of(rows, r.chapter)})
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
}


def fmt_small_pct(v: float) -> str:
    """A percentage that may be far below 1 (the CPU against cuBLAS): two significant digits there."""
    return f"{v:.2g}%" if v < 1 else fmt_pct(v)


def summary_entry(rows: list[rd.Row], chapter: str, headline: int | None) -> tuple[str, str, str] | None:
    """(best kernel, its rate, its % of the baseline) of one chapter as the summary shows them, from
    canonical rows (rd.best_row); None when the chapter has nothing to show."""
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
        return kernel, fmt_rate(best.tflops) + note, fmt_pct(rd.pct_of_baseline(rows, best))
    vs = rd.cpu_vs_cublas(rows, best)
    pct = "–" if vs is None else f"{fmt_small_pct(vs[0])} of cuBLAS SGEMM at {best.size_text}"
    return best.kernel, f"{fmt_rate(best.tflops * 1e3)} GFLOP/s (CPU, {best.size_text})", pct


def summary_table(rows: list[rd.Row], headline: int | None, data_dir: str, root: pathlib.Path,
                  page_dir: str = "") -> str:
    if not rows:
        return f"_No results in `{data_dir}` yet._"
    size = f"{headline}³" if headline else "largest size"
    header = ["chapter", "the idea", "best step", f"TFLOP/s on {short_gpu(rows)} at {size}", "% of cuBLAS"]
    out = []
    rows = rd.canonical(rows)  # every chapter on the same problem: C = A·B, all row-major
    for chapter in rd.chapters(rows):
        entry = summary_entry(rows, chapter, headline)
        if entry is not None:
            out.append([chapter_cell(chapter, root, page_dir), IDEAS.get(chapter[:2], "–"), *entry])
    text = md_table(header, out, right={3, 4})
    return text + ("\n\n_From `" + data_dir + "/*.csv` by `plots/update_tables.py`; % of cuBLAS (or cudaMemcpy) "
                   "is measured side by side in each chapter's own run; all chapters on C = A·B with A, B and C row-major "
                   "(each chapter's table has the other storage orders)._")


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
    """Per chapter, its best kernel and that kernel's rate (% of cuBLAS) on each GPU, each at that GPU's
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
        header += [f"{label}: best kernel", f"{label}{at}: TFLOP/s (% of cuBLAS)"]
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
    text = md_table(header, out, right=set(range(2, len(header), 2)))
    sources = []
    for d, label, canon, _ in per_gpu:
        where = f"`{relative(str(d), root)}/`"
        sources.append(f"{label}: {where}" + ("" if canon else " (no CSV yet)"))
    return text + ("\n\n_Each GPU's best kernel per chapter, at that GPU's own headline size, % of the cuBLAS "
                   "measured in the same run on the same GPU; from " + "; ".join(sources)
                   + " by `plots/update_tables.py`._")


# A problem of the size sweep at which the last chapter's best kernel reaches less than this share of
# cuBLAS in some storage order is listed as one where it loses (results:limits).
LOSES_BELOW = 97.0


def pct_range(values: list[float]) -> str:
    lo, hi = min(values), max(values)
    return fmt_pct(lo) if f"{lo:.1f}" == f"{hi:.1f}" else f"{lo:.1f}–{hi:.1f}%"


def limits_block(all_rows: list[rd.Row], headline: int | None, data_dir: str, root: pathlib.Path,
                 page_dir: str = "") -> str:
    """Each GPU GEMM chapter's best kernel (the summary's) over every square size from the headline up
    and every storage order it measured, as a min–max of % of cuBLAS (chapters that measured it at one
    size and order only are left to the summary); then where the last chapter's
    best kernel falls below LOSES_BELOW % in that chapter's size sweep (chapter "<chapter>_sizes")."""
    rows = [r for r in all_rows if not rd.is_tuning(r.chapter)]
    canon = rd.canonical(rows)
    chapters = rd.gpu_gemm_chapters(rows)
    if not chapters or headline is None:
        return f"_No GPU GEMM results in `{data_dir}` yet._"
    header = ["chapter", "best step", "dtype", "sizes", "storage orders", "% of cuBLAS (min–max)"]
    out, last = [], None
    for chapter in chapters:
        found = rd.best_row(canon, chapter, headline)
        if found is None:
            continue
        best, _ = found
        mine = [r for r in rows if (r.chapter, r.kernel, r.dtype) == (chapter, best.kernel, best.dtype)
                and r.is_square and r.m >= headline and rd.pct_of_baseline(rows, r) is not None]
        if len(mine) < 2:  # one size and order: the summary's row already says it
            continue
        sizes = sorted({r.m for r in mine})
        layouts = sorted({r.layout for r in mine}, key=lambda x: (x != "RRR", x))
        out.append([chapter_cell(chapter, root, page_dir), best.kernel, best.dtype, ", ".join(f"{n}³" for n in sizes),
                    ", ".join(layouts), pct_range([rd.pct_of_baseline(rows, r) for r in mine])])
        last = (chapter, best)
    text = md_table(header, out, right={5})
    if last is None:
        return text
    chapter, best = last
    # Its size sweep: a sweep binary's rows ("<chapter>_sizes"), or the chapter's own when it runs a
    # suite of shapes itself (chapter 11).
    sweep = [r for r in all_rows if r.chapter == chapter + "_sizes" and (r.kernel, r.dtype) == (best.kernel, best.dtype)
             and rd.pct_of_baseline(all_rows, r) is not None]
    if not sweep:
        sweep = [r for r in all_rows if r.chapter == chapter and (r.kernel, r.dtype) == (best.kernel, best.dtype)
                 and rd.pct_of_baseline(all_rows, r) is not None]
        if len({r.size_text for r in sweep}) <= len({r.size_text for r in mine}):
            sweep = []  # only the squares the table already shows
    if not sweep:
        return text
    problems: dict[str, list[rd.Row]] = {}
    for r in sweep:
        problems.setdefault(r.size_text, []).append(r)
    layouts = sorted({r.layout for r in sweep}, key=lambda x: (x != "RRR", x))
    losing = []
    for size, mine in problems.items():
        low = [r for r in sorted(mine, key=lambda r: (r.layout != "RRR", r.layout)) if rd.pct_of_baseline(all_rows, r) < LOSES_BELOW]
        if low:
            losing.append(f"{size} (" + ", ".join(f"{fmt_pct(rd.pct_of_baseline(all_rows, r))} {r.layout}" for r in low) + ")")
    source = ", ".join(sorted({f"`{relative(r.source, root)}`" for r in sweep}))
    num = chapter.split("_", 1)[0]
    line = (f"Chapter {num}'s `{best.kernel}` over its shapes ({source}: {len(problems)} problems, "
            f"{' and '.join(layouts)}): at least {LOSES_BELOW:g}% of cuBLAS at {len(problems) - len(losing)} of them")
    line += (f"; below at {', '.join(losing)}." if losing else ".")
    return (text + "\n\n" + line + "\n\n_% of the cuBLAS (`cublasGemmEx`, its default algorithm) measured in "
            "the same run on the same problem, ratio of medians; from `" + data_dir + "/*.csv` by `plots/update_tables.py`._")


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
        elif marker == "limits":
            table = limits_block(rows, headline, data_dir, root, page_dir)
        elif marker == "cpu":
            table = cpu_sentence(rows, data_dir)
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
