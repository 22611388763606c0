#!/usr/bin/env bash
# Session 2026-11-29j call 1 (branch clusters): the cluster steps: tests, the suite in one round beside steps 1-5,
# ncu of the small-M rows with and without clusters.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call1.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes test_ch12" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"; tail -1 "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l/csv"
b=build-dev/bin; T=build-dev/tests/ch12/test_ch12
timeout 120 $T --gtest_filter='*cluster*' >"$OUT/l/test_cluster.log" 2>&1; say "test_ch12 cluster rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/l/test_cluster.log | tr '\n' ' ') $(date +%T)"
grep -E "^\[  FAILED|Failure|error" "$OUT/l/test_cluster.log" | head -8 >>"$S"
SUITE=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
timeout 200 $b/ch12_hopper_datatypes --sizes $SUITE --kernel fp8_per_tensor,fp8_per_tensor_small_m,fp8_per_tensor_cluster,fp8_block_scaled,fp8_block_scaled_small_m,fp8_block_scaled_cluster --csv "$OUT/l/csv/ch12_suite_r1.csv" >"$OUT/l/ch12_suite_r1.log" 2>&1; say "suite r1 rc=$? $(date +%T)"
tar czf "$OUT/logs1.tgz" -C "$OUT" l
python3 - "$OUT"/l/csv/ch12_suite_r*.csv <<'PY' | tee -a "$S"
import csv, sys, collections, math
d = collections.defaultdict(dict)
for f in sorted(sys.argv[1:]):
    for r in csv.DictReader(open(f)):
        if r['kernel'].startswith('cuBLAS'): continue
        d[f"{r['M']}x{r['N']}x{r['K']}"].setdefault(r['kernel'].replace('fp8_block_scaled', 'bs').replace('fp8_per_tensor', 'pt'), []).append((float(r['pct_of_cublas']), r['path'].replace('fp8_block_scaled', 'bs').replace('fp8_per_tensor', 'pt'), float(r['tflops'])))
g = collections.defaultdict(list)
for s, ks in d.items():
    print(f"{s:16s} " + "  ".join(f"{k}=" + "/".join(f"{p:.1f}" for p, _, _ in v) + f"({v[0][2]:.0f})[{v[0][1]}]" for k, v in ks.items()))
    for k, v in ks.items(): g[k].append(sum(p for p, _, _ in v) / len(v))
for k, v in g.items(): print(k, "geomean", round(math.exp(sum(map(math.log, v)) / len(v)), 1), "rows>=95:", sum(x >= 95 for x in v), "of", len(v))
PY
M="lts__t_bytes.sum,dram__bytes_read.sum,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,launch__cluster_dim_x,launch__grid_size"
for sk in 128x7168x16384:fp8_block_scaled_small_m 128x7168x16384:fp8_block_scaled_cluster 64x7168x16384:fp8_per_tensor_small_m 64x7168x16384:fp8_per_tensor_cluster 4096x7168x16384:fp8_block_scaled 4096x7168x16384:fp8_block_scaled_cluster; do
  sz=${sk%%:*}; k=${sk##*:}; {
    timeout 60 ncu --clock-control none --csv --print-units base -k regex:'gemm_device_kernel|nvjet' --metrics $M $b/ch12_hopper_datatypes --sizes $sz --kernel $k --reps 1 --warmup 0 --no-check >"$OUT/l/ncu_${k}_$sz.csv" 2>&1
    say "ncu $k $sz rc=$? $(date +%T)"
  }
done
python3 .carry/call/ncu_rows.py "$OUT"/l/ncu_*.csv 2>&1 | tee -a "$S" | tail -40
tar czf "$OUT/logs1.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
