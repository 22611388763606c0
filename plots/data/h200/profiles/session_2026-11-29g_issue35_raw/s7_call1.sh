#!/usr/bin/env bash
# Session 2026-11-29g call 1: issue 34's last check (the three sanitizers on chapters 11, 12 and 13, every
# kernel of each binary in one run, after held() and the watchdog's later look); the GPU tests of the
# Hopper chapters, the blocks, the library and the Python package; issue 35: a source-level (SASS) stall
# profile of fp8_block_scaled and of cuBLASLt's block-scaled kernel at 4096^3, to say which instruction
# the 'barrier' stall sits on before changing the epilogue.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call1.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
TARGETS="ch11_every_shape ch12_hopper_datatypes ch13_grouped_moe test_ch11 test_ch12 test_ch13 test_gemm gemm_ladder test_lib" \
  GTESTS="ch11 ch12 ch13 gemm" bash scripts/device/h200_session.sh build gtest >"$OUT/session.txt" 2>&1
cat "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l"
b=build-dev/bin
san() {  # name timeout cmd...
  local name=$1 limit=$2; shift 2
  for tool in memcheck racecheck synccheck; do
    local start=$SECONDS
    timeout $limit compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 20 "$@" >"$OUT/l/san_${tool}_$name.log" 2>&1
    say "$tool $name rc=$? ($((SECONDS - start)) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/l/san_${tool}_$name.log" | tail -1)"
    grep -oE 'in [A-Za-z_0-9:<>, ]*(kernel|nvjet)[A-Za-z_0-9]*' "$OUT/l/san_${tool}_$name.log" | sort | uniq -c | head -5 >>"$S"
  done
}
san ch11 200 $b/ch11_every_shape --sizes 1x8x8,130x264x200,17x40x1000 --layout all --reps 1 --warmup 0
san ch12 200 $b/ch12_hopper_datatypes --sizes 132x264x256,260x520x4240,17x40x1024 --reps 1 --warmup 0
san ch13 240 $b/ch13_grouped_moe --model mixtral-8x7b --tokens 37 --routing skewed --reps 1 --warmup 0 --no-roof
grep -E "^(grouped|cublas)" "$OUT/l/san_memcheck_ch13.log" | head -20 >>"$S"
# Issue 35: where the stalls sit, per SASS instruction.
start=$SECONDS
timeout 200 ncu --clock-control none --set full --import-source no -k regex:'gemm_device_kernel|nvjet' -c 3 \
  -o "$OUT/l/fp8bs" $b/ch12_hopper_datatypes --kernel fp8_block_scaled --sizes 4096 --reps 1 --warmup 0 --no-check >"$OUT/l/ncu_fp8bs.log" 2>&1
say "ncu full rc=$? ($((SECONDS - start)) s)"
ncu -i "$OUT/l/fp8bs.ncu-rep" --page raw --csv > "$OUT/l/fp8bs_raw.csv" 2>&1
ncu -i "$OUT/l/fp8bs.ncu-rep" --page source --csv --print-source sass > "$OUT/l/fp8bs_sass.csv" 2>"$OUT/l/fp8bs_sass.err"
say "source page rc=$? lines $(wc -l < "$OUT/l/fp8bs_sass.csv") $(head -c 300 "$OUT/l/fp8bs_sass.err")"
ncu -i "$OUT/l/fp8bs.ncu-rep" --page details --print-details all > "$OUT/l/fp8bs_details.txt" 2>&1
grep -E "^  [a-z_]|Kernel|Warp Cycles|Stall|Duration|Issued" "$OUT/l/fp8bs_details.txt" | head -40 >>"$S"
# Python: the model's GPU tests and the package's
export PYTHONPATH=python GEMM_LADDER_LIBRARY=$PWD/build-dev/lib/libgemm_ladder.so LD_LIBRARY_PATH=$PWD/build-dev/lib TORCH_EXTENSIONS_DIR=/tmp/tx
start=$SECONDS
build-dev/tests/lib/test_lib --gtest_brief=1 >"$OUT/l/test_lib.log" 2>&1
say "test_lib rc=$? ($((SECONDS - start)) s): $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$OUT/l/test_lib.log" | tr '\n' ' ')"
start=$SECONDS
timeout 300 python3 python/tests/run_pytest.py python/tests >"$OUT/l/pytest.log" 2>&1
say "pytest rc=$? ($((SECONDS - start)) s): $(tail -3 "$OUT/l/pytest.log" | tr '\n' ' ')"
cp "$OUT/session.txt" "$OUT/l/"; cp -r "$OUT/logs" "$OUT/l/session_logs" 2>/dev/null
tar czf "$OUT/logs1.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
