// Chapter 09: Hopper's asynchronous tensor cores. wgmma from shared-memory descriptors, TMA loads, an
// mbarrier pipeline; bf16 in, fp32 accumulation, bf16 C, next to cuBLAS bf16 and chapter 08's best
// mma.sync kernel, C = A·B (RRR) and C = A·Bᵀ (RCR).
//
// Build: cmake --build build --target ch09_hopper_wgmma_tma
// Run:   build/bin/ch09_hopper_wgmma_tma [--sizes 4096,8192] [--layout all] [--csv results.csv]   (--help for all flags)
#include "08_tensor_cores/steps.hpp"
#include "09_hopper_wgmma_tma/steps.hpp"
#include "harness/gemm_runner.hpp"

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "09_hopper_wgmma_tma",
      .description = "Chapter 09: Hopper's wgmma from shared-memory descriptors, TMA loads and an mbarrier pipeline "
                     "(bf16, fp32 accumulation, bf16 C); RRR and RCR",
      .default_sizes = {{2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}},
      .layouts = {"RRR", "RCR"},
      .needs = mm::arch::sm90a,
  };
  // Chapter 08's best mma.sync kernel first, the point of departure, then this chapter's steps.
  auto kernels = mm::ch09::steps();
  kernels.insert(kernels.begin(), mm::ch08::best());
  return mm::run_gemm_chapter(argc, argv, chapter, mm::GemmKernelGroup<__nv_bfloat16, __nv_bfloat16>{.kernels = kernels});
}
