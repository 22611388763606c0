// The fp32 size sweep: the best kernel of chapters 03, 05, 06 and 07 next to cuBLAS SGEMM at sizes
// that are not multiples of the 128×128 block tile (1025, 2049, 4097: one extra row and column of
// tiles that are almost empty), at multiples whose tile count fills the 132 SMs badly or well, and at
// rectangular and tall-skinny shapes. It measures two costs the square 1024/2048/4096 runs of the
// chapters hide: wave quantization (a grid of tiles that leaves part of the last wave's SMs idle) and
// the predicated path a partial tile takes. Its rows are chapter "06_tiled_copy_mma_sizes", kept out
// of the chapters' own tables; the figure "fp32 kernels at awkward sizes" in the README draws them.
//
// No new kernels: each chapter's best step (its best(), from the chapter's list in steps.cu; chapter
// 03's kernel is still its header's launch function, compiled here).
//
// Build: cmake --build build --target ch06_sizes
// Run:   build/bin/ch06_sizes [--csv results.csv]   (RRR only: chapter 03's kernel takes no other order)
#include "03_tiled_shared_memory/steps.hpp"
#include "05_layout_matmul/steps.hpp"
#include "06_tiled_copy_mma/steps.hpp"
#include "07_pipelined_simt/steps.hpp"
#include "harness/gemm_runner.hpp"

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "06_tiled_copy_mma_sizes",
      .description = "fp32 across sizes: the best kernel of chapters 03, 05, 06 and 07 against cuBLAS at tile "
                     "multiples, non-multiples and rectangular shapes (wave quantization, partial tiles)",
      // M×N×K. Around each multiple of 128: the multiple, one past it (a nearly empty extra row and
      // column of tiles) and one short of it; 1100 and 2100, 3000 and 3072 change the tile count
      // against 132 SMs. Then the same work in rectangular and tall-skinny shapes.
      .default_sizes = {{1024, 1024, 1024},
                        {1025, 1025, 1025},
                        {1100, 1100, 1100},
                        {2047, 2047, 2047},
                        {2048, 2048, 2048},
                        {2049, 2049, 2049},
                        {2100, 2100, 2100},
                        {3000, 3000, 3000},
                        {3072, 3072, 3072},
                        {4096, 4096, 4096},
                        {4097, 4097, 4097},
                        {8192, 256, 4096},
                        {256, 8192, 4096},
                        {4096, 4096, 256},
                        {16384, 1024, 1024}},
      .layouts = {"RRR"},
      // About 0.56 TFLOP per pass over the sizes; chapter 03's kernel (≈ 8 TFLOP/s) dominates: 10 timed
      // runs and 3 warm-ups keep the whole sweep well under a minute on an H200.
      .default_reps = 10,
      .default_warmup = 3,
  };
  return mm::run_gemm_chapter<float, float>(
      argc, argv, chapter,
      {
          mm::ch03::best(),  // "ch03_tiled_32"
          mm::ch05::best(),  // "ch05_layout_padded"
          mm::ch06::best(),  // "ch06_tiled_prefetch"
          mm::ch07::best(),  // "ch07_deep_k"
      });
}
