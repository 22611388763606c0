// Chapter 11, appendix: split_k_second_kernel. split_k as first written: every slice, the last one
// too, stores its fp32 partial C (row-major, M×N per slice) with the register epilogue, and a second
// kernel (gemm/reduce_split_k.cuh) adds the slices in order and writes C. Simpler than split_k's
// fixup (no unit waits for another), as deterministic, and measured slower where split-K matters:
// the second launch and the extra pass over S partials cost more than the split saved (the page's
// appendix). Built with MM_APPENDIX_STEPS.
//
//   diff split_k_second_kernel.cuh split_k.cuh   shows what the fixup changed.
//
// Run:   build/bin/ch11_every_shape --kernel split_k_second_kernel   (a build with -DMM_APPENDIX_STEPS=ON)
#pragma once

#include <memory>

#include "11_every_shape/split_k.cuh"
#include "gemm/reduce_split_k.cuh"

namespace mm::ch11 {

/// The kernel: tile_shapes' with a split-K scheduler whose fixup stores every slice's fp32 partial C
/// into the workspace (gemm/tile_scheduler_sm90.hpp's SplitKReduceScheduler).
template <class Cfg>
using SplitKSecondKernel =
    TileKernel<Cfg, SplitKReduceScheduler<Cfg::BN::value / 2, SM90_64xNx16_F32BF16BF16_SS<Cfg::BN::value, GmmaMajor::K, GmmaMajor::K>>>;

/// split_k's preparation with the tile and the number of slices given (`splits` <= 0: choose_splits).
/// The workspace is allocated here, once per problem, and freed with the returned launch.
template <class Cfg>
PreparedGemm prepare_split_k_second_kernel_with(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, int splits = 0,
                                                int max_blocks = 0) {
  check_step("split_k_second_kernel", split_k_rejects(p), A, B, C);
  using Kernel = SplitKSecondKernel<Cfg>;
  const int sms = device_sm_count();
  const GroupedTileScheduler tiles = tile_order<Cfg>(p);
  const int k_steps = k_steps_of<Cfg>(p);
  const SplitKTileScheduler units =
      SplitKTileScheduler::make(tiles, k_steps, splits > 0 ? splits : choose_splits(tiles.size(), k_steps, sms));
  std::shared_ptr<float> workspace;
  if (units.splits > 1) {
    float* w = nullptr;
    const std::size_t bytes = std::size_t(units.splits) * std::size_t(p.m) * std::size_t(p.n) * sizeof(float);
    if (cudaError_t e = cudaMalloc(&w, bytes); e != cudaSuccess)
      throw std::runtime_error(std::string("split_k_second_kernel: cannot allocate the workspace: ") + cudaGetErrorString(e));
    workspace.reset(w, [](float* q) { cudaFree(q); });
  }
  auto args = tile_arguments<Kernel>(p, A, B, C);  // C by TMA when K is not split (the map is made either way)
  args.scheduler = {units, workspace.get(), int(p.m), int(p.n), Cfg::BM::value, Cfg::BN::value};
  args.max_blocks = max_blocks;
  GemmAdapter<Kernel> gemm;
  gemm.initialize(args);
  const std::int64_t count = p.m * p.n;
  const int n_splits = units.splits;
  auto run = [gemm, workspace, n_splits, count, C, sms](cudaStream_t stream) {
    gemm.run(stream);
    if (n_splits > 1) launch_reduce_split_k_bf16(workspace.get(), n_splits, count, C, sms, stream);
  };
  return PreparedGemm(run, "split_k_second_kernel " + tile_name<Cfg>() + " x" + std::to_string(n_splits));
}

/// The step: tile_shapes' tile for this problem, K split as choose_splits says.
template <class = void>  // compiled where it is called, not where its header is included (step_rules.hpp)
PreparedGemm prepare_split_k_second_kernel(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C,
                                                  int max_blocks = 0) {
  check_step("split_k_second_kernel", split_k_rejects(p), A, B, C);
  return with_tile_shape(choose_tile_shape(p, device_sm_count()), [&](auto cfg) {
    return prepare_split_k_second_kernel_with<decltype(cfg)>(p, A, B, C, 0, max_blocks);
  });
}

}  // namespace mm::ch11
