// Chapter 08: tensor cores with mma.sync. bf16 (fp32 accumulation, bf16 C) and tf32 kernels, each
// next to the cuBLAS of its own type, C = A·B (RRR) and C = A·Bᵀ (RCR). The steps are listed in steps.cu.
//
// Build: cmake --build build --target ch08_tensor_cores
// Run:   build/bin/ch08_tensor_cores [--sizes 4096,8192] [--layout all] [--csv results.csv]   (--help for all flags)
#include "08_tensor_cores/steps.hpp"
#include "harness/gemm_runner.hpp"

namespace ch08 = mm::ch08;
using bf16 = __nv_bfloat16;

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "08_tensor_cores",
      .description = "Chapter 08: mma.sync tensor cores (bf16 m16n8k16, tf32 m16n8k8), ldmatrix, swizzled shared "
                     "memory, a cp.async pipeline; RRR and RCR",
      .default_sizes = {{2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}},
      .layouts = {"RRR", "RCR"},
      .needs = mm::arch::sm80,
  };
  return mm::run_gemm_chapter(argc, argv, chapter, mm::GemmKernelGroup<bf16, bf16>{.kernels = ch08::bf16_steps()},
                              mm::GemmKernelGroup<float, float>{.baseline = mm::DType::tf32, .kernels = ch08::tf32_steps()});
}
