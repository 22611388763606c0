#!/usr/bin/env bash
# Builds what it runs, runs every chapter this machine can, and draws the figures (the README's
# "run everything" command). It prints its plan, with rough times, before it starts.
#
#   scripts/run_all.sh [--check-only]
#
# Without a GPU: builds chapter 01 only (about a minute on 2 cores), runs it on the CPU (CSV in
# build/results/), and draws the figures from the committed H200 results in plots/data/h200 into
# docs/images/, where they come out byte for byte as committed (matplotlib pinned; with another
# version they go to build/figures/ instead). About 4 minutes on 2 cores; `git status` stays clean.
# With a GPU: builds the chapter binaries (the CMake target `chapters`, no tests), every chapter
# writes plots/data/<gpu>/chNN_<name>.csv (chapter 01 on this machine's CPU), then the figures go
# to docs/images/ and the README tables are refreshed.
# Without matplotlib (offline, pip cannot install plots/requirements.txt) everything else still runs and
# the CSVs are written; the figures are skipped with one line ("figures skipped: ...") that says why and
# which command draws them later, and the run exits 0 (scripts/common.sh, mm_python, decides).
# The tests are scripts/test.sh's (it builds everything: about 21 minutes on 2 cores).
#
# --check-only: print the plan, check the tools and the Python (setting up .venv as a real run would),
# say whether the figures will be drawn (or print the skip line a real run would end with), and stop:
# nothing is configured, built or run. Seconds; .ci/run uses it to check the offline path.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

check_only=0
for arg in "$@"; do
  case $arg in
    --check-only) check_only=1 ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$MM_ROOT/scripts/run_all.sh"; exit 0 ;;
    *) die "unknown argument '$arg'. Usage: bash scripts/run_all.sh [--check-only] (--help says more)" ;;
  esac
done

CHAPTERS=(ch01_cpu_matmul ch02_naive_gpu ch03_tiled_shared_memory ch04_copy_and_transpose
          ch05_layout_matmul ch06_tiled_copy_mma ch06_sizes ch07_pipelined_simt ch08_tensor_cores ch08_mma_ceiling
          ch09_hopper_wgmma_tma ch10_hopper_persistent ch10_sizes ch11_every_shape ch12_hopper_datatypes
          ch12_wgmma_ceiling ch13_grouped_moe)

# Rough times measured on a 2-core machine (seconds; mm_minutes scales the build to this machine's cores):
CONFIGURE_S=25         # cmake --preset default, fresh
BUILD_CH01_S=60        # the harness and chapter 01, fresh
BUILD_CHAPTERS_S=500   # every chapter binary, fresh, one architecture (this GPU's): about half of test.sh's build
RUN_CH01_S=100         # chapter 01 at its default sizes (mostly the naive loop at 1024³)
DRAW_S=20              # plots/plot.py on the committed data

started=$SECONDS
if gpu="$(mm_gpu_name)"; then
  slug="$(mm_gpu_slug "$gpu")"   # the same directory as scripts/results_dir.sh (the chapter READMEs)
  out="plots/data/$slug"
  say "plan: GPU $gpu"
  cat <<EOF
  build: the chapter binaries (cmake --build build --target chapters; no tests): $(mm_minutes "$(mm_scaled $((CONFIGURE_S + BUILD_CHAPTERS_S)))") here when
         build/ is fresh (about 5 min on 2 cores), less when it is up to date
  run:   ${CHAPTERS[*]}
         on this GPU (chapter 01 on the CPU, with --thread-sweep), CSVs into $out/: tens of minutes
  draw:  the figures into docs/images/ and the README tables from $out/
  not:   the tests (bash scripts/test.sh builds and runs them)
EOF
else
  say "plan: no GPU found (nvidia-smi lists none)"
  cat <<EOF
  build: chapter 01 only (cmake --build build --target ch01_cpu_matmul): $(mm_minutes "$(mm_scaled $((CONFIGURE_S + BUILD_CH01_S)))") here when build/ is
         fresh, seconds when it is up to date
  run:   ch01_cpu_matmul on this CPU at 256³, 512³ and 1024³: $(mm_minutes $RUN_CH01_S) (progress on stderr),
         CSV into build/results/ch01_cpu_matmul.csv
  draw:  the figures from the committed H200 results (plots/data/h200): $(mm_minutes $DRAW_S)
  skip:  chapters 02-12 (they need a GPU) and the tests (bash scripts/test.sh: it builds
         everything, about 9 min on 2 cores)
  in all: $(mm_minutes $(( $(mm_scaled $((CONFIGURE_S + BUILD_CH01_S))) + RUN_CH01_S + DRAW_S ))) on this machine ($MM_JOBS cores) from a fresh clone
EOF
fi

say "checking the tools and the Python for the figures"
mm_check_tools
mm_python
mm_stop_if_missing

# The figures: drawn from $1 into $2, or, without matplotlib, the one line that says why and how to draw
# them later (mm_python decided which).
draw_figures() {
  if [ -z "$MM_FIGURES" ]; then
    mm_figures_skipped "$1" "$2"
    return 0
  fi
  say "drawing the figures from $1 into $2/"
  "$MM_PY" plots/plot.py --data "$1" --out "$2"
}
# Where the figures go: plots/data/<gpu> into docs/images/; without a GPU, the committed H200 results again,
# in place when this matplotlib draws them byte for byte (the tree stays clean), else beside the build,
# so that a different version does not rewrite them.
if [ -n "${gpu:-}" ]; then
  data="$out" figures=docs/images
else
  data=plots/data/h200 figures=docs/images
  [ -z "$MM_FIGURES" ] || mm_draws_committed_figures || figures=build/figures
fi

if [ "$check_only" -eq 1 ]; then
  if [ -n "$MM_FIGURES" ]; then
    echo "figures: drawn with $MM_PY (matplotlib $(mm_mpl_version "$MM_PY")) from $data into $figures/"
  else
    mm_figures_skipped "$data" "$figures"
  fi
  echo "check only (--check-only): nothing configured, built or run"
  exit 0
fi
mm_configure

if [ -n "${gpu:-}" ]; then
  mm_build chapters
  built=()
  for c in "${CHAPTERS[@]}"; do
    [ -x "build/bin/$c" ] && built+=("$c")
  done
  [ "${#built[@]}" -gt 0 ] || die "no chapter binary in build/bin/"
  mkdir -p "$out"
  say "GPU: $gpu; results go to $out/"
  failed=()
  for c in "${built[@]}"; do
    say "running $c"
    # The same arguments as the committed H200 run (scripts/device/h200_session.sh).
    args=()
    case $c in
      ch01_cpu_matmul) args=(--thread-sweep) ;;              # how the threaded kernel scales
      ch05_layout_matmul|ch06_tiled_copy_mma|ch07_pipelined_simt|ch08_tensor_cores|ch09_hopper_wgmma_tma|ch10_hopper_persistent|ch10_sizes)
        args=(--layout all) ;;  # every storage order, one kernel
    esac
    if ! "build/bin/$c" --csv "$out/$c.csv" "${args[@]}"; then
      failed+=("$c")
      printf 'error: %s failed; going on with the other chapters\n' "$c" >&2
    fi
  done
  say "refreshing the README tables from $out"   # standard library only: with or without matplotlib
  "$MM_PY" plots/update_tables.py --data "$out"
  draw_figures "$data" "$figures"
  if [ "$slug" != "h200" ]; then
    printf '\nnote: %sthe README tables now show %s results (the committed ones are from an H200;\n' \
      "$([ -z "$MM_FIGURES" ] || echo "docs/images/ and ")" "$gpu"
    printf '      git checkout -- docs/images README.md chapters/ restores them).\n'
  fi
  if [ "${#failed[@]}" -gt 0 ]; then
    die "these chapters failed: ${failed[*]}"
  fi
  say "done in $(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s: results in $out/, $([ -n "$MM_FIGURES" ] && echo "figures in docs/images/" || echo "no figures (see the line above)")"
else
  mm_build ch01_cpu_matmul
  mkdir -p build/results
  say "running ch01_cpu_matmul on the CPU"
  build/bin/ch01_cpu_matmul --csv build/results/ch01_cpu_matmul.csv
  draw_figures "$data" "$figures"   # the committed H200 results, drawn again
  say "done in $(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s (no GPU: chapters 02-12 skipped): chapter 01's results in build/results/ch01_cpu_matmul.csv, $([ -n "$MM_FIGURES" ] && echo "figures (H200 data) in $figures/" || echo "no figures (see the line above)")"
fi
