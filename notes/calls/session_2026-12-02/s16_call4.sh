#!/bin/bash
# Session 2026-12-02 call 4: is the racecheck trap of tile_128x96_1x4 a deadlock or a wait longer than the bound?
# Call 3 (bound 20 s): 2 of 7 processes trapped, and one that did not ran its timed launch 15.1 s (others 2-4 s in
# all). Prediction, if it is the tool's slowness: with a bound of 240 s every launch completes, correct, some taking
# tens of seconds. Four racecheck processes side by side (each: the checked launch, then 3 timed), one more after.
set -u
start=$SECONDS
M=$OUT/mine.txt; : > $M
say() { echo "$*" | tee -a $M; }
cli=(-DCLI11_DIR=$PWD/.carry/cli11/share/cmake/CLI11 -DMM_PYTHON=$(command -v python3))
cmake -S . -B build-app -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a "${cli[@]}" -DMM_APPENDIX_STEPS=ON > $OUT/cfg_app.log 2>&1 && cmake --build build-app -j16 --target ch11_every_shape > $OUT/build_app.log 2>&1
say "build-app rc=$? ($((SECONDS-start)) s)"
export MM_WATCHDOG_SECONDS=240
for i in 1 2 3 4; do
  ( t=$SECONDS; timeout 300 stdbuf -oL compute-sanitizer --tool racecheck ./build-app/bin/ch11_every_shape --kernel tile_128x96_1x4 --layout RCR --sizes 129x264x72 --reps 3 --warmup 0 --csv $OUT/p$i.csv > $OUT/p$i.log 2>&1; echo "rc=$? $((SECONDS-t)) s" > $OUT/p$i.rc ) &
done
wait
for i in 1 2 3 4; do say "racecheck[$i] $(cat $OUT/p$i.rc): $(grep -E 'RACECHECK SUMMARY' $OUT/p$i.log | head -1) | $(grep -h watchdog $OUT/p$i.log | head -1) | $(grep -E '^tile_128x96_1x4' $OUT/p$i.log | tr -s ' ')"; done
cat $OUT/p*.csv > $OUT/all.csv 2>/dev/null
say "call wall $((SECONDS-start)) s"
cd $OUT && tar czf pack.tgz *.log *.txt *.csv *.rc 2>/dev/null; mkdir -p keep && cp mine.txt keep/; rm -rf *.log *.txt *.csv *.rc logs data; mv keep/* .; rmdir keep; ls
