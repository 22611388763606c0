#!/usr/bin/env python3
"""Checks that the code quoted on the pages is still the code of the repository.

    python3 tools/check_page_code.py [--root DIR] [PAGE ...]

A page quotes a source file with a marker on the line before a fenced block:

    <!-- code: chapters/10_hopper_persistent/tma_store.cuh -->
    ```cpp
    ...lines copied from that file...
    ```

Every non-blank line of the block, stripped of the whitespace around it, must be a line of that file
(also stripped), in the same order: the block is a subsequence of the file's lines. A line that is
exactly `// ...` is an elision and is skipped. "What changed from the step before" is a diff:

    <!-- diff: chapters/10_hopper_persistent/persistent.cuh chapters/10_hopper_persistent/tma_store.cuh -->
    ```diff
    - a line of the first file
    + a line of the second file
      a context line, in both
    ```

The `-` and context lines, in the order the block has them, must be a subsequence of the first file;
the `+` and context lines a subsequence of the second. `// ...` elides here too, and so does a hunk
header (`@@ ... @@`). Paths are relative to the repository root.

Pages: README.md, docs/*.md and chapters/*/README.md under --root (default: this repository), or the
PAGE arguments. For each excerpt that does not match, prints the page and line of the marker, the
file, and the first line of the block not found there (and whether that line is in the file at all,
out of order, or missing). Exit 0 when every excerpt matches, 1 when one does not, 2 on a malformed
marker (a marker without a fenced block after it, a file that does not exist). Standard library only.
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


class PageError(Exception):
    """A marker that cannot be checked (the message names the page and line)."""


def pages_of(root: pathlib.Path) -> list[pathlib.Path]:
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md")) + sorted((root / "chapters").glob("*/README.md"))
    return [p for p in pages if p.is_file()]


def excerpts(text: str, page: str):
    """Yields (line number of the marker, kind, [paths], [(line number, line) of the block]) for every
    marker of the page that is outside a fenced block (an example of the convention inside a code
    block is not a marker)."""
    lines = text.splitlines()
    i, fence = 0, None
    while i < len(lines):
        line = lines[i]
        f = FENCE.match(line)
        if fence is not None:  # inside a block that is not an excerpt
            if f and f.group(2)[0] == fence[0] and len(f.group(2)) >= len(fence) and not f.group(3).strip():
                fence = None
            i += 1
            continue
        if f:
            fence = f.group(2)
            i += 1
            continue
        m = MARKER.match(line)
        if not m:
            i += 1
            continue
        kind, paths, where = m.group(1), m.group(2).split(), i + 1
        if (kind == "code" and len(paths) != 1) or (kind == "diff" and len(paths) != 2):
            want = "one path" if kind == "code" else "two paths"
            raise PageError(f"{page}:{where}: '{kind}:' takes {want}, got {len(paths)}: {line.strip()}")
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        f = FENCE.match(lines[j]) if j < len(lines) else None
        if not f:
            raise PageError(f"{page}:{where}: '{kind}:' marker is not followed by a fenced block (```)")
        indent, open_fence, body = f.group(1), f.group(2), []
        j += 1
        while j < len(lines):
            c = FENCE.match(lines[j])
            if c and c.group(2)[0] == open_fence[0] and len(c.group(2)) >= len(open_fence) and not c.group(3).strip():
                break
            # A block indented under a list item: its lines lose that indentation (a diff's first
            # column is then its mark).
            body.append((j + 1, lines[j][len(indent):] if lines[j].startswith(indent) else lines[j].lstrip()))
            j += 1
        else:
            raise PageError(f"{page}:{where}: the fenced block after the '{kind}:' marker is never closed")
        yield where, kind, paths, body
        i = j + 1


def first_missing(wanted: list[tuple[int, str]], source: list[str]) -> tuple[int, str, bool] | None:
    """None when the stripped lines of `wanted` are a subsequence of `source` (stripped); else the first
    line that is not found after the lines before it: (its line number on the page, the line, whether
    it occurs in the file at all)."""
    pos = 0
    for number, line in wanted:
        try:
            pos = source.index(line, pos) + 1
        except ValueError:
            return number, line, line in source
    return None


def read_source(root: pathlib.Path, path: str, page: str, where: int) -> list[str]:
    f = root / path
    if not f.is_file():
        raise PageError(f"{page}:{where}: {path}: no such file (paths are relative to the repository root)")
    return [s.strip() for s in f.read_text(encoding="utf-8").splitlines()]


def check_excerpt(root: pathlib.Path, page: str, where: int, kind: str, paths: list[str],
                  body: list[tuple[int, str]]) -> list[str]:
    """The problems of one excerpt (empty when it matches)."""
    if kind == "code":
        wanted = [(n, s.strip()) for n, s in body if s.strip() and s.strip() != ELISION]
        sides = [(paths[0], wanted)]
    else:
        old, new = [], []
        for n, s in body:
            if not s.strip() or s.lstrip().startswith("@@"):
                continue
            mark, rest = s[0], s[1:].strip()
            if mark not in "-+ ":
                return [f"{page}:{where}: diff: line {n} starts with neither '-', '+' nor ' ': {s!r}"]
            if not rest or rest == ELISION:
                continue
            if mark in "- ":
                old.append((n, rest))
            if mark in "+ ":
                new.append((n, rest))
        sides = [(paths[0], old), (paths[1], new)]
    problems = []
    for path, wanted in sides:
        if not wanted:
            continue
        miss = first_missing(wanted, read_source(root, path, page, where))
        if miss is not None:
            number, line, anywhere = miss
            why = "is in the file, but not after the lines before it" if anywhere else "is not in the file"
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
    problems, count, failing, malformed = [], 0, 0, []
    for page in pages:
        try:
            name = page.relative_to(root).as_posix()
        except ValueError:
            name = str(page)
        try:
            for where, kind, paths, body in excerpts(page.read_text(encoding="utf-8"), name):
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
        print(f"check_page_code: {failing} of {count} excerpts no longer match their source "
              "(copy the lines again from the file, or fix the marker's path)")
        return 1
    print(f"check_page_code: {count} excerpts in {len(pages)} pages match their source files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
