#!/usr/bin/env bash
# Session 2026-11-29i call 9 (branch fp8-per-tensor-64): the per-tensor small-M rule of its own: tests, sanitizers
# of the per-tensor small-M tests, the suite (both small-M steps) in two rounds.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call9.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes test_ch12" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$?"; tail -1 "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l/csv"
b=build-dev/bin; T=build-dev/tests/ch12/test_ch12
timeout 150 $T >"$OUT/l/test_ch12.log" 2>&1; say "test_ch12 rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/l/test_ch12.log | tr '\n' ' ')"
grep -E "^\[  FAILED" "$OUT/l/test_ch12.log" | head -5 >>"$S"
SUITE=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
for r in 1 2; do
  timeout 110 $b/ch12_hopper_datatypes --sizes $SUITE --kernel fp8_per_tensor,fp8_per_tensor_small_m,fp8_block_scaled,fp8_block_scaled_small_m $([ $r -gt 1 ] && echo --no-check) --csv "$OUT/l/csv/ch12_suite_r$r.csv" >"$OUT/l/ch12_suite_r$r.log" 2>&1; say "suite r$r rc=$?"
  tar czf "$OUT/logs9.tgz" -C "$OUT" l
done
python3 - "$OUT"/l/csv/ch12_suite_r*.csv <<'PY' | tee -a "$S"
import csv, sys, collections, math
d = collections.defaultdict(dict)
for f in sorted(sys.argv[1:]):
    for r in csv.DictReader(open(f)):
        if r['kernel'].startswith('cuBLAS'): continue
        d[f"{r['M']}x{r['N']}x{r['K']}"].setdefault(r['kernel'].replace('fp8_block_scaled', 'bs').replace('fp8_per_tensor', 'pt'), []).append((float(r['pct_of_cublas']), r['path'].replace('fp8_block_scaled', 'bs').replace('fp8_per_tensor', 'pt')))
g = collections.defaultdict(list)
for s, ks in d.items():
    print(f"{s:16s} " + "  ".join(f"{k}=" + "/".join(f"{p:.1f}" for p, _ in v) + f"[{v[0][1]}]" for k, v in ks.items()))
    for k, v in ks.items(): g[k].append(sum(p for p, _ in v) / len(v))
for k, v in g.items(): print(k, "geomean", round(math.exp(sum(map(math.log, v)) / len(v)), 1), "rows>=95:", sum(x >= 95 for x in v), "of", len(v))
PY
for tool in synccheck memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 10 $T --gtest_filter='*PerTensorSmallM*:*fp8_per_tensor_small_m*' >"$OUT/l/$tool.log" 2>&1
  say "$tool tests rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/l/$tool.log | tail -1) $(grep -E '^\[  (PASSED|FAILED) ' $OUT/l/$tool.log | tr '\n' ' ')"
done
tar czf "$OUT/logs9.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
