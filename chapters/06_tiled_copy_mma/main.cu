// Chapter 06: the 128×128×8 register-tiled matmul with TiledCopy and TiledMMA: the steps from chapter
// 05's padded kernel (128-bit global loads, a pad of 4, 128-bit shared loads), the uncoalesced
// counter-example, register prefetch and its other lane order, for all four storage orders, next to
// chapter 05's padded kernel and cuBLAS.
//
// Build: cmake --build build --target ch06_tiled_copy_mma
// Run:   build/bin/ch06_tiled_copy_mma [--sizes 1024,2048,4096] [--layout all] [--csv results.csv]   (--help for all flags)
#include "05_layout_matmul/layout_matmul.cuh"
#include "06_tiled_copy_mma/tiled_copy_mma.cuh"
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
  return mm::run_gemm_chapter<float, float>(
      argc, argv, chapter,
      {
          // The step before, measured in the same run so the gain of TiledCopy/TiledMMA is read off one table.
          {.name = "layout_padded", .dtype = mm::DType::f32, .launch = mm::ch05::launch_layout_padded,
           .rejects = mm::ch05::layout_gemm_rejects},
          // The steps from it to tiled_vec128, one idea each: 128-bit global loads, then a pad of 4, then
          // (tiled_vec128) the permuted TiledMMA's 128-bit shared loads.
          {.name = "tiled_ldg128", .dtype = mm::DType::f32, .launch = mm::ch06::launch_tiled_ldg128,
           .rejects = mm::ch06::tiled_rejects},
          {.name = "tiled_ldg128_pad4", .dtype = mm::DType::f32, .launch = mm::ch06::launch_tiled_ldg128_pad4,
           .rejects = mm::ch06::tiled_rejects},
          {.name = "tiled_vec128", .dtype = mm::DType::f32, .launch = mm::ch06::launch_tiled_vec128,
           .rejects = mm::ch06::tiled_rejects},
          {.name = "tiled_vec128_uncoalesced", .dtype = mm::DType::f32,
           .launch = mm::ch06::launch_tiled_vec128_uncoalesced, .rejects = mm::ch06::tiled_rejects},
          {.name = "tiled_prefetch", .dtype = mm::DType::f32, .launch = mm::ch06::launch_tiled_prefetch,
           .rejects = mm::ch06::tiled_rejects},
          // The other lane order: pairs of lanes share A instead of B, the same 12 wavefronts per k.
          {.name = "tiled_prefetch_pairs_share_a", .dtype = mm::DType::f32,
           .launch = mm::ch06::launch_tiled_prefetch_pairs_share_a, .rejects = mm::ch06::tiled_rejects},
      });
}
