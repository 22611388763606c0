#!/usr/bin/env bash
# Session 2026-11-29j call 5 (main with the cluster blocks): chapter 12's binary with all its kernels (the appendix's
# cluster steps included) under memcheck, synccheck and racecheck (no kernel filter) at ragged sizes, one run each.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call5.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"
rm -rf "$OUT/l"; mkdir -p "$OUT/l"
b=build-dev/bin
SZ=1032x2112x1024,96x2112x7168,260x520x4240,64x2112x1024
for tool in memcheck synccheck racecheck; do
  timeout 300 compute-sanitizer --tool $tool --print-limit 20 $b/ch12_hopper_datatypes --sizes $SZ --reps 1 --warmup 0 >"$OUT/l/$tool.log" 2>&1
  say "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/l/$tool.log | tail -1) $(date +%T)"
  grep -E "^\s*(FAIL|fail)|not run|mismatch" "$OUT/l/$tool.log" | head -5 >>"$S"
  grep -E "Race reported|Invalid|Barrier error" -A3 "$OUT/l/$tool.log" | grep -oE "in (void )?[a-zA-Z_:<]+[a-z_]+" | sort | uniq -c | head -8 >>"$S"
  grep -cE "^\S+ .*(ok|OK)" "$OUT/l/$tool.log" >>"$S"
done
grep -E "cluster" "$OUT/l/memcheck.log" | head -12 >>"$S"
tar czf "$OUT/logs5.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
