#!/usr/bin/env bash
# Session 2026-11-30l call 5 (issue 39): the dense model, every backend in turn over 3 rounds (lib_model.csv);
# test_llama_decoder (run_model of an eager runner fixed).
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call5.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
[ -f build-dev/lib/libgemm_ladder.so ] || { TARGETS="gemm_ladder" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1; say "build rc=$? $(date +%T)"; }
export PYTHONPATH=python
mkdir -p "$OUT/l"
start=$SECONDS
timeout 420 python3 python/examples/llama_decoder.py --csv "$OUT/lib_model.csv" >"$OUT/l/model.log" 2>&1
say "model rc=$? ($((SECONDS - start)) s) $(date +%T)"
grep -v "^W1130\|^V1130" "$OUT/l/model.log" | tail -22 >>"$S"
start=$SECONDS
timeout 150 python3 python/tests/run_pytest.py python/tests/test_llama_decoder.py >"$OUT/l/pytest_ld.log" 2>&1
say "pytest test_llama_decoder rc=$? ($((SECONDS - start)) s): $(grep -E 'passed|failed|error' "$OUT/l/pytest_ld.log" | tail -1)"
grep -E "^FAILED|^ERROR|Error:" "$OUT/l/pytest_ld.log" | head -8 >>"$S"
tar czf "$OUT/logs5.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
