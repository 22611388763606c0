#!/usr/bin/env bash
# Session 2026-11-29g call 2: issue 35's step 3, the consumers taking turns (fp8_block_scaled_turns: a
# 256-thread named barrier around each K block's first half; _turns_half: around each half), beside
# fp8_block_scaled, cuBLASLt block-scaled and per-tensor, three rounds at the six shapes; ncu (counters
# and the SASS source page) at 4096^3; test_ch12 and the sanitizers on the new steps; the MoE test fix.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call2.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes test_ch12" GTESTS="ch12" \
  bash scripts/device/h200_session.sh build gtest >"$OUT/session.txt" 2>&1
cat "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l" "$OUT/runs"
b=build-dev/bin
K=fp8_per_tensor,fp8_block_scaled,fp8_block_scaled_turns,fp8_block_scaled_turns_half
SZ=4096x4096x4096,8192x8192x8192,4096x7168x16384,4096x7168x2048,4096x2048x7168,16384x4096x7168
start=$SECONDS
for r in 1 2 3; do
  $b/ch12_hopper_datatypes --kernel $K --sizes $SZ --reps 30 --csv "$OUT/runs/r$r.csv" >"$OUT/l/run_r$r.log" 2>&1; say "round $r rc=$?"
done
say "rounds: $((SECONDS - start)) s"
grep -E "fp8_block|cuBLAS|e4m3" "$OUT/l/run_r1.log" | head -40 >>"$S"
M=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,sm__cycles_elapsed.avg.per_second
timeout 120 ncu --clock-control none --csv --print-units base -k regex:'gemm_device_kernel|nvjet' --metrics $M \
  $b/ch12_hopper_datatypes --kernel fp8_block_scaled,fp8_block_scaled_turns,fp8_block_scaled_turns_half --sizes 4096 --reps 1 --warmup 1 --no-check >"$OUT/l/ncu.csv" 2>"$OUT/l/ncu.err"
say "ncu rc=$?"
python3 - "$OUT/l/ncu.csv" <<'PY' | tee -a "$S"
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
h = rows[0]; ki, mi, vi, idi = h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value"), h.index("ID")
per = collections.defaultdict(dict); name = {}
for r in rows[1:]:
    try: per[r[idi]][r[mi]] = float(r[vi].replace(",", ""))
    except ValueError: pass
    name[r[idi]] = r[ki]
for i in sorted(per, key=int):
    n = name[i]; tag = "nvjet" if "nvjet" in n else ("turns_half" if "(mm::ch12::WarpgroupTurns)2" in n or "WarpgroupTurns)2" in n else ("turns" if "WarpgroupTurns)1" in n else "default"))
    m = per[i]
    print(f"{i:>3} {tag:11s} {m.get('gpu__time_duration.sum',0)/1e3:7.1f} us tensor {m.get('sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active',0):5.1f}% issue {m.get('smsp__issue_active.avg.pct_of_peak_sustained_active',0):5.1f}% inst {m.get('smsp__inst_executed.sum',0)/1e6:6.2f}M bar {m.get('smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio',0):.2f} lsb {m.get('smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio',0):.2f} wait {m.get('smsp__average_warps_issue_stalled_wait_per_issue_active.ratio',0):.2f} ssb {m.get('smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio',0):.2f} clk {m.get('sm__cycles_elapsed.avg.per_second',0)/1e6:.0f}")
    print("     ", n[:200])
PY
timeout 150 ncu --clock-control none --set full --import-source no -k regex:'gemm_device_kernel' -c 3 \
  -o "$OUT/l/turns" $b/ch12_hopper_datatypes --kernel fp8_block_scaled,fp8_block_scaled_turns,fp8_block_scaled_turns_half --sizes 4096 --reps 1 --warmup 0 --no-check >"$OUT/l/ncu_turns.log" 2>&1
say "ncu full rc=$?"
ncu -i "$OUT/l/turns.ncu-rep" --page source --csv --print-source sass > "$OUT/l/turns_sass.csv" 2>&1
san() {  # name timeout cmd...
  local name=$1 limit=$2; shift 2
  for tool in memcheck racecheck synccheck; do
    local start=$SECONDS
    timeout $limit compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 20 "$@" >"$OUT/l/san_${tool}_$name.log" 2>&1
    say "$tool $name rc=$? ($((SECONDS - start)) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/l/san_${tool}_$name.log" | tail -1)"
    grep -E "Race reported|Error:" "$OUT/l/san_${tool}_$name.log" | sed 's/+0x.*//' | sort | uniq -c | head -5 >>"$S"
  done
}
san ch12 200 $b/ch12_hopper_datatypes --kernel fp8_block_scaled,fp8_block_scaled_turns,fp8_block_scaled_turns_half --sizes 132x264x256,260x520x4240,68x1024x2048 --reps 1 --warmup 0
export PYTHONPATH=python
start=$SECONDS
timeout 120 python3 python/tests/run_pytest.py python/tests/test_llama_decoder.py -k "fake_grouped_mm" >"$OUT/l/pytest.log" 2>&1
say "pytest (the MoE export test) rc=$? ($((SECONDS - start)) s): $(tail -2 "$OUT/l/pytest.log" | tr '\n' ' ')"
cp "$OUT/session.txt" "$OUT/l/"; cp -r "$OUT/logs" "$OUT/l/session_logs" 2>/dev/null
tar czf "$OUT/logs2.tgz" -C "$OUT" l runs
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
