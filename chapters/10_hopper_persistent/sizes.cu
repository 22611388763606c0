// Chapter 10's size sweep: tma_store and cluster_multicast, the chapter's two last steps, and chapter
// 09's best next to cuBLAS from 1024³ to 16384³ and at shapes of transformer layers (a 4096-token batch through a 4096×11008
// MLP projection and back, an 8192×8192 layer with K = 1024), RRR and RCR: the figure "Against cuBLAS
// at every size" in the README. Its rows are chapter "10_hopper_persistent_sizes", kept out of the
// chapter's own table.
//
// Build: cmake --build build --target ch10_sizes
// Run:   build/bin/ch10_sizes --layout all [--csv results.csv]
#include <string>

#include "09_hopper_wgmma_tma/steps.hpp"
#include "10_hopper_persistent/steps.hpp"
#include "harness/gemm_runner.hpp"

using bf16 = __nv_bfloat16;

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "10_hopper_persistent_sizes",
      .description = "Chapter 10 across sizes: tma_store, cluster_multicast and chapter 09's best against cuBLAS, 1024^3 to 16384^3 "
                     "and transformer-layer shapes",
      .default_sizes = {{1024, 1024, 1024},
                        {2048, 2048, 2048},
                        {3072, 3072, 3072},
                        {4096, 4096, 4096},
                        {6144, 6144, 6144},
                        {8192, 8192, 8192},
                        {12288, 12288, 12288},
                        {16384, 16384, 16384},
                        {4096, 11008, 4096},
                        {4096, 4096, 11008},
                        {8192, 8192, 1024}},
      .layouts = {"RRR", "RCR"},
      .default_reps = 10,
      .needs = mm::arch::sm90a,
  };
  return mm::run_gemm_chapter(
      argc, argv, chapter,
      mm::GemmKernelGroup<bf16, bf16>{
          .kernels = {
              mm::ch09::best(),
              mm::kernel_named(mm::ch10::steps(), "tma_store"),
              mm::kernel_named(mm::ch10::steps(), "cluster_multicast"),
          }});
}
