#!/usr/bin/env bash
# Session 2026-11-29h call 7 (branch turns-pingpong): the turns as predicated barriers (no branch), three
# rounds of the headline shapes beside fp8_block_scaled and _no_turns; synccheck/racecheck/memcheck; ncu.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call7.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes test_ch12" GTESTS="ch12" \
  bash scripts/device/h200_session.sh build gtest >"$OUT/session.txt" 2>&1
cat "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l/csv"
b=build-dev/bin
K=fp8_block_scaled,fp8_block_scaled_no_turns,fp8_block_scaled_turns_pingpong
san() {  # name timeout cmd...
  local name=$1 limit=$2; shift 2
  for tool in synccheck memcheck racecheck; do
    local start=$SECONDS
    timeout $limit compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 20 "$@" >"$OUT/l/san_${tool}_$name.log" 2>&1
    say "$tool $name rc=$? ($((SECONDS - start)) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/l/san_${tool}_$name.log" | tail -1)"
    grep -E "Race reported|Error:|error detected|Divergent|Barrier" "$OUT/l/san_${tool}_$name.log" | sed 's/+0x.*//' | sort | uniq -c | head -8 >>"$S"
  done
}
san pingpong 200 $b/ch12_hopper_datatypes --kernel fp8_block_scaled_turns_pingpong --sizes 132x264x256,260x520x4240,68x1024x2048,1028x264x272 --reps 1 --warmup 0
start=$SECONDS
timeout 200 compute-sanitizer --tool synccheck --error-exitcode 9 --print-limit 20 build-dev/tests/ch12/test_ch12 --gtest_filter='*pingpong*:ch12_Gemm.*:ch12_Fp8.*' >"$OUT/l/san_synccheck_test_ch12.log" 2>&1
say "synccheck test_ch12 (pingpong, and the few-blocks tests) rc=$? ($((SECONDS - start)) s): $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$OUT/l/san_synccheck_test_ch12.log" | tr '\n' ' ')"
H=4096x4096x4096,8192x8192x8192,4096x7168x16384,4096x7168x2048,4096x2048x7168,16384x4096x7168
for r in 1 2 3; do
  start=$SECONDS
  $b/ch12_hopper_datatypes --kernel $K --sizes $H --reps 30 $([ $r -gt 1 ] && echo --no-check) --csv "$OUT/l/csv/headline_r$r.csv" >"$OUT/l/headline_r$r.log" 2>&1
  say "headline round $r rc=$? ($((SECONDS - start)) s)"
done
python3 - "$OUT"/l/csv/headline_r*.csv <<'PY' | tee -a "$S"
import csv, sys, collections
d = collections.defaultdict(list)
for f in sorted(sys.argv[1:]):
    for r in csv.DictReader(open(f)):
        d[(f"{r['M']}x{r['N']}x{r['K']}", r['kernel'])].append(float(r['pct_of_cublas']))
for k, v in sorted(d.items()):
    print(f"{k[0]:16s} {k[1]:42s} " + " ".join(f"{x:6.1f}" for x in v))
PY
M=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum
for k in fp8_block_scaled fp8_block_scaled_turns_pingpong; do
  timeout 60 ncu --clock-control none --csv --print-units base -k regex:'gemm_device_kernel|nvjet' --metrics $M \
    $b/ch12_hopper_datatypes --kernel $k --sizes 4096 --reps 1 --warmup 0 --no-check >"$OUT/l/ncu_${k}_4096.csv" 2>"$OUT/l/ncu_${k}.err"
  say "ncu $k rc=$?"
done
python3 .carry/call/ncu_rows.py "$OUT"/l/ncu_*.csv 2>&1 | tee -a "$S"
cp "$OUT/session.txt" "$OUT/l/"; cp -r "$OUT/logs" "$OUT/l/session_logs" 2>/dev/null
tar czf "$OUT/logs7.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
