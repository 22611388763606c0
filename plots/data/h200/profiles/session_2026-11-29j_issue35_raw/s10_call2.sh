#!/usr/bin/env bash
# Session 2026-11-29j call 2 (branch clusters): the headline sizes in five rounds (the spread), the cluster
# steps' suite round 2, L2 counters of multicast, and the three sanitizers over the cluster steps' tests.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call2.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes test_ch12" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"; tail -1 "$OUT/session.txt" >>"$S"
rm -rf "$OUT/l"; mkdir -p "$OUT/l/csv"
b=build-dev/bin; T=build-dev/tests/ch12/test_ch12
for r in 1 2 3 4 5; do
  timeout 100 $b/ch12_hopper_datatypes --sizes 4096x4096x4096,8192x8192x8192,4096x7168x16384 --kernel fp8_per_tensor,fp8_block_scaled $([ $r -gt 1 ] && echo --no-check) --csv "$OUT/l/csv/headline_r$r.csv" >"$OUT/l/headline_r$r.log" 2>&1; say "headline r$r rc=$? $(date +%T)"
done
python3 - "$OUT"/l/csv/headline_r*.csv <<'PY' | tee -a "$S"
import csv, sys, collections
d = collections.defaultdict(list)
for f in sorted(sys.argv[1:]):
    for r in csv.DictReader(open(f)):
        d[(r['kernel'], r['dtype'], f"{r['M']}x{r['N']}x{r['K']}")].append((float(r['tflops']), float(r['pct_of_cublas'])))
for k, v in sorted(d.items()):
    t = sorted(x for x, _ in v); p = sorted(y for _, y in v)
    print(f"{k[0]:18s} {k[1]:10s} {k[2]:16s} TFLOP/s {t[0]:.0f}-{t[-1]:.0f} median {t[len(t)//2]:.0f}  % {p[0]:.1f}-{p[-1]:.1f} median {p[len(p)//2]:.1f}")
PY
SUITE=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
timeout 150 $b/ch12_hopper_datatypes --sizes $SUITE --kernel fp8_per_tensor_small_m,fp8_per_tensor_cluster,fp8_block_scaled_small_m,fp8_block_scaled_cluster --no-check --csv "$OUT/l/csv/cluster_suite_r2.csv" >"$OUT/l/cluster_suite_r2.log" 2>&1; say "cluster suite r2 rc=$? $(date +%T)"
python3 - "$OUT"/l/csv/cluster_suite_r2.csv <<'PY' | tee -a "$S"
import csv, sys, collections, math
g = collections.defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    if r['kernel'].startswith('cuBLAS'): continue
    g[r['kernel']].append(float(r['pct_of_cublas']))
for k, v in g.items(): print(k, "geomean", round(math.exp(sum(map(math.log, v)) / len(v)), 1), "rows>=95:", sum(x >= 95 for x in v), "of", len(v))
PY
tar czf "$OUT/logs2.tgz" -C "$OUT" l
M="lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,dram__bytes_read.sum,gpu__time_duration.sum,launch__cluster_dim_x,launch__grid_size"
for sk in 128x7168x16384:fp8_block_scaled_small_m 128x7168x16384:fp8_block_scaled_cluster; do
  sz=${sk%%:*}; k=${sk##*:}
  timeout 60 ncu --clock-control none --csv --print-units base -k regex:'gemm_device_kernel|nvjet' --metrics $M $b/ch12_hopper_datatypes --sizes $sz --kernel $k --reps 1 --warmup 0 --no-check >"$OUT/l/ncu2_${k}_$sz.csv" 2>&1
  say "ncu $k $sz rc=$? $(date +%T)"
  python3 - "$OUT/l/ncu2_${k}_$sz.csv" <<'PY' | tee -a "$S"
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
    print(f"  {name[i]:6s} {m.get('gpu__time_duration.sum',0)/1e3:6.1f} us L2 {m.get('lts__t_bytes.sum',0)/1e6:6.1f} MB tex-read {m.get('lts__t_sectors_srcunit_tex_op_read.sum',0)*32/1e6:6.1f} MB ({m.get('lts__t_requests_srcunit_tex_op_read.sum',0)/1e6:.2f} M req) fabric {m.get('lts__t_sectors_srcunit_ltcfabric.sum',0)*32/1e6:6.1f} MB dram {m.get('dram__bytes_read.sum',0)/1e6:6.1f} MB cluster {m.get('launch__cluster_dim_x',0):.0f} grid {m.get('launch__grid_size',0):.0f}")
PY
done
for tool in synccheck memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 10 $T --gtest_filter='*cluster*' >"$OUT/l/$tool.log" 2>&1
  say "$tool cluster tests rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/l/$tool.log | tail -1) $(grep -E '^\[  (PASSED|FAILED) ' $OUT/l/$tool.log | tr '\n' ' ') $(date +%T)"
done
tar czf "$OUT/logs2.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
