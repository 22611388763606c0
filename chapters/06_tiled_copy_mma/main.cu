// Chapter 06: the 128×128×8 register-tiled matmul with TiledCopy and TiledMMA: the steps from chapter
// 05's padded kernel (128-bit global loads, a pad of 4, 128-bit shared loads), the uncoalesced
// counter-example and register prefetch, for all four storage orders, next to chapter 05's best step
// and cuBLAS. The steps are the list in steps.cu.
//
// Build: cmake --build build --target ch06_tiled_copy_mma
// Run:   build/bin/ch06_tiled_copy_mma [--sizes 1024,2048,4096] [--layout all] [--csv results.csv]   (--help for all flags)
#include "05_layout_matmul/steps.hpp"
#include "06_tiled_copy_mma/steps.hpp"
#include "harness/gemm_runner.hpp"

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "06_tiled_copy_mma",
      .description = "Chapter 06: 128x128x8 tiles with TiledCopy (128-bit loads, coalesced or not) and TiledMMA "
                     "(16x16 threads, 8x8 each, permuted or not), with and without register prefetch; any storage order",
      .default_sizes = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}},
      // C = A·B (RRR) first; RCR is the tutorial's C = A·Bᵀ; the kernels also take column-major C.
      .layouts = {"RRR", "RCR", "CRR", "CCR"},
  };
  // The step before (chapter 05's best, "ch05_layout_padded"), measured in the same run so that the
  // gain of TiledCopy/TiledMMA is read off one table; then the chapter's steps.
  std::vector<mm::GemmKernel<float, float>> kernels = mm::ch06::steps();
  kernels.insert(kernels.begin(), mm::ch05::best());
  return mm::run_gemm_chapter<float, float>(argc, argv, chapter, kernels);
}
