#!/usr/bin/env bash
# Session 2026-11-29h call 1 (branch measure-s8 = main + turns-one-barrier + fp8-split-k): issue 35's two
# unmeasured steps. Tests (test_ch12 with both new steps), sanitizers over both, three rounds of the
# headline shapes (fp8_block_scaled, _no_turns, _turns_one_barrier), the DeepSeek-V3 suite with
# fp8_block_scaled_split_k beside fp8_block_scaled, ncu counters of each.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call1.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes test_ch12" GTESTS="ch12" \
  bash scripts/device/h200_session.sh build gtest >"$OUT/session.txt" 2>&1
cat "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l" "$OUT/csv"
b=build-dev/bin
H=4096x4096x4096,8192x8192x8192,4096x7168x16384,4096x7168x2048,4096x2048x7168,16384x4096x7168
for r in 1 2 3; do
  start=$SECONDS
  $b/ch12_hopper_datatypes --kernel fp8_block_scaled,fp8_block_scaled_no_turns,fp8_block_scaled_turns_one_barrier --sizes $H --reps 30 \
    $([ $r -gt 1 ] && echo --no-check) --csv "$OUT/csv/headline_r$r.csv" >"$OUT/l/headline_r$r.log" 2>&1
  say "headline round $r rc=$? ($((SECONDS - start)) s)"
done
SUITE=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
start=$SECONDS
$b/ch12_hopper_datatypes --sizes $SUITE --kernel fp8_per_tensor,fp8_block_scaled,fp8_block_scaled_split_k --csv "$OUT/csv/suite.csv" >"$OUT/l/suite.log" 2>&1; say "suite rc=$? ($((SECONDS - start)) s)"
grep -E "fp8_block_scaled|cuBLASLt" "$OUT/l/suite.log" | head -80 >>"$S"
python3 - "$OUT"/csv/headline_r*.csv <<'PY' | tee -a "$S"
import csv, sys, collections
for f in sys.argv[1:]:
    rows = list(csv.DictReader(open(f)))
    print(f.split('/')[-1], list(rows[0].keys())[:20])
    break
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
san ch12 200 $b/ch12_hopper_datatypes --kernel fp8_block_scaled_turns_one_barrier,fp8_block_scaled_split_k --sizes 132x264x256,260x520x4240,68x1024x4096,64x512x2048 --reps 1 --warmup 0
start=$SECONDS
timeout 200 compute-sanitizer --tool synccheck --error-exitcode 9 --print-limit 20 build-dev/tests/ch12/test_ch12 --gtest_brief=1 --gtest_filter='*turns_one_barrier*:*split_k*' >"$OUT/l/san_synccheck_test_ch12.log" 2>&1
say "synccheck test_ch12 (new steps) rc=$? ($((SECONDS - start)) s): $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$OUT/l/san_synccheck_test_ch12.log" | tr '\n' ' ')"
M=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_elapsed.avg.per_second
for ks in fp8_block_scaled_no_turns:4096 fp8_block_scaled:4096 fp8_block_scaled_turns_one_barrier:4096 fp8_block_scaled:64x7168x16384 fp8_block_scaled_split_k:64x7168x16384 fp8_block_scaled_split_k:128x2112x7168; do
  k=${ks%%:*}; s=${ks#*:}
  timeout 60 ncu --clock-control none --csv --print-units base -k regex:'gemm_device_kernel|nvjet|reduce' --metrics $M \
    $b/ch12_hopper_datatypes --kernel $k --sizes $s --reps 1 --warmup 1 --no-check >"$OUT/l/ncu_${k}_$s.csv" 2>"$OUT/l/ncu_${k}_$s.err"
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
        m = per[i]; tag = "nvjet" if "nvjet" in name[i] else name[i][:30]
        print(f"  {i:>3} {tag:30s} {m.get('gpu__time_duration.sum',0)/1e3:7.1f} us tensor {m.get('sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active',0):5.1f}% issue {m.get('smsp__issue_active.avg.pct_of_peak_sustained_active',0):5.1f}% inst {m.get('smsp__inst_executed.sum',0)/1e6:6.2f}M bar {m.get('smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio',0):.2f} lsb {m.get('smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio',0):.2f} wait {m.get('smsp__average_warps_issue_stalled_wait_per_issue_active.ratio',0):.2f} dram {m.get('dram__throughput.avg.pct_of_peak_sustained_elapsed',0):.1f}% rd {m.get('dram__bytes_read.sum',0)/1e6:.1f}MB wr {m.get('dram__bytes_write.sum',0)/1e6:.1f}MB clk {m.get('sm__cycles_elapsed.avg.per_second',0)/1e6:.0f}")
PY
cp "$OUT/session.txt" "$OUT/l/"; cp -r "$OUT/logs" "$OUT/l/session_logs" 2>/dev/null
tar czf "$OUT/logs1.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
