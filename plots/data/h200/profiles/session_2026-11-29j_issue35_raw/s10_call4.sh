#!/usr/bin/env bash
# Session 2026-11-29j call 4: what bounds 4096×7168×16384: the SM clock under load, tensor-pipe busy, the
# promotion's FFMA count, ours against cuBLASLt's (block-scaled and per-tensor), ncu without clock control.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call4.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
TARGETS="ch12_hopper_datatypes" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"
rm -rf "$OUT/l"; mkdir -p "$OUT/l"
b=build-dev/bin
M="gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active"
for k in fp8_block_scaled fp8_per_tensor; do
  for sz in 4096x7168x16384 8192x8192x8192; do
    sleep 5
    timeout 90 ncu --clock-control none --csv --print-units base -k regex:'gemm_device_kernel|nvjet' --metrics $M $b/ch12_hopper_datatypes --sizes $sz --kernel $k --reps 1 --warmup 0 --no-check >"$OUT/l/ncu4_${k}_$sz.csv" 2>&1
    say "ncu $k $sz rc=$? $(date +%T)"
    python3 - "$OUT/l/ncu4_${k}_$sz.csv" <<'PY' | tee -a "$S"
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
h = rows[[i for i, r in enumerate(rows) if "Kernel Name" in r][0]]
ki, mi, vi, idi = h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value"), h.index("ID")
per = collections.defaultdict(dict); name = {}
for r in rows[rows.index(h) + 1:]:
    try: per[r[idi]][r[mi]] = float(r[vi].replace(",", ""))
    except ValueError: pass
    name[r[idi]] = "nvjet" if "nvjet" in r[ki] else "ours"
for i in sorted(per, key=int):
    m = per[i]
    print(f"  {name[i]:6s} {m.get('gpu__time_duration.sum',0)/1e3:7.1f} us SM {m.get('sm__cycles_elapsed.avg.per_second',0)/1e6:6.0f} MHz tensor {m.get('sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active',0):5.1f}% FFMA {m.get('smsp__sass_thread_inst_executed_op_ffma_pred_on.sum',0)/1e9:6.2f} G thread-inst, inst {m.get('smsp__inst_executed.sum',0)/1e6:7.1f} M warps {m.get('sm__warps_active.avg.pct_of_peak_sustained_active',0):.1f}%")
PY
  done
done
tar czf "$OUT/logs4.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
