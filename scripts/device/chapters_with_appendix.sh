#!/usr/bin/env bash
# How the committed H200 CSVs of 2026-11-27 were made (device runs 3-8 of
# plots/data/h200/profiles/session_2026-11-27_restructure.txt): one build with the appendix steps,
# each chapter binary run twice, its main path into chNN_*.csv and its measured dead ends into
# chNN_*_appendix.csv (plots/results_data.py shows those as "<chapter>_appendix").
#
#   CHAPTERS="ch05_layout_matmul ch08_tensor_cores" EXTRA="ch06_sizes ch10_sizes" \
#     bash scripts/device/chapters_with_appendix.sh MAIN_LISTS
#
# MAIN_LISTS: a file of lines "<binary> <comma-separated steps>", the main path of each binary as a
# default build lists it (`build/bin/<binary> --kernel nosuch` names them). Results go to $OUT/data
# (default /tmp/mm_out), logs to $OUT/logs; CLI11's CMake package is taken from .carry/cli11 if there.
set -uo pipefail
cd "$(dirname "$0")/../.."
lists=${1:?a file of main-path lists}
OUT=${OUT:-/tmp/mm_out}
mkdir -p "$OUT/data" "$OUT/logs"
if [ ! -x build-app/bin/ch10_hopper_persistent ]; then
  cli11=(); [ -d .carry/cli11 ] && cli11=(-DCLI11_DIR="$PWD/.carry/cli11/share/cmake/CLI11")
  cmake -S . -B build-app -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DMM_APPENDIX_STEPS=ON \
    -DBUILD_TESTING=OFF "${cli11[@]}" > "$OUT/logs/cfg.log" 2>&1 && cmake --build build-app -j16 --target chapters > "$OUT/logs/build.log" 2>&1
  echo "build rc=$?"
fi
for b in ${CHAPTERS:-}; do
  main=$(awk -v b="$b" '$1==b {print $2}' "$lists")
  all=$(build-app/bin/"$b" --kernel nosuch 2>&1 | sed -n 's/.*(known: \(.*\))$/\1/p' | tr -d ' ')
  app=$(comm -13 <(tr ',' '\n' <<<"$main" | sort) <(tr ',' '\n' <<<"$all" | sort) | paste -sd, -)
  args=()
  case $b in ch05*|ch06_t*|ch07*|ch08*|ch09*|ch10_h*) args=(--layout all) ;; esac  # every storage order
  build-app/bin/"$b" --kernel "$main" --csv "$OUT/data/$b.csv" "${args[@]}" > "$OUT/logs/$b.log" 2>&1
  echo "$b main rc=$?"
  if [ -n "$app" ]; then
    build-app/bin/"$b" --kernel "$app" --csv "$OUT/data/${b}_appendix.csv" "${args[@]}" > "$OUT/logs/${b}_appendix.log" 2>&1
    echo "$b appendix ($app) rc=$?"
  fi
done
for b in ${EXTRA:-}; do
  args=(); [ "$b" = ch10_sizes ] && args=(--layout all)
  build-app/bin/"$b" --csv "$OUT/data/$b.csv" "${args[@]}" > "$OUT/logs/$b.log" 2>&1
  echo "$b rc=$?"
done
