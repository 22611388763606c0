// Chapter 07: fp32 GEMM on the CUDA cores at cuBLAS speed. The steps from chapter 06's register
// prefetch to a cp.async pipeline (2 and 4 stages), warp tiling, swizzled shared tiles, registers
// loaded one k ahead, deeper K steps and big block tiles, every storage order, next to chapter 06's
// best step and cuBLAS. The steps are the list in steps.cu.
//
// Build: cmake --build build --target ch07_pipelined_simt
// Run:   build/bin/ch07_pipelined_simt [--sizes 4096,8192] [--layout all] [--csv results.csv]   (--help for all flags)
#include "06_tiled_copy_mma/steps.hpp"
#include "07_pipelined_simt/steps.hpp"
#include "harness/gemm_runner.hpp"

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "07_pipelined_simt",
      .description = "Chapter 07: cp.async pipelines (2-4 stages), warp tiling, swizzled shared memory and "
                     "128x256 block tiles for fp32 on the CUDA cores; any storage order",
      .default_sizes = {{2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}},
      .layouts = {"RRR", "RCR", "CRR", "CCR"},
  };
  // The step before (chapter 06's best, "ch06_tiled_prefetch"), measured in the same run; then the
  // chapter's steps.
  std::vector<mm::GemmKernel<float, float>> kernels = mm::ch07::steps();
  kernels.insert(kernels.begin(), mm::ch06::best());
  return mm::run_gemm_chapter<float, float>(argc, argv, chapter, kernels);
}
