#!/usr/bin/env bash
# How plots/data/h200/ch11_every_shape*.csv were made (run 7 of profiles/session_2026-11-27_ch11.txt):
# chapter 11 built with its appendix steps and tests, its GPU tests, compute-sanitizer on small odd
# and skinny sizes, then the shape suite (the binary's default sizes) into one CSV, split afterwards into
# the main path (ch11_every_shape.csv) and the appendix steps (ch11_every_shape_appendix.csv).
# Run from the repository root on the H200 with OUT set and CLI11 in .carry/cli11 (as the other device scripts).
set -uo pipefail
S=$SECONDS
sum=$OUT/summary.txt
mkdir -p $OUT/logs $OUT/data
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee $sum
cmake -S . -B build-11 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DMM_APPENDIX_STEPS=ON \
  -DCLI11_DIR=$PWD/.carry/cli11/share/cmake/CLI11 > $OUT/logs/cfg.log 2>&1 || { tail -20 $OUT/logs/cfg.log; exit 1; }
cmake --build build-11 -j16 --target ch11_every_shape test_ch11 test_gemm > $OUT/logs/build.log 2>&1
echo "build rc=$? $((SECONDS-S)) s" | tee -a $sum
grep -E "error|FAILED" $OUT/logs/build.log | head -20
timeout 200 build-11/tests/ch11/test_ch11 > $OUT/logs/test_ch11.log 2>&1
echo "test_ch11 rc=$? $((SECONDS-S)) s: $(grep -E '^\[  (PASSED|FAILED) ' $OUT/logs/test_ch11.log | tr '\n' ' ')" | tee -a $sum
grep -E "Failure|FAILED  \]|error" $OUT/logs/test_ch11.log | head -30
build-11/tests/gemm/test_gemm > $OUT/logs/test_gemm.log 2>&1; echo "test_gemm rc=$?" | tee -a $sum
for tool in memcheck racecheck synccheck; do
timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 build-11/bin/ch11_every_shape \
  --kernel tile_shapes,split_k,swap_ab,every_shape,split_k_second_kernel --sizes 16x304x264,129x264x72,300x512x4104,16x1000x4104,64x520x1032,256x512x8192 \
  --reps 1 --warmup 0 > $OUT/logs/san_$tool.log 2>&1
echo "sanitize $tool rc=$? $((SECONDS-S)) s $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/logs/san_$tool.log | tr '\n' ' ')" | tee -a $sum
done
timeout 300 build-11/bin/ch11_every_shape --csv $OUT/data/ch11_suite.csv > $OUT/logs/ch11_suite.log 2>&1
echo "suite rc=$? $((SECONDS-S)) s" | tee -a $sum
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $sum
echo "done $((SECONDS-S)) s" | tee -a $sum
cp $OUT/logs/ch11_suite.log $OUT/ 2>/dev/null
tar -C $OUT -czf $OUT/logs.tgz logs data
