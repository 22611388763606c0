#!/usr/bin/env bash
# Session 2026-11-29i call 6: call 5's racecheck of the binary stopped at its first size with "Internal Sanitizer
# Error: failed to handle a hardware exception" (an illegal memory access). Which kernel, which size, which filter.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call6.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$?"; tail -1 "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l"
b=build-dev/bin
run() {  # name filter kernels sizes
  local name=$1 filt=$2 k=$3 sz=$4
  timeout 90 compute-sanitizer --tool racecheck --error-exitcode 9 --print-limit 10 $filt $b/ch12_hopper_datatypes --kernel $k --sizes $sz --reps 1 --warmup 0 --no-check >"$OUT/l/rc_$name.log" 2>&1
  say "racecheck $name rc=$? | $(grep -E 'RACECHECK SUMMARY|Internal Sanitizer|illegal' $OUT/l/rc_$name.log | tr '\n' ' ') | rows: $(grep -cE '^(fp8|cuBLAS)' $OUT/l/rc_$name.log)"
}
run pt_ours "--kernel-name kns=gemm_device_kernel" fp8_per_tensor_small_m 128x7168x6144
run pt_none "--kernel-name kns=no_such_kernel_zz" fp8_per_tensor_small_m 128x7168x6144
run bs_ours "--kernel-name kns=gemm_device_kernel" fp8_block_scaled_small_m 128x7168x6144
run pt_ours_small "--kernel-name kns=gemm_device_kernel" fp8_per_tensor_small_m 96x2112x7168,1000x2112x1008,64x2112x7168,17x1024x2048
run pt_all_small "" fp8_per_tensor_small_m 17x1024x2048,64x512x1024
run pt_ours_4096 "--kernel-name kns=gemm_device_kernel" fp8_per_tensor 1024x1024x1024
compute-sanitizer --version | head -2 >>"$S"
tar czf "$OUT/logs6.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
