#!/usr/bin/env bash
# Session 2026-11-30k call 2: step 4 with the per-step times (parts): three rounds of --moe; racecheck of the
# MoE pass again (call 1's exited non-zero with no output): the tests of step 4 under it, and the binary at 40 tokens.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call2.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
TARGETS="test_ch13 ch13_grouped_moe" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"
mkdir -p "$OUT/l"
for r in 1 2 3; do
  timeout 150 build-dev/bin/ch13_grouped_moe --moe --csv "$OUT/ch13_grouped_moe_layer_r$r.csv" >"$OUT/l/moe_r$r.log" 2>&1
  say "moe round $r rc=$? $(date +%T)"
  sleep 5
done
cat "$OUT/l/moe_r1.log" >>"$S"
timeout 170 compute-sanitizer --tool racecheck --print-limit 5 build-dev/tests/ch13/test_ch13 --gtest_filter='*MoePass*' >"$OUT/l/san_race_tests.log" 2>&1
say "racecheck tests rc=$? $(grep -E 'RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $OUT/l/san_race_tests.log | tr '\n' ' ') $(date +%T)"
grep -E "hazard|Error|kernel" "$OUT/l/san_race_tests.log" | sort | uniq -c | sort -rn | head -10 >>"$S"
timeout 170 compute-sanitizer --tool racecheck --print-limit 5 build-dev/bin/ch13_grouped_moe --moe --model qwen3-30b-a3b \
  --tokens 40 --routing skewed --reps 1 --warmup 0 --no-roof >"$OUT/l/san_race_bin.log" 2>&1
say "racecheck binary rc=$? $(date +%T)"
head -c 4000 "$OUT/l/san_race_bin.log" >>"$S"
tail -50 "$OUT/logs/build.log" >"$OUT/l/build_tail.log" 2>/dev/null
tar czf "$OUT/logs2.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
