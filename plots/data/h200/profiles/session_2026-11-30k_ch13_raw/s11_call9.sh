#!/usr/bin/env bash
# Session 2026-11-30k call 9 (issue 36, a measurement for the next session's choose()): tile_64x256 against swap_ab
# and every_shape's choice at M = 33, 48, 64 over N in {4096, 6144, 10240, 11008, 14336} and K in {4096, 8192}, RCR,
# two rounds (notes/issue36_plan.md, section 1: the rule is about M = 64 and K, not N alone).
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call9.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch11_every_shape" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"
for r in 1 2; do
  timeout 60 build-dev/bin/ch11_every_shape --kernel every_shape,swap_ab,tile_64x256 --sizes 33x4096x4096,33x4096x8192,33x6144x4096,33x6144x8192,33x10240x4096,33x10240x8192,33x11008x4096,33x11008x8192,33x14336x4096,33x14336x8192,48x4096x4096,48x4096x8192,48x6144x4096,48x6144x8192,48x10240x4096,48x10240x8192,48x11008x4096,48x11008x8192,48x14336x4096,48x14336x8192,64x4096x4096,64x4096x8192,64x6144x4096,64x6144x8192,64x10240x4096,64x10240x8192,64x11008x4096,64x11008x8192,64x14336x4096,64x14336x8192 --no-check     --csv "$OUT/ch11_m33_64_r$r.csv" >"$OUT/m33_64_r$r.log" 2>&1
  say "round $r rc=$? $(date +%T)"
done
rm -rf "$OUT/logs" "$OUT/data"
