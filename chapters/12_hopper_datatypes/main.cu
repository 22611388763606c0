// Chapter 12: Hopper's other datatypes on wgmma. tf32 (fp32 in memory, fp32 C) next to cuBLAS tf32;
// fp8 e4m3 with per-tensor scales (bf16 C) next to cuBLASLt's fp8 GEMM with and without fast
// accumulation; fp8 with DeepSeek-V3's block scales next to cuBLASLt's block-scaled fp8; chapter
// 10's best bf16 kernel and cuBLAS bf16 for scale. C = A·Bᵀ (RCR): wgmma reads tf32 and fp8 only
// K-major; --layout RRR runs the tf32 step that transposes B first.
//
// Build: cmake --build build --target ch12_hopper_datatypes
// Run:   build/bin/ch12_hopper_datatypes [--sizes 4096,8192] [--csv results.csv]   (--help for all flags)
#include "10_hopper_persistent/steps.hpp"
#include "12_hopper_datatypes/steps.hpp"
#include "harness/gemm_runner.hpp"

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "12_hopper_datatypes",
      .description = "Chapter 12: tf32 and fp8 (e4m3; per-tensor and 1x128/128x128 block scales) on wgmma, next to "
                     "cuBLAS tf32, cuBLASLt fp8 (fast accumulation on and off, block scales) and chapter 10's bf16; RCR",
      // The issue's headline squares, and DeepSeek-V3's 4096×7168×16384 (K = 16384: the accuracy table's long sum).
      .default_sizes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {4096, 7168, 16384}},
      .layouts = {"RCR", "RRR"},  // RCR by default; RRR for tf32_transpose_b (fp8 takes RCR only)
      .needs = mm::arch::sm90a,
  };
  return mm::run_gemm_chapter(
      argc, argv, chapter,
      // bf16 for scale: chapter 10's best against cuBLAS bf16.
      mm::GemmKernelGroup<__nv_bfloat16, __nv_bfloat16>{.kernels = {mm::ch10::best()}},
      mm::GemmKernelGroup<float, float>{.baseline = mm::DType::tf32, .kernels = mm::ch12::tf32_steps()},
      // fp8: measured against cuBLASLt with fast accumulation (the tensor core's own adds, as ours),
      // with cuBLASLt's default (partial sums promoted to fp32) timed beside it.
      mm::GemmKernelGroup<__nv_fp8_e4m3, __nv_bfloat16>{.baseline = mm::DType::e4m3,
                                                         .kernels = mm::ch12::fp8_steps(),
                                                         .also_measure = {mm::DType::e4m3_promoted}},
      // fp8 with DeepSeek-V3's block scales, against cuBLASLt's own (VEC128_32F and BLK128x128_32F).
      mm::GemmKernelGroup<__nv_fp8_e4m3, __nv_bfloat16>{.baseline = mm::DType::e4m3_block,
                                                         .kernels = mm::ch12::fp8_block_steps()});
}
