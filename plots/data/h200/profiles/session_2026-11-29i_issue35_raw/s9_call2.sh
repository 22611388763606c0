#!/usr/bin/env bash
# Session 2026-11-29i call 2 (branch measure-s9): 128x128 two-consumer small-M plans forced beside the narrow-first
# rule at the M = 128 rows, three rounds; the forced plans' tests + synccheck; ncu of the rule's plans and cuBLASLt.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call2.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes test_ch12" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$?"; tail -2 "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l/csv"
b=build-dev/bin; T=build-dev/tests/ch12/test_ch12
timeout 100 $T --gtest_filter='*SmallM*:*small_m*' >"$OUT/l/test_small_m.log" 2>&1; say "test_ch12 small-M rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $OUT/l/test_small_m.log | tr '\n' ' ')"
grep -E "^\[  FAILED" "$OUT/l/test_small_m.log" | head -5 >>"$S"
F=fp8_block_scaled_small_m,fp8_block_scaled_small_m_128x128_x1,fp8_block_scaled_small_m_128x128_x2,fp8_block_scaled_small_m_128x128_x4,fp8_block_scaled_small_m_64x256_x2
SZ=128x7168x16384,128x4096x7168,128x2112x7168,128x7168x2048,96x7168x16384,64x7168x16384
for r in 1 2 3; do
  timeout 60 $b/ch12_hopper_datatypes --sizes $SZ --kernel $F $([ $r -gt 1 ] && echo --no-check) --reps 30 --csv "$OUT/l/csv/p128_r$r.csv" >"$OUT/l/p128_r$r.log" 2>&1
  say "128x128 A/B round $r rc=$?"
done
python3 - "$OUT"/l/csv/p128_r*.csv <<'PY' | tee -a "$S"
import csv, sys, collections
d = collections.defaultdict(dict)
for f in sorted(sys.argv[1:]):
    for r in csv.DictReader(open(f)):
        d[f"{r['M']}x{r['N']}x{r['K']}"].setdefault(r['kernel'].replace('fp8_block_scaled_small_m', 'sm'), []).append(f"{float(r['pct_of_cublas']):.1f}")
for s, ks in d.items():
    print(f"{s:16s} " + "  ".join(f"{k}=" + "/".join(v) for k, v in ks.items() if k != 'cuBLAS'))
PY
tar czf "$OUT/logs2.tgz" -C "$OUT" l
M=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_bytes.sum,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
for ks in fp8_block_scaled_small_m:128x7168x16384 fp8_block_scaled_small_m_128x128_x2:128x7168x16384 fp8_block_scaled_small_m_64x256_x2:128x7168x16384 fp8_block_scaled_small_m:64x4096x7168 fp8_block_scaled_small_m:128x4096x7168; do
  k=${ks%%:*}; s=${ks#*:}
  timeout 60 ncu --clock-control none --csv --print-units base -k regex:'gemm_device_kernel|nvjet|Kreduce' --metrics $M \
    $b/ch12_hopper_datatypes --kernel $k --sizes $s --reps 1 --warmup 0 --no-check >"$OUT/l/ncu_${k}_$s.csv" 2>"$OUT/l/ncu_${k}_$s.err"
  say "ncu $k $s rc=$?"
done
python3 .carry/call/ncu_rows.py "$OUT"/l/ncu_*.csv 2>&1 | tee -a "$S"
tar czf "$OUT/logs2.tgz" -C "$OUT" l
timeout 120 compute-sanitizer --tool synccheck --error-exitcode 9 --print-limit 20 $T --gtest_filter='*SmallMPlans*' >"$OUT/l/synccheck.log" 2>&1
say "synccheck rc=$? $(grep -E 'ERROR SUMMARY' $OUT/l/synccheck.log | tail -1) $(grep -E '^\[  (PASSED|FAILED) ' $OUT/l/synccheck.log | tr '\n' ' ')"
tar czf "$OUT/logs2.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
