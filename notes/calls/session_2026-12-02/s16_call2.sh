#!/bin/bash
# Session 2026-12-02 call 2: racecheck over every kernel of the default ch11 binary in one run; then the racecheck
# trap of the A-multicast appendix kernels (tile_128x96_1x2 at 129x264x72 RCR, trapped 3 of 3 in session zb):
# three runs with the tool's defaults, three with --racecheck-memcpy-async no (is the tool's tracking of async
# copies what holds the first stage back?), and one with --racecheck-trace-sync yes.
set -u
start=$SECONDS
M=$OUT/mine.txt; : > $M
say() { echo "$*" | tee -a $M; }
B=./build-dev/bin; A=./build-app/bin
S=1x1x1,67x136x48,129x264x72,16x264x72,200x400x136,33x70x37,129x264x75
export MM_WATCHDOG_SECONDS=60
t=$SECONDS; timeout 240 stdbuf -oL compute-sanitizer --tool racecheck $B/ch11_every_shape --layout RCR,RRR --sizes $S --reps 1 --warmup 0 > $OUT/racecheck_ch11.log 2>&1
say "racecheck ch11 whole rc=$? ($((SECONDS-t)) s): $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $OUT/racecheck_ch11.log | tr '\n' ' ') rows=$(grep -cE '^[a-zA-Z_0-9]+ +bf16' $OUT/racecheck_ch11.log)"
grep -E "^========= .*(hazard|Race|Error)" -A3 $OUT/racecheck_ch11.log | grep -oE "in [a-zA-Z_0-9:<>]+|nvjet[a-zA-Z_0-9]*|gemm_device[a-zA-Z_0-9]*" | sort | uniq -c | head >> $M
export MM_WATCHDOG_SECONDS=25
run() {  # $1 name, rest: sanitizer options
  local name=$1; shift
  local t=$SECONDS
  timeout 60 stdbuf -oL compute-sanitizer --tool racecheck "$@" $A/ch11_every_shape --kernel tile_128x96_1x2 --layout RCR --sizes 129x264x72 --reps 1 --warmup 0 > $OUT/trap_$name.log 2>&1
  say "trap $name rc=$? ($((SECONDS-t)) s): $(grep -E 'watchdog|RACECHECK SUMMARY' $OUT/trap_$name.log | head -2 | tr '\n' ' ')"
}
for i in 1 2 3; do run default$i; done
for i in 1 2 3; do run nomemcpy$i --racecheck-memcpy-async no; done
[ $((SECONDS-start)) -lt 480 ] && run trace1 --racecheck-trace-sync yes
say "call wall $((SECONDS-start)) s"
cd $OUT && tar czf pack.tgz *.log *.txt 2>/dev/null; mkdir -p keep && cp mine.txt keep/; rm -rf *.log *.txt logs data; mv keep/* .; rmdir keep; ls
