#!/usr/bin/env bash
# Session 2026-11-29h call 2 (branch measure-s8 + fp8_bs_x{2,3,4,6,8,14}: split-K with the slices forced):
# (a) issue 35: the small-M suite rows at every forced slice count, two rounds, to fit fp8's split rule;
# (b) issue 36: tile_64x256 against every_shape's choice at M = 32-64 over N x K (the plan's item 1),
#     and 512x28672x4096 at three tiles, two rounds.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call2.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes ch11_every_shape" \
  bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
cat "$OUT/session.txt" >>"$S"
mkdir -p "$OUT/l/csv"
b=build-dev/bin
SMALL=64x2112x7168,128x2112x7168,64x4096x7168,128x4096x7168,64x7168x2048,128x7168x2048,64x7168x16384,128x7168x16384,64x24576x1536,128x24576x1536,64x32768x512,128x32768x512
for r in 1 2; do
  start=$SECONDS
  $b/ch12_hopper_datatypes --kernel fp8_block_scaled,fp8_block_scaled_split_k,fp8_bs_x2,fp8_bs_x3,fp8_bs_x4,fp8_bs_x6,fp8_bs_x8,fp8_bs_x14 --sizes $SMALL --reps 30 \
    $([ $r -gt 1 ] && echo --no-check) --csv "$OUT/l/csv/fp8_splits_r$r.csv" >"$OUT/l/fp8_splits_r$r.log" 2>&1
  say "fp8 splits round $r rc=$? ($((SECONDS - start)) s)"
done
D=""
for m in 32 48 64; do for n in 4096 6144 10240 11008 14336; do for k in 4096 8192; do D="$D,${m}x${n}x${k}"; done; done; done
for r in 1 2; do
  start=$SECONDS
  $b/ch11_every_shape --kernel every_shape,tile_64x256,swap_ab,split_k --sizes ${D#,} --reps 30 --no-check --csv "$OUT/l/csv/ch11_m64_r$r.csv" >"$OUT/l/ch11_m64_r$r.log" 2>&1
  say "ch11 M<=64 round $r rc=$? ($((SECONDS - start)) s)"
  $b/ch11_every_shape --kernel every_shape,tile_128x128,tile_128x192,tile_128x256 --sizes 512x28672x4096,512x14336x4096,512x57344x8192,512x10240x8192 --reps 30 --no-check --csv "$OUT/l/csv/ch11_512_r$r.csv" >"$OUT/l/ch11_512_r$r.log" 2>&1
  say "ch11 512 round $r rc=$?"
done
python3 - "$OUT"/l/csv/*.csv <<'PY' | tee -a "$S"
import csv, sys, collections
for f in sys.argv[1:]:
    d = collections.defaultdict(dict)
    for r in csv.DictReader(open(f)):
        d[f"{r['M']}x{r['N']}x{r['K']}"][r['kernel']] = (float(r['pct_of_cublas']), r.get('path', ''))
    print(f.split('/')[-1])
    for s, ks in d.items():
        print(f"  {s:16s} " + " ".join(f"{k}={v[0]:.1f}" for k, v in ks.items() if k != 'cuBLAS'), " | ", "; ".join(f"{k}:{v[1]}" for k, v in ks.items() if v[1] and k in ('every_shape', 'fp8_block_scaled_split_k')))
PY
cp "$OUT/session.txt" "$OUT/l/"; cp -r "$OUT/logs" "$OUT/l/session_logs" 2>/dev/null
tar czf "$OUT/logs2.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
