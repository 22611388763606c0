#!/usr/bin/env bash
# Session 2026-11-30k call 7: step 5b (grouped_fp8_64 at decode; graph replay tests): chapter 13's GPU tests, two rounds of --fp8, and the three
# sanitizers over a small --fp8 run (grouped_fp8 and chapter 12's dense kernel, no cuBLAS).
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call7.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
TARGETS="test_ch13 ch13_grouped_moe" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"
mkdir -p "$OUT/l"
tail -30 "$OUT/logs/build.log" >"$OUT/l/build_tail.log" 2>/dev/null
timeout 200 build-dev/tests/ch13/test_ch13 >"$OUT/l/test_ch13.log" 2>&1
say "test_ch13 rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/l/test_ch13.log | tr '\n' ' ') $(date +%T)"
grep -E "^\[  FAILED|Failure" -A4 "$OUT/l/test_ch13.log" | head -30 >>"$S"
for r in 1 2; do
  timeout 150 build-dev/bin/ch13_grouped_moe --fp8 --csv "$OUT/ch13_grouped_moe_fp8_r$r.csv" >"$OUT/l/fp8_r$r.log" 2>&1
  say "fp8 round $r rc=$? $(date +%T)"
done
cat "$OUT/l/fp8_r1.log" >>"$S"
for tool in memcheck synccheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --print-limit 5 build-dev/bin/ch13_grouped_moe --fp8 --model qwen3-30b-a3b \
    --tokens 300,40 --routing skewed --reps 1 --warmup 0 --no-roof >"$OUT/l/san_$tool.log" 2>&1
  say "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/l/san_$tool.log | tr '\n' ' ') $(date +%T)"
done
timeout 150 compute-sanitizer --tool racecheck --print-limit 5 build-dev/tests/ch13/test_ch13 --gtest_filter='*Graph*:*GroupedFp8*' >"$OUT/l/san_race_tests.log" 2>&1
say "racecheck tests rc=$? $(grep -E 'RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $OUT/l/san_race_tests.log | tr '\n' ' ') $(date +%T)"
timeout 150 compute-sanitizer --tool memcheck --print-limit 5 build-dev/tests/ch13/test_ch13 --gtest_filter='*Graph*:*GroupedFp8*' >"$OUT/l/san_mem_tests.log" 2>&1
say "memcheck tests rc=$? $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' $OUT/l/san_mem_tests.log | tr '\n' ' ') $(date +%T)"
tar czf "$OUT/logs7.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
