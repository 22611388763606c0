#!/bin/bash
# Session 2026-12-02 call 6: the appendix ch11 binary (every kernel, main steps and appendix steps) under the three
# tools, one run each, with the watchdog's new bound under a tool (20 minutes: no MM_WATCHDOG_SECONDS): no false trap.
set -u
start=$SECONDS
M=$OUT/mine.txt; : > $M
say() { echo "$*" | tee -a $M; }
cli=(-DCLI11_DIR=$PWD/.carry/cli11/share/cmake/CLI11 -DMM_PYTHON=$(command -v python3))
cmake -S . -B build-app -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a "${cli[@]}" -DMM_APPENDIX_STEPS=ON > $OUT/cfg_app.log 2>&1 && cmake --build build-app -j16 --target ch11_every_shape > $OUT/build_app.log 2>&1
say "build-app rc=$? ($((SECONDS-start)) s)"
unset MM_WATCHDOG_SECONDS
S=129x264x72,67x136x48,33x70x37
for tool in memcheck synccheck racecheck; do
  left=$((575-(SECONDS-start))); [ $left -lt 30 ] && { say "skip $tool: $left s left"; continue; }
  t=$SECONDS; timeout $left stdbuf -oL compute-sanitizer --tool $tool ./build-app/bin/ch11_every_shape --layout RCR,RRR --sizes $S --reps 1 --warmup 0 > $OUT/${tool}_app.log 2>&1
  say "$tool appendix ch11 whole rc=$? ($((SECONDS-t)) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/${tool}_app.log | tr '\n' ' ') rows=$(grep -cE '^[a-zA-Z_0-9]+ +bf16' $OUT/${tool}_app.log) kernels=$(grep -oE '^[a-zA-Z_0-9]+ +bf16' $OUT/${tool}_app.log | awk '{print $1}' | sort -u | wc -l) | $(grep -h watchdog $OUT/${tool}_app.log | head -1)"
  grep -E "^========= .*(hazard|Race|Error|Invalid)" -A3 $OUT/${tool}_app.log | grep -oE "nvjet[a-zA-Z_0-9]*|gemm_device[a-zA-Z_0-9]*|in [a-zA-Z_:]+" | sort | uniq -c | head -8 >> $M
done
say "call wall $((SECONDS-start)) s"
cd $OUT && tar czf pack.tgz *.log *.txt 2>/dev/null; mkdir -p keep && cp mine.txt keep/; rm -rf *.log *.txt logs data; mv keep/* .; rmdir keep; ls
