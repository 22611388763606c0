"""CTest pages.numbers_check_selftest: tools/check_page_numbers.py can fail.

    python check_page_numbers_selftest.py REPO_ROOT

Runs the checker on the fixtures of tests/pages/fixtures/numbers (a tiny CSV, fx_gemm.csv, in
plots/data/h200 and in plots/data/other-gpu, and five pages) and expects: in_sync.md passes (single
rows, a range tagged at both ends, geomean, count and count>=90, a size filter, kernel/dtype, another
GPU's directory, rounding half away from zero to the decimals written, thousands separators, a unit
word between number and tag, a duplicated row whose later copy wins, and examples of the syntax in a
code span and a fenced block that are not tags); wrong.md fails naming the number and the CSV's
value; malformed.md (a query of four words), unknown_stem.md (no such CSV) and cannot_check.md (no
row, several rows without AGG, no number before the tag, a kernel of two dtypes without /dtype) fail
naming each tag. Tables (a CSV of another schema, lib_fx_model.csv in the example model's columns,
queried by column name): table_in_sync.md passes (COLUMN=VALUE filters, a number filter written 64.0,
batch>1, min, max, count, count<100, a value with a hyphen, a unit word, a placeholder in a code span);
table_cannot_check.md fails on a wrong number, a placeholder, an unknown column, several rows without
AGG, an empty cell and no row, naming each; --fill on a copy of table_placeholders.md writes its
placeholders with the decimals and separators they show, and leaves a written number and a placeholder
without a row as they were. The checker runs in this process (its main()), which keeps the test well
under a second. Standard library only.
"""

import contextlib
import importlib.util
import io
import pathlib
import shutil
import sys
import tempfile


def load_checker(repo: pathlib.Path):
    spec = importlib.util.spec_from_file_location("check_page_numbers", repo / "tools" / "check_page_numbers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(checker, fixtures: pathlib.Path, page: str):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = checker.main(["--root", str(fixtures), str(fixtures / page)])
    print(f"--- {page}: exit {rc}\n{out.getvalue()}")
    return rc, out.getvalue()


def main() -> int:
    repo = pathlib.Path(sys.argv[1]).resolve()
    fixtures = repo / "tests" / "pages" / "fixtures" / "numbers"
    checker = load_checker(repo)
    problems = []
    rc, out = run(checker, fixtures, "in_sync.md")
    if rc != 0 or "17 tagged numbers" not in out:
        problems.append("in_sync.md: 17 correct tags (ranges, aggregates, rounding, separators) should pass")
    rc, out = run(checker, fixtures, "wrong.md")
    if rc != 1 or "wrong.md:3: 88.5 written, 92.0 in fx_gemm (fx_gemm fast RRR 128x128x128 pct)" not in out:
        problems.append("wrong.md: a wrong number must fail (exit 1), naming it and the CSV's value (the later row's)")
    rc, out = run(checker, fixtures, "malformed.md")
    if rc != 1 or "malformed.md:3: a query has 5 or 6 words" not in out:
        problems.append("malformed.md: a malformed tag must fail (exit 1)")
    rc, out = run(checker, fixtures, "unknown_stem.md")
    if rc != 1 or "unknown_stem.md:3: no CSV plots/data/h200/fx_copy.csv" not in out:
        problems.append("unknown_stem.md: a stem without a CSV must fail (exit 1)")
    rc, out = run(checker, fixtures, "cannot_check.md")
    expected = ["cannot_check.md:3: matches no row", "cannot_check.md:4: matches 4 rows",
                "cannot_check.md:5: no number right before the tag", "cannot_check.md:6: kernel 'fast' has rows of several dtypes"]
    if rc != 1 or any(e not in out for e in expected):
        problems.append("cannot_check.md: no row, several rows without AGG, no number, an ambiguous dtype must each fail")
    rc, out = run(checker, fixtures, "table_in_sync.md")
    if rc != 0 or "11 tagged numbers" not in out:
        problems.append("table_in_sync.md: 11 correct tags on a table (filters, aggregates, rounding) should pass")
    rc, out = run(checker, fixtures, "table_cannot_check.md")
    expected = ["table_cannot_check.md:3: 99.0 written, 98.0 in lib_fx_model",
                "table_cannot_check.md:4: a placeholder (XX.X), not a number",
                "table_cannot_check.md:5: plots/data/h200/lib_fx_model.csv has no column 'pct_of_cublas'",
                "table_cannot_check.md:6: matches 3 rows", "table_cannot_check.md:7: the row backend=ours_compile "
                "phase=decode batch=64 has no number in pct_of_torch_compile", "table_cannot_check.md:8: matches no row"]
    if rc != 1 or any(e not in out for e in expected):
        problems.append("table_cannot_check.md: a wrong number, a placeholder, an unknown column, several rows, "
                        "an empty cell and no row must each fail, named")
    with tempfile.TemporaryDirectory() as tmp:
        page = pathlib.Path(tmp) / "table_placeholders.md"
        shutil.copy(fixtures / "table_placeholders.md", page)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = checker.main(["--root", str(fixtures), "--fill", str(page)])
        print(f"--- --fill table_placeholders.md: exit {rc}\n{out.getvalue()}")
        text = page.read_text(encoding="utf-8")
        wanted = ["Prefill: 401,569<!--", "98.0%<!--", "\n103%<!--", ", 3<!--", "checked, not filled: 50.0%<!--",
                  "fill from: XX.X<!--"]
        if rc != 1 or any(w not in text for w in wanted) or "filled 4 placeholder(s)" not in out.getvalue():
            problems.append("--fill: 4 placeholders written as shown (separators, decimals), a written number and "
                            "a placeholder without a row left alone, and the check still fails on those two")
    for p in problems:
        print(f"FAIL: {p}")
    if not problems:
        print("PASS: the checker passes numbers that match their CSV and fails wrong numbers and bad tags")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
