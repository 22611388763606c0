#!/usr/bin/env bash
# Session 2026-11-29i call 5 (branch fp8-per-tensor-small-m): chapter 12's default run with step 5 in it, ncu of the
# per-tensor small-M plans against cuBLASLt's per-tensor kernel, the binary under the three sanitizers (ours only),
# the library's tests with per-tensor small M.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call5.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes test_ch12 gemm_ladder test_lib" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$?"; tail -2 "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l/csv"
b=build-dev/bin; T=build-dev/tests/ch12/test_ch12
timeout 150 $T >"$OUT/l/test_ch12.log" 2>&1; say "test_ch12 rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/l/test_ch12.log | tr '\n' ' ')"
start=$SECONDS
timeout 150 $b/ch12_hopper_datatypes --csv "$OUT/l/csv/ch12_default.csv" >"$OUT/l/ch12_default.log" 2>&1; say "ch12 default run rc=$? ($((SECONDS - start)) s)"
grep -E "e4m3" "$OUT/l/ch12_default.log" | grep -v "^baseline" | head -40 >>"$S"
tar czf "$OUT/logs5.tgz" -C "$OUT" l
M=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_bytes.sum,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active
for s in 64x2112x7168 64x7168x16384; do
  timeout 60 ncu --clock-control none --csv --print-units base -k regex:'gemm_device_kernel|nvjet|Kreduce' --metrics $M \
    $b/ch12_hopper_datatypes --kernel fp8_per_tensor_small_m --sizes $s --reps 1 --warmup 0 --no-check >"$OUT/l/ncu_pt_small_m_$s.csv" 2>"$OUT/l/ncu_$s.err"
  say "ncu $s rc=$?"
done
python3 .carry/call/ncu_rows.py "$OUT"/l/ncu_*.csv 2>&1 | tee -a "$S"
tar czf "$OUT/logs5.tgz" -C "$OUT" l
for tool in racecheck memcheck synccheck; do
  timeout 70 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 20 --kernel-name kns=gemm_device_kernel $b/ch12_hopper_datatypes --kernel fp8_per_tensor_small_m,fp8_block_scaled_small_m,fp8_block_scaled_stream_k --sizes 128x7168x6144,96x2112x7168,1000x2112x1008,64x2112x7168,17x1024x2048 --reps 1 --warmup 0 --no-check >"$OUT/l/${tool}_bin.log" 2>&1
  say "$tool binary (ours only) rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/l/${tool}_bin.log | tail -1)"
done
tar czf "$OUT/logs5.tgz" -C "$OUT" l
export PYTHONPATH=python GEMM_LADDER_LIBRARY=$PWD/build-dev/lib/libgemm_ladder.so LD_LIBRARY_PATH=$PWD/build-dev/lib
timeout 100 build-dev/tests/lib/test_lib --gtest_brief=1 >"$OUT/l/test_lib.log" 2>&1
say "test_lib rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$OUT/l/test_lib.log" | tr '\n' ' ')"
timeout 100 python3 -m pytest -q python/tests/test_gpu.py -k fp8 >"$OUT/l/pytest_gpu.log" 2>&1
say "pytest test_gpu -k fp8 rc=$? $(tail -1 "$OUT/l/pytest_gpu.log")"
tar czf "$OUT/logs5.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
