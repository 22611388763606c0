#!/usr/bin/env bash
# Session 2026-11-30m call 5 (issue 39): throughput, 5 steps back to back a turn (--steps-per-turn 5), the dense
# model without max-autotune -> lib_model_throughput.csv; the timing's unit test.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call5.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
[ -f build-dev/lib/libgemm_ladder.so ] || { TARGETS="gemm_ladder" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1; say "build rc=$? $(date +%T)"; }
export PYTHONPATH=python
mkdir -p "$OUT/l"
start=$SECONDS
timeout 160 python3 python/examples/llama_decoder.py --skip-autotune --steps-per-turn 5 --reps 10 --csv "$OUT/lib_model_throughput.csv" >"$OUT/l/model.log" 2>&1
say "model rc=$? ($((SECONDS - start)) s) $(date +%T)"
grep -v "^W1130\|^V1130" "$OUT/l/model.log" | tail -22 >>"$S"
timeout 40 python3 python/tests/run_pytest.py python/tests/test_llama_decoder.py -k interleaved >"$OUT/l/pytest_ld.log" 2>&1
say "pytest -k interleaved rc=$?: $(grep -E 'passed|failed|error' "$OUT/l/pytest_ld.log" | tail -1)"
tar czf "$OUT/logs5.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
