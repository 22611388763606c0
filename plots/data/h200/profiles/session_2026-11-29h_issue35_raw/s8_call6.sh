#!/usr/bin/env bash
# Session 2026-11-29h call 6 (branch measure-waves): the M = 4096 rows of issue 35's suite whose 128x256
# tiles fill waves badly (4096x2112x7168: 288 tiles, 2.18 waves) with K split in 2 or 3 and with 64-row
# tiles, two rounds.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call6.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
cat "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l/csv"
b=build-dev/bin
SZ=4096x2112x7168,4096x24576x1536,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192,2048x2112x7168,1024x2112x7168,1024x7168x2048,512x7168x16384,256x7168x16384
K=fp8_block_scaled,fp8_block_scaled_small_m_128_x2,fp8_block_scaled_small_m_128_x3,fp8_block_scaled_small_m_64_x1,fp8_block_scaled_small_m_64_x2
for r in 1 2; do
  start=$SECONDS
  $b/ch12_hopper_datatypes --kernel $K --sizes $SZ --reps 30 $([ $r -gt 1 ] && echo --no-check) --csv "$OUT/l/csv/waves_r$r.csv" >"$OUT/l/waves_r$r.log" 2>&1
  say "waves round $r rc=$? ($((SECONDS - start)) s)"
done
python3 - "$OUT"/l/csv/waves_r*.csv <<'PY' | tee -a "$S"
import csv, sys, collections
d = collections.defaultdict(dict)
for f in sorted(sys.argv[1:]):
    for r in csv.DictReader(open(f)):
        d[f"{r['M']}x{r['N']}x{r['K']}"].setdefault(r['kernel'].replace('fp8_block_scaled_small_m_', 'p').replace('fp8_block_scaled', 'bs'), []).append(float(r['pct_of_cublas']))
for s, ks in d.items():
    print(f"{s:16s} " + " ".join(f"{k}=" + "/".join(f"{x:.1f}" for x in v) for k, v in ks.items() if k != 'cuBLAS'))
PY
cp "$OUT/session.txt" "$OUT/l/"
tar czf "$OUT/logs6.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
