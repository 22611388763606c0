#!/usr/bin/env bash
# Session 2026-11-29j call 9 (main with the cluster blocks, default build): the composed kernels' GPU tests of
# chapters 11-13 and the library, whose kernels' SASS the change left identical (the host side of the adapter changed).
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call9.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
TARGETS="test_ch11 test_ch12 test_ch13 test_lib test_gemm" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"
rm -rf "$OUT/l"; mkdir -p "$OUT/l"
for t in gemm/test_gemm ch12/test_ch12 ch13/test_ch13 lib/test_lib ch11/test_ch11; do
  n=$(basename $t)
  timeout 170 build-dev/tests/$t >"$OUT/l/$n.log" 2>&1
  say "$n rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/l/$n.log | tr '\n' ' ') $(date +%T)"
  grep -E "^\[  FAILED" "$OUT/l/$n.log" | head -5 >>"$S"
done
tar czf "$OUT/logs9.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
