#!/usr/bin/env bash
# Session 2026-11-29h call 8 (branch turns-pingpong, to land): fp8_block_scaled with the ping-pong turns (SASS
# identical to call 7's fp8_block_scaled_turns_pingpong) and fp8_block_scaled_small_m without the 128-row
# split kernels. Tests, sanitizers, chapter 12's default run, the suite twice, ncu at 4096^3, the library.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call8.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes test_ch12 gemm_ladder test_lib" GTESTS="ch12" \
  bash scripts/device/h200_session.sh build gtest >"$OUT/session.txt" 2>&1
cat "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l/csv"
b=build-dev/bin
grep -E "FAIL:" "$OUT"/logs/gtest_ch12.log 2>/dev/null | head -20 >>"$S"
san() {  # name timeout cmd...
  local name=$1 limit=$2; shift 2
  for tool in memcheck racecheck synccheck; do
    local start=$SECONDS
    timeout $limit compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 20 "$@" >"$OUT/l/san_${tool}_$name.log" 2>&1
    say "$tool $name rc=$? ($((SECONDS - start)) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/l/san_${tool}_$name.log" | tail -1)"
    grep -E "Race reported|Error:|error detected|Divergent" "$OUT/l/san_${tool}_$name.log" | sed 's/+0x.*//' | sort | uniq -c | head -5 >>"$S"
  done
}
san ch12 200 $b/ch12_hopper_datatypes --kernel fp8_block_scaled,fp8_block_scaled_small_m,fp8_block_scaled_turns_unaligned --sizes 17x1024x4096,64x512x4096,130x520x3000,132x264x256,1028x264x272,260x520x4240 --reps 1 --warmup 0
start=$SECONDS
timeout 240 compute-sanitizer --tool synccheck --error-exitcode 9 --print-limit 20 build-dev/tests/ch12/test_ch12 --gtest_brief=1 >"$OUT/l/san_synccheck_test_ch12.log" 2>&1
say "synccheck test_ch12 (all) rc=$? ($((SECONDS - start)) s): $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$OUT/l/san_synccheck_test_ch12.log" | tr '\n' ' ')"
start=$SECONDS
$b/ch12_hopper_datatypes --csv "$OUT/l/csv/ch12_default.csv" >"$OUT/l/ch12_default.log" 2>&1; say "ch12 default run rc=$? ($((SECONDS - start)) s)"
grep -E "e4m3_block" "$OUT/l/ch12_default.log" | head -40 >>"$S"
SUITE=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
for r in 1 2; do
  start=$SECONDS
  $b/ch12_hopper_datatypes --sizes $SUITE --kernel fp8_per_tensor,fp8_block_scaled,fp8_block_scaled_small_m $([ $r -gt 1 ] && echo --no-check) --csv "$OUT/l/csv/ch12_suite_r$r.csv" >"$OUT/l/ch12_suite_r$r.log" 2>&1; say "suite round $r rc=$? ($((SECONDS - start)) s)"
done
grep -E "fp8_block_scaled" "$OUT/l/ch12_suite_r1.log" >>"$S"
M=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum
for k in fp8_block_scaled fp8_block_scaled_turns_unaligned; do
  timeout 60 ncu --clock-control none --csv --print-units base -k regex:'gemm_device_kernel|nvjet' --metrics $M \
    $b/ch12_hopper_datatypes --kernel $k --sizes 4096 --reps 1 --warmup 0 --no-check >"$OUT/l/ncu_${k}_4096.csv" 2>"$OUT/l/ncu_${k}.err"
  say "ncu $k rc=$?"
done
python3 .carry/call/ncu_rows.py "$OUT"/l/ncu_*.csv 2>&1 | tee -a "$S"
export PYTHONPATH=python GEMM_LADDER_LIBRARY=$PWD/build-dev/lib/libgemm_ladder.so LD_LIBRARY_PATH=$PWD/build-dev/lib
start=$SECONDS
build-dev/tests/lib/test_lib --gtest_brief=1 >"$OUT/l/test_lib.log" 2>&1
say "test_lib rc=$? ($((SECONDS - start)) s): $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$OUT/l/test_lib.log" | tr '\n' ' ')"
start=$SECONDS
timeout 100 python3 -m pytest -q python/tests/test_gpu.py -k fp8 >"$OUT/l/pytest_gpu.log" 2>&1
say "pytest test_gpu -k fp8 rc=$? ($((SECONDS - start)) s): $(tail -1 "$OUT/l/pytest_gpu.log")"
cp "$OUT/session.txt" "$OUT/l/"; cp -r "$OUT/logs" "$OUT/l/session_logs" 2>/dev/null
tar czf "$OUT/logs8.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
