#!/usr/bin/env bash
# Session 2026-11-30k call 6: ncu of step 5 (grouped_fp8) where it is furthest from its roofline: Qwen3 at 64 and
# 4096 tokens, DeepSeek-V3 at 4096 (balanced): time, SM clock, tensor pipe, DRAM.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call6.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
TARGETS="ch13_grouped_moe" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum
for m in qwen3-30b-a3b:64,4096 deepseek-v3:4096; do
  timeout 120 ncu --clock-control none --csv --print-units base -k regex:gemm_device_kernel --metrics $M \
    build-dev/bin/ch13_grouped_moe --fp8 --model ${m%%:*} --tokens ${m##*:} --routing balanced --reps 1 --warmup 0 --no-check --no-roof \
    >"$OUT/ncu_fp8_${m%%:*}.csv" 2>"$OUT/ncu_${m%%:*}.err"
  say "ncu $m rc=$? $(date +%T)"
done
rm -rf "$OUT/logs" "$OUT/data"
