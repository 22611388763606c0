// Chapter 05: the register-tiled matmul written with layouts, in two steps: a column of 8 outputs per
// thread (blocktile_1d), then an 8×8 block per thread with unpadded and padded shared tiles; for every
// storage order of A, B and C, next to cuBLAS. The steps are the list in steps.cu.
//
// Build: cmake --build build --target ch05_layout_matmul
// Run:   build/bin/ch05_layout_matmul [--sizes 1024,2048,4096] [--layout all] [--kernel blocktile_1d] [--csv results.csv]
//        (--help for all flags)
#include "05_layout_matmul/steps.hpp"
#include "harness/gemm_runner.hpp"

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "05_layout_matmul",
      .description = "Chapter 05: one layout kernel for every storage order and tiling: 64x64x8 block tiles "
                     "with a column of 8 accumulators per thread (blocktile_1d), then 128x128x8 with 8x8 per "
                     "thread, unpadded and padded shared tiles",
      .default_sizes = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}},
      // The canonical problem first (the default); RCR is the tutorial's C = A·Bᵀ. The column-major C
      // orders run the same kernel too.
      .layouts = {"RRR", "RCR", "CRR", "CCR", "RRC", "RCC", "CRC", "CCC"},
  };
  return mm::run_gemm_chapter<float, float>(argc, argv, chapter, mm::ch05::steps());
}
