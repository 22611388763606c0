// Chapter 13, step 3: grouped_swiglu. The gate and up projections of a SwiGLU expert in one grouped
// GEMM whose epilogue writes SiLU(gate)·up, never gate and up themselves.
//
// A SwiGLU expert computes h = SiLU(x·W_gateᵀ) ⊙ (x·W_upᵀ), then down = h·W_downᵀ. Steps 1-2 run the
// gate+up projection as one GEMM of N = 2I columns and write all of them (bf16, 2I per row) for an
// elementwise kernel to read back and halve. Here the epilogue does that elementwise step on the
// accumulators, in registers, before anything leaves the SM: C is I columns wide, and the gate and
// up values are never rounded to bf16 nor written.
//
// It needs each tile's gate and up columns to be the same outputs. The weights are stacked by tile
// (the caller interleaves them once, when it loads them): rows 256t .. 256t + 127 of an expert's B are
// W_gate's rows 128t .. 128t + 127, rows 256t + 128 .. 256t + 255 are W_up's same rows. A warpgroup's
// accumulators of a 64×256 tile hold column c of the tile in the same registers' places as column
// c + 128, 16 column groups apart (wgmma's C layout: value (c, r, g) of a thread's fragment is in
// the column group g of 8 columns), so output column c of the tile is SiLU(acc(c, r, g)) ·
// acc(c, r, g + 16) with both in the thread.
//
//   GemmKernelCooperative          unchanged
//   + CollectiveMma                unchanged: B is the experts' interleaved gate+up weights, (E·2I) × K
//   + CollectiveEpilogueSwiGlu     the new block: the activation on the accumulators, then
//                                  CollectiveEpilogueTma with a tile half as wide (C: rows × I)
//   + PersistentGroupTileScheduler unchanged
//
// Build: cmake --build build --target ch13_grouped_moe
// Run:   build/bin/ch13_grouped_moe --swiglu --tokens 4096
#pragma once

#include <cmath>

#include "13_grouped_moe/grouped_contiguous.cuh"

namespace mm::ch13 {

/// A configuration whose tile is half as wide: what the SwiGLU epilogue stores.
template <class Cfg>
struct HalfColumns : Cfg {
  using BN = Int<Cfg::BN::value / 2>;  ///< C's columns per tile
};

/// The SwiGLU epilogue: a tile's 2·128 accumulator columns (gate, then up: the interleaved weights)
/// become 128 columns of SiLU(gate)·up, stored by CollectiveEpilogueTma's pieces and store pipeline.
template <class Cfg>
struct CollectiveEpilogueSwiGlu {
  static_assert(Cfg::BN::value == 256, "a 256-column tile: 128 gate and 128 up columns");
  using Store = CollectiveEpilogueTma<HalfColumns<Cfg>, bf16>;  ///< the store of the half-width tile
  using TensorStorage = typename Store::TensorStorage;         ///< its C buffers
  using Params = typename Store::Params;                       ///< its tensor map of C
  static constexpr int kOutputColumnsPerTile = Cfg::BN::value / 2;  ///< C's columns per tile

  /// Host: C (M × N/2 of the gate+up GEMM's N, rows `ldc` apart).
  static Params to_underlying_arguments(bf16* C, int m, int n, std::int64_t ldc) {
    return Store::to_underlying_arguments(C, m, n, ldc);
  }
  /// One thread: the tensor map into the cache.
  MM_HD static void prefetch(const Params& params) { Store::prefetch(params); }

  /// A consumer warpgroup's side: the activation, then the half-width store.
  struct Consumer {
    typename Store::Consumer store_;  ///< the half-width tile's store pipeline
    /// Thread `thread` of consumer warpgroup `consumer`.
    MM_HD Consumer(const Params& p, TensorStorage& s, int consumer, int thread) : store_(p, s, consumer, thread) {}

    /// The warpgroup's 64×256 accumulators of the tile at rows m0.., columns n0.. of the gate+up
    /// GEMM: SiLU(gate)·up to C's rows m0.., columns n0/2 ...
    template <class Accumulators>
    MM_HD void store(Accumulators& accum, int m0, int n0) {
      constexpr int kHalf = Cfg::BN::value / 16;  // column group g: gate columns; g + kHalf: the same outputs' up columns
      auto acc = flatten(accum(_, 0, 0));                                    // (2,2,2·kHalf): the 64×256 tile's values
      auto out = make_gmma_accumulators<Cfg::BN::value / 2>();               // ((2,2,kHalf),1,1): the half-width tile's
      auto h = flatten(out(_, 0, 0));                                        // (2,2,kHalf)
      MM_UNROLL
      for (int g = 0; g < kHalf; ++g)
        MM_UNROLL
        for (int r = 0; r < 2; ++r)
          MM_UNROLL
          for (int c = 0; c < 2; ++c) h(c, r, g) = silu(acc(c, r, g)) * acc(c, r, g + kHalf);
      store_.store(out, m0, n0 / 2);
    }
    /// SiLU(x) = x · sigmoid(x) = x / (1 + e^-x), with the SFU's exponential (ex2.approx) and a fast
    /// division: two instructions each, where expf and a full division take about twenty (their cost
    /// is time the tensor cores wait: the page's counters). Relative error about 2^-21, far below
    /// bf16's 2^-9; for x below -88, e^-x is infinite and the result 0 (-0), as SiLU's limit.
    MM_HD static float silu(float x) {
#if defined(__CUDA_ARCH__)
      return __fdividef(x, 1.0f + __expf(-x));
#else
      return x / (1.0f + std::exp(-x));
#endif
    }
    /// Before the block exits: the stores have read shared memory.
    MM_HD void store_tail() { store_.store_tail(); }
  };
};

}  // namespace mm::ch13
