#!/usr/bin/env bash
# Session 2026-11-29i call 10 (branch fp8-per-tensor-64): ncu of the per-tensor rule's plans at two rows.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call10.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$?"; tail -1 "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l"
b=build-dev/bin
M=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_bytes.sum,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active
for s in 64x2112x7168 64x7168x16384; do
  timeout 60 ncu --clock-control none --csv --print-units base -k regex:'gemm_device_kernel' --metrics $M \
    $b/ch12_hopper_datatypes --kernel fp8_per_tensor_small_m --sizes $s --reps 1 --warmup 0 --no-check >"$OUT/l/ncu_pt_rule_$s.csv" 2>"$OUT/l/ncu_$s.err"
  say "ncu $s rc=$?"
done
python3 .carry/call/ncu_rows.py "$OUT"/l/ncu_*.csv 2>&1 | tee -a "$S"
tar czf "$OUT/logs10.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
