#!/usr/bin/env bash
# Session 2026-11-30m call 1 (issue 39): why ours_compile trails torch_compile at decode batch 1.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call1.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
TARGETS="gemm_ladder" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1; say "build rc=$? $(date +%T)"
export PYTHONPATH=python
mkdir -p "$OUT/l"
nproc >>"$S"; cat /proc/loadavg >>"$S"; grep -m1 "model name" /proc/cpuinfo >>"$S"
for m in "default torch" "default ours" "noasserts torch" "reduce-overhead torch"; do
  set -- $m
  start=$SECONDS
  timeout 170 python3 .carry/call/s13_diag39.py $1 $2 >"$OUT/l/diag_$1_$2.log" 2>&1
  say "diag $m rc=$? ($((SECONDS - start)) s)"
  grep -E "^$1 " "$OUT/l/diag_$1_$2.log" >>"$S"
  cat /proc/loadavg >>"$S"
done
tar czf "$OUT/logs1.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
