// Chapter 05: the register-tiled matmul written with layouts, in two steps: a column of 8 outputs per
// thread (blocktile_1d), then an 8×8 block per thread with unpadded and padded shared tiles; for every
// storage order of A, B and C, next to cuBLAS.
//
// Build: cmake --build build --target ch05_layout_matmul
// Run:   build/bin/ch05_layout_matmul [--sizes 1024,2048,4096] [--layout all] [--kernel blocktile_1d] [--csv results.csv]
//        (--help for all flags)
#include "harness/gemm_runner.hpp"
#include "05_layout_matmul/layout_matmul.cuh"

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
  return mm::run_gemm_chapter<float, float>(
      argc, argv, chapter,
      {
          // Step 1: 512 threads, each a column of 8 of a 64×64 tile of C (a row of 8 for a column-major C).
          {.name = "blocktile_1d", .dtype = mm::DType::f32, .launch = mm::ch05::launch_blocktile_1d,
           .rejects = mm::ch05::blocktile_1d::rejects},
          // Step 2: 256 threads, each an 8×8 block of a 128×128 tile.
          {.name = "layout_unpadded", .dtype = mm::DType::f32, .launch = mm::ch05::launch_layout_unpadded,
           .rejects = mm::ch05::layout_gemm_rejects},
          {.name = "layout_padded", .dtype = mm::DType::f32, .launch = mm::ch05::launch_layout_padded,
           .rejects = mm::ch05::layout_gemm_rejects},
      });
}
