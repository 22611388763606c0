#!/usr/bin/env bash
# Session 2026-11-30k call 4: step 4 after zeroing the padding rows: three rounds of --moe (the committed CSV),
# and ncu of one Mixtral 4096 layer (ours and the cuBLAS layers' GEMMs: clock, tensor pipe, DRAM).
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call4.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
TARGETS="ch13_grouped_moe" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"
mkdir -p "$OUT/l"
for r in 1 2 3; do
  timeout 150 build-dev/bin/ch13_grouped_moe --moe --csv "$OUT/ch13_grouped_moe_layer_r$r.csv" >"$OUT/l/moe_r$r.log" 2>&1
  say "moe round $r rc=$? $(date +%T)"
  sleep 5
done
grep -E "^moe_layer|^cublas_layer_loop_loop|^cublas_layer_grouped_grouped" "$OUT/l/moe_r1.log" >>"$S"
timeout 150 ncu --clock-control none --csv --print-units base -k regex:'gemm_device_kernel|nvjet' \
  --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum \
  build-dev/bin/ch13_grouped_moe --moe --model mixtral-8x7b --tokens 4096 --routing balanced --reps 1 --warmup 0 --no-check --no-roof \
  >"$OUT/ncu_mixtral4096.csv" 2>"$OUT/l/ncu.err"
say "ncu rc=$? $(wc -l <"$OUT/ncu_mixtral4096.csv") $(date +%T)"
tar czf "$OUT/logs4.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
