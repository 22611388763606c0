#!/usr/bin/env python3
"""Checks that every measured number a page quotes is the number in the committed CSV.

    python3 tools/check_page_numbers.py [--root DIR] [--gpu DIR] [--list] [--fill] [PAGE ...]

Pages: README.md, docs/*.md and chapters/*/README.md under --root (default: this repository), or the
PAGE arguments. Every `<!-- n: ... -->` tag outside a fenced block and outside an inline code span is
evaluated against plots/data/<gpu>/<stem>.csv under --root (--gpu: h200 unless told) and compared
with the number written just before it. For each number that differs, one line

    page:line: <number> written, <value> in <stem> (<query>)

(the value rounded as the page rounds it), then a summary line. A malformed tag (a query that does
not parse, no number right before the tag), a stem without a CSV, and a query that matches no row
print one line each too. Exit 0 when every tagged number matches, 1 otherwise. --list prints every
tagged number with the value it was checked against (useful when writing a page); the exit status is
the same. Duplicate rows in one CSV (the same chapter, kernel, dtype, layout, M, N, K) are read as
plots/results_data.py's load() reads them: the later row wins. Standard library only (it reads the
CSVs with plots/results_data.py of this repository).

The contract between the page writers and this tool, as written (the reference):

  A number a page quotes from a committed measurement carries an inline HTML comment right after it
  (no space between the number's last character and `<!--`), invisible when the page is rendered:

      every_shape runs 99.7%<!-- n: ch11_every_shape every_shape RCR 4096x4096x4096 pct --> of cuBLAS

  Query: `<!-- n: STEM KERNEL LAYOUT SIZE COLUMN [AGG] -->`
  - STEM: a CSV file under plots/data/h200/ without `.csv` (e.g. ch11_every_shape,
    ch11_every_shape_appendix, ch12_hopper_datatypes). Optionally `h100-80gb-hbm3/ch05_layout_matmul`
    for another GPU's directory (path relative to plots/data/).
  - KERNEL: the `kernel` column (e.g. every_shape, cuBLAS, tile_shapes). For CSVs with several dtypes
    (chapter 12), write KERNEL as `kernel/dtype` (e.g. cuBLAS/e4m3_block) when the kernel name alone
    is ambiguous.
  - LAYOUT: RRR, RCR, ... or `*` (any).
  - SIZE: MxNxK, or `*` (all sizes), or a filter such as `M<=64`, `M>=2048`, `M=128` (one condition).
  - COLUMN: pct (pct_of_cublas), tflops, gbps, ms (median_ms), min_ms, rel_error; or a ratio of two
    rows' medians is not supported (compute it into the CSV or do not tag it).
  - AGG (needed when SIZE matches several rows): min, max, mean, geomean, count (number of rows),
    count>=X, count>X, count<X, count<=X (rows whose COLUMN satisfies it).

  How a written number is compared: the checker takes the number just before the tag as written
  (digits, optional `,` thousands separators, optional decimal point; a trailing `%`, `×`, unit words
  are not part of the number), rounds the queried value to the same number of decimals as written,
  and requires equality. `1,590` and `1590` are both 0 decimals. A written `0.6` against 0.55 passes
  (round half to even is not used: round half away from zero).

  Ranges: tag each end: `82<!-- n: ... pct min -->-105%<!-- n: ... pct max -->`.

  Numbers that are not measurements (tile sizes, SM counts, sizes like 4096³, predictions, counts of
  steps) are not tagged. Numbers from profiles or earlier runs that are not in a committed CSV are
  not tagged either; the prose must say where they come from (the appendix, "ncu", "run 11z2").

  A page may also say that a whole paragraph is history, not checked: nothing to do, it is simply
  not tagged.

Tables: CSVs of another schema. A CSV whose first column is not `chapter` (the library's and the example
model's measurements, plots/data/h200/lib_*.csv), or that has no `pct_of_cublas` column (chapter 13's, one
row per model, projection, tokens and routing), is a table of named columns, queried by name:

  Query: `<!-- n: STEM FILTER... COLUMN [AGG] -->`
  - FILTER: COLUMN=VALUE (the cell as written, or the same number: batch=64 matches 64 and 64.0), or
    COLUMN<X, <=, >, >= (numbers); any number of them, all must hold.
  - COLUMN: the column whose value is quoted (its header name, e.g. tokens_per_s); AGG as above.

      ours reaches 97.4%<!-- n: lib_model backend=ours_eager phase=decode batch=64 pct_of_torch_eager -->

Placeholders: a number not measured yet is written with X for its digits, as it will be shown
(`XX.X%`, `X,XXX`), and its tag as it will be. The check fails on it (not a number); `--fill` writes
the CSV's value in its place, with the decimals and the thousands separator the placeholder shows,
once the CSV is committed. --fill changes placeholders only: a written number is checked, never
rewritten.

How this tool reads the contract where it leaves a choice:
- Between the number and the tag there may be a `%`, a `×` (or `x`), and one unit word (TFLOP/s,
  GFLOP/s, TB/s, GB/s, ms, µs, us), each optionally after one space: `5.74 TFLOP/s<!-- n: ... -->`
  checks 5.74. Anything else there (a word, `**`) is a malformed tag: put the tag right after the
  number.
- KERNEL without `/dtype` whose rows have several dtypes is an error (the aggregate or the row would
  mix types); a SIZE filter compares M, N or K with =, <, <=, >, >=; `x` or `×` separates MxNxK.
- Several rows and no AGG is an error; so is a row whose COLUMN is empty (except for plain `count`,
  which counts rows), and geomean of a value <= 0.
"""

from __future__ import annotations

import argparse
import csv
import math
import pathlib
import re
import sys
from decimal import ROUND_HALF_UP, Decimal

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "plots"))
import results_data  # noqa: E402  (plots/results_data.py: the CSV schema and its reader)

TAG = re.compile(r"<!--\s*n:(.*?)-->")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
# The number just before a tag, and what may stand between them (see the docstring).
NUMBER = r"(?<![\d.,])(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
SUFFIX = r"(?P<suffix>(?: ?(?:%|×|x))?(?:[ \u00a0]?(?:TFLOP/s|GFLOP/s|TB/s|GB/s|ms|µs|us))?)"
BEFORE_TAG = re.compile(NUMBER + SUFFIX + r"$")
PLACEHOLDER = r"(?<![\w.,])(?P<number>X{1,3}(?:,XXX)+(?:\.X+)?|X+(?:\.X+)?)"
PLACEHOLDER_BEFORE_TAG = re.compile(PLACEHOLDER + SUFFIX + r"$")
TABLE_FILTER = re.compile(r"^(?P<column>[A-Za-z_]\w*)(?P<op><=|>=|<|>|=)(?P<value>.+)$")
COLUMNS = {"pct": "pct", "tflops": "tflops", "gbps": "gbps", "ms": "median_ms", "min_ms": "min_ms",
           "rel_error": "rel_error"}
BACKTICKS = re.compile(r"`+")
SIZE_FILTER = re.compile(r"^([MNK])(<=|>=|<|>|=)(\d+)$")
SIZE_EXACT = re.compile(r"^(\d+)[x×](\d+)[x×](\d+)$")
COUNT_IF = re.compile(r"^count(<=|>=|<|>)(-?\d+(?:\.\d+)?)$")
COMPARE = {"=": lambda a, b: a == b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
           ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


class TagError(Exception):
    """A tag that cannot be checked: malformed, an unknown file, no row (the message says which)."""


def pages_of(root: pathlib.Path) -> list[pathlib.Path]:
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md")) + sorted((root / "chapters").glob("*/README.md"))
    return [p for p in pages if p.is_file()]


def code_spans(line: str) -> list[tuple[int, int]]:
    """The [start, end) ranges of the line's inline code spans (a run of backticks to the next run of
    the same length): a tag written there is an example, not a tag."""
    spans, i = [], 0
    while True:
        m = BACKTICKS.search(line, i)
        if not m:
            return spans
        close = re.compile(r"(?<!`)" + m.group() + r"(?!`)").search(line, m.end())
        if not close:
            return spans
        spans.append((m.start(), close.end()))
        i = close.end()


def tags(text: str):
    """Yields (line number, the text before the tag on its line, the query) for every tag of the page
    that is outside fenced blocks and inline code spans."""
    for number, line, m in tag_matches(text):
        yield number, line[:m.start()], m.group(1).strip()


def tag_matches(text: str):
    """Yields (line number, the line, the tag's match) for every tag outside fenced blocks and inline
    code spans, in order."""
    fence = None
    for number, line in enumerate(text.splitlines(), start=1):
        f = FENCE.match(line)
        if fence is not None:
            if f and f.group(2)[0] == fence[0] and len(f.group(2)) >= len(fence) and not f.group(3).strip():
                fence = None
            continue
        if f:
            fence = f.group(2)
            continue
        spans = code_spans(line)
        for m in TAG.finditer(line):
            if any(a <= m.start() < b for a, b in spans):
                continue
            yield number, line, m


def written_number(before: str) -> str:
    """The number as the page writes it, right before a tag; TagError when there is none."""
    if PLACEHOLDER_BEFORE_TAG.search(before):
        raise TagError(f"a placeholder ({PLACEHOLDER_BEFORE_TAG.search(before).group('number')}), not a number: "
                       "once its CSV is committed, python3 tools/check_page_numbers.py --fill writes it")
    m = BEFORE_TAG.search(before)
    if not m:
        tail = before[-20:]
        raise TagError(f"no number right before the tag (the text before it ends {tail!r})")
    return m.group("number")


class Table:
    """A CSV of another schema than the chapters' (see "Tables" above): its header and its rows."""

    def __init__(self, path: str, columns: list[str], rows: list[dict[str, str]]):
        self.path, self.columns, self.rows = path, columns, rows


class Data:
    """The CSVs under plots/data/, read once each: stem -> the chapters' rows, duplicates resolved (the
    later wins), or a Table when the CSV is not of the chapters' schema (its first column not `chapter`, or no
    `pct_of_cublas` column)."""

    def __init__(self, root: pathlib.Path, gpu: str):
        self.data_dir, self.gpu, self.cache = root / "plots" / "data", gpu, {}

    def load(self, stem: str) -> list[results_data.Row] | Table:
        if stem not in self.cache:
            rel = stem if "/" in stem else f"{self.gpu}/{stem}"
            path = self.data_dir / f"{rel}.csv"
            shown = path.relative_to(self.data_dir.parent.parent).as_posix()
            if ".." in pathlib.PurePosixPath(rel).parts or not path.is_file():
                raise TagError(f"no CSV {shown} for stem '{stem}'")
            with open(path, newline="", encoding="utf-8") as f:
                header = next(csv.reader(f), None) or []
            if header[:1] != ["chapter"] or "pct_of_cublas" not in [c.strip() for c in header]:
                with open(path, newline="", encoding="utf-8") as f:
                    reader = csv.DictReader(f)
                    self.cache[stem] = Table(shown, [c.strip() for c in reader.fieldnames or []],
                                             [{k.strip(): (v or "").strip() for k, v in r.items() if k is not None}
                                              for r in reader])
                return self.cache[stem]
            try:
                unique: dict[tuple, results_data.Row] = {}
                for r in results_data.read_csv(path):
                    unique[(r.chapter, r.kernel, r.dtype, r.layout, r.m, r.n, r.k)] = r
            except results_data.DataError as e:
                raise TagError(str(e)) from None
            self.cache[stem] = list(unique.values())
        return self.cache[stem]

    def rows(self, stem: str) -> list[results_data.Row]:
        """The chapters' rows of `stem`; TagError when it is a table."""
        loaded = self.load(stem)
        if isinstance(loaded, Table):
            raise TagError(f"{loaded.path} is a table (not the chapters' schema): "
                           "query it as STEM COLUMN=VALUE... COLUMN [AGG]")
        return loaded


def size_filter(size: str):
    if size == "*":
        return lambda r: True
    m = SIZE_EXACT.match(size)
    if m:
        dims = tuple(int(x) for x in m.groups())
        return lambda r: (r.m, r.n, r.k) == dims
    m = SIZE_FILTER.match(size)
    if m:
        dim, op, value = m.group(1).lower(), COMPARE[m.group(2)], int(m.group(3))
        return lambda r: op(getattr(r, dim), value)
    raise TagError(f"SIZE '{size}' is neither MxNxK, '*', nor one condition such as M<=64")


def parse_agg(agg: str | None):
    """AGG's condition for count<op>X, or None; TagError for an AGG that is none of the known ones."""
    if agg is None or agg in ("min", "max", "mean", "geomean", "count"):
        return None
    m = COUNT_IF.match(agg)
    if not m:
        raise TagError(f"AGG '{agg}' is not min, max, mean, geomean, count or count<op>X")
    return COMPARE[m.group(1)], float(m.group(2))


def aggregate(values: list[float], agg: str | None, count_if) -> float:
    """One value from the selected rows' values, as AGG says (a single row's value without AGG)."""
    if count_if is not None:
        op, x = count_if
        return float(sum(1 for v in values if op(v, x)))
    if agg is None or agg == "min":
        return min(values) if agg else values[0]
    if agg == "max":
        return max(values)
    if agg == "mean":
        return sum(values) / len(values)
    if any(v <= 0 for v in values):
        raise TagError("geomean of a value <= 0")
    return math.exp(sum(math.log(v) for v in values) / len(values))


def evaluate(data: Data, query: str) -> float:
    """The value a query names (TagError when it is malformed or matches nothing)."""
    words = query.split()
    if words and isinstance(data.load(words[0]), Table):
        return evaluate_table(data.load(words[0]), words[1:])
    if len(words) not in (5, 6):
        raise TagError(f"a query has 5 or 6 words (STEM KERNEL LAYOUT SIZE COLUMN [AGG]), got {len(words)}")
    stem, kernel, layout, size, column = words[:5]
    agg = words[5] if len(words) == 6 else None
    if column not in COLUMNS:
        raise TagError(f"COLUMN '{column}' is not one of {', '.join(COLUMNS)}")
    count_if = parse_agg(agg)
    kernel, _, dtype = kernel.partition("/")
    in_size = size_filter(size)
    rows = [r for r in data.rows(stem) if r.kernel == kernel and (not dtype or r.dtype == dtype)
            and (layout == "*" or r.layout == layout) and in_size(r)]
    if not rows:
        raise TagError("matches no row")
    dtypes = sorted({r.dtype for r in rows})
    if not dtype and len(dtypes) > 1:
        raise TagError(f"kernel '{kernel}' has rows of several dtypes ({', '.join(dtypes)}): write {kernel}/DTYPE")
    if agg is None and len(rows) > 1:
        raise TagError(f"matches {len(rows)} rows: narrow LAYOUT or SIZE, or add an AGG")
    if agg == "count":
        return float(len(rows))
    values = []
    for r in rows:
        v = getattr(r, COLUMNS[column])
        if v is None:
            raise TagError(f"the row {r.kernel} {r.dtype} {r.layout} {r.m}x{r.n}x{r.k} has no {COLUMNS[column]}")
        values.append(v)
    return aggregate(values, agg, count_if)


def table_number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def evaluate_table(table: Table, words: list[str]) -> float:
    """A query on a table: FILTER... COLUMN [AGG] (the words after the stem)."""
    filters = []
    while words and TABLE_FILTER.match(words[0]):
        filters.append(TABLE_FILTER.match(words.pop(0)))
    if len(words) not in (1, 2):
        raise TagError("a query on a table is STEM COLUMN=VALUE... COLUMN [AGG] (filters, then one column, "
                       f"then an optional AGG), got {len(words)} word(s) after the filters")
    column, agg = words[0], (words[1] if len(words) == 2 else None)
    for name in [f.group("column") for f in filters] + [column]:
        if name not in table.columns:
            raise TagError(f"{table.path} has no column '{name}' (it has {', '.join(table.columns)})")
    count_if = parse_agg(agg)

    def holds(f: re.Match, row: dict[str, str]) -> bool:
        cell, op, want = row[f.group("column")], f.group("op"), f.group("value")
        a, b = table_number(cell), table_number(want)
        if op == "=":
            return cell == want or (a is not None and b is not None and a == b)
        if b is None:
            raise TagError(f"'{f.group(0)}': {op} compares numbers, '{want}' is not one")
        return a is not None and COMPARE[op](a, b)

    rows = [r for r in table.rows if all(holds(f, r) for f in filters)]
    if not rows:
        raise TagError("matches no row")
    if agg is None and len(rows) > 1:
        raise TagError(f"matches {len(rows)} rows: add a filter, or an AGG")
    if agg == "count":
        return float(len(rows))
    values = []
    for r in rows:
        v = table_number(r[column])
        if v is None:
            where = " ".join(f"{f.group('column')}={r[f.group('column')]}" for f in filters)
            raise TagError(f"the row {where or '(unfiltered)'} has no number in {column} ('{r[column]}')")
        values.append(v)
    return aggregate(values, agg, count_if)


def rounded(value: float, decimals: int) -> Decimal:
    """`value` to `decimals` places, half away from zero (from its shortest decimal form, so 0.55 is 0.55)."""
    return Decimal(repr(value)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def fill_placeholders(text: str, data: Data) -> tuple[str, int, list[str]]:
    """The page with each placeholder right before a tag replaced by the tag's value, shown with the
    placeholder's decimals (and thousands separator); how many were filled; a message for each that
    could not be (line: why). Written numbers are left as they are."""
    lines = text.splitlines(keepends=True)
    by_line: dict[int, list[re.Match]] = {}
    for number, _, m in tag_matches(text):
        by_line.setdefault(number, []).append(m)
    filled, problems = 0, []
    for number, matches in by_line.items():
        line = lines[number - 1]
        for m in reversed(matches):  # right to left: a replacement does not move the tags before it
            ph = PLACEHOLDER_BEFORE_TAG.search(line[:m.start()])
            if not ph:
                continue
            query = m.group(1).strip()
            try:
                value = evaluate(data, query)
            except TagError as e:
                problems.append(f"{number}: {e} (<!-- n: {query} -->)")
                continue
            shape = ph.group("number")
            decimals = len(shape.partition(".")[2])
            shown = format(rounded(value, decimals), ("," if "," in shape else "") + f".{decimals}f")
            line = line[:ph.start("number")] + shown + line[ph.end("number"):]
            filled += 1
        lines[number - 1] = line
    return "".join(lines), filled, problems


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Check every tagged number of the pages against the committed CSVs.")
    p.add_argument("--root", type=pathlib.Path, default=REPO, help="repository root (default: this repository)")
    p.add_argument("--gpu", default="h200", help="the directory under plots/data/ of a bare STEM (default: h200)")
    p.add_argument("--list", action="store_true", help="print every tagged number with its value")
    p.add_argument("--fill", action="store_true",
                   help="first write each placeholder's value (digits written as X: XX.X) from its CSV, then check")
    p.add_argument("pages", nargs="*", type=pathlib.Path,
                   help="pages to check (default: README.md, docs/*.md and chapters/*/README.md under --root)")
    args = p.parse_args(argv)
    root = args.root.resolve()
    pages = [pg.resolve() for pg in args.pages] if args.pages else pages_of(root)
    data = Data(root, args.gpu)
    count, mismatches, errors = 0, 0, 0
    for page in pages:
        try:
            name = page.relative_to(root).as_posix()
        except ValueError:
            name = str(page)
        try:
            text = page.read_text(encoding="utf-8")
        except OSError as e:
            print(f"{name}: {e}")
            errors += 1
            continue
        if args.fill:
            text, filled, problems = fill_placeholders(text, data)
            for problem in problems:
                print(f"{name}:{problem}")
            if filled:
                page.write_text(text, encoding="utf-8")
                print(f"{name}: filled {filled} placeholder(s)")
        for line, before, query in tags(text):
            count += 1
            try:
                written = written_number(before)
                value = evaluate(data, query)
            except TagError as e:
                print(f"{name}:{line}: {e} (<!-- n: {query} -->)")
                errors += 1
                continue
            decimals = len(written.partition(".")[2])
            shown = rounded(value, decimals)
            same = Decimal(written.replace(",", "")) == shown
            stem = query.split()[0]
            if not same:
                mismatches += 1
                print(f"{name}:{line}: {written} written, {shown} in {stem} ({query})")
            elif args.list:
                print(f"{name}:{line}: {written} = {value:.6g} in {stem} ({query})")
    if mismatches or errors:
        print(f"check_page_numbers: {mismatches} of {count} tagged numbers differ from their CSV, "
              f"{errors} tag(s) cannot be checked")
        return 1
    print(f"check_page_numbers: {count} tagged numbers in {len(pages)} pages match their CSVs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
