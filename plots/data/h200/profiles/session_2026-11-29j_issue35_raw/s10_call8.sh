#!/usr/bin/env bash
# Session 2026-11-29j call 8: chapter 11's binary, all its main steps, under racecheck in one run at 1032x2112x1024
# and 96x2112x7168 (does its stream_k trap in a full run, as chapter 12's appendix stream-K did?). Watchdog at 60 s.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call8.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
TARGETS="ch11_every_shape" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"
rm -rf "$OUT/l"; mkdir -p "$OUT/l"
b=build-dev/bin
MM_WATCHDOG_SECONDS=60 timeout 420 compute-sanitizer --tool racecheck --print-limit 20 $b/ch11_every_shape --sizes 1032x2112x1024,96x2112x7168 --reps 1 --warmup 0 >"$OUT/l/racecheck11.log" 2>&1
say "racecheck ch11 rc=$? $(grep -E 'RACECHECK SUMMARY' $OUT/l/racecheck11.log | tail -1) $(grep -oE 'watchdog: .*' $OUT/l/racecheck11.log | head -1) $(date +%T)"
grep -E "Race reported" "$OUT/l/racecheck11.log" | grep -oE "at [A-Za-z0-9_]+" | sort | uniq -c >>"$S"
grep -cE "^[a-z_0-9]+ +bf16" "$OUT/l/racecheck11.log" >>"$S"
grep -E "stream_k|not run|failed" "$OUT/l/racecheck11.log" | head -8 >>"$S"
tar czf "$OUT/logs8.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
