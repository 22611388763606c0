// Chapter 03: shared-memory tiling (TILE 16 and 32) next to chapter 02's coalesced kernel and cuBLAS.
//
// Build: cmake --build build --target ch03_tiled_shared_memory
// Run:   build/bin/ch03_tiled_shared_memory [--sizes 1024,2048,4096] [--csv results.csv]   (--help for all flags)
#include "harness/gemm_runner.hpp"
#include "02_naive_gpu/naive_gpu.cuh"
#include "03_tiled_shared_memory/tiled_shared_memory.cuh"

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "03_tiled_shared_memory",
      .description = "Chapter 03: TILE x TILE tiles of A and B staged in shared memory (TILE 16 and 32), "
                     "next to chapter 02's coalesced kernel",
      .default_sizes = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}},
  };
  return mm::run_gemm_chapter<float, float>(
      argc, argv, chapter,
      {
          // The step before, measured in the same run so the speedup of tiling is read off one table.
          {.name = "naive_coalesced", .dtype = mm::DType::f32, .launch = mm::ch02::launch_naive_coalesced,
           .rejects = [](const mm::GemmProblem& p) {
             return mm::ch02::naive_rejects(p, mm::ch02::Mapping::coalesced);
           }},
          {.name = "tiled_16", .dtype = mm::DType::f32, .launch = mm::ch03::launch_tiled_16,
           .rejects = mm::ch03::tiled_rejects<16>},
          {.name = "tiled_32", .dtype = mm::DType::f32, .launch = mm::ch03::launch_tiled_32,
           .rejects = mm::ch03::tiled_rejects<32>},
      });
}
