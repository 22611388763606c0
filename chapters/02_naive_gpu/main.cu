// Chapter 02: one thread per element of C, strided and coalesced mappings, next to cuBLAS.
//
// Build: cmake --build build --target ch02_naive_gpu
// Run:   build/bin/ch02_naive_gpu [--sizes 1024,2048,4096] [--csv results.csv]   (--help for all flags)
#include "02_naive_gpu/steps.hpp"
#include "harness/gemm_runner.hpp"

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "02_naive_gpu",
      .description = "Chapter 02: one thread per element of C; warps walking down a column (strided) or along a row (coalesced)",
      .default_sizes = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}},
      // The strided kernel is the slowest on the ladder (a few hundred ms per 4096³ product by the
      // README's estimate): 10 timed runs keep the default run short; its median is stable anyway.
      .default_reps = 10,
      .default_warmup = 3,
  };
  return mm::run_gemm_chapter<float, float>(argc, argv, chapter, mm::ch02::steps());
}
