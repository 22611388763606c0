#!/usr/bin/env python3
"""The end of scripts/test.sh: what ran, what passed, what was skipped and why, what failed.

    python3 scripts/test_summary.py build/ctest-junit.xml

Reads the JUnit file that `ctest --output-junit` writes (CMake 3.21+; standard library only). A skipped
test is one CTest reports as skipped: a GoogleTest GTEST_SKIP (CMake's GoogleTest module marks those
with SKIP_REGULAR_EXPRESSION) or a script's exit code 77 (SKIP_RETURN_CODE). Its reason is read from
its output: GoogleTest's line after "Skipped" (tests/gpu_test.hpp: "needs a CUDA GPU: ...", "needs
sm_90a, this GPU is sm_80", "needs sm_90a, but this build has no sm_90a code ..."), a script's
"SKIP: ..." line. Reasons are grouped (no GPU; the GPU lacks the architecture; the build lacks its
code; a missing tool; no torch, for the Python package's torch tests; no matplotlib, offline, for the plot tests that draw; not the pinned matplotlib;
other) and each group lists its distinct reasons.
A test CTest could not run (its executable missing, say) counts as failed, as CTest counts it.
The last line is "tests: N passed, N failed, N skipped". Exit status: 0.
"""

import collections
import re
import sys
import xml.etree.ElementTree as ET

SKIP_MESSAGES = ("SKIP_REGULAR_EXPRESSION_MATCHED", "Disabled")

# (group, pattern on the reason), first match wins.
GROUPS = [
    ("no GPU", re.compile(r"needs a CUDA GPU|no CUDA GPU")),
    ("this GPU lacks the architecture or feature", re.compile(r"this GPU is sm_|this GPU allows|need sm_\d")),
    ("this build has no code for this GPU", re.compile(r"this build has no")),
    ("missing tool", re.compile(r"missing tool|cuobjdump|nvdisasm|pytest is not importable")),
    ("no torch", re.compile(r"needs torch")),
    ("no matplotlib", re.compile(r"matplotlib is not importable")),
    ("not the pinned matplotlib", re.compile(r"matplotlib")),
]


def skip_reason(output: str) -> str:
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.rstrip().endswith(": Skipped") or line.strip() == "Skipped":
            for nxt in lines[i + 1:]:
                if nxt.strip():
                    return nxt.strip()
    for line in lines:
        m = re.match(r"\s*SKIP:\s*(.*)", line)
        if m:
            return m.group(1).strip()
    for line in lines:
        if line.strip() and not line.startswith(("Running main()", "Note: Google Test filter", "[")):
            return line.strip()
    return "no reason given"


def group_of(reason: str) -> str:
    for name, pattern in GROUPS:
        if pattern.search(reason):
            return name
    return "other"


def shorten(text: str, width: int = 150) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: test_summary.py JUNIT_XML", file=sys.stderr)
        return 2
    try:
        root = ET.parse(sys.argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"test summary: cannot read {sys.argv[1]}: {e}")
        return 0
    passed, failed = [], []
    skipped = collections.defaultdict(collections.Counter)  # group -> reason -> count
    n_skipped = 0
    for case in root.iter("testcase"):
        name = case.get("name", "?")
        status = case.get("status", "")
        out = case.findtext("system-out") or ""
        skip = case.find("skipped")
        if status == "run":
            passed.append(name)
        elif status == "notrun" and skip is not None and (
                skip.get("message", "") in SKIP_MESSAGES or skip.get("message", "").startswith("SKIP_RETURN_CODE")):
            reason = skip_reason(out)
            skipped[group_of(reason)][reason] += 1
            n_skipped += 1
        else:
            why = skip.get("message") if skip is not None else (case.find("failure").get("message", "")
                                                                 if case.find("failure") is not None else status)
            failed.append((name, why or status))
    total = len(passed) + len(failed) + n_skipped
    print(f"\n==> test summary: {total} tests")
    print(f"  ran and passed: {len(passed):6d}")
    print(f"  skipped:        {n_skipped:6d}")
    order = [g for g, _ in GROUPS] + ["other"]
    for group in sorted(skipped, key=order.index):
        reasons = skipped[group]
        print(f"    {sum(reasons.values()):6d}  {group}")
        for reason, count in reasons.most_common(4):
            print(f"            {count:6d} x {shorten(reason)}")
        if len(reasons) > 4:
            print(f"            ... and {len(reasons) - 4} other reasons")
    print(f"  failed:         {len(failed):6d}")
    for name, why in failed[:20]:
        print(f"            {name}{f' ({why})' if why and why not in ('fail',) else ''}")
    if len(failed) > 20:
        print(f"            ... and {len(failed) - 20} more (ctest's list above)")
    print(f"tests: {len(passed)} passed, {len(failed)} failed, {n_skipped} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
