#!/usr/bin/env bash
# Issue 26 on the H200: chapter 07's register_transpose (a row-major A copied through registers) and
# chapter 08's sixteen_warps (appendix: four warps per scheduler), measured beside the steps they
# follow (deep_k, no_copy_branch) and cuBLAS. One call from the repository root:
#
#   OUT=$OUT bash scripts/device/issue26.sh
#
# It configures and builds only chapters 07 and 08 and their tests (sm_90a, with the appendix, into
# build-i26/; CLI11's CMake package from .carry/cli11 as in h200_session.sh), runs the new steps'
# GoogleTests, compute-sanitizer memcheck and racecheck on small odd sizes, the two binaries at 4096³
# and 8192³ twice (ch07: all four storage orders; ch08: RRR and RCR) into CSVs, and ncu at 4096³
# (--clock-control none) with the counters the pages quote: stall reasons, issue and pipe use,
# shared-memory wavefronts and bank conflicts. Everything comes back as $OUT/issue26.tgz plus
# $OUT/summary.txt. Expected: build 2-3 min on 16 cores, tests and sanitizers about 1 min, timing
# runs about 1 min, ncu about 1.5 min.
# Env: STEPS="build gtest sanitize time ncu" (default all), BUILD (default build-i26), JOBS (16).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/mm_out}
BUILD=${BUILD:-build-i26}
JOBS=${JOBS:-16}
mkdir -p "$OUT/data" "$OUT/logs"
summary=$OUT/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
pack() { tar czf "$OUT/issue26.tgz" -C "$OUT" data logs; }  # after every step: a cut-short call still returns what ran
bin=$BUILD/bin
# The kernels of the issue: the new steps and the ones they are measured against.
CH07_KERNELS=deep_k,register_transpose
CH08_KERNELS=no_copy_branch,sixteen_warps

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
      cmake --build "$BUILD" -j"$JOBS" --target ch07_pipelined_simt ch08_tensor_cores test_ch07 test_ch08; } \
      >"$OUT/logs/build.log" 2>&1 || rc=$?
    say "build rc=$rc ($((SECONDS - start)) s); warnings: $(grep -c -i 'warning' "$OUT/logs/build.log" || true)"
    [ $rc -eq 0 ] || { tail -30 "$OUT/logs/build.log"; pack; exit 1; }
    ;;
  gtest)
    # The new steps at every size and storage order of the lists, plus the tests written for them.
    gtest() {  # gtest <chapter> <filter>
      local rc=0
      "$BUILD/tests/$1/test_$1" --gtest_brief=1 --gtest_filter="$2" >"$OUT/logs/gtest_$1.log" 2>&1 || rc=$?
      say "gtest $1 rc=$rc ($((SECONDS - start)) s): ran $(grep -oE '^\[==========\] [0-9]+ tests?' "$OUT/logs/gtest_$1.log" | tail -1 | grep -oE '[0-9]+') $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \]' "$OUT/logs/gtest_$1.log" | tr '\n' ' ')"
      grep -E '^\[  FAILED  \]' "$OUT/logs/gtest_$1.log" | head -10 | tee -a "$summary" || true
    }
    gtest ch07 '*register_transpose*:*RegisterTranspose*:ch07_PipelinedGemm.*'
    gtest ch08 '*sixteen_warps*:ch08_Gemm.*'
    ;;
  sanitize)
    # Small odd sizes: every partial-tile path runs, and the tools stay fast (as h200_session.sh).
    san() {  # san <binary> <kernels> <sizes> <layouts>
      local tool rc
      for tool in memcheck racecheck; do
        rc=0
        compute-sanitizer --tool $tool --error-exitcode 9 "$bin/$1" --kernel "$2" --sizes "$3" --layout "$4" \
          --reps 1 --warmup 0 >"$OUT/logs/sanitize_${tool}_$1.log" 2>&1 || rc=$?
        say "sanitize $tool $1 ($2) rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/logs/sanitize_${tool}_$1.log" | tail -1)"
      done
    }
    # Odd K takes register_transpose's element-wise path (a row-major A's rows are not 8-byte aligned),
    # even K its pair loads, 256³ its full tiles; no_copy_branch's configurations need N and K in
    # multiples of 8 (else the fallback kernel runs instead).
    san ch07_pipelined_simt register_transpose 67x131x45,129x257x33,130x260x20,256x256x64 all
    san ch08_tensor_cores sixteen_warps 67x136x48,129x264x72 RRR,RCR
    ;;
  time)
    # Two runs each, for the spread; deep_k and no_copy_branch in the same process as the new steps.
    for i in 1 2; do
      rc=0
      "$bin/ch07_pipelined_simt" --kernel $CH07_KERNELS --sizes 4096,8192 --layout all \
        --csv "$OUT/data/ch07_issue26_run$i.csv" >"$OUT/logs/ch07_run$i.log" 2>&1 || rc=$?
      say "ch07 run $i rc=$rc ($((SECONDS - start)) s)"
      rc=0
      "$bin/ch08_tensor_cores" --kernel $CH08_KERNELS --sizes 4096,8192 --layout RRR,RCR \
        --csv "$OUT/data/ch08_issue26_run$i.csv" >"$OUT/logs/ch08_run$i.log" 2>&1 || rc=$?
      say "ch08 run $i rc=$rc ($((SECONDS - start)) s)"
    done
    # % of cuBLAS per kernel, order and size, both runs side by side (the harness's CSV columns).
    python3 - "$OUT"/data/ch0[78]_issue26_run1.csv <<'EOF' | tee -a "$summary" || true
import csv, sys
for path in sys.argv[1:]:
    runs = [list(csv.DictReader(open(path))), list(csv.DictReader(open(path.replace('run1', 'run2'))))]
    pct = {}
    for i, rows in enumerate(runs):
        for r in rows:
            pct.setdefault((r['layout'], r['M'], r['kernel']), [None, None])[i] = f"{float(r['pct_of_cublas']):.1f}%/{float(r['tflops']):.1f}"
    print(path.rsplit('/', 1)[-1].replace('_run1', ''), '(% of cuBLAS / TFLOP/s, run 1 | run 2)')
    for (layout, m, kernel), (a, b) in sorted(pct.items()):
        print(f'  {layout} {m:>5} {kernel:<22} {a} | {b}')
EOF
    ;;
  ncu)
    # As h200_session.sh's ch07/ch08 profiles: per kernel the stall reasons (WarpStateStats, all
    # details), issue and pipe use, shared-memory wavefronts and bank conflicts (loads and stores),
    # registers. Chapter 07 also in CRR, the order the row-major-A kernels are measured against.
    banks=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,gpu__time_duration.sum
    pipes=sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__registers_per_thread,smsp__sass_inst_executed_op_global_ld.sum
    tensor=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_tensor_op_hmma.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__warps_active.avg.per_cycle_active
    sections=(--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --print-details all)
    for order in RRR RCR CRR; do
      rc=0
      ncu --clock-control none --kernel-name regex:"fragment_pipelined|register_transpose" "${sections[@]}" \
        --metrics $banks,$pipes "$bin/ch07_pipelined_simt" --kernel $CH07_KERNELS --sizes 4096 --layout $order \
        --reps 1 --warmup 0 --no-check >"$OUT/logs/ncu_ch07_$order.log" 2>&1 || rc=$?
      say "ncu ch07 $order rc=$rc ($((SECONDS - start)) s)"
    done
    for order in RRR RCR; do
      rc=0
      ncu --clock-control none --kernel-name regex:"no_copy_branch" "${sections[@]}" \
        --metrics $banks,$tensor "$bin/ch08_tensor_cores" --kernel $CH08_KERNELS --sizes 4096 --layout $order \
        --reps 1 --warmup 0 --no-check >"$OUT/logs/ncu_ch08_$order.log" 2>&1 || rc=$?
      say "ncu ch08 $order rc=$rc ($((SECONDS - start)) s)"
    done
    ;;
  *) say "unknown step $step" ;;
  esac
  pack
done
rm -rf "$OUT/data" "$OUT/logs"
say "done in $SECONDS s; results in $OUT/issue26.tgz"
