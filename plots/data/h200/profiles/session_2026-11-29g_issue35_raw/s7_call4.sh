#!/usr/bin/env bash
# Session 2026-11-29g call 4 (call 3 again, the turns with barrier.sync at two places: call 3's one place measured no faster): issue 35's step 3 promoted (fp8_block_scaled = the consumers take turns per
# half; fp8_block_scaled_no_turns = the previous step): tests, the three
# sanitizers (every block-scaled step in one run, and synccheck over test_ch12), chapter 12's default run
# (every step, appendix included) and issue 35's suite re-measured, ncu counters and the SASS source page
# at 4096^3, the library's tests.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call4.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes test_ch12 gemm_ladder test_lib" GTESTS="ch12" \
  bash scripts/device/h200_session.sh build gtest >"$OUT/session.txt" 2>&1
cat "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l" "$OUT/csv"
b=build-dev/bin
BS=fp8_block_scaled,fp8_block_scaled_no_turns,fp8_block_scaled_turns_k_block,fp8_block_scaled_smem_scales,fp8_block_scaled_early_scales,fp8_block_scaled_register_b_scales,fp8_block_scaled_192
san() {  # name timeout cmd...
  local name=$1 limit=$2; shift 2
  for tool in memcheck racecheck synccheck; do
    local start=$SECONDS
    timeout $limit compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 20 "$@" >"$OUT/l/san_${tool}_$name.log" 2>&1
    say "$tool $name rc=$? ($((SECONDS - start)) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/l/san_${tool}_$name.log" | tail -1)"
    grep -E "Race reported|Error:|error detected" "$OUT/l/san_${tool}_$name.log" | sed 's/+0x.*//' | sort | uniq -c | head -5 >>"$S"
  done
}
san ch12 240 $b/ch12_hopper_datatypes --kernel $BS --sizes 132x264x256,260x520x4240,68x1024x2048 --reps 1 --warmup 0
start=$SECONDS
timeout 240 compute-sanitizer --tool synccheck --error-exitcode 9 --print-limit 20 build-dev/tests/ch12/test_ch12 --gtest_brief=1 >"$OUT/l/san_synccheck_test_ch12.log" 2>&1
say "synccheck test_ch12 rc=$? ($((SECONDS - start)) s): $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$OUT/l/san_synccheck_test_ch12.log" | tr '\n' ' ')"
start=$SECONDS
$b/ch12_hopper_datatypes --csv "$OUT/csv/ch12_default.csv" >"$OUT/l/ch12_default.log" 2>&1; say "ch12 default run rc=$? ($((SECONDS - start)) s)"
grep -E "e4m3" "$OUT/l/ch12_default.log" | head -40 >>"$S"
SUITE=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
start=$SECONDS
$b/ch12_hopper_datatypes --sizes $SUITE --kernel fp8_per_tensor,fp8_block_scaled --csv "$OUT/csv/ch12_suite.csv" >"$OUT/l/ch12_suite.log" 2>&1; say "suite rc=$? ($((SECONDS - start)) s)"
grep -E "fp8_block_scaled " "$OUT/l/ch12_suite.log" >>"$S"
M=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,sm__cycles_elapsed.avg.per_second
for k in fp8_block_scaled_no_turns fp8_block_scaled_turns_k_block fp8_block_scaled; do
  timeout 60 ncu --clock-control none --csv --print-units base -k regex:'gemm_device_kernel|nvjet' --metrics $M \
    $b/ch12_hopper_datatypes --kernel $k --sizes 4096 --reps 1 --warmup 1 --no-check >"$OUT/l/ncu_$k.csv" 2>"$OUT/l/ncu_$k.err"
  say "ncu $k rc=$?"
done
python3 - "$OUT"/l/ncu_fp8_block_scaled_no_turns.csv "$OUT"/l/ncu_fp8_block_scaled_turns_k_block.csv "$OUT"/l/ncu_fp8_block_scaled.csv <<'PY' | tee -a "$S"
import csv, sys, collections
for f in sys.argv[1:]:
    rows = [r for r in csv.reader(open(f)) if len(r) > 10]
    hi = [i for i, r in enumerate(rows) if "Kernel Name" in r][0]
    h = rows[hi]; ki, mi, vi, idi = h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value"), h.index("ID")
    per = collections.defaultdict(dict); name = {}
    for r in rows[hi + 1:]:
        try: per[r[idi]][r[mi]] = float(r[vi].replace(",", ""))
        except ValueError: pass
        name[r[idi]] = r[ki]
    print(f.split("/")[-1])
    for i in sorted(per, key=int):
        m = per[i]; tag = "nvjet" if "nvjet" in name[i] else "ours"
        print(f"  {i:>3} {tag:6s} {m.get('gpu__time_duration.sum',0)/1e3:7.1f} us tensor {m.get('sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active',0):5.1f}% issue {m.get('smsp__issue_active.avg.pct_of_peak_sustained_active',0):5.1f}% inst {m.get('smsp__inst_executed.sum',0)/1e6:6.2f}M bar {m.get('smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio',0):.2f} lsb {m.get('smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio',0):.2f} wait {m.get('smsp__average_warps_issue_stalled_wait_per_issue_active.ratio',0):.2f} ssb {m.get('smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio',0):.2f} clk {m.get('sm__cycles_elapsed.avg.per_second',0)/1e6:.0f}")
PY
timeout 100 ncu --clock-control none --set full --import-source no -k regex:'gemm_device_kernel' -c 1 \
  -o "$OUT/l/turns" $b/ch12_hopper_datatypes --kernel fp8_block_scaled --sizes 4096 --reps 1 --warmup 0 --no-check >"$OUT/l/ncu_turns.log" 2>&1
say "ncu full rc=$?"
ncu -i "$OUT/l/turns.ncu-rep" --page source --csv --print-source sass > "$OUT/l/turns_sass.csv" 2>&1
export PYTHONPATH=python GEMM_LADDER_LIBRARY=$PWD/build-dev/lib/libgemm_ladder.so LD_LIBRARY_PATH=$PWD/build-dev/lib
start=$SECONDS
build-dev/tests/lib/test_lib --gtest_brief=1 >"$OUT/l/test_lib.log" 2>&1
say "test_lib rc=$? ($((SECONDS - start)) s): $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$OUT/l/test_lib.log" | tr '\n' ' ')"
cp "$OUT/session.txt" "$OUT/l/"; cp -r "$OUT/logs" "$OUT/l/session_logs" 2>/dev/null
tar czf "$OUT/logs4.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
