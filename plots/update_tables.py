#!/usr/bin/env python3
"""Fills the measured-results tables of the READMEs from the committed CSVs.

    python plots/update_tables.py [--data plots/data/h200] [--root .] [--headline N] [--check]

A README marks where a table goes with a block

    <!-- results:02_naive_gpu -->
    (generated: do not edit by hand)
    <!-- /results -->

`results:<chapter>` (the CSV's chapter column, or just its number, "02") gets that
chapter's rows; `results:summary` (in the top README.md) gets one row per chapter:
its best kernel, that kernel's TFLOP/s at the headline size and its % of cuBLAS;
`results:summary-gpus` the same for several GPUs side by side, one pair of columns
per directory under plots/data/ (--gpus; "–" where a GPU has no CSV).
Files searched: <root>/README.md and <root>/chapters/*/README.md.

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


def chapter_cell(chapter: str, root: pathlib.Path) -> str:
    readme = root / "chapters" / chapter / "README.md"
    num, _, name = chapter.partition("_")
    title = f"{num} {name}" if name else chapter
    return f"[{title}](chapters/{chapter}/README.md)" if readme.is_file() else title


def summary_entry(rows: list[rd.Row], chapter: str, headline: int | None) -> tuple[str, str, str] | None:
    """(best kernel, its rate, its % of the baseline) of one chapter as the summary shows them, from
    canonical rows; None when the chapter has nothing to show."""
    mine = [r for r in rows if r.chapter == chapter and not r.is_baseline]
    base = rd.baseline_of(rows, chapter)
    if base == rd.COPY_BASELINE:
        copies = [r for r in mine if r.gbps is not None]
        if not copies:
            return None
        big = max(r.m * r.n for r in copies)
        best = max((r for r in copies if r.m * r.n == big), key=lambda r: r.gbps)
        return (best.kernel, f"{fmt_rate(best.gbps)} GB/s ({best.size_text} copy)",
                f"{fmt_pct(rd.pct_of_baseline(rows, best))} of cudaMemcpy")
    gemms = [r for r in mine if r.tflops is not None]
    if not gemms:
        return None
    if base == rd.GEMM_BASELINE:
        at = [r for r in gemms if r.is_square and r.m == headline]
        note = ""
        if not at:  # this chapter did not run the headline size: its largest square size, said so
            squares = [r for r in gemms if r.is_square] or gemms
            big = max(r.m * r.n * r.k for r in squares)
            at = [r for r in squares if r.m * r.n * r.k == big]
            note = f" (at {at[0].size_text})"
        best = max(at, key=lambda r: r.tflops)
        kernel = best.kernel
        if len({r.dtype for r in gemms}) > 1:  # which type won, and so which cuBLAS the % is of
            kernel += f" ({best.dtype})"
        return kernel, fmt_rate(best.tflops) + note, fmt_pct(rd.pct_of_baseline(rows, best))
    naive = rd.cpu_naive(rows)
    ref = (naive.m, naive.n, naive.k) if naive and naive.chapter == chapter else None
    at = [r for r in gemms if (r.m, r.n, r.k) == ref] or gemms
    best = max(at, key=lambda r: r.tflops)
    return best.kernel, f"{fmt_rate(best.tflops * 1e3)} GFLOP/s (CPU, {best.size_text})", "–"


def summary_table(rows: list[rd.Row], headline: int | None, data_dir: str, root: pathlib.Path) -> str:
    if not rows:
        return f"_No results in `{data_dir}` yet._"
    size = f"{headline}³" if headline else "largest size"
    header = ["chapter", "technique (best kernel)", f"TFLOP/s on {short_gpu(rows)} at {size}", "% of cuBLAS"]
    out = []
    rows = rd.canonical(rows)  # every chapter on the same problem: C = A·B, all row-major
    for chapter in rd.chapters(rows):
        entry = summary_entry(rows, chapter, headline)
        if entry is not None:
            out.append([chapter_cell(chapter, root), *entry])
    text = md_table(header, out, right={2, 3})
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


def gpus_table(gpus: list[tuple[pathlib.Path, str, list[rd.Row]]], root: pathlib.Path) -> str:
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
        line = [chapter_cell(chapter, root)]
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


def render(text: str, rows: list[rd.Row], headline: int | None, data_dir: str, root: pathlib.Path,
           name: str, gpus=None) -> tuple[str, list[str]]:
    """The file's text with every block filled, and the ids of the blocks that changed."""
    opens, closes, blocks = len(OPEN.findall(text)), len(CLOSE.findall(text)), len(BLOCK.findall(text))
    if not (opens == closes == blocks):
        raise BlockError(f"{name}: {opens} '<!-- results:... -->' and {closes} '<!-- /results -->' markers do not pair up")
    changed: list[str] = []

    def fill(m: re.Match) -> str:
        marker = m.group("id")
        if marker == "summary":
            table = summary_table(rows, headline, data_dir, root)
        elif marker == "summary-gpus":
            table = gpus_table(gpus() if gpus else [], root)
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
                   help="repository root holding README.md and chapters/*/README.md (default: this repository)")
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

    files = [root / "README.md"] + sorted((root / "chapters").glob("*/README.md"))
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
