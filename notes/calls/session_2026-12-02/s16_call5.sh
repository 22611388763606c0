#!/bin/bash
# Session 2026-12-02 call 5: call 4's question, one process at a time (as the traps came): racecheck of
# tile_128x96_1x4 at 129x264x72 RCR, bound 240 s, each process the checked launch and 3 timed ones; until 430 s.
set -u
start=$SECONDS
M=$OUT/mine.txt; : > $M
say() { echo "$*" | tee -a $M; }
export MM_WATCHDOG_SECONDS=240
i=0
while [ $((SECONDS-start)) -lt 430 ]; do
  i=$((i+1)); t=$SECONDS
  timeout $((560-(SECONDS-start))) stdbuf -oL compute-sanitizer --tool racecheck ./build-app/bin/ch11_every_shape --kernel tile_128x96_1x4 --layout RCR --sizes 129x264x72 --reps 3 --warmup 0 --csv $OUT/s$i.csv > $OUT/s$i.log 2>&1
  say "racecheck[$i] rc=$? ($((SECONDS-t)) s): $(grep -E 'RACECHECK SUMMARY' $OUT/s$i.log | head -1) | $(grep -h watchdog $OUT/s$i.log | head -1) | $(grep -E '^tile_128x96_1x4' $OUT/s$i.log | tr -s ' ')"
done
say "call wall $((SECONDS-start)) s"
cd $OUT && tar czf pack.tgz *.log *.txt *.csv 2>/dev/null; mkdir -p keep && cp mine.txt keep/; rm -rf *.log *.txt *.csv logs data; mv keep/* .; rmdir keep; ls
