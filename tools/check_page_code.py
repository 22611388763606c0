#!/usr/bin/env python3
"""Checks that the code quoted on the pages is still the code of the repository.

    python3 tools/check_page_code.py [--root DIR] [PAGE ...]

A page quotes a source file with a marker on the line before a fenced block:

    <!-- code: chapters/10_hopper_persistent/tma_store.cuh -->
    ```cpp
    ...lines copied from that file...
    ```

How a block is compared with its file. Both are normalized the same way: each line is stripped of the
whitespace around it (so the page may indent a block differently from the file, or put it under a list
item), and blank lines are dropped on both sides (a blank line is not a line of code). A line of the
block that is exactly `// ...` is an elision: it splits the block into runs. Each run must be a
contiguous run of the file's lines, and the runs must come in the file's order, each after the one
before. So a block without an elision is one piece of the file as it stands; a page that leaves lines
out says so with `// ...` where they were.

"What changed from the step before" is a diff:

    <!-- diff: chapters/10_hopper_persistent/persistent.cuh chapters/10_hopper_persistent/tma_store.cuh -->
    ```diff
    - a line of the first file
    + a line of the second file
      a context line, in both
    ```

A diff has two sides, read as a unified diff reads them: the `-` and context lines, in the block's
order, are the first file's side; the `+` and context lines are the second file's. Each side is split
into runs by elisions (a line whose text after its mark is `// ...`) and by hunk headers (`@@ ... @@`),
and each run must be a contiguous run of its file, in order, as above. Paths are relative to the
repository root.

Every fenced block on a page is accounted for. A block that holds C++ or CUDA (language `cpp`, `c++`,
`cuda`, `cu`, `c`, `h`, `hpp`, `cuh`, or `diff`; or no language and a line that reads like C++: one that
ends with `;` or `{` before any `//` comment, or starts with `#include`, `#define`, `template <`,
`__global__`, `__device__`) must have a marker before it: `code:` or `diff:` when it is the
repository's code, or `<!-- code: none -->` when it is not (an illustration, a sketch in CuTe's
names, code written for the page). An unmarked one is an error. Blocks of other languages (`bash`,
`sh`, `text`, `markdown`) and untagged diagrams need no marker; `code: none` before them is allowed. A
block inside another fenced block (an example of the convention, as above) is text, not a block.

Pages: README.md, docs/*.md and chapters/*/README.md under --root (default: this repository), or the
PAGE arguments. For each excerpt that does not match, prints the page and line of the marker, the
file, and the first line of the block not found where it should be (and whether that line is in the
file at all, out of order, or not right after the line before it in its run). Exit 0 when every
excerpt matches and every C++ block is marked, 1 when one does not match or a C++ block has no marker,
2 on a malformed marker (a marker without a fenced block after it, a file that does not exist).
Standard library only.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^\s*<!--\s*(code|diff):\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
ELISION = "// ..."
NONE = "none"  # <!-- code: none -->: a block that is not the repository's code
# Languages whose blocks must carry a marker (compared lower-case).
CODE_LANGUAGES = {"cpp", "c++", "cuda", "cu", "c", "h", "hpp", "cuh", "diff"}
# A line of an untagged block that reads like C++ (a diagram or a formula has none of these).
LOOKS_LIKE_CODE = re.compile(r"^\s*(#include|#define|template\s*<|__global__|__device__)")
ENDS_LIKE_CODE = re.compile(r"[;{]\s*$")


class PageError(Exception):
    """A marker that cannot be checked (the message names the page and line)."""


def pages_of(root: pathlib.Path) -> list[pathlib.Path]:
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md")) + sorted((root / "chapters").glob("*/README.md"))
    return [p for p in pages if p.is_file()]


def closes(line: str, open_fence: str) -> bool:
    c = FENCE.match(line)
    return bool(c and c.group(2)[0] == open_fence[0] and len(c.group(2)) >= len(open_fence) and not c.group(3).strip())


def needs_marker(info: str, body: list[str]) -> bool:
    """Whether a block with this info string and these lines is C++ that must be accounted for."""
    words = info.strip().split()
    language = words[0].lower().strip("{}.") if words else ""
    if language:
        return language in CODE_LANGUAGES
    for line in body:
        code = line.split("//", 1)[0]
        if LOOKS_LIKE_CODE.match(line) or (code.strip() and ENDS_LIKE_CODE.search(code)):
            return True
    return False


def blocks(text: str, page: str):
    """Yields (line number of the marker or of the block, kind, [paths], [(line number, line) of the
    block]) for every top-level fenced block of the page: kind is "code" or "diff" for an excerpt,
    "none" for a block marked `code: none`, "unmarked" for a C++ block without a marker. Blocks that
    need no marker and have none are not yielded. A marker inside a fenced block is text."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = MARKER.match(line)
        f = FENCE.match(line)
        if not m and not f:
            i += 1
            continue
        if m:
            kind, paths, where = m.group(1), m.group(2).split(), i + 1
            if kind == "code" and paths == [NONE]:
                kind = NONE
            elif (kind == "code" and len(paths) != 1) or (kind == "diff" and len(paths) != 2):
                want = "one path (or 'none')" if kind == "code" else "two paths"
                raise PageError(f"{page}:{where}: '{kind}:' takes {want}, got {len(paths)}: {line.strip()}")
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            f = FENCE.match(lines[j]) if j < len(lines) else None
            if not f:
                raise PageError(f"{page}:{where}: '{kind if kind != NONE else 'code'}:' marker is not "
                                "followed by a fenced block (```)")
        else:
            kind, paths, where, j = None, [], i + 1, i
        indent, open_fence, info, body = f.group(1), f.group(2), f.group(3), []
        j += 1
        while j < len(lines) and not closes(lines[j], open_fence):
            # A block indented under a list item: its lines lose that indentation (a diff's first
            # column is then its mark).
            body.append((j + 1, lines[j][len(indent):] if lines[j].startswith(indent) else lines[j].lstrip()))
            j += 1
        if j == len(lines):
            what = f"the fenced block after the '{kind}:' marker" if kind else "a fenced block"
            raise PageError(f"{page}:{where}: {what} is never closed")
        if kind is None and needs_marker(info, [s for _, s in body]):
            kind = "unmarked"
        if kind is not None:
            yield where, kind, paths, body
        i = j + 1


def runs(lines: list[tuple[int, str | None]]) -> list[list[tuple[int, str]]]:
    """Splits (line number, stripped line) pairs at the elisions (a line None) into runs."""
    out: list[list[tuple[int, str]]] = [[]]
    for number, line in lines:
        if line is None:
            out.append([])
        else:
            out[-1].append((number, line))
    return [r for r in out if r]


def find_run(source: list[str], run: list[str], start: int) -> int | None:
    """The first index >= start where `run` is a contiguous run of `source`, else None."""
    n = len(run)
    for p in range(start, len(source) - n + 1):
        if source[p:p + n] == run:
            return p
    return None


def first_missing(pieces: list[list[tuple[int, str]]], source: list[str]) -> tuple[int, str, str] | None:
    """None when every run of `pieces` is a contiguous run of `source`, in order; else the first line that
    breaks this: (its line number on the page, the line, why). The earliest place of each run is the
    right one to take: it leaves the most of the file for the runs after it."""
    pos = 0
    for piece in pieces:
        text = [s for _, s in piece]
        at = find_run(source, text, pos)
        if at is not None:
            pos = at + len(text)
            continue
        # The longest head of the run found together after `pos` points at the line that breaks it.
        k = 1
        while k < len(text) and find_run(source, text[:k + 1], pos) is not None:
            k += 1
        if find_run(source, text[:1], pos) is None:
            k = 0
        number, line = piece[k]
        head_end = pos if k == 0 else find_run(source, text[:k], pos) + k
        if line not in source:
            why = "is not in the file"
        elif line not in source[head_end:]:
            why = "is in the file, but not after the lines before it"
        else:
            why = ("is in the file, but not right after the line before it (the lines between two "
                   "'// ...' must be a contiguous run of the file: add '// ...' where the page leaves lines out)")
        return number, line, why
    return None


def read_source(root: pathlib.Path, path: str, page: str, where: int) -> list[str]:
    """The file's lines, stripped, blank lines dropped (the normalization the blocks get)."""
    f = root / path
    if not f.is_file():
        raise PageError(f"{page}:{where}: {path}: no such file (paths are relative to the repository root)")
    return [s.strip() for s in f.read_text(encoding="utf-8").splitlines() if s.strip()]


def check_excerpt(root: pathlib.Path, page: str, where: int, kind: str, paths: list[str],
                  body: list[tuple[int, str]]) -> list[str]:
    """The problems of one excerpt (empty when it matches)."""
    if kind == "code":
        lines = [(n, None if s.strip() == ELISION else s.strip()) for n, s in body if s.strip()]
        sides = [(paths[0], runs(lines))]
    else:
        old: list[tuple[int, str | None]] = []
        new: list[tuple[int, str | None]] = []
        for n, s in body:
            if not s.strip():
                continue
            if s.lstrip().startswith("@@"):  # a hunk header: both sides jump
                old.append((n, None))
                new.append((n, None))
                continue
            mark, rest = s[0], s[1:].strip()
            if mark not in "-+ ":
                return [f"{page}:{where}: diff: line {n} starts with neither '-', '+' nor ' ': {s!r}"]
            if not rest:
                continue
            if rest == ELISION:
                old.append((n, None))
                new.append((n, None))
                continue
            if mark in "- ":
                old.append((n, rest))
            if mark in "+ ":
                new.append((n, rest))
        sides = [(paths[0], runs(old)), (paths[1], runs(new))]
    problems = []
    for path, pieces in sides:
        if not pieces:
            continue
        miss = first_missing(pieces, read_source(root, path, page, where))
        if miss is not None:
            number, line, why = miss
            problems.append(f"{page}:{where}: {kind}: {path}: line {number} of the page {why}:\n    {line}")
    return problems


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Check that the pages' code excerpts are still the repository's code.")
    p.add_argument("--root", type=pathlib.Path, default=REPO, help="repository root (default: this repository)")
    p.add_argument("pages", nargs="*", type=pathlib.Path,
                   help="pages to check (default: README.md, docs/*.md and chapters/*/README.md under --root)")
    args = p.parse_args(argv)
    root = args.root.resolve()
    pages = [pg.resolve() for pg in args.pages] if args.pages else pages_of(root)
    problems, count, failing, unmarked, illustrations, malformed = [], 0, 0, 0, 0, []
    for page in pages:
        try:
            name = page.relative_to(root).as_posix()
        except ValueError:
            name = str(page)
        try:
            for where, kind, paths, body in blocks(page.read_text(encoding="utf-8"), name):
                if kind == NONE:
                    illustrations += 1
                elif kind == "unmarked":
                    unmarked += 1
                    problems.append(f"{name}:{where}: a C++ block without a marker "
                                    "(<!-- code: FILE -->, <!-- diff: OLD NEW --> or <!-- code: none --> on the "
                                    "line before it)")
                else:
                    count += 1
                    found = check_excerpt(root, name, where, kind, paths, body)
                    failing += bool(found)
                    problems += found
        except PageError as e:
            malformed.append(str(e))
        except OSError as e:
            malformed.append(f"{name}: {e}")
    for line in malformed + problems:
        print(line)
    if malformed:
        print(f"check_page_code: {len(malformed)} malformed marker(s)")
        return 2
    if problems:
        what = []
        if failing:
            what.append(f"{failing} of {count} excerpts no longer match their source (copy the lines again "
                        "from the file, mark what the page leaves out with '// ...', or fix the marker's path)")
        if unmarked:
            what.append(f"{unmarked} C++ block(s) without a marker")
        print("check_page_code: " + "; ".join(what))
        return 1
    print(f"check_page_code: {count} excerpts in {len(pages)} pages match their source files; "
          f"{illustrations} blocks marked 'code: none'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
