// Chapter 12, a diagnostic variant of step 2 (appendix): fp8_per_tensor_halves. fp8_per_tensor with
// each K step multiplied in two halves of 128 columns (two wgmma groups of m64n128k32 into the two
// halves of the accumulators) instead of one group of m64n256k32: fp8_block_scaled's wgmma shape
// without its promotion and its waits. What it measures: how much of fp8_block_scaled's loss is the
// narrower wgmma (A read from shared memory twice per K step) and how much the promotion's waits.
//
// What changes from fp8_per_tensor is the main loop's K step alone: CollectiveMmaHalves below, a
// CollectiveMma whose mma() issues two groups a step; the epilogue and the scheduler are
// fp8_per_tensor's.
//
// Build: cmake -DMM_APPENDIX_STEPS=ON ... && cmake --build build --target ch12_hopper_datatypes
// Run:   build/bin/ch12_hopper_datatypes --kernel fp8_per_tensor_halves
#pragma once

#include "12_hopper_datatypes/fp8_per_tensor.cuh"

namespace mm::ch12 {

/// fp8_per_tensor's tile (128×256, K steps of 128, 4 stages), each K step in two wgmma of N = 128.
struct Fp8HalvesCfg : Fp8Cfg {};

/// fp8_per_tensor's main loop with each K step multiplied as two halves of BN/2 columns, two wgmma
/// groups in flight per step (the loads are CollectiveMma's).
template <class Cfg>
struct CollectiveMmaHalves : CollectiveMma<Cfg, e4m3> {
  using Base = CollectiveMma<Cfg, e4m3>;
  using HalfAtom = SM90_64xNx32_F32E4M3E4M3_SS<Cfg::BN::value / 2>;  // m64n128k32, both operands K-major

  template <class Pipe, class Accumulators>
  MM_HD static void mma(const typename Base::Params&, Pipe& pipeline, typename Base::State& read,
                        typename Base::State& release, typename Base::TensorStorage& storage, Accumulators& accum,
                        int row_block, const WorkUnit& work) {
    using BK = typename Cfg::BK;
    using HalfFragment = GmmaFragmentLayout<Cfg::BN::value / 2>;  // (2,2,BN/16): the N/2 atom's values
    auto sA = make_tensor(make_smem_ptr(storage.a), typename Base::RingA{});  // (BM,BK,S)
    auto sB = make_tensor(make_smem_ptr(storage.b), typename Base::RingB{});  // (BN,BK,S)
    for (int kt = work.k_begin; kt < work.k_end; ++kt) {
      pipeline.consumer_wait(read);
      auto a_tile = local_tile(sA(_, _, read.index()), make_shape(Int<Cfg::kWgmmaM>{}, BK{}), make_coord(row_block, 0));
      // Half h of the tile is column groups BN/16·h.. of the 64×256 fragment: the N = 128 atom's
      // fragment, in the same order.
      MM_UNROLL
      for (int h = 0; h < 2; ++h) {
        auto b_half = local_tile(sB(_, _, read.index()), make_shape(Int<Cfg::BN::value / 2>{}, BK{}), make_coord(h, 0));
        auto acc_half = local_tile(flatten(accum(_, 0, 0)), shape(HalfFragment{}), make_coord(0, 0, h));  // (2,2,BN/16)
        gmma_k_block<HalfAtom, GmmaMajor::K, GmmaMajor::K>(a_tile, b_half, acc_half, kt > work.k_begin);  // 4 × k32
      }
      warpgroup_wait<2>();  // the previous step's two groups have completed: its stage is free
      warpgroup_fence_operand(accum);
      if (kt > work.k_begin) {
        pipeline.consumer_release(release);
        ++release;
      }
      ++read;
    }
    warpgroup_wait<0>();
    warpgroup_fence_operand(accum);
    pipeline.consumer_release(release);
    ++release;
  }
};

/// The kernel: fp8_per_tensor's with the halves main loop.
template <class Cfg>
using Fp8HalvesKernel = GemmKernelCooperative<Cfg, CollectiveMmaHalves<Cfg>, CollectiveEpilogueTma<Cfg, bf16, EpilogueScale::per_tensor>,
                                              PersistentTileScheduler>;

/// fp8_per_tensor's rule.
inline std::string fp8_per_tensor_halves_rejects(const GemmProblem& p) { return fp8_per_tensor_rejects(p); }

/// fp8_per_tensor's preparation with this kernel.
template <class = void>  // compiled where it is called, not where its header is included (11_every_shape/step_rules.hpp)
PreparedGemm prepare_fp8_per_tensor_halves(const GemmProblem& p, const e4m3* A, const e4m3* B, bf16* C,
                                                  int max_blocks = 0) {
  return prepare_fp8_per_tensor<Fp8HalvesCfg, Fp8HalvesKernel<Fp8HalvesCfg>>(p, A, B, C, max_blocks, "fp8_per_tensor_halves");
}

}  // namespace mm::ch12
