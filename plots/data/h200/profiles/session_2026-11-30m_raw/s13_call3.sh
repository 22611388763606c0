#!/usr/bin/env bash
# Session 2026-11-30m call 3 (issue 39): the dense model, all seven backends, steps interleaved -> lib_model.csv.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call3.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
[ -f build-dev/lib/libgemm_ladder.so ] || { TARGETS="gemm_ladder" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1; say "build rc=$? $(date +%T)"; }
export PYTHONPATH=python
mkdir -p "$OUT/l"
start=$SECONDS
timeout 500 python3 python/examples/llama_decoder.py --csv "$OUT/lib_model.csv" >"$OUT/l/model.log" 2>&1
say "model rc=$? ($((SECONDS - start)) s) $(date +%T)"
grep -v "^W1130\|^V1130" "$OUT/l/model.log" | tail -26 >>"$S"
tar czf "$OUT/logs3.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
