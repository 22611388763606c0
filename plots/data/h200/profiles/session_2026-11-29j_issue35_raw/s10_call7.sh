#!/usr/bin/env bash
# Session 2026-11-29j call 7 (branch measure-s10 = main + fp8_block_scaled_small_m_128x128_x1 in the list): 128x128
# whole tiles with two consumers and turns at the M = 4096 rows and the squares, beside fp8_block_scaled, two rounds.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call7.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
TARGETS="ch12_hopper_datatypes" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"
rm -rf "$OUT/l"; mkdir -p "$OUT/l/csv"
b=build-dev/bin
SZ=4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192,2048x2112x7168
for r in 1 2; do
  sleep 5
  timeout 200 $b/ch12_hopper_datatypes --sizes $SZ --kernel fp8_block_scaled,fp8_block_scaled_small_m_128x128_x1 $([ $r -gt 1 ] && echo --no-check) --csv "$OUT/l/csv/bs128_r$r.csv" >"$OUT/l/bs128_r$r.log" 2>&1; say "r$r rc=$? $(date +%T)"
done
python3 - "$OUT"/l/csv/bs128_r*.csv <<'PY' | tee -a "$S"
import csv, sys, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(sys.argv[1:]):
    for r in csv.DictReader(open(f)):
        if r['kernel'].startswith('cuBLAS'): continue
        d[f"{r['M']}x{r['N']}x{r['K']}"][r['kernel'].replace('fp8_block_scaled', 'bs')].append(f"{float(r['pct_of_cublas']):.1f}({float(r['tflops']):.0f})")
for s, ks in d.items(): print(f"{s:16s} " + "  ".join(f"{k}=" + "/".join(v) for k, v in ks.items()))
PY
grep -iE "fail|mismatch" "$OUT"/l/bs128_r1.log | head -3 >>"$S"
tar czf "$OUT/logs7.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
