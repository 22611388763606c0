#!/usr/bin/env bash
# Session 2026-11-29i call 7: racecheck of the binary without a kernel filter (call 6: any --kernel-name filter makes
# racecheck fail with an internal error, even one that matches no kernel), at the sizes of the small-M plans.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call7.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$?"; tail -1 "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l"
b=build-dev/bin
run() {  # name kernels sizes limit
  timeout $4 compute-sanitizer --tool racecheck --error-exitcode 9 --print-limit 10 $b/ch12_hopper_datatypes --kernel $2 --sizes $3 --reps 1 --warmup 0 --no-check >"$OUT/l/rc_$1.log" 2>&1
  say "racecheck $1 rc=$? | $(grep -E 'RACECHECK SUMMARY|Internal Sanitizer' $OUT/l/rc_$1.log | tr '\n' ' ') | ours: $(grep -E '^=+ +(Error|Warning).*gemm_device_kernel' $OUT/l/rc_$1.log | wc -l) lines; nvjet: $(grep -cE 'nvjet' $OUT/l/rc_$1.log) | rows: $(grep -E '^(fp8|cuBLAS)' $OUT/l/rc_$1.log | awk '{print $1"@"$4}' | tr '\n' ' ')"
}
run pt_128 fp8_per_tensor_small_m 128x7168x6144 200
run pt_small fp8_per_tensor_small_m,fp8_block_scaled_small_m 96x2112x7168,64x2112x7168,1000x2112x1008 200
tar czf "$OUT/logs7.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
