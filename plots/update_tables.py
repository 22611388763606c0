#!/usr/bin/env python3
"""Fills the measured-results tables of the READMEs from the committed CSVs.

    python plots/update_tables.py [--data plots/data/h200] [--root .] [--headline N] [--check]

A README marks where a table goes with a block

    <!-- results:02_naive_gpu -->
    (generated: do not edit by hand)
    <!-- /results -->

`results:<chapter>` (the CSV's chapter column, or just its number, "02") gets that
chapter's rows; `results:summary` (in the top README.md) gets one row per chapter:
its best kernel, that kernel's TFLOP/s at the headline size and its % of cuBLAS.
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


def summary_table(rows: list[rd.Row], headline: int | None, data_dir: str, root: pathlib.Path) -> str:
    if not rows:
        return f"_No results in `{data_dir}` yet._"
    size = f"{headline}³" if headline else "largest size"
    header = ["chapter", "technique (best kernel)", f"TFLOP/s on {short_gpu(rows)} at {size}", "% of cuBLAS"]
    out = []
    rows = rd.canonical(rows)  # every chapter on the same problem: C = A·B, all row-major
    for chapter in rd.chapters(rows):
        mine = [r for r in rows if r.chapter == chapter and not r.is_baseline]
        readme = root / "chapters" / chapter / "README.md"
        num, _, name = chapter.partition("_")
        title = f"{num} {name}" if name else chapter
        cell = f"[{title}](chapters/{chapter}/README.md)" if readme.is_file() else title
        base = rd.baseline_of(rows, chapter)
        if base == rd.COPY_BASELINE:
            copies = [r for r in mine if r.gbps is not None]
            if not copies:
                continue
            big = max(r.m * r.n for r in copies)
            best = max((r for r in copies if r.m * r.n == big), key=lambda r: r.gbps)
            out.append([cell, best.kernel, f"{fmt_rate(best.gbps)} GB/s ({best.size_text} copy)",
                        f"{fmt_pct(rd.pct_of_baseline(rows, best))} of cudaMemcpy"])
        elif base == rd.GEMM_BASELINE:
            gemms = [r for r in mine if r.tflops is not None]
            if not gemms:
                continue
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
            out.append([cell, kernel, fmt_rate(best.tflops) + note, fmt_pct(rd.pct_of_baseline(rows, best))])
        else:
            gemms = [r for r in mine if r.tflops is not None]
            if not gemms:
                continue
            naive = rd.cpu_naive(rows)
            ref = (naive.m, naive.n, naive.k) if naive and naive.chapter == chapter else None
            at = [r for r in gemms if (r.m, r.n, r.k) == ref] or gemms
            best = max(at, key=lambda r: r.tflops)
            out.append([cell, best.kernel, f"{fmt_rate(best.tflops * 1e3)} GFLOP/s (CPU, {best.size_text})", "–"])
    text = md_table(header, out, right={2, 3})
    return text + ("\n\n_From `" + data_dir + "/*.csv` by `plots/update_tables.py`; % of cuBLAS (or cudaMemcpy) "
                   "is measured side by side in each chapter's own run; all chapters on C = A·B with A, B and C row-major "
                   "(each chapter's table has the other storage orders)._")


def render(text: str, rows: list[rd.Row], headline: int | None, data_dir: str, root: pathlib.Path,
           name: str) -> tuple[str, list[str]]:
    """The file's text with every block filled, and the ids of the blocks that changed."""
    opens, closes, blocks = len(OPEN.findall(text)), len(CLOSE.findall(text)), len(BLOCK.findall(text))
    if not (opens == closes == blocks):
        raise BlockError(f"{name}: {opens} '<!-- results:... -->' and {closes} '<!-- /results -->' markers do not pair up")
    changed: list[str] = []

    def fill(m: re.Match) -> str:
        marker = m.group("id")
        table = (summary_table(rows, headline, data_dir, root) if marker == "summary"
                 else chapter_table(rows, marker, data_dir, root))
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

    files = [root / "README.md"] + sorted((root / "chapters").glob("*/README.md"))
    updates = []  # all files are rendered before any is written: a bad marker leaves everything untouched
    for f in files:
        if not f.is_file():
            continue
        name = relative(str(f), root)
        try:
            new, changed = render(f.read_text(encoding="utf-8"), rows, headline, data_text, root, name)
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
