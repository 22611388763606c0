#!/usr/bin/env bash
# Issue 26, chapter 08 direction (a) on the H200: precomputed_addresses (no_copy_branch with its K loop's
# address arithmetic computed before the loop) measured beside no_copy_branch and cuBLAS. One call from
# the repository root on the GPU machine:
#
#   OUT=$OUT bash scripts/device/issue26a.sh
#
# It configures and builds only chapter 08 and its tests (sm_90a, appendix steps on: the step is one, into build-i26a/; CLI11's
# CMake package from .carry/cli11 as in h200_session.sh), runs test_ch08 (every step of the list at
# every edge size, both storage orders, and the CPU tests; 200 s at most), compute-sanitizer memcheck,
# racecheck and synccheck on the new kernel at odd sizes (edge blocks, whole-tile blocks, K of one
# tile, mixed), the binary at 4096³ and 8192³ in RRR and RCR twice, alternating the two kernels' order,
# into CSVs, and one ncu run at 4096³ RCR of both kernels (--clock-control none): tensor pipe use, issue
# slots busy, instructions executed. Everything comes back as $OUT/issue26a.tgz plus $OUT/summary.txt.
# Expected on 16 cores: build about 2.5 min, test_ch08 about 1.5 min, sanitizers about 1 min, timing
# about 1.5 min, ncu under 1 min: under 8 minutes in all.
# Env: STEPS="build gtest sanitize time ncu" (default all), BUILD (default build-i26a), JOBS (16).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/mm_out}
BUILD=${BUILD:-build-i26a}
JOBS=${JOBS:-16}
mkdir -p "$OUT/data" "$OUT/logs"
summary=$OUT/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
pack() { tar czf "$OUT/issue26a.tgz" -C "$OUT" data logs summary.txt; }  # after every step: a cut-short call still returns what ran
bin=$BUILD/bin
NEW=precomputed_addresses
OLD=no_copy_branch

say "$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader 2>&1 || true)"
say "git $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

for step in ${STEPS:-build gtest sanitize time ncu}; do
  start=$SECONDS
  case $step in
  build)
    cli11=()
    [ -d .carry/cli11 ] && cli11=(-DCLI11_DIR="$PWD/.carry/cli11/share/cmake/CLI11")
    rc=0
    { cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DMM_APPENDIX_STEPS=ON \
        "${cli11[@]}" -DMM_PYTHON="$(command -v python3)" &&
      cmake --build "$BUILD" -j"$JOBS" --target ch08_tensor_cores test_ch08; } >"$OUT/logs/build.log" 2>&1 || rc=$?
    say "build rc=$rc ($((SECONDS - start)) s); warnings: $(grep -c -i 'warning' "$OUT/logs/build.log" || true)"
    # Registers and spills of the two kernels as built here (cuobjdump -res-usage of the steps library).
    cuobjdump -res-usage "$BUILD/chapters/08_tensor_cores/libch08_steps.a" 2>/dev/null | python3 -c '
import sys, re, subprocess
lines = sys.stdin.read().split("\n")
for i, l in enumerate(lines):
    m = re.match(r"\s*Function (\S+)", l)
    cfg = m and re.search(r"_\d+(NoCopyBranchCfg|PrecomputedAddressesCfg)E", m.group(1))
    if not cfg:
        continue
    name = m.group(1).rstrip(":")
    try:
        dem = subprocess.run(["c++filt"], input=name, capture_output=True, text=True).stdout
    except OSError:
        dem = ""
    order = "RRR" if "mm::tuple<mm::C<1>, int>" in dem else ("RCR" if dem else "?")
    f = lines[i + 1].split()
    print(f"res-usage {cfg.group(1)} {order}: {f[0]} {f[1]} {f[3]}")
' | tee -a "$summary" || true
    [ $rc -eq 0 ] || { tail -30 "$OUT/logs/build.log"; pack; exit 1; }
    ;;
  gtest)
    rc=0
    timeout 200 "$BUILD/tests/ch08/test_ch08" --gtest_brief=1 >"$OUT/logs/gtest_ch08.log" 2>&1 || rc=$?
    say "gtest ch08 rc=$rc ($((SECONDS - start)) s): ran $(grep -oE '^\[==========\] [0-9]+ tests?' "$OUT/logs/gtest_ch08.log" | tail -1 | grep -oE '[0-9]+') $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \]' "$OUT/logs/gtest_ch08.log" | tr '\n' ' ')"
    grep -E '^\[  FAILED  \]' "$OUT/logs/gtest_ch08.log" | head -10 | tee -a "$summary" || true
    ;;
  sanitize)
    # 129x264x72: edge blocks, K not a whole tile (the predicated loop); 256x512x128: whole tiles only
    # (the one-predicate loop); 200x300x128: block (0,0) whole, the others edge; 384x768x64: one K tile
    # (fewer than S-1: the prologue issues one, the loop's copies are all past the end); 1x8x8: the smallest
    # the 16-byte copies take.
    sizes=129x264x72,256x512x128,200x300x128,384x768x64,1x8x8
    for tool in memcheck racecheck synccheck; do
      rc=0
      compute-sanitizer --tool $tool --error-exitcode 9 "$bin/ch08_tensor_cores" --kernel $NEW --sizes $sizes \
        --layout RRR,RCR --reps 1 --warmup 0 >"$OUT/logs/sanitize_${tool}.log" 2>&1 || rc=$?
      say "sanitize $tool $NEW rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/logs/sanitize_${tool}.log" | tail -1)"
    done
    ;;
  time)
    # Two runs, the kernels' order alternated (the harness runs them in the order given), cuBLAS in each.
    for i in 1 2; do
      kernels=$OLD,$NEW
      [ $i -eq 2 ] && kernels=$NEW,$OLD
      rc=0
      "$bin/ch08_tensor_cores" --kernel $kernels --sizes 4096,8192 --layout RRR,RCR \
        --csv "$OUT/data/ch08_issue26a_run$i.csv" >"$OUT/logs/ch08_run$i.log" 2>&1 || rc=$?
      say "ch08 run $i ($kernels) rc=$rc ($((SECONDS - start)) s)"
    done
    # % of cuBLAS per kernel, order and size, both runs side by side (the harness's CSV columns).
    python3 - "$OUT/data/ch08_issue26a_run1.csv" <<'EOF' | tee -a "$summary" || true
import csv, sys
path = sys.argv[1]
runs = [list(csv.DictReader(open(path))), list(csv.DictReader(open(path.replace('run1', 'run2'))))]
pct = {}
for i, rows in enumerate(runs):
    for r in rows:
        pct.setdefault((r['layout'], r['M'], r['kernel']), [None, None])[i] = f"{float(r['pct_of_cublas']):.1f}%/{float(r['tflops']):.1f}"
print('ch08_issue26a (% of cuBLAS / TFLOP/s, run 1 | run 2)')
for (layout, m, kernel), (a, b) in sorted(pct.items()):
    print(f'  {layout} {m:>5} {kernel:<22} {a} | {b}')
EOF
    ;;
  ncu)
    # The prediction's counters: tensor pipe use, issue slots busy, instructions executed (and the
    # registers and duration beside them), both kernels in one run at 4096³ RCR.
    metrics=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__inst_executed_pipe_tensor_op_hmma.sum,launch__registers_per_thread,gpu__time_duration.sum
    rc=0
    ncu --clock-control none --kernel-name regex:"$OLD|$NEW" --metrics $metrics \
      "$bin/ch08_tensor_cores" --kernel $OLD,$NEW --sizes 4096 --layout RCR --reps 1 --warmup 0 --no-check \
      >"$OUT/logs/ncu_ch08_RCR.log" 2>&1 || rc=$?
    say "ncu ch08 RCR rc=$rc ($((SECONDS - start)) s)"
    grep -E "_gemm_kernel|hmma_cycles_active|issue_active|inst_executed.sum|registers_per_thread|duration" \
      "$OUT/logs/ncu_ch08_RCR.log" | sed -E 's/^ +//; s/(gemm_kernel)<.*/\1/' | tee -a "$summary" || true
    ;;
  *) say "unknown step $step" ;;
  esac
  pack
done
say "done in $SECONDS s; results in $OUT/issue26a.tgz"
pack
rm -rf "$OUT/data" "$OUT/logs"
