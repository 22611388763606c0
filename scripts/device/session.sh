#!/usr/bin/env bash
# One script for a session's calls on the GPU machine (the device tool runs it in the repository's
# root; what it writes under $OUT comes back). Each argument is a step, run in order:
#
#   build            configure and build the tree in $BUILD (Release, sm_90a, $CMAKE_ARGS; CLI11 from
#                    .carry/cli11, since the GPU machine has no network), $TARGETS or everything
#   base             the same for the tree in .carry/base (`git archive <commit>` of the code to
#                    compare against, made here), into .carry/base/build, $BASE_TARGETS
#   builds           build and base at the same time (the machine's 16 cores serve both)
#   tests            ctest in $BUILD, tests matching $TESTS (all by default), $JOBS at a time
#   ab               the A/B: each binary of $AB ("ch11_every_shape --kernel every_shape --sizes ...",
#                    one per line) from the base build and from this one, alternating $ROUNDS times,
#                    each run's CSV kept ($OUT/ab/<round>_<base|new>_<n>.csv) and a summary of the
#                    medians side by side ($OUT/ab_summary.txt, tools/ab_summary.py)
#   sanitize         memcheck, racecheck and synccheck on each command of $SANITIZE (one per line),
#                    every kernel of the binary in one run; the summary keeps the tools' last lines
#   chapters         each command of $CHAPTERS (one per line) from $BUILD/bin, its CSV in $OUT/data
#   env              what a CUDA tool injects into the process's environment (for gemm/watchdog.hpp)
#
#   BUILD=build-dev CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TESTS='ch1[12]' bash scripts/device/session.sh build tests
#
# Everything lands under $OUT: summary.txt and ab_summary.txt, and logs.tgz with logs/, ab/ and data/
# (at most 8 files come back from the device tool).
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-dev}
OUT=${OUT:-/tmp/mm_out}
JOBS=${JOBS:-8}
ROUNDS=${ROUNDS:-2}
mkdir -p "$OUT/logs" "$OUT/data" "$OUT/ab"
summary=$OUT/summary.txt
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
for step in "$@"; do
  case $step in
  build) configure_and_build . "$BUILD" "${TARGETS:-}" "$OUT/logs/build.log" ;;
  base) configure_and_build .carry/base .carry/base/build "${BASE_TARGETS:-}" "$OUT/logs/build_base.log" ;;
  builds)
    configure_and_build .carry/base .carry/base/build "${BASE_TARGETS:-}" "$OUT/logs/build_base.log" &
    configure_and_build . "$BUILD" "${TARGETS:-}" "$OUT/logs/build.log"
    wait
    ;;
  tests)
    start=$SECONDS
    ctest --test-dir "$BUILD" -j "$JOBS" ${TESTS:+-R "$TESTS"} --output-on-failure --timeout 600 \
      --output-junit "$OUT/logs/ctest.xml" >"$OUT/logs/ctest.log" 2>&1
    say "tests ${TESTS:-all}: rc=$? ($((SECONDS - start)) s): $(grep -E 'tests passed|tests failed' "$OUT/logs/ctest.log" | tail -1)"
    grep -E '^ *[0-9]+ - .*\((Failed|Timeout|Exception|SEGFAULT|Subprocess)' "$OUT/logs/ctest.log" | head -40 | tee -a "$summary"
    grep -c '(Skipped)' "$OUT/logs/ctest.log" | sed 's/^/skipped: /' | tee -a "$summary"
    ;;
  ab)
    n=0
    while IFS= read -r cmd; do
      [ -z "$cmd" ] && continue
      n=$((n + 1))
      for r in $(seq 1 "$ROUNDS"); do
        for side in base new; do
          dir=$BUILD/bin
          [ $side = base ] && dir=.carry/base/build/bin
          # shellcheck disable=SC2086
          "$dir"/$cmd --csv "$OUT/ab/r${r}_${side}_${n}.csv" >"$OUT/logs/ab_r${r}_${side}_${n}.log" 2>&1 ||
            say "ab: '$cmd' ($side, round $r) exited $?"
        done
      done
    done <<<"${AB:-}"
    python3 tools/ab_summary.py "$OUT/ab" | tee -a "$summary" >"$OUT/ab_summary.txt"
    ;;
  sanitize)
    while IFS= read -r cmd; do
      [ -z "$cmd" ] && continue
      for tool in memcheck racecheck synccheck; do
        start=$SECONDS
        log=$OUT/logs/sanitize_${tool}_$(echo "$cmd" | tr -c 'A-Za-z0-9_' '_' | cut -c1-60).log
        # shellcheck disable=SC2086
        compute-sanitizer --tool "$tool" --print-limit 20 "$BUILD"/bin/$cmd >"$log" 2>&1
        rc=$?
        say "sanitize $tool '$cmd': rc=$rc ($((SECONDS - start)) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' "$log" | tail -2 | tr '\n' ' ')"
      done
    done <<<"${SANITIZE:-}"
    ;;
  chapters)
    while IFS= read -r cmd; do
      [ -z "$cmd" ] && continue
      name=$(echo "$cmd" | cut -d' ' -f1)
      # shellcheck disable=SC2086
      "$BUILD"/bin/$cmd --csv "$OUT/data/$name.csv" >"$OUT/logs/$name.log" 2>&1
      say "chapter '$cmd': rc=$?"
    done <<<"${CHAPTERS:-}"
    ;;
  env)
    compute-sanitizer --tool memcheck /usr/bin/env 2>&1 | grep -iE 'inject|preload|sanitizer|nv_' | tee -a "$summary"
    ;;
  *) say "unknown step: $step" ;;
  esac
done
tar -C "$OUT" -czf "$OUT/logs.tgz" logs ab data 2>/dev/null && rm -rf "$OUT/logs" "$OUT/ab" "$OUT/data"
