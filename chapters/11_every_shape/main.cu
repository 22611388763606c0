// Chapter 11: one kernel does not fit every shape. Tile shapes chosen per problem, split-K for too
// few tiles, stream-K for a short last round (measured, not picked), A and B swapped for skinny M,
// and the entry point that picks among them, for any shape; bf16 in, fp32
// accumulation, bf16 C, C = A·Bᵀ (RCR) and C = A·B (RRR: every_shape only), next to cuBLAS bf16 and
// chapter 10's best kernel, over the shapes people run: squares from 512 to 16384 (some not
// multiples of 128), transformer prefill (M = 4096, 8192, 512) and decode (M = 1, 16, 64, 128)
// against the weight shapes of 7B-70B models and Llama-3's projections, and ragged K and N.
//
// Build: cmake --build build --target ch11_every_shape
// Run:   build/bin/ch11_every_shape [--sizes 16x4096x4096] [--csv results.csv]   (--help for all flags)
#include <vector>

#include "10_hopper_persistent/steps.hpp"
#include "11_every_shape/steps.hpp"
#include "harness/gemm_runner.hpp"

namespace {

// The shape suite (M×N×K): squares, then prefill and decode against each weight shape N×K, then the
// projections of Llama-3-8B and Llama-3-70B at the batch sizes a server runs, then shapes whose K or
// N is not a multiple of 8 (any_shape.cuh's staged copies and register-stored C).
std::vector<mm::ProblemSize> shape_suite() {
  std::vector<mm::ProblemSize> sizes;
  for (std::int64_t s : {512, 1000, 1024, 2048, 3000, 3072, 4096, 6000, 6144, 8192, 12288, 16384})
    sizes.push_back({s, s, s});
  const std::int64_t weights[][2] = {{4096, 4096}, {11008, 4096}, {4096, 11008}, {14336, 4096}, {4096, 14336}, {28672, 8192}};
  for (std::int64_t m : {4096, 8192, 1, 16, 64, 128})
    for (const auto& nk : weights) sizes.push_back({m, nk[0], nk[1]});
  for (const auto& nk : weights) sizes.push_back({512, nk[0], nk[1]});
  // Llama-3-8B: q/k/v fused (6144×4096), gate and up fused (28672×4096), the vocabulary head
  // (128256×4096); its o (4096×4096) and down (4096×14336) are above. Llama-3-70B: q/k/v (10240×8192),
  // o (8192×8192), gate and up (57344×8192), down (8192×28672).
  const std::int64_t llama[][2] = {{6144, 4096},  {28672, 4096}, {128256, 4096}, {10240, 8192},
                                   {8192, 8192},  {57344, 8192}, {8192, 28672}};
  for (std::int64_t m : {1, 16, 64, 128, 512, 4096})
    for (const auto& nk : llama) sizes.push_back({m, nk[0], nk[1]});
  const mm::ProblemSize ragged[] = {{4095, 4095, 4095}, {4096, 4096, 4100}, {4096, 4100, 4096}, {2047, 2049, 2051},
                                    {16, 4096, 4100},   {1, 11009, 4096},   {128, 4097, 4097},  {1000, 1001, 999}};
  for (const auto& s : ragged) sizes.push_back(s);
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "11_every_shape",
      .description = "Chapter 11: tile shapes per problem, split-K, stream-K, swap-AB for skinny M, and the kernel "
                     "picked per shape (bf16, fp32 accumulation, bf16 C; RCR, and RRR for every_shape), over squares, prefill, "
                     "decode, Llama-3 projection and ragged shapes",
      .default_sizes = shape_suite(),
      .layouts = {"RCR", "RRR"},
      .default_reps = 10,
      .needs = mm::arch::sm90a,
  };
  // Chapter 10's best kernel first, the point of departure, then this chapter's steps.
  auto kernels = mm::ch11::steps();
  kernels.insert(kernels.begin(), mm::ch10::best());
  return mm::run_gemm_chapter(argc, argv, chapter, mm::GemmKernelGroup<__nv_bfloat16, __nv_bfloat16>{.kernels = kernels});
}
