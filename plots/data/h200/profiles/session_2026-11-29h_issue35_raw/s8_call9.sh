#!/usr/bin/env bash
# Session 2026-11-29h call 9 (branch measure-narrow = fp8-64x128 + a forced 64x256 plan): 64x128 tiles for the
# K = 2048 small-M rows. Tests, sanitizers, the suite twice, an A/B at the two rows, ncu, the library.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call9.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes test_ch12 gemm_ladder test_lib" GTESTS="ch12" \
  bash scripts/device/h200_session.sh build gtest >"$OUT/session.txt" 2>&1
cat "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l/csv"
b=build-dev/bin
grep -E "FAIL:" "$OUT"/logs/gtest_ch12.log 2>/dev/null | head -20 >>"$S"
for tool in memcheck racecheck synccheck; do
  start=$SECONDS
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 20 $b/ch12_hopper_datatypes --kernel fp8_block_scaled_small_m --sizes 64x2048x1024,128x7168x512,17x1024x1024,64x7168x2048 --reps 1 --warmup 0 >"$OUT/l/san_$tool.log" 2>&1
  say "$tool small_m rc=$? ($((SECONDS - start)) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/l/san_$tool.log" | tail -1)"
  grep -E "Race reported|Error:|error detected|Divergent" "$OUT/l/san_$tool.log" | sed 's/+0x.*//' | sort | uniq -c | head -4 >>"$S"
done
start=$SECONDS
timeout 90 compute-sanitizer --tool synccheck --error-exitcode 9 --print-limit 20 build-dev/tests/ch12/test_ch12 --gtest_brief=1 --gtest_filter='*SmallM*:*small_m*' >"$OUT/l/san_synccheck_test_ch12.log" 2>&1
say "synccheck test_ch12 (small_m) rc=$? ($((SECONDS - start)) s): $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$OUT/l/san_synccheck_test_ch12.log" | tr '\n' ' ')"
SUITE=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
for r in 1 2; do
  start=$SECONDS
  $b/ch12_hopper_datatypes --sizes $SUITE --kernel fp8_per_tensor,fp8_block_scaled,fp8_block_scaled_small_m $([ $r -gt 1 ] && echo --no-check) --csv "$OUT/l/csv/ch12_suite_r$r.csv" >"$OUT/l/ch12_suite_r$r.log" 2>&1; say "suite round $r rc=$? ($((SECONDS - start)) s)"
done
grep -E "fp8_block_scaled_small_m" "$OUT/l/ch12_suite_r1.log" | grep -E "x2048 |x7168 " >>"$S"
for r in 1 2 3; do
  $b/ch12_hopper_datatypes --sizes 64x7168x2048,128x7168x2048,16x7168x2048,64x4096x2048 --kernel fp8_block_scaled_small_m,fp8_block_scaled_small_m_64x256_x1 --no-check --reps 30 --csv "$OUT/l/csv/narrow_ab_r$r.csv" >"$OUT/l/narrow_ab_r$r.log" 2>&1
  say "narrow A/B round $r rc=$?"
done
python3 - "$OUT"/l/csv/narrow_ab_r*.csv <<'PY' | tee -a "$S"
import csv, sys, collections
d = collections.defaultdict(dict)
for f in sorted(sys.argv[1:]):
    for r in csv.DictReader(open(f)):
        d[f"{r['M']}x{r['N']}x{r['K']}"].setdefault(r['kernel'], []).append(f"{float(r['pct_of_cublas']):.1f}")
for s, ks in d.items():
    print(f"{s:16s} " + "  ".join(f"{k}=" + "/".join(v) for k, v in ks.items() if k != 'cuBLAS'))
PY
M=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum
timeout 60 ncu --clock-control none --csv --print-units base -k regex:'gemm_device_kernel|nvjet' --metrics $M \
  $b/ch12_hopper_datatypes --kernel fp8_block_scaled_small_m --sizes 64x7168x2048 --reps 1 --warmup 0 --no-check >"$OUT/l/ncu_small_m_64x7168x2048.csv" 2>"$OUT/l/ncu.err"
say "ncu rc=$?"
python3 .carry/call/ncu_rows.py "$OUT"/l/ncu_*.csv 2>&1 | tee -a "$S"
export PYTHONPATH=python GEMM_LADDER_LIBRARY=$PWD/build-dev/lib/libgemm_ladder.so LD_LIBRARY_PATH=$PWD/build-dev/lib
build-dev/tests/lib/test_lib --gtest_brief=1 >"$OUT/l/test_lib.log" 2>&1
say "test_lib rc=$?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$OUT/l/test_lib.log" | tr '\n' ' ')"
cp "$OUT/session.txt" "$OUT/l/"; cp -r "$OUT/logs" "$OUT/l/session_logs" 2>/dev/null
tar czf "$OUT/logs9.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
