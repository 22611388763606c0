#!/usr/bin/env bash
# Session 2026-11-29h call 10 (branch measure-rule): a candidate rule (64x128 whole tiles where they fill half the
# GPU and 64x256 would split: 128x7168x16384) and forced plans at the rows below 95%; the suite with the candidate.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call10.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
cat "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l/csv"
b=build-dev/bin
F=fp8_block_scaled_small_m,fp8_block_scaled_small_m_64x256_x2,fp8_block_scaled_small_m_64x256_x4,fp8_block_scaled_small_m_64x128_x1,fp8_block_scaled_small_m_64x128_x2
for r in 1 2; do
  $b/ch12_hopper_datatypes --sizes 128x7168x16384,64x2112x7168,64x4096x7168,128x4096x7168,96x7168x16384 --kernel $F $([ $r -gt 1 ] && echo --no-check) --reps 30 --csv "$OUT/l/csv/rule_ab_r$r.csv" >"$OUT/l/rule_ab_r$r.log" 2>&1
  say "rule A/B round $r rc=$?"
done
python3 - "$OUT"/l/csv/rule_ab_r*.csv <<'PY' | tee -a "$S"
import csv, sys, collections
d = collections.defaultdict(dict)
for f in sorted(sys.argv[1:]):
    for r in csv.DictReader(open(f)):
        d[f"{r['M']}x{r['N']}x{r['K']}"].setdefault(r['kernel'].replace('fp8_block_scaled_small_m', 'sm'), []).append(f"{float(r['pct_of_cublas']):.1f}")
for s, ks in d.items():
    print(f"{s:16s} " + "  ".join(f"{k}=" + "/".join(v) for k, v in ks.items() if k != 'cuBLAS'))
PY
SUITE=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,4096x4096x4096,8192x8192x8192
$b/ch12_hopper_datatypes --sizes $SUITE --kernel fp8_per_tensor,fp8_block_scaled,fp8_block_scaled_small_m --csv "$OUT/l/csv/ch12_suite_r1.csv" >"$OUT/l/ch12_suite_r1.log" 2>&1; say "suite rc=$?"
grep -E "fp8_block_scaled_small_m" "$OUT/l/ch12_suite_r1.log" | grep "RCR  *1[0-9]*x\|RCR  *6" | head -14 >>"$S"
tar czf "$OUT/logs10.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
