#!/usr/bin/env bash
# How chapter 12's committed CSVs were made (device run 12d of plots/data/h200/profiles/session_2026-11-27_ch12.txt),
# from the repository root on an H200 with $OUT set: chapter 12 built with its tests; the tests; the
# sanitizers on the test binary; the default run twice; RRR tf32 twice; the wgmma ceilings.
set -uo pipefail
S=$SECONDS
sum=$OUT/summary.txt
mkdir -p $OUT/logs $OUT/data
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $sum
cmake -S . -B build-12 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DCLI11_DIR=$PWD/.carry/cli11/share/cmake/CLI11 > $OUT/logs/cfg.log 2>&1 || { tail -20 $OUT/logs/cfg.log; exit 1; }
cmake --build build-12 -j16 --target ch12_hopper_datatypes ch12_wgmma_ceiling test_ch12 > $OUT/logs/build.log 2>&1
echo "build rc=$? $((SECONDS-S)) s" | tee -a $sum
T=build-12/tests/ch12/test_ch12
timeout 200 $T > $OUT/logs/test_ch12.log 2>&1
echo "test_ch12 rc=$? $((SECONDS-S)) s: $(grep -E '^\[  (PASSED|FAILED) ' $OUT/logs/test_ch12.log | tr '\n' ' ')" | tee -a $sum
grep -E "Failure|FAILED  \]|want" $OUT/logs/test_ch12.log | head -20
for tool in memcheck racecheck synccheck; do
timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter='*tf32_*:*FewBlocks*' > $OUT/logs/san_$tool.log 2>&1
echo "sanitize $tool rc=$? $((SECONDS-S)) s $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED  ' $OUT/logs/san_$tool.log | tr '\n' ' ')" | tee -a $sum
done
B=build-12/bin/ch12_hopper_datatypes
for i in 1 2; do
timeout 200 $B --csv $OUT/data/ch12_run$i.csv > $OUT/logs/ch12_run$i.log 2>&1
echo "default $i rc=$? $((SECONDS-S)) s" | tee -a $sum
timeout 100 $B --layout RRR --kernel tf32_transpose_b --sizes 4096,8192 --csv $OUT/data/ch12_rrr_run$i.csv > $OUT/logs/ch12_rrr_run$i.log 2>&1
echo "rrr $i rc=$? $((SECONDS-S)) s" | tee -a $sum
done
cat $OUT/logs/ch12_run1.log | tail -30; cat $OUT/logs/ch12_rrr_run1.log | tail -6
timeout 100 build-12/bin/ch12_wgmma_ceiling --csv $OUT/data/ch12_wgmma_ceiling.csv > $OUT/logs/ceiling.log 2>&1
echo "ceiling rc=$? $((SECONDS-S)) s" | tee -a $sum; cat $OUT/logs/ceiling.log
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $sum
echo "done $((SECONDS-S)) s" | tee -a $sum
tar -C $OUT -czf $OUT/logs.tgz logs data
