#!/usr/bin/env bash
# Session 2026-11-29i call 8 (branch measure-s9c): per-tensor 64x64 plans forced beside the step at the suite's
# M <= 128 rows, two rounds; the per-tensor small-M tests (with 64x64) under synccheck.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call8.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes test_ch12" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$?"; tail -1 "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l/csv"
b=build-dev/bin; T=build-dev/tests/ch12/test_ch12
timeout 120 $T --gtest_filter='*PerTensor*:*fp8_per_tensor*:ch12_Launch.*' >"$OUT/l/test.log" 2>&1; say "tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $OUT/l/test.log | tr '\n' ' ')"
grep -E "^\[  FAILED" "$OUT/l/test.log" | head -5 >>"$S"
P=fp8_per_tensor_small_m
F=$P,${P}_64x64_x1,${P}_64x64_x2,${P}_64x64_x3,${P}_64x64_x4,${P}_64x128_x1,${P}_64x128_x4
SZ=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
for r in 1 2; do
  timeout 100 $b/ch12_hopper_datatypes --sizes $SZ --kernel $F $([ $r -gt 1 ] && echo --no-check) --reps 30 --csv "$OUT/l/csv/p64_r$r.csv" >"$OUT/l/p64_r$r.log" 2>&1
  say "64x64 plans round $r rc=$?"
done
python3 - "$OUT"/l/csv/p64_r*.csv <<'PY' | tee -a "$S"
import csv, sys, collections
d = collections.defaultdict(dict); path = {}
for f in sorted(sys.argv[1:]):
    for r in csv.DictReader(open(f)):
        if r['kernel'].startswith('cuBLAS'): continue
        k = r['kernel'].replace('fp8_per_tensor_small_m', 'sm')
        d[f"{r['M']}x{r['N']}x{r['K']}"].setdefault(k, []).append(f"{float(r['pct_of_cublas']):.1f}")
        if k == 'sm': path[f"{r['M']}x{r['N']}x{r['K']}"] = r['path'].replace('fp8_per_tensor_small_m ', '')
for s, ks in d.items():
    print(f"{s:15s} [{path.get(s,'')}] " + " ".join(f"{k}=" + "/".join(v) for k, v in ks.items()))
PY
tar czf "$OUT/logs8.tgz" -C "$OUT" l
timeout 100 compute-sanitizer --tool synccheck --error-exitcode 9 --print-limit 10 $T --gtest_filter='*PerTensorSmallM*' >"$OUT/l/synccheck.log" 2>&1
say "synccheck rc=$? $(grep -E 'ERROR SUMMARY' $OUT/l/synccheck.log | tail -1)"
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 10 $T --gtest_filter='*PerTensorSmallM*' >"$OUT/l/memcheck.log" 2>&1
say "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $OUT/l/memcheck.log | tail -1)"
tar czf "$OUT/logs8.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
