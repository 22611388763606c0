#!/usr/bin/env bash
# Prints (and creates) the directory for this machine's chapter CSVs, the one scripts/run_all.sh
# writes to: plots/data/<gpu>/ with a GPU ("NVIDIA H200" -> plots/data/h200, "NVIDIA H100 80GB
# HBM3" -> plots/data/h100-80gb-hbm3), build/results/ without one. The chapter READMEs use it:
#
#   build/bin/ch02_naive_gpu --csv "$(scripts/results_dir.sh)/ch02_naive_gpu.csv"
#
# The path is relative when called from the repository root, absolute otherwise.
set -euo pipefail
caller="$PWD"
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"   # cd's to the repository root

if gpu="$(mm_gpu_name)"; then
  dir="plots/data/$(mm_gpu_slug "$gpu")"
else
  dir="build/results"
  echo "results_dir.sh: no GPU found; using $dir" >&2
fi
mkdir -p "$dir"
if [ "$caller" = "$MM_ROOT" ]; then echo "$dir"; else echo "$MM_ROOT/$dir"; fi
