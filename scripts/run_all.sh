#!/usr/bin/env bash
# Builds everything, runs every chapter and draws the figures (the README's "run everything" command).
#
#   scripts/run_all.sh
#
# With a GPU: every chapter binary writes plots/data/<gpu>/chNN_<name>.csv (chapter 01 runs on this
# machine's CPU), then the figures go to docs/images/ and the README tables are refreshed.
# Without a GPU: chapter 01 runs (CSV in build/results/), and the figures are drawn from the
# committed H200 results in plots/data/h200/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

CHAPTERS=(ch01_cpu_matmul ch02_naive_gpu ch03_tiled_shared_memory ch04_copy_and_transpose
          ch05_layout_matmul ch06_tiled_copy_mma ch06_sizes ch07_pipelined_simt ch08_tensor_cores ch08_mma_ceiling
          ch09_hopper_wgmma_tma ch10_hopper_persistent ch10_sizes)

mm_check_tools
mm_venv
mm_configure_and_build

built=()
for c in "${CHAPTERS[@]}"; do
  [ -x "build/bin/$c" ] && built+=("$c")
done
[ "${#built[@]}" -gt 0 ] || die "no chapter binary in build/bin/"

if gpu="$(mm_gpu_name)"; then
  slug="$(mm_gpu_slug "$gpu")"   # the same directory as scripts/results_dir.sh (the chapter READMEs)
  out="plots/data/$slug"
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
  say "drawing the figures from $out into docs/images/"
  "$MM_PY" plots/plot.py --data "$out" --out docs/images
  say "refreshing the README tables from $out"
  "$MM_PY" plots/update_tables.py --data "$out"
  if [ "$slug" != "h200" ]; then
    printf '\nnote: docs/images/ and the README tables now show %s results (the committed ones are from an H200;\n' "$gpu"
    printf '      git checkout -- docs/images README.md chapters/ restores them).\n'
  fi
  if [ "${#failed[@]}" -gt 0 ]; then
    die "these chapters failed: ${failed[*]}"
  fi
  say "done: figures in docs/images/, results in $out/"
else
  mkdir -p build/results
  if [[ " ${built[*]} " == *" ch01_cpu_matmul "* ]]; then
    say "running ch01_cpu_matmul on the CPU"
    build/bin/ch01_cpu_matmul --csv build/results/ch01_cpu_matmul.csv
  fi
  gpu_chapters=()
  for c in "${built[@]}"; do
    [ "$c" != ch01_cpu_matmul ] && gpu_chapters+=("${c:2:2}")
  done
  if [ "${#gpu_chapters[@]}" -gt 0 ]; then
    skipped="chapters ${gpu_chapters[0]}–${gpu_chapters[-1]}"
    [ "${#gpu_chapters[@]}" -eq 1 ] && skipped="chapter ${gpu_chapters[0]}"
  else
    skipped="the GPU chapters"
  fi
  echo
  echo "No GPU found: $skipped were skipped; plotting the committed H200 results from plots/data/h200"
  "$MM_PY" plots/plot.py --data plots/data/h200 --out docs/images
  say "done: chapter 01's results in build/results/ch01_cpu_matmul.csv, figures (H200 data) in docs/images/"
fi
