#!/usr/bin/env bash
# Session 2026-11-29i call 4 (branch measure-s9b): fp8_per_tensor_small_m with its plans forced at the suite's M <= 128
# rows (two rounds), the suite, tests and sanitizers of the per-tensor small-M plans, racecheck of the binary on ours.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call4.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes test_ch12" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$?"; tail -2 "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l/csv"
b=build-dev/bin; T=build-dev/tests/ch12/test_ch12
timeout 150 $T >"$OUT/l/test_ch12.log" 2>&1; say "test_ch12 rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/l/test_ch12.log | tr '\n' ' ')"
grep -E "^\[  FAILED" "$OUT/l/test_ch12.log" | head -5 >>"$S"
P=fp8_per_tensor_small_m
F=fp8_per_tensor,$P,${P}_64x256_x1,${P}_64x256_x2,${P}_64x256_x4,${P}_64x128_x1,${P}_64x128_x2,${P}_64x128_x4,${P}_128x128_x2
SZ=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
for r in 1 2; do
  timeout 100 $b/ch12_hopper_datatypes --sizes $SZ --kernel $F $([ $r -gt 1 ] && echo --no-check) --reps 30 --csv "$OUT/l/csv/pt_r$r.csv" >"$OUT/l/pt_r$r.log" 2>&1
  say "per-tensor plans round $r rc=$?"
done
python3 - "$OUT"/l/csv/pt_r*.csv <<'PY' | tee -a "$S"
import csv, sys, collections
d = collections.defaultdict(dict); path = {}
for f in sorted(sys.argv[1:]):
    for r in csv.DictReader(open(f)):
        if r['kernel'].startswith('cuBLAS'): continue
        k = r['kernel'].replace('fp8_per_tensor_small_m', 'sm').replace('fp8_per_tensor', 'pt')
        d[f"{r['M']}x{r['N']}x{r['K']}"].setdefault(k, []).append(f"{float(r['pct_of_cublas']):.1f}")
        if k == 'sm': path[f"{r['M']}x{r['N']}x{r['K']}"] = r['path'].replace('fp8_per_tensor_small_m ', '')
for s, ks in d.items():
    print(f"{s:15s} [{path.get(s,'')}] " + " ".join(f"{k}=" + "/".join(v) for k, v in ks.items()))
PY
tar czf "$OUT/logs4.tgz" -C "$OUT" l
SUITE=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
timeout 110 $b/ch12_hopper_datatypes --sizes $SUITE --kernel fp8_per_tensor,fp8_per_tensor_small_m,fp8_block_scaled,fp8_block_scaled_small_m --csv "$OUT/l/csv/ch12_suite_r1.csv" >"$OUT/l/ch12_suite_r1.log" 2>&1; say "suite rc=$?"
tar czf "$OUT/logs4.tgz" -C "$OUT" l
for tool in synccheck memcheck racecheck; do
  timeout 80 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 20 $T --gtest_filter='*PerTensorSmallM*:*fp8_per_tensor_small_m*' >"$OUT/l/$tool.log" 2>&1
  say "$tool tests rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/l/$tool.log | tail -1) $(grep -E '^\[  (PASSED|FAILED) ' $OUT/l/$tool.log | tr '\n' ' ')"
done
for tool in racecheck memcheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 20 --kernel-name regex:gemm_device_kernel $b/ch12_hopper_datatypes --kernel fp8_per_tensor_small_m,fp8_block_scaled_small_m,fp8_block_scaled_stream_k --sizes 128x7168x6144,96x2112x7168,1000x2112x1008,64x2112x7168 --reps 1 --warmup 0 --no-check >"$OUT/l/${tool}_bin.log" 2>&1
  say "$tool binary (ours only) rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/l/${tool}_bin.log | tail -1)"
done
tar czf "$OUT/logs4.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
