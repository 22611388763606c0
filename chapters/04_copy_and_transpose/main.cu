// Chapter 04: copies and transposes written with the layout library, next to cudaMemcpy.
//
// Build: cmake --build build --target ch04_copy_and_transpose
// Run:   build/bin/ch04_copy_and_transpose [--sizes 2048,4096,8192] [--kernel transpose_smem_padded] [--csv out.csv]
//        (--help for all flags; sizes are M×N, e.g. 33x4097)
#include "04_copy_and_transpose/steps.hpp"
#include "harness/copy_runner.hpp"

int main(int argc, char** argv) {
  const mm::CopyChapter chapter{
      .chapter = "04_copy_and_transpose",
      .description = "Chapter 04: copy and transpose of an MxN fp32 matrix through shared memory with the layout "
                     "library (tile / parallelize), cp.async, 128-bit accesses, padded shared layouts; "
                     "baseline cudaMemcpy device to device",
      .default_sizes = {{2048, 2048}, {4096, 4096}, {8192, 8192}, {16384, 16384}},
  };
  return mm::run_copy_chapter(argc, argv, chapter, mm::ch04::steps());
}
