// Chapter 11: one kernel does not fit every shape. Tile shapes chosen per problem, split-K for too
// few tiles, stream-K for a short last round (measured, not picked), A and B swapped for skinny M,
// and the entry point that picks among them; bf16 in, fp32
// accumulation, bf16 C, C = A·Bᵀ (RCR), next to cuBLAS bf16 and chapter 10's best kernel, over the
// shapes people run: squares from 512 to 16384 (some not multiples of 128), transformer prefill
// (M = 4096, 8192) and decode (M = 1, 16, 64, 128) against the weight shapes of 7B-70B models.
//
// Build: cmake --build build --target ch11_every_shape
// Run:   build/bin/ch11_every_shape [--sizes 16x4096x4096] [--csv results.csv]   (--help for all flags)
#include <vector>

#include "10_hopper_persistent/steps.hpp"
#include "11_every_shape/steps.hpp"
#include "harness/gemm_runner.hpp"

namespace {

// The shape suite (M×N×K): squares, then prefill and decode against each weight shape N×K.
std::vector<mm::ProblemSize> shape_suite() {
  std::vector<mm::ProblemSize> sizes;
  for (std::int64_t s : {512, 1000, 1024, 2048, 3000, 3072, 4096, 6000, 6144, 8192, 12288, 16384})
    sizes.push_back({s, s, s});
  const std::int64_t weights[][2] = {{4096, 4096}, {11008, 4096}, {4096, 11008}, {14336, 4096}, {4096, 14336}, {28672, 8192}};
  for (std::int64_t m : {4096, 8192, 1, 16, 64, 128})
    for (const auto& nk : weights) sizes.push_back({m, nk[0], nk[1]});
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "11_every_shape",
      .description = "Chapter 11: tile shapes per problem, split-K, stream-K, swap-AB for skinny M, and the kernel "
                     "picked per shape (bf16, fp32 accumulation, bf16 C; RCR), over squares, prefill and decode shapes",
      .default_sizes = shape_suite(),
      .layouts = {"RCR"},
      .default_reps = 10,
      .needs = mm::arch::sm90a,
  };
  // Chapter 10's best kernel first, the point of departure, then this chapter's steps.
  auto kernels = mm::ch11::steps();
  kernels.insert(kernels.begin(), mm::ch10::best());
  return mm::run_gemm_chapter(argc, argv, chapter, mm::GemmKernelGroup<__nv_bfloat16, __nv_bfloat16>{.kernels = kernels});
}
