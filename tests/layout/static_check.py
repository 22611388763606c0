#!/usr/bin/env python3
"""The layout library's compile-time rules, checked from one compile per file (tests/layout/CMakeLists.txt).

    static_check.py compile LOG COMPILER ARG... SOURCE   compile SOURCE with -DMM_ALL_CASES, its output to LOG
    static_check.py case LOG SOURCE CASE REGEX           CASE's rule broke: REGEX in an error its lines lead to
    static_check.py control LOG SOURCE                   no error outside the cases (the control compiles)

SOURCE holds each case in a block `#if defined(MM_CASE_<CASE>) || defined(MM_ALL_CASES)` ... `#endif`, and the
control outside them. An error belongs to the case whose lines its location or its "required from" chain
names; one that names no case's line (the control's, a header's own: a broken header) fails the control.
Each case was a compile of its own (-DMM_CASE_<CASE>, which still compiles that case alone): 14 compiles of
the same headers, 20.2 s of CPU on this machine against 3.4 s for the 2 compiles and 16 checks (2026-12-01).
"""
from __future__ import annotations

import pathlib
import re
import subprocess
import sys


def case_lines(source: pathlib.Path) -> dict[str, range]:
    """Each case's lines (1-based) in SOURCE: from its #if to its #endif."""
    cases: dict[str, range] = {}
    name, first = None, 0
    for n, line in enumerate(source.read_text(encoding="utf-8").splitlines(), start=1):
        m = re.match(r"#if defined\(MM_CASE_(\w+)\) \|\| defined\(MM_ALL_CASES\)", line)
        if m:
            name, first = m.group(1), n
        elif name and line.startswith("#endif"):
            cases[name] = range(first, n + 1)
            name = None
    return cases


def errors(log: str, source: pathlib.Path, cases: dict[str, range]) -> list[tuple[str | None, str]]:
    """(the case, or None, and the error's text) for each error of the log, in order."""
    at = re.compile(r"^(?:.*[/\\])?" + re.escape(source.name) + r":(\d+):\d+:")
    # GCC prints a context ("In instantiation of ...:", "In function ...:", the include chain) when it changes,
    # then the lines that lead there ("required from", "required from here"), then the context's errors and
    # notes (an error that follows another in the same context does not repeat them).
    context = re.compile(r"^In file included from |: In (?:instantiation of|function|member function|"
                         r"static member function|constructor|destructor|lambda function|substitution of) |"
                         r": At global scope:")
    found: list[tuple[str | None, str]] = []
    named: set[str] = set()  # the cases the lines of the current context name
    for line in log.splitlines():
        if context.search(line):
            named = set()
        m = at.match(line)
        if m:
            n = int(m.group(1))
            named |= {c for c, r in cases.items() if n in r}
        f = re.match(r"^.*In function '[^']*\bcase_(\w+)\(\)'", line)
        if f and f.group(1).upper() in cases:
            named.add(f.group(1).upper())
        if ": error: " in line or ": fatal error: " in line:
            found.append((next(iter(named)) if len(named) == 1 else None, line))
    return found


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "compile" and len(sys.argv) >= 5:
        log, cmd = pathlib.Path(sys.argv[2]), sys.argv[3:]
        r = subprocess.run(cmd[:-1] + ["-DMM_ALL_CASES", cmd[-1]], capture_output=True, text=True)
        log.write_text(r.stdout + r.stderr, encoding="utf-8")
        n = sum(": error: " in line for line in (r.stdout + r.stderr).splitlines())
        print(f"{cmd[-1]} with every case (-DMM_ALL_CASES): exit {r.returncode}, {n} errors, log {log}")
        return 0
    if mode in ("case", "control") and len(sys.argv) >= 4:
        log, source = pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
        cases = case_lines(source)
        found = errors(log.read_text(encoding="utf-8"), source, cases)
        if mode == "case":
            case, regex = sys.argv[4], sys.argv[5]
            if case not in cases:
                print(f"FAIL: no block `#if defined(MM_CASE_{case}) || defined(MM_ALL_CASES)` in {source}")
                return 1
            mine = [text for c, text in found if c == case]
            if any(re.search(regex, text) for text in mine):
                print(f"ok: MM_CASE_{case} (lines {cases[case].start}-{cases[case].stop - 1}) does not compile: "
                      f"{next(t for t in mine if re.search(regex, t))}")
                return 0
            print(f"FAIL: MM_CASE_{case} (lines {cases[case].start}-{cases[case].stop - 1} of {source}) must not "
                  f"compile, with an error matching \"{regex}\"; its errors:")
            print("\n".join(mine) or "  none (it compiles)")
            return 1
        stray = [text for c, text in found if c is None]
        if stray:
            print(f"FAIL: {source}'s control (the code outside the cases) must compile; errors outside the cases:")
            print("\n".join(stray))
            print(f"(whole log: {log})")
            return 1
        print(f"ok: no error outside the {len(cases)} cases of {source} ({len(found)} errors in them)")
        return 0
    print("\n".join(__doc__.strip().splitlines()[2:5]), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
