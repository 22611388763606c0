#!/usr/bin/env bash
# Session 2026-11-29j call 3 (branch clusters, main's kernels: SASS identical): the headline sizes in five rounds,
# ten seconds apart (the GPU cools between rounds; call 2's back-to-back rounds throttled from round 2 on).
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call3.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
TARGETS="ch12_hopper_datatypes" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"; tail -1 "$OUT/session.txt" >>"$S"
rm -rf "$OUT/l"; mkdir -p "$OUT/l/csv"
b=build-dev/bin
nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw --format=csv,noheader >>"$S"
for r in 1 2 3 4 5; do
  sleep 10
  timeout 100 $b/ch12_hopper_datatypes --sizes 4096x4096x4096,8192x8192x8192,4096x7168x16384 --kernel fp8_per_tensor,fp8_block_scaled $([ $r -gt 1 ] && echo --no-check) --csv "$OUT/l/csv/headline_r$r.csv" >"$OUT/l/headline_r$r.log" 2>&1; say "headline r$r rc=$? $(date +%T) $(nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw --format=csv,noheader)"
done
python3 - "$OUT"/l/csv/headline_r*.csv <<'PY' | tee -a "$S"
import csv, sys, collections
d = collections.defaultdict(list)
for f in sorted(sys.argv[1:]):
    for r in csv.DictReader(open(f)):
        d[(r['kernel'], r['dtype'], f"{r['M']}x{r['N']}x{r['K']}")].append((float(r['tflops']), float(r['pct_of_cublas'])))
for k, v in sorted(d.items()):
    t = sorted(x for x, _ in v); p = sorted(y for _, y in v)
    print(f"{k[0]:18s} {k[1]:10s} {k[2]:16s} TFLOP/s {t[0]:.0f}-{t[-1]:.0f} median {t[len(t)//2]:.0f}  % {p[0]:.1f}-{p[-1]:.1f} median {p[len(p)//2]:.1f}  " + " ".join(f"{y:.1f}" for _, y in v))
PY
tar czf "$OUT/logs3.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
