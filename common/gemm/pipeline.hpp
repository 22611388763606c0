// A ring of shared-memory stages filled by TMA and drained by wgmma, with its two roles named:
// a producer *acquires* a free stage and fills it, a consumer *waits* for a full stage and
// *releases* it once its wgmma no longer read it (the names of CUTLASS's PipelineTmaAsync).
//
//   stage s:   full[s]  completes when the producer's expect_tx arrival and all the stage's bytes
//                       have arrived (mbarrier.hpp)
//              empty[s] completes when every consumer warpgroup that reads stage s (of every block
//                       of the cluster that the stage's multicast writes into) has released it
//
// Where in the ring a role is, is a PipelineState: the stage index and the phase (parity) of the
// current round, advanced together, never recomputed from a loop counter. A consumer waits for
// full[s] in the phase it is in; the producer waits for empty[s] in the opposite phase, since in
// round 0 every stage is free: the phase "before" a fresh barrier's first counts as completed.
#pragma once

#include <cstdint>

#include "layout/cluster.hpp"
#include "layout/mbarrier.hpp"

namespace mm {

/// A position in a ring of `Stages` stages: which stage, and the parity of the round the ring is in.
template <int Stages>
struct PipelineState {
  static_assert(Stages >= 1, "a ring of at least one stage");
  int index = 0;            ///< the stage
  std::uint32_t phase = 0;  ///< the parity of the current round (flips each time index wraps)
  /// The next stage (wrapping to 0 flips the phase).
  MM_HD void advance() {
    if (++index == Stages) {
      index = 0;
      phase ^= 1u;
    }
  }
};

/// The full/empty barrier pairs of a TMA ring of `Stages` stages in shared memory, shared by the
/// `ClusterSize` blocks of a cluster whose TMA loads multicast into each other's stages. Waits are
/// bounded (mbarrier_wait_bounded): a false return is a deadlock the caller must report.
template <int Stages, int ClusterSize = 1>
struct TmaPipeline {
  static_assert(ClusterSize >= 1 && ClusterSize <= 16, "a cluster has 1 to 16 blocks");
  std::uint64_t* full;   ///< [Stages]: the stage has landed
  std::uint64_t* empty;  ///< [Stages]: the stage may be refilled

  /// One thread, before anyone uses the ring: full[s] expects one arrival (the producer's
  /// expect_tx) plus bytes; empty[s] one release from each of `consumers` warpgroups of each block
  /// of the cluster. Then fence_mbarrier_init() and a block (or cluster) barrier.
  MM_HD void init(int consumers) const {
    for (int s = 0; s < Stages; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], consumers * ClusterSize);
    }
    fence_mbarrier_init();
  }

  /// Producer: waits until stage `w.index` is free in round `w.phase`; false on a deadlock.
  MM_HD bool producer_acquire(PipelineState<Stages> const& w) const {
    return mbarrier_wait_bounded(&empty[w.index], int(w.phase ^ 1u));
  }
  /// Producer: announces `bytes` for the stage (all TMA boxes that land in this block's copy of it,
  /// its own and its peers' multicasts) and returns the barrier the loads complete on.
  MM_HD std::uint64_t* producer_expect(PipelineState<Stages> const& w, std::uint32_t bytes) const {
    mbarrier_arrive_expect_tx(&full[w.index], bytes);
    return &full[w.index];
  }
  /// Consumer: waits until stage `r.index` of round `r.phase` has landed; false on a deadlock.
  MM_HD bool consumer_wait(PipelineState<Stages> const& r) const {
    return mbarrier_wait_bounded(&full[r.index], int(r.phase));
  }
  /// Consumer: its warpgroup's wgmma no longer read stage `r.index`. Called by every thread of the
  /// warpgroup with its index `t` in it: thread t < ClusterSize releases the stage in block t of the
  /// cluster (whose producer's multicast wrote into this block's copy), so that each block's
  /// empty[s] counts every reader of what its producer wrote.
  MM_HD void consumer_release(PipelineState<Stages> const& r, int t) const {
    if constexpr (ClusterSize == 1) {
      if (t == 0) mbarrier_arrive(&empty[r.index]);
    } else {
      if (t < ClusterSize) mbarrier_arrive_cluster(&empty[r.index], std::uint32_t(t));
    }
  }
};

}  // namespace mm
