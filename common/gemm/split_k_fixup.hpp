// Split-K's reduction inside the GEMM kernel: what CUTLASS's stream-K tile scheduler calls the
// "fixup" (cutlass/gemm/kernel/sm90_tile_scheduler_stream_k.hpp: fixup(), with its workspace of
// partial accumulators and per-tile barriers), here for an even split of K into S slices.
//
//   unit of slice s < S-1:  multiply its slice; store the fp32 accumulators to its workspace slot;
//                           signal: counter[tile, warpgroup] += 1
//   unit of slice S-1:      multiply its slice; wait until counter == S-1; add the slots of slices
//                           0, 1, ..., S-2 to its accumulators, in that order; store C; reset the
//                           counter to 0 for the next launch
//
// Deterministic: the last slice adds the same partial sums in the same order on every run, whatever
// order the units ran in, so C is bit-identical run to run (no atomics on the data, only on the
// counters). Compared to writing all S partials and adding them in a second kernel, it saves that
// kernel's launch (microseconds, the whole budget of a small problem) and one slice's partial.
//
// A slot holds one consumer warpgroup's accumulators in their register order ("fragment order"):
// thread t's four values of column group g (the fragment's (c, r, g), c and r 0 or 1: registers
// 4g..4g+3) at float4 index g·128 + t, so the writer's and the reader's accesses
// are the same coalesced 16-byte stores and loads, and no one needs to know where in C a value
// belongs (CUTLASS's workspace does the same).
//
// Waiting on another block is only safe when that block runs: the units are ordered slice-major
// (SplitKTileScheduler) and every block of the persistent grid is resident, so a last-slice unit only
// ever waits for units earlier in the order, each of which some running block reaches without
// waiting on anything later. The wait has the mbarrier watchdog's bound (layout/mbarrier.hpp).
#pragma once

#include <cstdint>
#include <type_traits>

#include "layout/integer.hpp"  // MM_HD
#include "layout/mbarrier.hpp"  // MM_MBARRIER_WATCHDOG, WatchdogState
#include "layout/tensor.hpp"  // flatten, size_v, layout<I>

namespace mm {

/// The workspace of split-K's fixup for a kernel of `consumers` warpgroups of NAcc accumulators a
/// thread: slots for slices 0 .. S-2 of every tile, and one counter per (tile, warpgroup).
template <int NAcc>
struct SplitKFixup {
  static_assert(NAcc % 4 == 0, "slots are written in float4s");
  float* partials;       ///< (S-1) × tiles × consumers slots of 128 × NAcc floats
  int* counters;         ///< tiles × consumers, zero between launches
  std::int64_t tiles;    ///< tiles of the problem
  int consumers;         ///< consumer warpgroups per tile

  /// Floats one slot holds: a warpgroup's accumulators.
  static constexpr int kSlotFloats = 128 * NAcc;
  /// Bytes of partials for `splits` slices of `tiles` tiles (what the host allocates).
  static constexpr std::int64_t partial_bytes(int splits, std::int64_t tiles, int consumers) {
    return std::int64_t(splits - 1) * tiles * consumers * kSlotFloats * std::int64_t(sizeof(float));
  }

  /// The slot of slice `split` (< S-1) of tile `tile` (its index in the tile order), warpgroup `wg`.
  MM_HD float* slot(int split, std::int64_t tile, int wg) const {
    return partials + ((std::int64_t(split) * tiles + tile) * consumers + wg) * kSlotFloats;
  }
  /// The counter of tile `tile`, warpgroup `wg`.
  MM_HD int* counter(std::int64_t tile, int wg) const { return counters + tile * consumers + wg; }
};

/// Thread `t` of a warpgroup stores its accumulators (`accum`: its register fragment (MMA,MMA_M,1) of
/// the wgmma's C, each row block's values (c, r, g) = (column in the pair, row half, 8-column group))
/// into `slot` in fragment order: one float4 per column group, at float4 index (G·h + g)·128 + t for
/// group g of row block h (G groups a block): coalesced.
template <class Accumulators>
MM_HD void store_partial(Accumulators const& accum, float* slot, int t) {
  auto* v = reinterpret_cast<float4*>(slot);
MM_UNROLL
  for (int h = 0; h < int(size<1>(accum.layout())); ++h) {
    auto acc = flatten(accum(_, h, 0));  // (2,2,G)
    constexpr int kGroups = size_v<std::remove_cvref_t<decltype(layout<2>(acc.layout()))>>;
MM_UNROLL
    for (int g = 0; g < kGroups; ++g)
      v[(kGroups * h + g) * 128 + t] = make_float4(acc(0, 0, g), acc(1, 0, g), acc(0, 1, g), acc(1, 1, g));
  }
}

/// Thread `t` adds the values another unit's thread `t` stored into `slot` to its accumulators.
template <class Accumulators>
MM_HD void add_partial(Accumulators& accum, const float* slot, int t) {
  const auto* v = reinterpret_cast<const float4*>(slot);
MM_UNROLL
  for (int h = 0; h < int(size<1>(accum.layout())); ++h) {
    auto acc = flatten(accum(_, h, 0));  // (2,2,G)
    constexpr int kGroups = size_v<std::remove_cvref_t<decltype(layout<2>(acc.layout()))>>;
MM_UNROLL
    for (int g = 0; g < kGroups; ++g) {
      const int i = (kGroups * h + g) * 128 + t;
#if defined(__CUDA_ARCH__)
      const float4 p = __ldcg(v + i);  // from L2: another SM wrote it during this launch
#else
      const float4 p = v[i];
#endif
      acc(0, 0, g) += p.x;
      acc(1, 0, g) += p.y;
      acc(0, 1, g) += p.z;
      acc(1, 1, g) += p.w;
    }
  }
}

/// One thread, after its warpgroup's stores (each thread: store_partial, then a __threadfence, then
/// the warpgroup's barrier): counts this slice in.
MM_HD void signal_partial(int* counter) {
#if defined(__CUDA_ARCH__)
  atomicAdd(counter, 1);
#else
  *counter += 1;
#endif
}

/// One thread: waits until `target` slices have signalled (bounded by the watchdog, as an mbarrier
/// wait: a wait that gives up records itself and returns), then makes their stores visible to this
/// block (a fence; the warpgroup's barrier after it extends that to the other threads), and resets
/// the counter for the next launch. `tile`: what the record names.
MM_HD void wait_partials(int* counter, int target, WatchdogState& watchdog, std::int64_t tile = 0) {
#if defined(__CUDA_ARCH__)
  volatile int* c = counter;
  if (*c < target) {
#if MM_MBARRIER_WATCHDOG
    const std::uint64_t start = detail::global_timer_ns();
    while (*c < target) {
      if (detail::global_timer_ns() - start > watchdog.bound_ns) {
        watchdog.give_up(WatchdogSite::fixup, std::uint32_t(target), 0, std::uint32_t(tile));
        break;
      }
      if (watchdog.gave_up()) break;  // another wait of the block gave up
    }
#else
    while (*c < target) {
    }
#endif
  }
  __threadfence();
  *c = 0;
#else
  (void)watchdog, (void)tile;
  *counter = 0;
  (void)target;
#endif
}

}  // namespace mm
