#!/usr/bin/env bash
# Session 2026-11-30l call 6 (issue 36): the 104-shape suite in RCR with short_slices_decode (every_shape beside
# cuBLAS, one process), the RRR order unchanged by the rule (tests: choose() sends RRR to any_shape's path).
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call6.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
[ -x build-dev/bin/ch11_every_shape ] || { TARGETS="ch11_every_shape" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1; say "build rc=$? $(date +%T)"; }
start=$SECONDS
timeout 300 build-dev/bin/ch11_every_shape --kernel every_shape --layout RCR --csv "$OUT/suite_rcr.csv" >"$OUT/suite_rcr.log" 2>&1
say "suite RCR rc=$? ($((SECONDS - start)) s) $(date +%T)"
grep -E "64x11008x4096|mismatch|FAIL" "$OUT/suite_rcr.log" | head >>"$S"
