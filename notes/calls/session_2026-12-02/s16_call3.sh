#!/bin/bash
# Session 2026-12-02 call 3: the racecheck trap with the barrier's word. (1) A key: the mbarrier word after known
# operations (.carry/call/mbar_probe.cu). (2) The appendix binary in a diagnosis build (-DMM_WATCHDOG_BARRIER_STATE=1:
# the trap leaves the waited barrier's word in the record); racecheck of tile_128x96_1x4 at 129x264x72 RCR (trapped
# in 6 of 10 runs in session zb) until two traps, at most 7 runs.
set -u
start=$SECONDS
M=$OUT/mine.txt; : > $M
say() { echo "$*" | tee -a $M; }
say "$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader)"
nvcc -arch=sm_90a -std=c++17 -o /tmp/mbar_probe .carry/call/mbar_probe.cu > $OUT/probe_build.log 2>&1 && /tmp/mbar_probe | tee -a $M
cli=(-DCLI11_DIR=$PWD/.carry/cli11/share/cmake/CLI11 -DMM_PYTHON=$(command -v python3))
cmake -S . -B build-diag -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a "${cli[@]}" -DMM_APPENDIX_STEPS=ON -DCMAKE_CUDA_FLAGS=-DMM_WATCHDOG_BARRIER_STATE=1 > $OUT/cfg_diag.log 2>&1 && cmake --build build-diag -j16 --target ch11_every_shape > $OUT/build_diag.log 2>&1
say "build-diag rc=$? ($((SECONDS-start)) s)"; grep -c "MM_WATCHDOG_BARRIER_STATE=1" build-diag/compile_commands.json >> $M 2>/dev/null
export MM_WATCHDOG_SECONDS=20
traps=0
for i in 1 2 3 4 5 6 7; do
  [ $traps -ge 2 ] && break
  [ $((SECONDS-start)) -gt 500 ] && { say "stop: $((SECONDS-start)) s"; break; }
  t=$SECONDS
  timeout 50 stdbuf -oL compute-sanitizer --tool racecheck ./build-diag/bin/ch11_every_shape --kernel tile_128x96_1x4 --layout RCR --sizes 129x264x72 --reps 1 --warmup 0 > $OUT/trap_$i.log 2>&1
  rc=$?
  w=$(grep -h "watchdog" $OUT/trap_$i.log | head -1)
  [ -n "$w" ] && traps=$((traps+1))
  say "racecheck[$i] rc=$rc ($((SECONDS-t)) s): $(grep -E 'RACECHECK SUMMARY' $OUT/trap_$i.log | head -1) | $w"
done
say "call wall $((SECONDS-start)) s"
cd $OUT && tar czf pack.tgz *.log *.txt 2>/dev/null; mkdir -p keep && cp mine.txt keep/; rm -rf *.log *.txt logs data; mv keep/* .; rmdir keep; ls
