#!/usr/bin/env bash
# Session 2026-11-30m call 4 (issue 39): each timed step from an idle GPU; the dense model (all seven backends)
# -> lib_model.csv, the MoE model (--skip-autotune) -> lib_model_moe.csv.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call4.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
[ -f build-dev/lib/libgemm_ladder.so ] || { TARGETS="gemm_ladder" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1; say "build rc=$? $(date +%T)"; }
export PYTHONPATH=python
mkdir -p "$OUT/l"
start=$SECONDS
timeout 330 python3 python/examples/llama_decoder.py --csv "$OUT/lib_model.csv" >"$OUT/l/model.log" 2>&1
say "model rc=$? ($((SECONDS - start)) s) $(date +%T)"
grep -v "^W1130\|^V1130" "$OUT/l/model.log" | tail -24 >>"$S"
start=$SECONDS
timeout 170 python3 python/examples/llama_decoder.py --moe --skip-autotune --csv "$OUT/lib_model_moe.csv" >"$OUT/l/moe.log" 2>&1
say "moe model rc=$? ($((SECONDS - start)) s) $(date +%T)"
grep -v "^W1130\|^V1130" "$OUT/l/moe.log" | tail -21 >>"$S"
timeout 60 python3 python/tests/run_pytest.py python/tests/test_llama_decoder.py -k interleaved >"$OUT/l/pytest_ld.log" 2>&1
say "pytest -k interleaved rc=$?: $(grep -E 'passed|failed|error' "$OUT/l/pytest_ld.log" | tail -1)"
tar czf "$OUT/logs4.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
