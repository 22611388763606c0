// Chapter 04: copies and transposes written with the layout library, next to cudaMemcpy.
//
// Build: cmake --build build --target ch04_copy_and_transpose
// Run:   build/bin/ch04_copy_and_transpose [--sizes 2048,4096,8192] [--kernel transpose_smem_padded] [--csv out.csv]
//        (--help for all flags; sizes are M×N, e.g. 33x4097)
#include "harness/copy_runner.hpp"
#include "04_copy_and_transpose/copy_and_transpose.cuh"

int main(int argc, char** argv) {
  namespace ch = mm::ch04;
  const mm::CopyChapter chapter{
      .chapter = "04_copy_and_transpose",
      .description = "Chapter 04: copy and transpose of an MxN fp32 matrix through shared memory with the layout "
                     "library (tile / parallelize), cp.async, 128-bit accesses, padded shared layouts; "
                     "baseline cudaMemcpy device to device",
      .default_sizes = {{2048, 2048}, {4096, 4096}, {8192, 8192}, {16384, 16384}},
  };
  return mm::run_copy_chapter(
      argc, argv, chapter,
      {
          {.name = "copy_smem", .launch = ch::launch_copy_smem, .rejects = ch::tile_rejects<ch::kTile>},
          {.name = "copy_cp_async", .launch = ch::launch_copy_cp_async, .rejects = ch::tile_rejects<ch::kTile>,
           .needs = mm::arch::sm80},
          {.name = "copy_vec128", .launch = ch::launch_copy_vec128, .rejects = ch::tile_rejects<ch::kTile>},
          {.name = "copy_vec128_64x64", .launch = ch::launch_copy_vec128_64x64,
           .rejects = ch::tile_rejects<ch::kBigTile>},
          {.name = "transpose_naive", .transposes = true, .launch = ch::launch_transpose_naive,
           .rejects = ch::tile_rejects<ch::kTile>},
          {.name = "transpose_smem", .transposes = true, .launch = ch::launch_transpose_smem,
           .rejects = ch::tile_rejects<ch::kTile>},
          {.name = "transpose_smem_padded", .transposes = true, .launch = ch::launch_transpose_smem_padded,
           .rejects = ch::tile_rejects<ch::kTile>},
          {.name = "transpose_smem_padded_64x64", .transposes = true,
           .launch = ch::launch_transpose_smem_padded_64x64, .rejects = ch::tile_rejects<ch::kBigTile>},
      });
}
