// Chapter 05: the register-tiled matmul written with layouts, with unpadded and padded shared tiles,
// for every storage order of A, B and C, next to cuBLAS.
//
// Build: cmake --build build --target ch05_layout_matmul
// Run:   build/bin/ch05_layout_matmul [--sizes 1024,2048,4096] [--layout all] [--csv results.csv]   (--help for all flags)
#include "harness/gemm_runner.hpp"
#include "05_layout_matmul/layout_matmul.cuh"

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "05_layout_matmul",
      .description = "Chapter 05: 128x128x8 block tiles, 8x8 accumulators per thread, one kernel for every "
                     "storage order (the layouts differ), unpadded and padded shared tiles",
      .default_sizes = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}},
      // The canonical problem first (the default); RCR is the tutorial's C = A·Bᵀ. The column-major C
      // orders run the same kernel too.
      .layouts = {"RRR", "RCR", "CRR", "CCR", "RRC", "RCC", "CRC", "CCC"},
  };
  return mm::run_gemm_chapter<float, float>(
      argc, argv, chapter,
      {
          {.name = "layout_unpadded", .dtype = mm::DType::f32, .launch = mm::ch05::launch_layout_unpadded,
           .rejects = mm::ch05::layout_gemm_rejects},
          {.name = "layout_padded", .dtype = mm::DType::f32, .launch = mm::ch05::launch_layout_padded,
           .rejects = mm::ch05::layout_gemm_rejects},
      });
}
