#!/usr/bin/env bash
# Session 2026-11-29j call 6: racecheck of chapter 12's binary with every kernel but the appendix's stream-K step at the
# four ragged sizes of call 5 (one run), and stream-K alone under racecheck (chapter 12's appendix step, chapter 11's
# stream_k) at 1032x2112x1024 with the watchdog at 30 s: does it trap under the tool, and with how many blocks resident.
set -uo pipefail
export BUILD=build-dev OUT=${OUT:-/tmp/out}
S=$OUT/call6.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch12_hopper_datatypes ch11_every_shape" bash scripts/device/h200_session.sh build >"$OUT/session.txt" 2>&1
say "build rc=$? $(date +%T)"
rm -rf "$OUT/l"; mkdir -p "$OUT/l"
b=build-dev/bin
SZ=1032x2112x1024,96x2112x7168,260x520x4240,64x2112x1024
K=ch10_tma_store,tf32_wgmma,fp8_per_tensor,fp8_per_tensor_small_m,fp8_per_tensor_cluster,fp8_per_tensor_halves,fp8_block_scaled,fp8_block_scaled_small_m,fp8_block_scaled_cluster,fp8_block_scaled_smem_scales,fp8_block_scaled_early_scales,fp8_block_scaled_register_b_scales,fp8_block_scaled_no_turns,fp8_block_scaled_turns_k_block,fp8_block_scaled_turns_unaligned,fp8_block_scaled_192
say "kernels: $K"
timeout 330 compute-sanitizer --tool racecheck --print-limit 20 $b/ch12_hopper_datatypes --sizes $SZ --reps 1 --warmup 0 ${K:+--kernel $K} >"$OUT/l/racecheck.log" 2>&1
say "racecheck ch12 (no stream-K) rc=$? $(grep -E 'RACECHECK SUMMARY' $OUT/l/racecheck.log | tail -1) $(date +%T)"
grep -E "Race reported" "$OUT/l/racecheck.log" | grep -oE "at [A-Za-z0-9_]+" | sort | uniq -c >>"$S"
grep -E "cluster|failed|watchdog" "$OUT/l/racecheck.log" | head -12 >>"$S"
for probe in "ch12_hopper_datatypes --kernel fp8_block_scaled_stream_k" "ch11_every_shape --kernel stream_k"; do
  MM_WATCHDOG_SECONDS=30 timeout 120 compute-sanitizer --tool racecheck --print-limit 5 $b/$probe --sizes 1032x2112x1024 --reps 1 --warmup 0 >"$OUT/l/probe.log" 2>&1
  say "racecheck $probe rc=$? $(grep -E 'RACECHECK SUMMARY' $OUT/l/probe.log | tail -1) $(grep -oE 'watchdog: .*' $OUT/l/probe.log | head -1) $(date +%T)"
  MM_WATCHDOG_SECONDS=30 timeout 120 compute-sanitizer --tool memcheck --print-limit 5 $b/$probe --sizes 1032x2112x1024 --reps 1 --warmup 0 >"$OUT/l/probe_m.log" 2>&1
  say "memcheck $probe rc=$? $(grep -E 'ERROR SUMMARY' $OUT/l/probe_m.log | tail -1) $(grep -oE 'watchdog: .*' $OUT/l/probe_m.log | head -1) $(date +%T)"
done
tar czf "$OUT/logs6.tgz" -C "$OUT" l
rm -rf "$OUT/l" "$OUT/logs" "$OUT/data"
