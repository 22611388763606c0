#!/usr/bin/env bash
# Session 2026-11-30m call 2 (issue 39): grouped_mm's zero_fill, the model's interleaved timing and CUDA-graph
# backends: pytest of the changed files, then the MoE model (--skip-autotune) -> lib_model_moe.csv.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call2.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
TARGETS="gemm_ladder" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1; say "build rc=$? $(date +%T)"
export PYTHONPATH=python
mkdir -p "$OUT/l"
for f in test_grouped_gpu test_grouped_args test_llama_decoder; do
  start=$SECONDS
  timeout 240 python3 python/tests/run_pytest.py python/tests/$f.py >"$OUT/l/pytest_$f.log" 2>&1
  say "pytest $f rc=$? ($((SECONDS - start)) s): $(grep -E 'passed|failed|error' "$OUT/l/pytest_$f.log" | tail -1)"
  grep -E "^FAILED|^ERROR|Error:|assert" "$OUT/l/pytest_$f.log" | head -8 >>"$S"
done
start=$SECONDS
timeout 300 python3 python/examples/llama_decoder.py --moe --skip-autotune --csv "$OUT/lib_model_moe.csv" >"$OUT/l/moe.log" 2>&1
say "moe model rc=$? ($((SECONDS - start)) s) $(date +%T)"
grep -v "^W1130\|^V1130" "$OUT/l/moe.log" | tail -24 >>"$S"
tar czf "$OUT/logs2.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
