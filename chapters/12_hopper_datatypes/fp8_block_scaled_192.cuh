// Chapter 12, a measured variant of step 3 (appendix): fp8_block_scaled_192. fp8_block_scaled with
// a 128×192 tile whose K step is multiplied in two chunks, 128 and 64 columns, each with accumulators
// of its own, both in flight: the first chunk is promoted while the second's wgmma run
// (warpgroup_wait<1>), where fp8_block_scaled waits for each half before it can issue the next.
// (Rolling the pipeline across K steps as well, chunk 0 of the next step issued before chunk 1 of this
// one is promoted, made ptxas serialize every wgmma: C7514, "non wgmma instructions reading
// accumulator registers of a wgmma between start and end of the pipeline stage"; measured at 46-51%.)
// Registers: 96 for the sum, 64 + 32 for the chunks. A tile starts at a multiple of 64 columns, so
// the first chunk may straddle two of B's 128-column scale blocks, always at its 64th column (group 8
// of the accumulator layout: a compile-time split, the block chosen per tile).
//
// What changes from fp8_block_scaled is the main loop's K step (CollectiveMmaBlockScaled192's mma())
// and the tile; the loads, the scales' staging, the epilogue and the scheduler are fp8_block_scaled's.
//
// Build: cmake -DMM_APPENDIX_STEPS=ON ... && cmake --build build --target ch12_hopper_datatypes
// Run:   build/bin/ch12_hopper_datatypes --kernel fp8_block_scaled_192
#pragma once

#include "12_hopper_datatypes/fp8_block_scaled.cuh"

namespace mm::ch12 {

/// fp8_block_scaled_192: 128×192 tiles, K steps of 128 e4m3 (one scale block), multiplied in chunks
/// of 128 and 64 columns, both in flight; 4 stages, two consumer warpgroups.
struct Fp8Block192Cfg : Fp8BlockCfg {
  using BN = _192;      ///< columns of C per tile: within two blocks of B's scales
  using Chunk0N = _128;  ///< the first chunk's columns (its wgmma's N)
  using Chunk1N = _64;   ///< the second chunk's columns
  static_assert(BN::value % 64 == 0 && Chunk0N::value == 128 && Chunk1N::value == 64,
                "the straddle rule of the kernel: chunks of 128 and 64, tiles starting at multiples of 64");
};

/// The two chunks' K step (see the file comment); two column blocks of B's scales per tile.
template <class Cfg>
struct CollectiveMmaBlockScaled192 : CollectiveMmaBlockScaledBase<Cfg, 2> {
  using Self = CollectiveMmaBlockScaledBase<Cfg, 2>;
  using Base = typename Self::Base;
  using HalfN = typename Cfg::HalfN;
  using Chunk0N = typename Cfg::Chunk0N;
  using Chunk1N = typename Cfg::Chunk1N;
  using Atom0 = SM90_64xNx32_F32E4M3E4M3_SS<Chunk0N::value>;  // m64n128k32
  using Atom1 = SM90_64xNx32_F32E4M3E4M3_SS<Chunk1N::value>;  // m64n64k32

  template <class Pipe, class Accumulators>
  MM_HD static void mma(const typename Self::Params& params, Pipe& pipeline, typename Base::State& read, typename Base::State&,
                        typename Self::TensorStorage& storage, Accumulators& accum, int cw, const WorkUnit& work) {
    using BK = typename Cfg::BK;
    constexpr int kGroups0 = Chunk0N::value / 8, kGroups1 = Chunk1N::value / 8;  // 8-column groups of each chunk
    auto acc = flatten(accum(_, 0, 0));  // (2,2,24): this thread's values of the warpgroup's 64×192 tile: the fp32 sum
    auto partial0 = make_uninitialized_tensor<float>(GmmaFragmentLayout<Chunk0N::value>{});  // (2,2,16): the first chunk's products over one K block
    auto partial1 = make_uninitialized_tensor<float>(GmmaFragmentLayout<Chunk1N::value>{});  // (2,2,8): the second chunk's
    auto sA = make_tensor(make_smem_ptr(storage.a), typename Base::RingA{});  // (BM,BK,S)
    auto sB = make_tensor(make_smem_ptr(storage.b), typename Base::RingB{});  // (BN,BK,S)
    const int t = int(threadIdx.x) % 128;
    const int n0 = work.tile.n * Cfg::BN::value;
    const int row0 = work.tile.m * Cfg::BM::value + Cfg::kWgmmaM * cw + 16 * (t / 32) + (t % 32) / 4, row1 = row0 + 8;
    typename Self::Scales scales = Self::load_scales(params, work.k_begin, row0, row1);
    MM_UNROLL
    for (int v = 0; v < int(acc.size()); ++v) acc(v) = 0.0f;
    for (int kt = work.k_begin; kt < work.k_end; ++kt) {
      if (kt % Cfg::kScaleChunk == 0) Self::stage_scales_b(params, storage, cw, t, kt, n0 / HalfN::value);
      pipeline.consumer_wait(read);
      auto a_tile = local_tile(sA(_, _, read.index()), make_shape(Int<Cfg::kWgmmaM>{}, BK{}), make_coord(cw, 0));
      auto b0 = local_tile(sB(_, _, read.index()), make_shape(Chunk0N{}, BK{}), make_coord(0, 0));  // rows 0-127
      auto b1 = local_tile(sB(_, _, read.index()), make_shape(Chunk1N{}, BK{}), make_coord(2, 0));  // rows 128-191
      gmma_k_block<Atom0, GmmaMajor::K, GmmaMajor::K>(a_tile, b0, partial0, false);  // 4 × k32, from 0
      gmma_k_block<Atom1, GmmaMajor::K, GmmaMajor::K>(a_tile, b1, partial1, false);  // in flight with it
      const typename Self::Scales next =
          kt + 1 < work.k_end ? Self::load_scales(params, kt + 1, row0, row1) : typename Self::Scales{};  // while the wgmma run
      // B's scales: the first block, and the one the tile's columns reach past it.
      const float first_b = storage.scale_b[cw][0][kt % Cfg::kScaleChunk];
      const float second_b = storage.scale_b[cw][1][kt % Cfg::kScaleChunk];
      warpgroup_wait<1>();  // the first chunk is done; the second still runs
      warpgroup_fence_operand(partial0);
      {
        // Columns 0-63 of the tile are in the first block; 64-127 too where the tile starts on a block
        // (n0 % 128 == 0), else in the second.
        const float upper_b = n0 % HalfN::value == 0 ? first_b : second_b;
        const float s0 = scales.a0 * first_b, s1 = scales.a1 * first_b;
        const float u0 = scales.a0 * upper_b, u1 = scales.a1 * upper_b;
        MM_UNROLL
        for (int g = 0; g < kGroups0; ++g)  // groups 0-7: columns 0-63; 8-15: columns 64-127
          MM_UNROLL
          for (int r = 0; r < 2; ++r)
            MM_UNROLL
            for (int c = 0; c < 2; ++c) acc(c, r, g) += partial0(c, r, g) * (g < 8 ? (r ? s1 : s0) : (r ? u1 : u0));
        warpgroup_fence_operand(acc);
      }
      warpgroup_wait<0>();
      warpgroup_fence_operand(partial1);
      pipeline.consumer_release(read);  // the stage is read: the producer may refill it
      ++read;
      {
        // Columns 128-191 are always in the second block (n0 is a multiple of 64).
        const float s0 = scales.a0 * second_b, s1 = scales.a1 * second_b;
        MM_UNROLL
        for (int g = 0; g < kGroups1; ++g)
          MM_UNROLL
          for (int r = 0; r < 2; ++r)
            MM_UNROLL
            for (int c = 0; c < 2; ++c) acc(c, r, kGroups0 + g) += partial1(c, r, g) * (r ? s1 : s0);
      }
      scales = next;
    }
  }
};

/// fp8_block_scaled's rule.
inline std::string fp8_block_scaled_192_rejects(const GemmProblem& p) { return fp8_block_scaled_rejects(p); }

/// fp8_block_scaled's preparation with this tile and main loop.
template <class = void>  // compiled where it is called, not where its header is included (11_every_shape/step_rules.hpp)
PreparedGemm prepare_fp8_block_scaled_192(const GemmProblem& p, const e4m3* A, const e4m3* B, bf16* C,
                                                 int max_blocks = 0) {
  return prepare_fp8_block_scaled_kernel<Fp8Block192Cfg, Fp8BlockKernel<Fp8Block192Cfg, CollectiveMmaBlockScaled192<Fp8Block192Cfg>>>(
      p, A, B, C, max_blocks, "fp8_block_scaled_192");
}

}  // namespace mm::ch12
