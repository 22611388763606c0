"""Reading the result CSVs that every chapter binary writes (`--csv FILE`).

The schema is the one in common/harness/results.hpp:

    chapter,kernel,dtype,layout,M,N,K,median_ms,min_ms,tflops,gbps,
    pct_of_cublas,rel_error,gpu,cuda_version,timestamp

An empty field means "not measured". Each GEMM chapter measures cuBLAS on the
same problems in the same run (rows with kernel "cuBLAS"); the copy chapter
measures cudaMemcpy instead (kernel "cudaMemcpy", gbps filled, tflops empty).
The CPU chapter (01) has no baseline row. A chapter with kernels of several
types has one cuBLAS row per type at each size and layout, told apart by the
dtype column: a kernel's baseline is the one of its own dtype (baseline_row).

Only the standard library is used here, so that update_tables.py runs with any
Python 3; plot.py adds matplotlib on top.
"""

from __future__ import annotations

import csv
import dataclasses
import re
import pathlib
import statistics
from dataclasses import dataclass

COLUMNS = [
    "chapter", "kernel", "dtype", "layout", "M", "N", "K", "median_ms", "min_ms", "tflops",
    "gbps", "pct_of_cublas", "rel_error", "gpu", "cuda_version", "timestamp", "path",
]
# CSVs written before the `path` column (the path that ran: a dispatcher's choice) have every column
# but the last; they read with an empty path.
COLUMNS_WITHOUT_PATH = COLUMNS[:-1]
GEMM_BASELINE = "cuBLAS"
COPY_BASELINE = "cudaMemcpy"
BASELINES = (GEMM_BASELINE, COPY_BASELINE)
CPU_NAIVE = ("01", "naive")  # chapter number and kernel of the speedup baseline
# The step before a chapter's own steps (the previous chapter's best, measured in the same run) is
# named "chNN_<step>" (that chapter's best()); CSVs written before the chapters' step lists call it by
# the step's own name. (chapter, name) -> the former name, for lookups that must find either.
STEP_BEFORE_FORMER_NAMES = {
    ("06_tiled_copy_mma", "ch05_layout_padded"): "layout_padded",
    ("07_pipelined_simt", "ch06_tiled_prefetch"): "tiled_prefetch",
}


class DataError(Exception):
    """A results directory that cannot be used; the message is one line."""


@dataclass(frozen=True)
class Row:
    chapter: str
    kernel: str
    dtype: str
    layout: str
    m: int
    n: int
    k: int
    median_ms: float | None
    min_ms: float | None
    tflops: float | None
    gbps: float | None
    pct: float | None  # % of the chapter's baseline (cuBLAS or cudaMemcpy)
    rel_error: float | None
    gpu: str
    cuda_version: str
    timestamp: str
    source: str  # the CSV file this row came from
    path: str = ""  # the path that ran (a composed kernel's blocks, a dispatcher's choice); "" before the column existed

    @property
    def number(self) -> str:
        """"02" for "02_naive_gpu"."""
        return self.chapter.split("_", 1)[0]

    @property
    def is_baseline(self) -> bool:
        return self.kernel in BASELINES

    @property
    def is_other_baseline(self) -> bool:
        """A second setting of the baseline timed for the record ("cuBLAS_e4m3_promoted": cuBLASLt's fp8
        without fast accumulation, in chapter 12's run): shown beside the steps, never one of them."""
        return any(self.kernel.startswith(b + "_") for b in BASELINES)

    @property
    def is_previous_best(self) -> bool:
        """The previous chapter's best step, measured again as the point of departure ("ch10_tma_store"
        in chapter 11's run): a reference, never the chapter's own best."""
        return re.match(r"ch\d\d_", self.kernel) is not None

    @property
    def is_copy(self) -> bool:
        """A bandwidth row (copy or transpose): GB/s measured, no FLOPs."""
        return self.tflops is None and self.gbps is not None

    @property
    def is_square(self) -> bool:
        return self.m == self.n == self.k

    @property
    def size_text(self) -> str:
        if self.is_copy:
            return f"{self.m}×{self.n}"
        if self.is_square:
            return f"{self.m}³"
        return f"{self.m}×{self.n}×{self.k}"


def _number(text: str, where: str) -> float | None:
    text = text.strip()
    if text == "":
        return None
    try:
        return float(text)
    except ValueError:
        raise DataError(f"{where}: not a number: '{text}'") from None


def read_csv(path: pathlib.Path) -> list[Row]:
    """All rows of one CSV; raises DataError naming the file and line on a malformed file."""
    rows: list[Row] = []
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        names = [h.strip() for h in header] if header is not None else None
        if names not in (COLUMNS, COLUMNS_WITHOUT_PATH):
            raise DataError(f"{path}:1: not the gemm-ladder CSV header (see common/harness/results.hpp)")
        for line_no, fields in enumerate(reader, start=2):
            if not fields or all(not x.strip() for x in fields):
                continue
            where = f"{path}:{line_no}"
            if len(fields) != len(names):
                raise DataError(f"{where}: expected {len(names)} fields, found {len(fields)}")
            v = dict(zip(names, fields))
            dims = [_number(v[c], where) for c in ("M", "N", "K")]
            if any(d is None for d in dims):
                raise DataError(f"{where}: M, N and K must be filled")
            m, n, k = (int(d) for d in dims)
            rows.append(Row(
                chapter=v["chapter"].strip(), kernel=v["kernel"].strip(), dtype=v["dtype"].strip(),
                layout=v["layout"].strip(), m=m, n=n, k=k,
                median_ms=_number(v["median_ms"], where), min_ms=_number(v["min_ms"], where),
                tflops=_number(v["tflops"], where), gbps=_number(v["gbps"], where),
                pct=_number(v["pct_of_cublas"], where), rel_error=_number(v["rel_error"], where),
                gpu=v["gpu"].strip(), cuda_version=v["cuda_version"].strip(),
                timestamp=v["timestamp"].strip(), source=str(path), path=v.get("path", "").strip()))
    return rows


# CSVs of a schema of their own (tables of named columns): lib_*.csv, the library's and the example
# model's measurements (python/examples/llama_decoder.py writes lib_model.csv), and any CSV without the
# chapters' `pct_of_cublas` column (chapter 13's, one row per model, projection, tokens and routing,
# with its percentages of two cuBLAS ways and of a roofline). Not a chapter's rows, so not read here
# (tools/check_page_numbers.py reads them as tables, plots/update_tables.py's block results:lib_model).
OTHER_SCHEMA_PREFIX = "lib_"


def is_table(path: pathlib.Path) -> bool:
    """True for a CSV of a schema of its own (see above): lib_*.csv, or a header without pct_of_cublas."""
    if path.name.startswith(OTHER_SCHEMA_PREFIX):
        return True
    with open(path, newline="", encoding="utf-8") as f:
        header = next(csv.reader(f), None) or []
    return "pct_of_cublas" not in [c.strip() for c in header]


# Chapter 13's tables (one row per kernel, model, projection, tokens and routing): step 2's decode run first,
# so that a shape measured in both runs has all its rows (cuBLAS's and ours) from that one run.
GROUPED_CSVS = ("ch13_grouped_moe_decode.csv", "ch13_grouped_moe.csv")


def grouped_rows(data_dir: pathlib.Path) -> list[dict[str, str]]:
    """Chapter 13's rows in data_dir (GROUPED_CSVS, in that order); a (kernel, model, projection, tokens,
    routing) in several files: the first. Each row's `_file` is the stem of its CSV."""
    out, seen = [], set()
    for name in GROUPED_CSVS:
        path = data_dir / name
        if not path.is_file():
            continue
        with open(path, newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                key = (r["kernel"], r["model"], r["projection"], r["tokens"], r["routing"])
                if key not in seen:
                    seen.add(key)
                    out.append({**r, "_file": path.stem})
    return out


def csv_files(data_dir: pathlib.Path) -> list[pathlib.Path]:
    """The chapters' CSVs under data_dir (recursively): every *.csv but the tables of other schemas."""
    return sorted(p for p in data_dir.rglob("*.csv") if p.is_file() and not is_table(p))


def load(data_dir: pathlib.Path, require: bool = True) -> list[Row]:
    """Every row of every CSV under data_dir (recursively), in chapter order.

    With require=True a directory without any CSV raises DataError."""
    if not data_dir.is_dir():
        if require:
            raise DataError(f"no results: '{data_dir}' is not a directory (pass --data DIR)")
        return []
    files = csv_files(data_dir)
    if not files and require:
        raise DataError(f"no results: no .csv file under '{data_dir}' (run scripts/run_all.sh, or pass --data DIR)")
    rows: list[Row] = []
    for f in files:
        file_rows = read_csv(f)
        # A chapter's appendix run (chNN_*_appendix.csv: its measured dead ends, built with
        # -DMM_APPENDIX_STEPS=ON) is evidence for the page's appendix, not a step of the ladder:
        # its rows become chapter "<chapter>_appendix", which is_tuning() keeps out of the summary,
        # the best step and the figures.
        if f.stem.endswith(APPENDIX_SUFFIX):
            file_rows = [dataclasses.replace(r, chapter=r.chapter + APPENDIX_SUFFIX) for r in file_rows]
        rows.extend(file_rows)
    # One row per (chapter, kernel, dtype, layout, size): a later row (a re-run) replaces an earlier one.
    unique: dict[tuple, Row] = {}
    for r in rows:
        unique[(r.chapter, r.kernel, r.dtype, r.layout, r.m, r.n, r.k)] = r
    # Stable sort: chapter order, then the order the binary wrote its rows in.
    return sorted(unique.values(), key=lambda r: r.chapter)


# Chapter 11's suite by class of shape: squares (M = N = K), prefill (a batch of 4096 or more tokens
# through a layer's weights), M = 128 (a small batch) and decode (M <= 64, a few tokens).
SHAPE_CLASSES = ("squares", "prefill", "M = 128", "decode", "K or N % 8 ≠ 0")


def shape_class(m: int, n: int, k: int) -> str:
    """Which of SHAPE_CLASSES the problem M×N×K belongs to (a K or N that is not a multiple of 8 first:
    rows TMA cannot read or write as they are)."""
    if n % 8 or k % 8:
        return "K or N % 8 ≠ 0"
    if m == n == k:
        return "squares"
    if m >= 4096:
        return "prefill"
    return "decode" if m <= 64 else "M = 128"


# A chapter whose own problem is not the all-row-major one: chapter 12's tf32 and fp8 wgmma read both
# operands K-major only, so it multiplies C = A·Bᵀ (RCR); its RRR rows are the tf32 step that
# transposes B first, a side lesson, not the chapter's result.
# Chapter 11 likewise (swap_ab exchanges two K-major operands); its RRR rows are every_shape's.
CANONICAL_LAYOUTS = {"11_every_shape": "RCR", "12_hopper_datatypes": "RCR"}


def canonical_layout(chapter: str) -> str:
    """The storage order a chapter is compared in: RRR (C = A·B, all row-major) unless CANONICAL_LAYOUTS says otherwise."""
    return CANONICAL_LAYOUTS.get(chapter, "RRR")


def canonical(rows: list[Row]) -> list[Row]:
    """The rows of the canonical problem: where a chapter measured several storage orders, only those
    of its canonical one (canonical_layout: all row-major, RRR, for every chapter but 12), so that
    every chapter is compared on the problem it is about."""
    keep = []
    for chapter in {r.chapter for r in rows}:
        mine = [r for r in rows if r.chapter == chapter]
        own = canonical_layout(chapter)
        if len({r.layout for r in mine}) > 1 and any(r.layout == own for r in mine):
            mine = [r for r in mine if r.layout == own]
        keep += mine
    order = {id(r): i for i, r in enumerate(rows)}
    return sorted(keep, key=lambda r: order[id(r)])


# A chapter's tuning sweep ("07_pipelined_simt_sweep"), ceiling probe ("08_tensor_cores_ceiling") or size sweep ("10_hopper_persistent_sizes"):
# evidence for a page, not a chapter of the ladder.
APPENDIX_SUFFIX = "_appendix"
TUNING_SUFFIXES = ("_sweep", "_ceiling", "_sizes", APPENDIX_SUFFIX)


def is_tuning(chapter: str) -> bool:
    """A sweep's or probe's rows: shown in their own README block, left out of the summary and figures."""
    return chapter.endswith(TUNING_SUFFIXES)


def chapters(rows: list[Row]) -> list[str]:
    """The chapters with rows, in order; tuning sweeps are not chapters."""
    return sorted({r.chapter for r in rows if not is_tuning(r.chapter)})


# The baseline kernels of each chapter of a row list, and its rows by (chapter, kernel, layout, size): built
# once per list (baseline_of and baseline_row are called per row: a scan each made update_tables quadratic).
# An entry keeps its list, so that the id of a list that is gone is never taken for another's; a list whose
# length changed is indexed again.
_INDEX: dict[int, tuple[list, int, dict, dict]] = {}


def _index(rows: list[Row]) -> tuple[dict, dict]:
    entry = _INDEX.get(id(rows))
    if entry is None or entry[0] is not rows or entry[1] != len(rows):
        names: dict[str, set[str]] = {}
        by_key: dict[tuple, list[Row]] = {}
        for r in rows:
            if r.is_baseline:
                names.setdefault(r.chapter, set()).add(r.kernel)
            by_key.setdefault((r.chapter, r.kernel, r.layout, r.m, r.n, r.k), []).append(r)
        if len(_INDEX) > 64:
            _INDEX.clear()
        entry = _INDEX[id(rows)] = (rows, len(rows), names, by_key)
    return entry[2], entry[3]


def baseline_of(rows: list[Row], chapter: str) -> str | None:
    """The chapter's baseline kernel name, or None (the CPU chapter)."""
    names = _index(rows)[0].get(chapter, set())
    if COPY_BASELINE in names:
        return COPY_BASELINE
    if GEMM_BASELINE in names:
        return GEMM_BASELINE
    return None


def gpu_gemm_chapters(rows: list[Row]) -> list[str]:
    """Chapters with a cuBLAS baseline, i.e. GEMMs measured on the GPU."""
    return [c for c in chapters(rows) if baseline_of(rows, c) == GEMM_BASELINE]


def headline_size(rows: list[Row]) -> int | None:
    """The square GEMM size the headline figure uses.

    The size that the most GPU GEMM chapters measured (so that every chapter has
    a bar), the largest such size on a tie. None when no square GPU GEMM exists."""
    gpu = set(gpu_gemm_chapters(rows))
    per_size: dict[int, set[str]] = {}
    for r in rows:
        if r.chapter in gpu and r.is_square and r.tflops is not None and not r.is_baseline:
            per_size.setdefault(r.m, set()).add(r.chapter)
    if not per_size:
        return None
    return max(per_size, key=lambda s: (len(per_size[s]), s))


def baseline_row(rows: list[Row], row: Row) -> Row | None:
    """The baseline row `row` is measured against: the chapter's baseline at the same layout and size,
    of the row's dtype. A chapter may measure several (chapter 08: a bf16 cuBLAS for its bf16 kernels,
    a tf32 one for its tf32 kernels); where none has the row's dtype, the only one there is, else None."""
    base = baseline_of(rows, row.chapter)
    if base is None:
        return None
    same = _index(rows)[1].get((row.chapter, base, row.layout, row.m, row.n, row.k), [])
    mine = [b for b in same if b.dtype == row.dtype]
    if mine:
        return mine[0]
    return same[0] if len(same) == 1 else None


def pct_of_baseline(rows: list[Row], row: Row) -> float | None:
    """% of the chapter's own baseline for this row: the CSV's value, else computed from baseline_row."""
    if row.pct is not None:
        return row.pct
    b = baseline_row(rows, row)
    if b is None or b.median_ms is None or row.median_ms is None:
        return None
    return 100.0 * b.median_ms / row.median_ms


def baseline_dtypes(rows: list[Row], chapter: str) -> list[str]:
    """The dtypes of the chapter's baseline rows: one for most chapters, one per group of kernels
    where a chapter measures kernels of several types against the cuBLAS of each."""
    base = baseline_of(rows, chapter)
    return sorted({r.dtype for r in rows if r.chapter == chapter and r.kernel == base})


def baseline_label(rows: list[Row], row: Row) -> str | None:
    """What `row`'s % is of: "cuBLAS" (or "cudaMemcpy"), "cuBLAS tf32" where the chapter has
    baselines of several dtypes. None for a chapter without a baseline."""
    base = baseline_of(rows, row.chapter)
    if base is None:
        return None
    b = baseline_row(rows, row)
    if b is not None and len(baseline_dtypes(rows, row.chapter)) > 1:
        return f"{base} {b.dtype}"
    return base


def cpu_naive(rows: list[Row]) -> Row | None:
    """Chapter 01's naive loop at its largest measured size (by M·N·K)."""
    cands = [r for r in rows if r.number == CPU_NAIVE[0] and r.kernel == CPU_NAIVE[1] and r.tflops]
    if not cands:
        return None
    return max(cands, key=lambda r: (r.m * r.n * r.k, r.m))


def median(values: list[float]) -> float:
    return statistics.median(values)


# A chapter whose result is, by its page's definition, the kernel of its entry point rather than its
# fastest step at one size: chapter 11's every_shape picks among the chapter's kernels per shape.
ENTRY_POINTS = {"11_every_shape": "every_shape"}


def best_row(rows: list[Row], chapter: str, headline: int | None) -> tuple[Row, str] | None:
    """The chapter's best step as the summary table and the ladder figure show it, from canonical rows,
    and a note when it is not at the headline size: the copy chapter's fastest kernel at its largest
    matrix; a GPU GEMM chapter's fastest kernel at headline³ (else at its largest square size, noted);
    the CPU chapter's fastest kernel at the size of its naive loop's largest run. None: nothing to show."""
    mine = [r for r in rows if r.chapter == chapter and not r.is_baseline and not r.is_previous_best
            and not r.is_other_baseline]
    if chapter in ENTRY_POINTS and any(r.kernel == ENTRY_POINTS[chapter] for r in mine):
        mine = [r for r in mine if r.kernel == ENTRY_POINTS[chapter]]
    base = baseline_of(rows, chapter)
    if base == COPY_BASELINE:
        copies = [r for r in mine if r.gbps is not None]
        if not copies:
            return None
        big = max(r.m * r.n for r in copies)
        return max((r for r in copies if r.m * r.n == big), key=lambda r: r.gbps), ""
    gemms = [r for r in mine if r.tflops is not None]
    if not gemms:
        return None
    if base == GEMM_BASELINE:
        at = [r for r in gemms if r.is_square and r.m == headline]
        note = ""
        if not at:  # this chapter did not run the headline size: its largest square size, said so
            squares = [r for r in gemms if r.is_square] or gemms
            big = max(r.m * r.n * r.k for r in squares)
            at = [r for r in squares if r.m * r.n * r.k == big]
            note = f" (at {at[0].size_text})"
        return max(at, key=lambda r: r.tflops), note
    naive = cpu_naive(rows)
    ref = (naive.m, naive.n, naive.k) if naive and naive.chapter == chapter else None
    at = [r for r in gemms if (r.m, r.n, r.k) == ref] or gemms
    return max(at, key=lambda r: r.tflops), ""


def cpu_vs_cublas(rows: list[Row], row: Row) -> tuple[float, float] | None:
    """A CPU row against cuBLAS SGEMM on the GPU at the same size: (% of cuBLAS, cuBLAS TFLOP/s), the
    cuBLAS being the median of the fp32 cuBLAS rows the GPU chapters measured at that size (each in its
    own run). None when no GPU chapter measured cuBLAS fp32 at that size."""
    level = [r.tflops for r in rows if r.kernel == GEMM_BASELINE and r.dtype == "fp32" and r.tflops
             and (r.m, r.n, r.k) == (row.m, row.n, row.k) and r.layout in ("RRR", row.layout)]
    if not level or not row.tflops:
        return None
    cublas = median(level)
    return 100.0 * row.tflops / cublas, cublas
