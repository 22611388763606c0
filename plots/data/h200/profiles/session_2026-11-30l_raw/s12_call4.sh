#!/usr/bin/env bash
# Session 2026-11-30l call 4 (issue 39): the library's CUDA-graph capture (test_lib, the pytest GPU files), the
# eager calls through the C++ operators, llama_decoder's rounds (its tests), and bench39 again (the eager path).
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call4.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
TARGETS="gemm_ladder test_lib" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"; grep "build build-dev" "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l"
timeout 240 build-dev/tests/lib/test_lib >"$OUT/l/test_lib.log" 2>&1
say "test_lib rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/l/test_lib.log | tr '\n' ' ') $(date +%T)"
grep -E "^\[  FAILED|Failure" -A6 "$OUT/l/test_lib.log" | head -30 >>"$S"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 5 build-dev/tests/lib/test_lib --gtest_filter='*Captured*:*Cache*' >"$OUT/l/san_lib.log" 2>&1
say "memcheck test_lib capture/cache rc=$? $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' $OUT/l/san_lib.log | tr '\n' ' ')"
export PYTHONPATH=python
for f in test_gpu test_args test_torch_cpu test_grouped_gpu test_grouped_args test_llama_decoder; do
  start=$SECONDS
  timeout 400 python3 python/tests/run_pytest.py python/tests/$f.py >"$OUT/l/pytest_$f.log" 2>&1
  say "pytest $f rc=$? ($((SECONDS - start)) s): $(grep -E 'passed|failed|error' "$OUT/l/pytest_$f.log" | tail -1)"
  grep -E "^FAILED|^ERROR|Error:" "$OUT/l/pytest_$f.log" | head -8 >>"$S"
done
timeout 200 python3 .carry/call/s12_bench39.py >"$OUT/l/bench39.log" 2>&1; say "bench39 rc=$? $(date +%T)"
cat "$OUT/l/bench39.log" >>"$S"
tar czf "$OUT/logs4.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
