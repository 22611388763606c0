// Chapter 10: keeping Hopper's tensor cores busy. Warp specialization with setmaxnreg, a persistent
// grouped tile scheduler, a TMA-store epilogue, clusters with TMA multicast; bf16 in, fp32
// accumulation, bf16 C, next to cuBLAS bf16 and chapter 09's best kernel, C = A·B (RRR) and
// C = A·Bᵀ (RCR).
//
// Build: cmake --build build --target ch10_hopper_persistent
// Run:   build/bin/ch10_hopper_persistent [--sizes 4096,8192] [--layout all] [--csv results.csv]   (--help for all flags)
#include "09_hopper_wgmma_tma/steps.hpp"
#include "10_hopper_persistent/steps.hpp"
#include "harness/gemm_runner.hpp"

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "10_hopper_persistent",
      .description = "Chapter 10: warp specialization, a persistent tile scheduler, a TMA-store epilogue, "
                     "clusters with TMA multicast (bf16, fp32 accumulation, bf16 C); RRR and RCR",
      .default_sizes = {{2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}},
      .layouts = {"RRR", "RCR"},
      .needs = mm::arch::sm90a,
  };
  // Chapter 09's best kernel first, the point of departure, then this chapter's steps.
  auto kernels = mm::ch10::steps();
  kernels.insert(kernels.begin(), mm::ch09::best());
  return mm::run_gemm_chapter(argc, argv, chapter, mm::GemmKernelGroup<__nv_bfloat16, __nv_bfloat16>{.kernels = kernels});
}
