#!/usr/bin/env bash
# How the committed H200 results were produced: one call on the GPU machine runs
#   bash scripts/device/h200_session.sh [build] [base] [builds] [tests] [gtest] [chapters] [commands]
#                                       [sanitize] [sanitize_commands] [ab] [ncu] [repeat] [env]
# over a build made there (`build`) or on a CPU machine (configured there as build-lead/, e.g. for sm_90a with
# -DMM_CH07_SWEEP=ON; scripts/device/pack_build.sh copies it without its objects into .carry/; its
# absolute paths are /work/main/... there as here). CHAPTERS, NCU, SANITIZE and GTESTS
# select what runs (SANITIZE_ARGS: more arguments for the sanitized binaries, e.g. --kernel ...);
# BUILD names the build directory (build-lead by default), TARGETS what `build` builds.
# The session of 2026-11-25 ran, on each GPU (kind nvidia-h200, then nvidia-h100-x1):
#   BUILD=build-dev TARGETS="..." GTESTS="ch05 ch06" CHAPTERS="ch01 ch05 ch06" NCU="ch05 ch06" \
#     SANITIZE="ch0[56]_[lt]" bash scripts/device/h200_session.sh build gtest chapters ncu sanitize
# Everything it makes goes under $OUT as one tarball (at most 8 files come back) plus a summary.
# The same script serves the H100 runs (plots/data/h100-80gb-hbm3/): the step `build` configures and
# builds the whole project on the GPU machine instead (its 16 cores take about 80 s), with CLI11's
# headers and CMake package carried in .carry/cli11 (include/CLI, share/cmake/CLI11).
#
# For a restructuring measured against the code before it (the session of 2026-11-29):
#   base               builds the tree in .carry/base (`git archive <commit>` of the code to compare
#                      against, made on the CPU machine and carried) into .carry/base/build, BASE_TARGETS
#   builds             build and base at the same time (the 16 cores serve both)
#   ab                 each command of AB (one per line, a binary of bin/ and its arguments) from the base
#                      build and from this one, alternating ROUNDS times (2); the CSVs in $OUT/ab and
#                      their medians side by side in $OUT/ab_summary.txt (tools/ab_summary.py)
#   commands           each command of COMMANDS (one per line) from bin/, its CSV in $OUT/data/<binary>.csv
#   sanitize_commands  memcheck, racecheck and synccheck on each command of SANITIZE_COMMANDS (one per
#                      line), every kernel of the binary in one run
#   env                what compute-sanitizer injects into a process's environment (gemm/watchdog.hpp
#                      recognizes the tools by it)
# e.g. BUILD=build-dev CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON BASE_TARGETS="ch11_every_shape" CTEST_ARGS="-R test_ch11" \
#        AB="ch11_every_shape --no-check --sizes 4096" bash scripts/device/h200_session.sh builds tests ab
set -uo pipefail
cd "$(dirname "$0")/../.."
# A build carried without its object files (the tool carries at most 64 MiB) goes back in place.
if [ -d .carry/build-lead ] && [ ! -e build-lead ]; then mv .carry/build-lead build-lead; fi
BUILD=${BUILD:-build-lead}
OUT=${OUT:-/tmp/mm_out}
mkdir -p "$OUT/data" "$OUT/logs"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(tests chapters sanitize)
bin=$BUILD/bin
summary=$OUT/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

cli11=()
[ -d .carry/cli11 ] && cli11=(-DCLI11_DIR="$PWD/.carry/cli11/share/cmake/CLI11")
configure_and_build() {  # $1 source, $2 build dir, $3 targets, $4 log
  local start=$SECONDS
  { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a "${cli11[@]}" \
      -DMM_PYTHON="$(command -v python3)" ${CMAKE_ARGS:-} &&
    cmake --build "$2" -j16 ${3:+--target $3} -- -k 0; } >"$4" 2>&1
  local rc=$?
  say "build $2: rc=$rc ($((SECONDS - start)) s)"
  [ $rc -eq 0 ] || tail -30 "$4" | tee -a "$summary"
}

say "$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader)"

for step in "${steps[@]}"; do
  case $step in
  build) configure_and_build . "$BUILD" "${TARGETS:-}" "$OUT/logs/build.log" ;;
  base) configure_and_build .carry/base .carry/base/build "${BASE_TARGETS:-}" "$OUT/logs/build_base.log" ;;
  builds)
    configure_and_build .carry/base .carry/base/build "${BASE_TARGETS:-}" "$OUT/logs/build_base.log" &
    configure_and_build . "$BUILD" "${TARGETS:-}" "$OUT/logs/build.log"
    wait
    ;;
  tests)
    # The build was configured on the CPU machine: its CTest files name that machine's CMake
    # module for test discovery and the plotting venv's Python. Give both the same paths here.
    # scripts/device/cmake/GoogleTestAddTests.cmake is CMake 3.25.1's module, verbatim (it marks
    # "[  SKIPPED ]" tests as skipped itself; tests/CMakeLists.txt adds nothing to it), so it
    # stands in only for a build configured with CMake 3.25; this machine's CMake 4.x runs it.
    gta=$(grep -rhoE '/[^ "]*/GoogleTestAddTests.cmake' "$BUILD/tests" | head -1)
    if [ -n "$gta" ] && [ ! -e "$gta" ]; then
      if [[ "$gta" == */cmake-3.25/* ]]; then
        mkdir -p "$(dirname "$gta")" && cp scripts/device/cmake/GoogleTestAddTests.cmake "$gta"
      else
        say "tests: $BUILD names $gta, which is not here; scripts/device/cmake has CMake 3.25's module only"
      fi
    fi
    # A wrapper, not a symlink: a symlinked venv Python would lose its own site-packages (matplotlib).
    if [ ! -x .venv/bin/python ]; then
      mkdir -p .venv/bin && printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v python3)" >.venv/bin/python && chmod +x .venv/bin/python
    fi
    start=$SECONDS
    ctest --test-dir "$BUILD" -j8 --output-on-failure ${CTEST_ARGS:-} >"$OUT/logs/ctest.log" 2>&1
    say "ctest rc=$? ($((SECONDS - start)) s): $(grep -E 'tests passed|tests failed' "$OUT/logs/ctest.log" | tail -1)"
    grep -E '\(Failed\)|\(Skipped\)|Not Run' "$OUT/logs/ctest.log" | head -20 | tee -a "$summary"
    ;;
  gtest)
    # GTESTS: test binaries run directly, one process each (faster than ctest's process per test when
    # only a few chapters changed), e.g. GTESTS="ch05 ch06".
    for t in ${GTESTS:-ch05 ch06}; do
      start=$SECONDS
      "$BUILD/tests/$t/test_$t" --gtest_brief=1 >"$OUT/logs/gtest_$t.log" 2>&1
      say "gtest $t rc=$? ($((SECONDS - start)) s): $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \]' "$OUT/logs/gtest_$t.log" | tr '\n' ' ')"
    done
    ;;
  chapters)
    # CHAPTERS: space-separated name prefixes ("ch04 ch07"), default every chapter.
    for exe in $(for prefix in ${CHAPTERS:-ch0}; do ls "$bin"/"$prefix"* 2>/dev/null; done); do
      name=$(basename "$exe")
      extra=()
      [ "$name" = ch01_cpu_matmul ] && extra=(--thread-sweep)  # measure how threads scale
      case $name in
        ch06_sizes) ;;  # the fp32 size sweep: RRR only (chapter 03's kernel takes no other order), ~1 min
        ch05*|ch06*|ch07_pipelined_simt|ch08_tensor_cores|ch09_hopper_wgmma_tma|ch10_hopper_persistent) extra=(--layout all) ;;  # every storage order is the same kernel
        ch07_sweep) extra=(--sizes 4096,8192 --layout RRR,RCR) ;;  # the block-tile sweep behind ch07's last step
        ch10_sweep) extra=(--sizes 2048,4096,8192 --layout RRR,RCR) ;;  # the configuration sweep behind ch10's last step
        ch10_sizes) extra=(--layout all) ;;  # ch10's best against cuBLAS from 1024^3 to 16384^3
      esac
      start=$SECONDS
      "$exe" --csv "$OUT/data/$name.csv" "${extra[@]}" >"$OUT/logs/$name.log" 2>&1
      say "$name rc=$? ($((SECONDS - start)) s)"
    done
    ;;
  sanitize)
    # Small odd sizes: every partial-tile path runs, and the tools stay fast.
    for exe in "$bin"/${SANITIZE:-ch0[2-9]}*; do
      name=$(basename "$exe")
      # Chapter 09 takes K (and N in RRR) in multiples of 8 only (TMA's 16-byte pitch): its own odd sizes.
      # Chapter 10 also at a size where every persistent block (cluster) loops over several tiles.
      # Chapter 08's zero-fill kernels take their own path only where N and K are multiples of 8 (else
      # their fallback runs): one size of each kind.
      case $name in ch04*) sizes="33x4097,67x45" ;; ch08_t*) sizes="67x131x45,129x264x72" ;;
        ch09*) sizes="67x136x48,129x264x72" ;;
        ch10*) sizes="67x136x48,129x264x72,2048x4096x64" ;; *) sizes="67x131x45,129x257x33" ;; esac
      for tool in memcheck racecheck; do
        compute-sanitizer --tool $tool --error-exitcode 9 "$exe" --sizes "$sizes" --reps 1 --warmup 0 --layout all ${SANITIZE_ARGS:-} \
          >"$OUT/logs/sanitize_${tool}_$name.log" 2>&1 ||
        compute-sanitizer --tool $tool --error-exitcode 9 "$exe" --sizes "$sizes" --reps 1 --warmup 0 \
          >"$OUT/logs/sanitize_${tool}_$name.log" 2>&1
        say "sanitize $tool $name rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/logs/sanitize_${tool}_$name.log" | tail -1)"
      done
    done
    ;;
  ncu)
    # What the chapter READMEs quote from the profiler: sectors per request of the naive kernels,
    # the limiter of the tiled kernel, shared-memory bank conflicts of chapters 04-06.
    prof() {  # prof <log name> <binary> <ncu args...> -- <binary args...>
      local name=$1 exe=$bin/$2; shift 2
      [[ " ${NCU:-ch02 ch03 ch04 ch05 ch06 ch07_RRR ch07_RCR ch08_RRR ch08_RCR ch09_RRR ch09_RCR ch10_RRR ch10_RCR} " == *" $name "* ]] || return 0
      [ -x "$exe" ] || { say "ncu $name: no $exe"; return; }
      local nargs=()
      while [ "$1" != -- ]; do nargs+=("$1"); shift; done; shift
      ncu --clock-control none "${nargs[@]}" "$exe" --reps 1 --warmup 0 --no-check "$@" >"$OUT/logs/ncu_$name.log" 2>&1
      say "ncu $name rc=$?"
    }
    sect=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,dram__bytes_read.sum,gpu__time_duration.sum
    banks=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,gpu__time_duration.sum
    prof ch02 ch02_naive_gpu --kernel-name regex:naive --metrics $sect -- --sizes 1024
    prof ch03 ch03_tiled_shared_memory --kernel-name regex:tiled --section SpeedOfLight --section MemoryWorkloadAnalysis --metrics $banks -- --sizes 4096 --kernel tiled_32,tiled_16
    prof ch04 ch04_copy_and_transpose --kernel-name regex:"copy|transpose" --metrics $banks,dram__bytes_read.sum,dram__bytes_write.sum -- --sizes 4096
    prof ch05 ch05_layout_matmul --kernel-name regex:layout_gemm --section SpeedOfLight --section Occupancy --section WarpStateStats --metrics $banks -- --sizes 4096 --layout RRR,RCR,CRR,CCR
    # Chapter 06: per kernel the stall reasons (--print-details all prints the whole table), the issue
    # rate and FMA-pipe use, so the page can say what limits it; sectors, wavefronts and conflicts.
    pipes=sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__registers_per_thread
    prof ch06 ch06_tiled_copy_mma --kernel-name regex:"tiled_gemm|tiled_prefetch_gemm|layout_gemm" --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --print-details all --metrics $banks,$sect,$pipes -- --sizes 4096
    # Chapter 07: per kernel the stall reasons, issue and FMA-pipe use, shared-memory wavefronts and
    # conflicts, registers and occupancy; cuBLAS's own kernel profiled the same way beside them.
    for order in RRR RCR; do
      prof ch07_$order ch07_pipelined_simt --kernel-name regex:gemm --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --print-details all --metrics $banks,$pipes -- --sizes 4096 --layout $order
    done
    # Chapter 08: the same per kernel, with the tensor pipe's activity and the ldmatrix wavefronts and
    # conflicts (plain against swizzled tiles); cuBLAS's kernels (bf16 and tf32) beside them.
    # CH08_KERNELS: only these kernels of the chapter (e.g. the steps a session added).
    tensor=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_tensor_op_hmma.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
    for order in RRR RCR; do
      prof ch08_$order ch08_tensor_cores --kernel-name regex:"gemm|xmma|nvjet|sm90|sm80|cutlass" --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --print-details all --metrics $banks,$tensor -- --sizes 4096 --layout $order ${CH08_KERNELS:+--kernel $CH08_KERNELS}
    done
    # Chapter 09: wgmma's tensor-pipe activity, stall reasons, shared-memory and L2 throughput per
    # kernel, and cuBLAS's own (wgmma) kernel profiled the same way beside them.
    gmma=sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_gmma.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,gpu__time_duration.sum
    for order in RRR RCR; do
      prof ch09_$order ch09_hopper_wgmma_tma --kernel-name regex:"gemm|xmma|nvjet|sm90|cutlass" --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --print-details all --metrics $gmma -- --sizes 4096 --layout $order
    done
    # Chapter 10: the same counters for each step, chapter 09's best and cuBLAS's kernel.
    for order in RRR RCR; do
      prof ch10_$order ch10_hopper_persistent --kernel-name regex:"gemm|xmma|nvjet|sm90|cutlass" --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --print-details all --metrics $gmma -- --sizes 4096 --layout $order
    done
    ;;
  commands)
    while IFS= read -r cmd; do
      [ -z "$cmd" ] && continue
      name=$(echo "$cmd" | cut -d' ' -f1)
      start=$SECONDS
      # shellcheck disable=SC2086
      "$bin"/$cmd --csv "$OUT/data/$name.csv" >"$OUT/logs/$name.log" 2>&1
      say "'$cmd' rc=$? ($((SECONDS - start)) s)"
    done <<<"${COMMANDS:-}"
    ;;
  sanitize_commands)
    while IFS= read -r cmd; do
      [ -z "$cmd" ] && continue
      for tool in memcheck racecheck synccheck; do
        start=$SECONDS
        log=$OUT/logs/sanitize_${tool}_$(echo "$cmd" | tr -c 'A-Za-z0-9_' '_' | cut -c1-60).log
        # shellcheck disable=SC2086
        compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 20 "$bin"/$cmd >"$log" 2>&1
        say "sanitize $tool '$cmd': rc=$? ($((SECONDS - start)) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)"
      done
    done <<<"${SANITIZE_COMMANDS:-}"
    ;;
  ab)
    mkdir -p "$OUT/ab"
    n=0
    while IFS= read -r cmd; do
      [ -z "$cmd" ] && continue
      n=$((n + 1))
      for r in $(seq 1 "${ROUNDS:-2}"); do
        for side in base new; do
          dir=$bin
          [ $side = base ] && dir=.carry/base/build/bin
          # shellcheck disable=SC2086
          "$dir"/$cmd --csv "$OUT/ab/r${r}_${side}_${n}.csv" >"$OUT/logs/ab_r${r}_${side}_${n}.log" 2>&1 ||
            say "ab: '$cmd' ($side, round $r) exited $?"
        done
      done
    done <<<"${AB:-}"
    python3 tools/ab_summary.py "$OUT/ab" >"$OUT/ab_summary.txt"
    tail -1 "$OUT/ab_summary.txt" | tee -a "$summary"
    ;;
  env)
    compute-sanitizer --tool memcheck /usr/bin/env 2>&1 | grep -iE 'inject|preload|sanitizer' | tee -a "$summary"
    ;;
  repeat)
    # The headline run again (REPEATS times), for the spread of the ratios a README quotes.
    for i in $(seq "${REPEATS:-2}"); do
      "$bin"/ch10_hopper_persistent --sizes 4096,8192 --layout all --kernel ch09_wgmma_in_flight,tma_store \
        --csv "$OUT/data/ch10_repeat_$i.csv" >"$OUT/logs/ch10_repeat_$i.log" 2>&1
      say "ch10 repeat $i rc=$?"
    done
    ;;
  *) say "unknown step $step" ;;
  esac
  # After every step, so that a call cut short by its time limit still brings back what ran.
  tar czf "$OUT/results.tgz" -C "$OUT" data logs $( [ -d "$OUT/ab" ] && echo ab )
done
rm -rf "$OUT/data" "$OUT/logs"
cat "$summary"
