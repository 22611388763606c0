#!/bin/bash
# Session 2026-12-02 call 1: the default ch11 binary (what a learner runs) whole: test_ch11 whole, then
# memcheck and synccheck over every kernel of the binary in one run each (RCR and RRR, ragged sizes).
# The appendix binary is built beside it for call 2 (the racecheck trap).
set -u
start=$SECONDS
M=$OUT/mine.txt; : > $M
say() { echo "$*" | tee -a $M; }
say "$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader)"
say "$(compute-sanitizer --version | tail -1)"
compute-sanitizer --help 2>&1 | grep -i -A2 "racecheck" > $OUT/racecheck_help.txt
cli=(-DCLI11_DIR=$PWD/.carry/cli11/share/cmake/CLI11 -DMM_PYTHON=$(command -v python3))
( cmake -S . -B build-app -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a "${cli[@]}" -DMM_APPENDIX_STEPS=ON > $OUT/cfg_app.log 2>&1 && cmake --build build-app -j8 --target ch11_every_shape > $OUT/build_app.log 2>&1; echo "app rc=$?" > $OUT/app_rc.txt ) &
appjob=$!
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a "${cli[@]}" > $OUT/cfg_dev.log 2>&1 && cmake --build build-dev -j8 --target ch11_every_shape test_ch11 > $OUT/build_dev.log 2>&1
say "build-dev rc=$? ($((SECONDS-start)) s)"; tail -3 $OUT/build_dev.log >> $M
B=./build-dev/bin
T=$(find build-dev -name test_ch11 -type f -perm -u+x | head -1)
t=$SECONDS; timeout 240 $T > $OUT/test_ch11.log 2>&1; say "test_ch11 whole rc=$? ($((SECONDS-t)) s): $(grep -E '^\[  PASSED|^\[  FAILED|^\[  SKIPPED' $OUT/test_ch11.log | head -4 | tr '\n' ' ')"
grep -E "^\[  FAILED|^\[  SKIPPED" $OUT/test_ch11.log | head -20 >> $M
S=1x1x1,67x136x48,129x264x72,16x264x72,200x400x136,33x70x37,129x264x75
export MM_WATCHDOG_SECONDS=60
for tool in memcheck synccheck; do
  t=$SECONDS; timeout 170 stdbuf -oL compute-sanitizer --tool $tool $B/ch11_every_shape --layout RCR,RRR --sizes $S --reps 1 --warmup 0 > $OUT/${tool}_ch11.log 2>&1
  say "$tool ch11 whole rc=$? ($((SECONDS-t)) s): $(grep -E 'ERROR SUMMARY' $OUT/${tool}_ch11.log | tr '\n' ' ') rows=$(grep -cE '^[a-zA-Z_0-9]+ +bf16' $OUT/${tool}_ch11.log) kernels=$(grep -oE '^[a-zA-Z_0-9]+ +bf16' $OUT/${tool}_ch11.log | awk '{print $1}' | sort -u | wc -l)"
  grep -E "^========= (Invalid|Error|Barrier|Race)|FAILED|mismatch|watchdog" $OUT/${tool}_ch11.log | sort | uniq -c | head -10 >> $M
done
wait $appjob; cat $OUT/app_rc.txt >> $M; tail -2 $OUT/build_app.log >> $M
say "call wall $((SECONDS-start)) s"
cd $OUT && tar czf pack.tgz *.log *.txt 2>/dev/null; mkdir -p keep && cp mine.txt racecheck_help.txt keep/; rm -rf *.log *.txt logs data; mv keep/* .; rmdir keep; ls
