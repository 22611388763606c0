"""CTest pages.code_check_selftest: tools/check_page_code.py can fail.

    python check_page_code_selftest.py REPO_ROOT

Runs the checker on the fixtures of tests/pages/fixtures (a tiny source file in two versions and six
pages) and expects: in_sync.md passes (an excerpt with an elision, an indented diff, an example of the
convention inside a code block that is not checked, a C++ sketch marked `code: none`, a bash block and
a diagram without a marker); stale.md fails naming its stale line; stale_diff.md fails naming the '+'
line missing from the second file and the '-' line out of order in the first; noncontiguous.md fails
on an excerpt and on both sides of a diff that leave out a line of their file without a `// ...`;
unmarked.md fails on a cpp block and on an untagged block of C++, neither with a marker; malformed.md
(a marker without a block) exits 2. Standard library only.
"""

import pathlib
import subprocess
import sys


def run(repo: pathlib.Path, page: str):
    fixtures = repo / "tests" / "pages" / "fixtures"
    r = subprocess.run([sys.executable, str(repo / "tools" / "check_page_code.py"), "--root", str(fixtures),
                        str(fixtures / page)], capture_output=True, text=True)
    print(f"--- {page}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    return r.returncode, r.stdout


def main() -> int:
    repo = pathlib.Path(sys.argv[1])
    problems = []
    rc, out = run(repo, "in_sync.md")
    if rc != 0 or "2 excerpts" not in out or "1 blocks marked 'code: none'" not in out:
        problems.append("in_sync.md: two matching excerpts, a 'code: none' sketch, a bash block and a diagram should pass")
    rc, out = run(repo, "stale.md")
    if rc != 1 or "stale.md:3:" not in out or "x[i] *= 2.0f;" not in out:
        problems.append("stale.md: a stale excerpt must fail (exit 1), naming its marker and the line not found")
    rc, out = run(repo, "stale_diff.md")
    if rc != 1 or "x[i] *= 3.0f;" not in out or "not after the lines before it" not in out:
        problems.append("stale_diff.md: a stale diff must fail on its '+' line and its out-of-order '-' lines")
    rc, out = run(repo, "noncontiguous.md")
    if (rc != 1 or "2 of 2 excerpts" not in out or out.count("not right after the line before it") != 3
            or "x[i] *= factor;" not in out):
        problems.append("noncontiguous.md: an excerpt and a diff (both sides) that skip a line without "
                        "'// ...' must fail (exit 1)")
    rc, out = run(repo, "unmarked.md")
    if rc != 1 or "unmarked.md:3:" not in out or "unmarked.md:7:" not in out or "2 C++ block(s) without a marker" not in out:
        problems.append("unmarked.md: a cpp block and an untagged C++ block without a marker must fail (exit 1)")
    rc, out = run(repo, "malformed.md")
    if rc != 2 or "not followed by a fenced block" not in out:
        problems.append("malformed.md: a marker without a block must exit 2")
    for p in problems:
        print(f"FAIL: {p}")
    if not problems:
        print("PASS: the checker passes excerpts in sync and fails stale, non-contiguous and unmarked ones")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
