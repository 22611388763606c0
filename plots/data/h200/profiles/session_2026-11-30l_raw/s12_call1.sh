#!/usr/bin/env bash
# Session 2026-11-30l call 1: (a) last session's unverified review (--fp8 and GroupedFp8 on the harness's block
# scales) and this session's router_score (one function for route_kernel and the MoE pass's router): test_ch13,
# two --fp8 rounds, the sanitizers on the router's tests; (b) issue 36: short_slices_decode in choose(): test_ch11,
# three rounds of every_shape / swap_ab / tile_64x256 at the shapes the rule moves and its neighbours;
# (c) issue 39: why decode at batch 1 trails (s12_diag39.py: cache hits, host issue time, profiler).
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call1.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch11_every_shape test_ch11 ch13_grouped_moe test_ch13 gemm_ladder" \
  bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"; tail -3 "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l" "$OUT/runs"
b=build-dev/bin
timeout 200 build-dev/tests/ch13/test_ch13 >"$OUT/l/test_ch13.log" 2>&1
say "test_ch13 rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/l/test_ch13.log | tr '\n' ' ') $(date +%T)"
grep -E "^\[  FAILED|Failure" -A5 "$OUT/l/test_ch13.log" | head -30 >>"$S"
for r in 1 2; do
  timeout 150 $b/ch13_grouped_moe --fp8 --csv "$OUT/runs/ch13_grouped_moe_fp8_r$r.csv" >"$OUT/l/fp8_r$r.log" 2>&1
  say "fp8 round $r rc=$? $(date +%T)"
done
grep -E "anchor|error|mismatch" "$OUT/l/fp8_r1.log" | head -5 >>"$S"
for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 5 build-dev/tests/ch13/test_ch13 \
    --gtest_filter='*MoePass.EveryToken*:*Routing*:*GroupedFp8*' >"$OUT/l/san_$tool.log" 2>&1
  say "$tool test_ch13 router/fp8 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $OUT/l/san_$tool.log | tr '\n' ' ') $(date +%T)"
done
timeout 240 build-dev/tests/ch11/test_ch11 >"$OUT/l/test_ch11.log" 2>&1
say "test_ch11 rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/l/test_ch11.log | tr '\n' ' ') $(date +%T)"
grep -E "^\[  FAILED|Failure" -A5 "$OUT/l/test_ch11.log" | head -30 >>"$S"
SZ=33x10240x4096,33x11008x4096,48x10240x4096,48x11008x4096,64x10240x4096,64x11008x4096,64x10240x8192,64x11008x8192,64x6144x4096,32x11008x4096,64x14336x4096
for r in 1 2 3; do
  timeout 90 $b/ch11_every_shape --kernel every_shape,swap_ab,tile_64x256 --sizes $SZ --csv "$OUT/runs/ch11_rule_r$r.csv" >"$OUT/l/rule_r$r.log" 2>&1
  say "ch11 rule round $r rc=$? $(date +%T)"
done
grep -E "every_shape" "$OUT/l/rule_r1.log" | head -14 >>"$S"
export PYTHONPATH=python
timeout 200 python3 .carry/call/s12_diag39.py 1 >"$OUT/l/diag39_b1.log" 2>&1
say "diag39 b1 rc=$? $(date +%T)"
grep -E "rep[0-2]|CUDA kernel time per step" "$OUT/l/diag39_b1.log" >>"$S"
tail -5 "$OUT/l/diag39_b1.log" >>"$S"
cp "$OUT/l/diag39_b1.log" "$OUT/diag39_b1.log"
tar czf "$OUT/logs1.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
