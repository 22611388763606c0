// Chapter 03: shared-memory tiling (TILE 16 and 32) next to chapter 02's coalesced kernel and cuBLAS.
//
// Build: cmake --build build --target ch03_tiled_shared_memory
// Run:   build/bin/ch03_tiled_shared_memory [--sizes 1024,2048,4096] [--csv results.csv]   (--help for all flags)
#include "03_tiled_shared_memory/steps.hpp"
#include "harness/gemm_runner.hpp"

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "03_tiled_shared_memory",
      .description = "Chapter 03: TILE x TILE tiles of A and B staged in shared memory (TILE 16 and 32), "
                     "next to chapter 02's coalesced kernel",
      .default_sizes = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}},
  };
  return mm::run_gemm_chapter<float, float>(argc, argv, chapter, mm::ch03::steps());
}
