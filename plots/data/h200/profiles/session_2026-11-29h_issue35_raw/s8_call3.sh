#!/usr/bin/env bash
# Session 2026-11-29h call 3 (branch fp8-small-m, WIP 2): issue 35's small-M step fp8_block_scaled_small_m
# (split K + 64-row tiles for M <= 64): tests (test_ch12 with the forced plans), sanitizers, the
# plans forced at the suite's M <= 128 rows (two rounds), ncu counters.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call3.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes test_ch12" GTESTS="ch12" \
  bash scripts/device/h200_session.sh build gtest >"$OUT/session.txt" 2>&1
cat "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l/csv"
b=build-dev/bin
grep -E "FAILED|Failure" -A5 "$OUT"/logs/*ch12* 2>/dev/null | head -30 >>"$S"
SMALL=64x2112x7168,128x2112x7168,64x4096x7168,128x4096x7168,64x7168x2048,128x7168x2048,64x7168x16384,128x7168x16384,64x24576x1536,128x24576x1536,64x32768x512,128x32768x512,16x7168x2048,16x2112x7168
K=fp8_block_scaled,fp8_block_scaled_small_m
for bm in 64 128; do for s in 1 2 3 4 6 8; do K=$K,fp8_block_scaled_small_m_${bm}_x$s; done; done
for r in 1 2; do
  start=$SECONDS
  $b/ch12_hopper_datatypes --kernel $K --sizes $SMALL --reps 30 $([ $r -gt 1 ] && echo --no-check) --csv "$OUT/l/csv/small_m_r$r.csv" >"$OUT/l/small_m_r$r.log" 2>&1
  say "small-M plans round $r rc=$? ($((SECONDS - start)) s)"
done
python3 - "$OUT"/l/csv/small_m_r*.csv <<'PY' | tee -a "$S"
import csv, sys, collections
for f in sys.argv[1:]:
    d = collections.defaultdict(dict); path = {}
    for r in csv.DictReader(open(f)):
        s = f"{r['M']}x{r['N']}x{r['K']}"
        d[s][r['kernel'].replace('fp8_block_scaled_small_m_', 'p')] = float(r['pct_of_cublas'])
        if r['kernel'] == 'fp8_block_scaled_small_m': path[s] = r.get('path', '')
        if r['kernel'] == 'cuBLAS': d[s]['cuBLAS_GBs'] = float(r['gbps'])
    print(f.split('/')[-1])
    for s, ks in d.items():
        print(f"  {s:15s} " + " ".join(f"{k.replace('fp8_block_scaled', 'bs')}={v:.1f}" for k, v in ks.items() if k != 'cuBLAS'), "|", path.get(s))
PY
san() {  # name timeout cmd...
  local name=$1 limit=$2; shift 2
  for tool in memcheck racecheck synccheck; do
    local start=$SECONDS
    timeout $limit compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 20 "$@" >"$OUT/l/san_${tool}_$name.log" 2>&1
    say "$tool $name rc=$? ($((SECONDS - start)) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/l/san_${tool}_$name.log" | tail -1)"
    grep -E "Race reported|Error:|error detected" "$OUT/l/san_${tool}_$name.log" | sed 's/+0x.*//' | sort | uniq -c | head -5 >>"$S"
  done
}
san ch12 200 $b/ch12_hopper_datatypes --kernel fp8_block_scaled_small_m,fp8_block_scaled_small_m_64_x3,fp8_block_scaled_small_m_128_x3 --sizes 64x512x2048,17x1024x4096,68x264x1040,132x520x2000 --reps 1 --warmup 0
M=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum
for ks in fp8_block_scaled_small_m:64x7168x2048 fp8_block_scaled_small_m:64x2112x7168 fp8_block_scaled_small_m:128x4096x7168 fp8_block_scaled_small_m:64x7168x16384; do
  k=${ks%%:*}; s=${ks#*:}
  timeout 60 ncu --clock-control none --csv --print-units base -k regex:'gemm_device_kernel|nvjet|Kreduce' --metrics $M \
    $b/ch12_hopper_datatypes --kernel $k --sizes $s --reps 1 --warmup 0 --no-check >"$OUT/l/ncu_${k}_$s.csv" 2>"$OUT/l/ncu_${k}_$s.err"
  say "ncu $k $s rc=$?"
done
python3 - "$OUT"/l/ncu_*.csv <<'PY' | tee -a "$S"
import csv, sys, collections
for f in sys.argv[1:]:
    rows = [r for r in csv.reader(open(f)) if len(r) > 10]
    his = [i for i, r in enumerate(rows) if "Kernel Name" in r]
    if not his: print(f, "no rows"); continue
    hi = his[0]; h = rows[hi]; ki, mi, vi, idi = h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value"), h.index("ID")
    per = collections.defaultdict(dict); name = {}
    for r in rows[hi + 1:]:
        try: per[r[idi]][r[mi]] = float(r[vi].replace(",", ""))
        except ValueError: pass
        name[r[idi]] = r[ki]
    print(f.split("/")[-1])
    for i in sorted(per, key=int):
        m = per[i]; tag = "nvjet" if "nvjet" in name[i] else name[i][:24]
        print(f"  {i:>3} {tag:24s} {m.get('gpu__time_duration.sum',0)/1e3:7.1f} us tensor {m.get('sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active',0):5.1f}% issue {m.get('smsp__issue_active.avg.pct_of_peak_sustained_active',0):5.1f}% inst {m.get('smsp__inst_executed.sum',0)/1e6:6.2f}M bar {m.get('smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio',0):.2f} lsb {m.get('smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio',0):.2f} wait {m.get('smsp__average_warps_issue_stalled_wait_per_issue_active.ratio',0):.2f} dram {m.get('dram__throughput.avg.pct_of_peak_sustained_elapsed',0):.1f}% rd {m.get('dram__bytes_read.sum',0)/1e6:.1f}MB wr {m.get('dram__bytes_write.sum',0)/1e6:.1f}MB L2 {m.get('lts__t_bytes.sum',0)/1e6:.1f}MB")
PY
cp "$OUT/session.txt" "$OUT/l/"; cp -r "$OUT/logs" "$OUT/l/session_logs" 2>/dev/null
tar czf "$OUT/logs3.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
