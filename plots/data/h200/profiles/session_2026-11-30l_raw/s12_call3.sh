#!/usr/bin/env bash
# Session 2026-11-30l call 3 (issue 39): the trace of a compiled decode step at batch 1 (s12_trace39.py).
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call3.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
[ -f build-dev/lib/libgemm_ladder.so ] || { TARGETS="gemm_ladder" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1; say "build rc=$? $(date +%T)"; }
export PYTHONPATH=python
timeout 300 python3 .carry/call/s12_trace39.py >"$OUT/trace39.log" 2>&1; say "trace39 rc=$? $(date +%T)"
grep -v "^W1130\|^V1130" "$OUT/trace39.log" | tail -40 >>"$S"
rm -rf "$OUT/logs" "$OUT/data"
