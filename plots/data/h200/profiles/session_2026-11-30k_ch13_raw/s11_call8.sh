#!/usr/bin/env bash
# Session 2026-11-30k call 8: check_grouped_layout's test (bad device layouts named; the kernel stays in its buffers)
# alone, under memcheck, and chapter 13's whole test binary once more.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call8.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
TARGETS="test_ch13" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"
mkdir -p "$OUT/l"
timeout 200 build-dev/tests/ch13/test_ch13 >"$OUT/l/test_ch13.log" 2>&1
say "test_ch13 rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/l/test_ch13.log | tr '\n' ' ') $(date +%T)"
grep -E "^\[  FAILED|Failure" -A5 "$OUT/l/test_ch13.log" | head -30 >>"$S"
timeout 120 compute-sanitizer --tool memcheck --print-limit 5 build-dev/tests/ch13/test_ch13 --gtest_filter='*LayoutCheck*' >"$OUT/l/san_mem.log" 2>&1
say "memcheck LayoutCheck rc=$? $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' $OUT/l/san_mem.log | tr '\n' ' ') $(date +%T)"
tar czf "$OUT/logs8.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
