#!/usr/bin/env bash
# Session 2026-11-29i call 11: chapter 12's binary with all its kernels (appendix steps built) under memcheck, synccheck
# and racecheck in one run each, at ragged sizes.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call11.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$?"; tail -1 "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l"
b=build-dev/bin
for tool in memcheck synccheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 10 $b/ch12_hopper_datatypes --sizes 130x264x256,17x40x1024,67x136x2064,1x8x16 --reps 1 --warmup 0 >"$OUT/l/$tool.log" 2>&1
  say "$tool rc=$? | $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Internal' $OUT/l/$tool.log | tr '\n' ' ') | rows $(grep -cE '^(fp8|tf32|ch10|cuBLAS)' $OUT/l/$tool.log) | not ours: $(grep -E 'Race reported|Error' $OUT/l/$tool.log | grep -c nvjet) | ours: $(grep -E 'Race reported|Invalid|Error:' $OUT/l/$tool.log | grep -c gemm_device_kernel) | FAIL lines: $(grep -ciE 'fail|mismatch' $OUT/l/$tool.log)"
done
grep -hE "^(fp8|tf32|ch10)" $OUT/l/memcheck.log | awk '{print $1"@"$4}' | tr '\n' ' ' >>"$S"
tar czf "$OUT/logs11.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
