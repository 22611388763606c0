#!/usr/bin/env bash
# Session 2026-11-30k call 1: step 4 (the whole MoE pass): its GPU tests, the chapter's run with --moe, and the
# three sanitizers over a small --moe run (all its kernels: ours and the cuBLAS layers').
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call1.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
TARGETS="test_ch13 ch13_grouped_moe" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"
mkdir -p "$OUT/l"
timeout 200 build-dev/tests/ch13/test_ch13 --gtest_filter='*Moe*' >"$OUT/l/test_moe.log" 2>&1
say "test_ch13 Moe rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/l/test_moe.log | tr '\n' ' ') $(date +%T)"
grep -E "^\[  FAILED|Failure|error" -A3 "$OUT/l/test_moe.log" | head -30 >>"$S"
timeout 280 build-dev/bin/ch13_grouped_moe --moe --csv "$OUT/ch13_grouped_moe_layer.csv" >"$OUT/l/moe.log" 2>&1
say "moe rc=$? $(date +%T)"
cat "$OUT/l/moe.log" >>"$S"
for tool in memcheck synccheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --print-limit 5 build-dev/bin/ch13_grouped_moe --moe --model qwen3-30b-a3b \
    --tokens 300,40 --routing skewed --reps 1 --warmup 0 --no-roof >"$OUT/l/san_$tool.log" 2>&1
  say "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/l/san_$tool.log | tr '\n' ' ') $(date +%T)"
done
tail -50 "$OUT/logs/build.log" >"$OUT/l/build_tail.log" 2>/dev/null
tar czf "$OUT/logs1.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
