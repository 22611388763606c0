#!/usr/bin/env bash
# Session 2026-11-30k call 3: chapter 13's GPU tests after the split of step 4's tests; racecheck over this
# chapter's layer alone (every kernel of the pass: top-k, offsets, permute, grouped_swiglu, grouped down, combine).
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call3.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
TARGETS="test_ch13" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"
mkdir -p "$OUT/l"
timeout 200 build-dev/tests/ch13/test_ch13 >"$OUT/l/test_ch13.log" 2>&1
say "test_ch13 rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/l/test_ch13.log | tr '\n' ' ') $(date +%T)"
grep -E "^\[  FAILED" "$OUT/l/test_ch13.log" | head >>"$S"
timeout 340 compute-sanitizer --tool racecheck --print-limit 5 build-dev/tests/ch13/test_ch13 \
  --gtest_filter='*MoePass.EveryToken*:*MoePassRouting*' >"$OUT/l/san_race_ours.log" 2>&1
say "racecheck ours rc=$? $(grep -E 'RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $OUT/l/san_race_ours.log | tr '\n' ' ') $(date +%T)"
grep -E "^\[       OK|Error" "$OUT/l/san_race_ours.log" | head -20 >>"$S"
tar czf "$OUT/logs3.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
