#!/bin/bash
# Session 2026-12-01zb, lead call 4: step 15 (every_shape runs 192x192 in clusters of 2 in place where the model says it
# beats the copy into aligned rows): test_ch11 (choices, both misaligned paths against fp64, every_shape and the 192
# steps at its sizes); every_shape against the copy path (aligned_rows step) and the forced in-place tile, two rounds.
set -u
start=$SECONDS
M=$OUT/mine.txt; : > $M
say() { echo "$*" | tee -a $M; }
export BUILD=build-dev CMAKE_ARGS=-DMM_APPENDIX_STEPS=ON TARGETS="ch11_every_shape test_ch11"
bash scripts/device/h200_session.sh build; cat $OUT/summary.txt >> $M
B=./build-dev/bin
say "build done $((SECONDS-start)) s"
s=$SECONDS; timeout 60 ./build-dev/tests/ch11/test_ch11 --gtest_filter='ch11_Choice.*:*Straddling*:*AlignedRows*:ch11/EveryShape.*every_shape*:*192x192*' > $OUT/test_ch11.log 2>&1; say "test_ch11 rc=$? ($((SECONDS-s)) s): $(grep -E '^\[  (PASSED|FAILED) ' $OUT/test_ch11.log | tr '\n' ' ') $(grep -c '^\[       OK' $OUT/test_ch11.log) ok $(grep -c '^\[  SKIPPED' $OUT/test_ch11.log) skipped"
grep -E '^\[  FAILED|Failure' $OUT/test_ch11.log | head -10 >> $M
for r in 1 2; do
  s=$SECONDS; timeout 60 $B/ch11_every_shape --kernel every_shape,aligned_rows,tile_192x192_2x1 --layout RCR --sizes 3000x3000x3000,5000x5000x5000,7000x7000x7000,2048x4096x1000,2056x2048x3000,1312x4096x1000 --csv $OUT/s15_r$r.csv > $OUT/s15_r$r.txt 2>&1; say "step 15 round $r rc=$? ($((SECONDS-s)) s)"; grep -E '^[a-z_0-9A-Z]+ +bf16' $OUT/s15_r$r.txt | tr -s ' ' | cut -d' ' -f1,4,5,9,10 >> $M
done
if [ $((SECONDS - start)) -lt 170 ]; then
  s=$SECONDS; timeout 30 compute-sanitizer --tool memcheck $B/ch11_every_shape --kernel every_shape --sizes 2056x2048x3000 --layout RCR --reps 1 --warmup 0 > $OUT/memcheck.log 2>&1; say "memcheck every_shape 2056x2048x3000 rc=$? ($((SECONDS-s)) s): $(grep -E 'ERROR SUMMARY' $OUT/memcheck.log)"
fi
say "call wall $((SECONDS-start)) s"
cd $OUT && tar czf pack.tgz *.log *.txt 2>/dev/null; mkdir -p keep && mv s15_r*.csv mine.txt keep/; rm -rf *.log *.txt logs data summary.txt results.tgz; mv keep/* .; rmdir keep; ls
