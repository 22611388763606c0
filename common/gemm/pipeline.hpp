// A ring of shared-memory stages filled by TMA and drained by wgmma, with CUTLASS's names and
// semantics (cutlass/pipeline/sm90_pipeline.hpp, PipelineTmaAsync): a producer *acquires* a free
// stage (which also arms the stage's full barrier with the bytes to come) and the TMA fills it; a
// consumer *waits* for a full stage and *releases* it once its wgmma no longer read it.
//
//   producer thread                 mbarriers of stage s            consumer warpgroups
//   ---------------                 --------------------            -------------------
//   producer_acquire(write):        empty[s] completed? ----------> (released by every reader)
//     waits on empty[s],
//     arms full[s] with the bytes
//   TMA(..., producer_get_barrier)  full[s]: bytes land ---------->  consumer_wait(read)
//                                                                    wgmma on stage s
//                                   empty[s] <-------------------   consumer_release(read)
//
// Where a role is in the ring is a PipelineState: the stage index and the phase (parity) of the
// current round, advanced together (++state), never recomputed from a loop counter. A consumer's
// state starts at stage 0, phase 0. The producer's starts at phase 1 (make_producer_start_state):
// every stage is free in round 0, and waiting on a fresh barrier for the parity before its first
// phase returns at once (PTX ISA, "mbarrier.test_wait/try_wait": the phase with the other parity
// counts as completed).
//
// Arrival counts come from the cluster shape (ClusterM blocks along M, ClusterN along N). A block's
// stage receives B from the blocks of its column (same N tile: B multicast along M) and A from the
// blocks of its row (A multicast along N), so before its producer may refill a stage, the consumers
// of all ClusterM + ClusterN - 1 blocks of its row and column must have released it: its empty
// barrier counts consumer warpgroups × (ClusterM + ClusterN - 1) arrivals, and each consumer
// warpgroup releases a stage in every block of its row and column (one thread per block).
//
// Where ours differs from CUTLASS: the waits are bounded by the watchdog of layout/mbarrier.hpp (a
// wait that gives up notes itself in its thread's WatchdogState, which the ring keeps, and returns,
// as CUTLASS's waits return nothing; the kernel records and traps in one place,
// watchdog_trap_if_gave_up(pipeline.watchdog(), record), once its wgmma are done); the release needs
// no `skip` flag; the thread that releases for each destination
// block is thread `block rank` of the warpgroup (CUTLASS spreads them over the four warps).
#pragma once

#include <cstdint>

#include "layout/cluster.hpp"
#include "layout/mbarrier.hpp"

namespace mm {

/// A position in a ring of `Stages` stages: which stage, the parity of the round the ring is in, and
/// how many stages have been passed (CUTLASS's PipelineState<Stages>).
template <int Stages>
class PipelineState {
 public:
  static_assert(Stages >= 1, "a ring of at least one stage");
  constexpr PipelineState() = default;
  /// Stage `index` of the round whose parity is `phase`, `count` stages passed.
  MM_HD constexpr PipelineState(int index, std::uint32_t phase, std::uint32_t count = 0)
      : index_(index), phase_(phase), count_(count) {}
  MM_HD constexpr int index() const { return index_; }             ///< the stage
  MM_HD constexpr std::uint32_t phase() const { return phase_; }   ///< the parity of the current round
  MM_HD constexpr std::uint32_t count() const { return count_; }   ///< stages passed since the start
  /// The next stage: wrapping to stage 0 flips the phase.
  MM_HD constexpr PipelineState& operator++() {
    ++count_;
    if (++index_ == Stages) {
      index_ = 0;
      phase_ ^= 1u;
    }
    return *this;
  }
  /// `n` stages on (CUTLASS's advance): each wrap past the last stage flips the phase. A reader that
  /// skips the stages another reader owns (the ping-pong kernel's consumers) moves this way.
  MM_HD constexpr PipelineState& advance(std::uint32_t n) {
    count_ += n;
    const std::uint32_t position = std::uint32_t(index_) + n;
    phase_ ^= (position / Stages) & 1u;
    index_ = int(position % Stages);
    return *this;
  }

 private:
  int index_ = 0;
  std::uint32_t phase_ = 0;
  std::uint32_t count_ = 0;
};

/// The TMA-fed ring of `Stages` stages of a block in a cluster of ClusterM × ClusterN blocks (1 × 1:
/// no cluster). Every thread constructs it; thread 0 of the block initializes the barriers, and the
/// caller then makes them visible to the block (__syncthreads) or the cluster (cluster_sync) before
/// any role uses them.
template <int Stages_, int ClusterM = 1, int ClusterN = 1>
class PipelineTmaAsync {
 public:
  static constexpr int Stages = Stages_;                      ///< stages in the ring
  static constexpr int kClusterSize = ClusterM * ClusterN;    ///< blocks per cluster
  static_assert(ClusterM >= 1 && ClusterN >= 1 && kClusterSize <= 16, "a cluster has 1 to 16 blocks");
  using State = PipelineState<Stages>;                        ///< a position in this ring

  /// The barriers, a member of the kernel's SharedStorage: full[s] completes when the stage has
  /// landed, empty[s] when every reader of the stage (in this block's row and column) released it.
  struct SharedStorage {
    std::uint64_t full[Stages];   ///< one arrival (the producer's arm) plus the stage's bytes
    std::uint64_t empty[Stages];  ///< consumer warpgroups × (ClusterM + ClusterN - 1) arrivals
    std::uint64_t watchdog;       ///< the block's watchdog word (layout/mbarrier.hpp's WatchdogState)
  };

  /// What the roles need to know.
  struct Params {
    std::uint32_t transaction_bytes = 0;  ///< bytes one stage receives in this block (its own boxes and its peers' multicasts)
    int consumer_warpgroups = 0;          ///< warpgroups per block that release stages
    bool is_leader = false;               ///< true in the one producer thread that arms the full barriers
    Watchdog watchdog = {};               ///< the waits' bound and record (the kernel's parameters carry it)
  };

  /// Whether thread `t` of a consumer warpgroup of the block of rank `block_rank` releases stages in
  /// the block of rank `t`: one thread per block of this block's row or column (the blocks that
  /// multicast into its stages, itself included).
  MM_HD static constexpr bool releases_in(int t, int block_rank) {
    const bool same_m = t % ClusterM == block_rank % ClusterM;  // the same rows of C: they share A
    const bool same_n = t / ClusterM == block_rank / ClusterM;  // the same columns of C: they share B
    return t < kClusterSize && (same_m || same_n);
  }

  /// Releases of a stage its empty barrier waits for in each block.
  static constexpr std::uint32_t empty_arrivals(int consumer_warpgroups) {
    return std::uint32_t(consumer_warpgroups * (ClusterM + ClusterN - 1));
  }

  /// Every thread: `thread_idx` is its index in the block. Thread 0 initializes the barriers and
  /// fences the initialization (then the caller's block or cluster barrier). `block_rank`: this
  /// block's rank in its cluster (cluster_ctarank(); 0 without a cluster), column-major in
  /// (ClusterM, ClusterN) as CuTe numbers a cluster's blocks.
  MM_HD PipelineTmaAsync(SharedStorage& storage, Params params, int thread_idx, int block_rank = 0)
      : full_(storage.full),
        full_smem_(held(detail::smem_address(storage.full))),
        empty_smem_(held(detail::smem_address(storage.empty))),
        params_(params),
        watchdog_(params.watchdog, detail::smem_address(&storage.watchdog)) {
    if (thread_idx == 0) {
      storage.watchdog = 0;
      for (int s = 0; s < Stages; ++s) {
        mbarrier_init(&storage.full[s], 1);
        mbarrier_init(&storage.empty[s], int(empty_arrivals(params.consumer_warpgroups)));
      }
      fence_mbarrier_init();
    }
    // Which block this thread releases stages in, if any: thread t of a warpgroup releases in block
    // t of the cluster when that block shares this block's row or column.
    const int t = thread_idx % 128;
    dst_block_ = std::uint32_t(t);
    is_signalling_ = releases_in(t, block_rank);
  }

  /// Producer: waits until stage `state.index()` is free in this round, then (the leader) arms its
  /// full barrier with the stage's transaction bytes.
  /// `skip_wait` (CUTLASS's producer_try_acquire(state, skip_wait)): the caller knows the stage is
  /// free, e.g. the first Stages stages of a fresh ring, whose wait would return at once; only the arm
  /// is left. It matters to the code a thread runs after it: a wait loop there, in a branch only the
  /// producer thread takes, made nvcc keep the K loop that follows (chapter 09, where that thread is
  /// also a consumer) in per-thread registers instead of uniform ones: 16 more instructions between
  /// the four wgmma of each K step, 8-10% slower when nothing else hides them.
  MM_HD void producer_acquire(State state, bool skip_wait = false) {
    if (!skip_wait)
      mbarrier_wait(empty(state), int(state.phase()), watchdog_, WatchdogSite::producer_acquire, std::uint32_t(state.index()));
    if (params_.is_leader) mbarrier_arrive_expect_tx(full(state), params_.transaction_bytes);
  }
  /// Producer: the barrier the stage's TMA loads complete on.
  MM_HD std::uint64_t* producer_get_barrier(State state) const { return &full_[state.index()]; }

  /// Consumer: waits until stage `state.index()` of this round has landed.
  MM_HD void consumer_wait(State state) {
    mbarrier_wait(full(state), int(state.phase()), watchdog_, WatchdogSite::consumer_wait, std::uint32_t(state.index()));
  }
  /// Consumer (every thread of a consumer warpgroup): this warpgroup's wgmma no longer read stage
  /// `state.index()`; the stage is released in every block of this block's row and column.
  MM_HD void consumer_release(State state) const {
    if constexpr (kClusterSize == 1) {
      if (is_signalling_) mbarrier_arrive(empty(state));
    } else {
      if (is_signalling_) mbarrier_arrive_cluster(empty(state), dst_block_);
    }
  }

 private:
  // A shared-window address the compiler keeps in a register instead of recomputing it. ptxas knows
  // an address converted from a shared variable (cvta) as a function of the block's cluster id, and
  // rematerializes it at each use, S2UR SR_CgaCtaId and two more instructions every time, rather
  // than hold a register: 4-5 times per K step in chapter 09's loops (13-18 of their 186-236
  // instructions), between one step's last wgmma and the next step's first, where nothing hides them.
  // The value passed through an asm statement is opaque: computed once, held.
  MM_HD static std::uint32_t held(std::uint32_t address) {
#if defined(__CUDA_ARCH__)
    asm volatile("mov.b32 %0, %1;\n" : "=r"(address) : "r"(address));
#endif
    return address;
  }
  // The barriers' shared-window addresses, converted once: each use in the loop is an add.
  MM_HD std::uint32_t full(State state) const { return full_smem_ + 8u * std::uint32_t(state.index()); }
  MM_HD std::uint32_t empty(State state) const { return empty_smem_ + 8u * std::uint32_t(state.index()); }

  std::uint64_t* full_;       // for producer_get_barrier (a TMA copy takes the barrier's pointer)
  std::uint32_t full_smem_;   // full[0]'s shared-window address
  std::uint32_t empty_smem_;  // empty[0]'s
  Params params_;
  std::uint32_t dst_block_ = 0;
  bool is_signalling_ = false;
  WatchdogState watchdog_;

 public:
  /// The block's watchdog: what the kernel's one trap (watchdog_trap_if_gave_up) and the other waits
  /// of its roles (a split-K fixup) share.
  MM_HD WatchdogState& watchdog() { return watchdog_; }
};

/// The producer's first position in a ring: stage 0, phase 1 (CUTLASS's make_producer_start_state):
/// every stage is free, and the first wait on each empty barrier returns at once.
template <class Pipeline>
MM_HD constexpr typename Pipeline::State make_producer_start_state() {
  return typename Pipeline::State(0, 1u, 0u);
}

}  // namespace mm
