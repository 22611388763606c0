#!/bin/bash
# Session 2026-12-02 call 7: which sets a cluster's cost, the tile's flops per byte or its consumer count?
# Prediction (before): 128x64 has 64x128's 43 FLOP/B but two consumer warpgroups. If the intensity sets it,
# tile_128x64_2x1 loses 25-30% to tile_128x64 at 3072^3 (as 64x128_2x1 lost 29% in session zc); if the consumer
# count does, within 3% (as 128x192_2x1, +1%). ncu: each clustered block receives as many bytes from the L2 as
# alone (l1tex__m_xbar2l1tex_read_bytes), while the L2 serves fewer sectors (B shared). First test_ch11 whole
# on the appendix build (the new step at the EveryShape sizes).
set -u
start=$SECONDS
M=$OUT/mine.txt; : > $M
say() { echo "$*" | tee -a $M; }
say "$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader)"
cli=(-DCLI11_DIR=$PWD/.carry/cli11/share/cmake/CLI11 -DMM_PYTHON=$(command -v python3))
cmake -S . -B build-app -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a "${cli[@]}" -DMM_APPENDIX_STEPS=ON > $OUT/cfg_app.log 2>&1 && cmake --build build-app -j16 --target ch11_every_shape test_ch11 > $OUT/build_app.log 2>&1
say "build-app rc=$? ($((SECONDS-start)) s)"
T=$(find build-app -name test_ch11 -type f -perm -u+x | head -1)
t=$SECONDS; timeout 150 $T > $OUT/test_ch11.log 2>&1; say "test_ch11 whole (appendix) rc=$? ($((SECONDS-t)) s): $(grep -E '^\[  PASSED|^\[  FAILED|^\[  SKIPPED' $OUT/test_ch11.log | head -3 | tr '\n' ' ')"
grep -E "^\[  FAILED" $OUT/test_ch11.log | head -10 >> $M
say "new step in test_ch11: $(grep -c 'tile_128x64_2x1' $OUT/test_ch11.log) lines, $(grep 'tile_128x64_2x1' $OUT/test_ch11.log | grep -c '\[       OK')" ok
B=./build-app/bin
K=tile_128x64,tile_128x64_2x1,tile_64x128,tile_64x128_2x1,tile_128x192,tile_128x192_2x1
for r in 1 2; do
  t=$SECONDS; timeout 60 $B/ch11_every_shape --kernel $K --layout RCR --sizes 3072x3072x3072 --interleave --csv $OUT/c_r$r.csv > $OUT/c_r$r.txt 2>&1; say "round $r rc=$? ($((SECONDS-t)) s)"; grep -E '^[a-zA-Z_0-9]+ +bf16' $OUT/c_r$r.txt | tr -s ' ' | cut -d' ' -f1,4,5,9,10 >> $M
done
left=$((560-(SECONDS-start)))
MET=gpu__time_duration.sum,sm__cycles_active.avg,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,smsp__inst_executed.sum
t=$SECONDS; timeout $((left-70)) ncu --clock-control none --kernel-name regex:gemm_device --metrics $MET --csv --page raw $B/ch11_every_shape --kernel $K --layout RCR --sizes 3072x3072x3072 --reps 1 --warmup 0 --no-check > $OUT/ncu.csv 2>&1; say "ncu rc=$? ($((SECONDS-t)) s)"
left=$((570-(SECONDS-start)))
[ $left -gt 30 ] && { t=$SECONDS; timeout $((left-10)) ncu --clock-control none --kernel-name regex:gemm_device --metrics l1tex__m_xbar2l1tex_read_bytes.sum,gpu__time_duration.sum --csv --page raw $B/ch11_every_shape --kernel $K --layout RCR --sizes 3072x3072x3072 --reps 1 --warmup 0 --no-check > $OUT/ncu_xbar.csv 2>&1; say "ncu xbar rc=$? ($((SECONDS-t)) s)"; }
say "call wall $((SECONDS-start)) s"
cd $OUT && tar czf pack.tgz *.log *.txt *.csv 2>/dev/null; mkdir -p keep && cp mine.txt c_r*.csv ncu*.csv keep/ 2>/dev/null; rm -rf *.log *.txt *.csv logs data; mv keep/* .; rmdir keep; ls
