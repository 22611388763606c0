#!/usr/bin/env bash
# Session 2026-11-30l call 2 (issue 39): host time per call of each way to run a linear (s12_bench39.py), and the
# compiled wrapper's code for torch's linear and gemm_ladder's (s12_code39.py). The build of call 1 is reused.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call2.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
[ -f build-dev/lib/libgemm_ladder.so ] || TARGETS="gemm_ladder" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
export PYTHONPATH=python
timeout 240 python3 .carry/call/s12_bench39.py >"$OUT/bench39.log" 2>&1; say "bench39 rc=$? $(date +%T)"
cat "$OUT/bench39.log" >>"$S"
TORCH_LOGS=output_code timeout 120 python3 .carry/call/s12_code39.py >"$OUT/code39.log" 2>&1; say "code39 rc=$? $(date +%T)"
rm -rf "$OUT/logs" "$OUT/data"
