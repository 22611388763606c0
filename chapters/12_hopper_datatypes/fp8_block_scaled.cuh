// Chapter 12, step 3: fp8_block_scaled. fp8_per_tensor's kernel with DeepSeek-V3's fine-grained
// scaling: a scale for every 1×128 block of A (a row of activations, 128 K) and every 128×128 block
// of B (the weights), and the partial sums promoted to fp32 every 128 K.
//
// A per-tensor scale factors out of the whole sum; a block scale does not: C(m,n) is
// Σ_kb scale_a(m,kb)·scale_b(n/128,kb)·Σ_{k in kb} a(m,k)·b(n,k), a different factor for each K
// block. So each K step of 128 (one scale block) is multiplied into accumulators of its own,
// `partial`, starting from zero, and then added to the fp32 sum with its two scales:
//
//   acc += partial · scale_a(row, kb) · scale_b(column block, kb)
//
// which is also the promotion DeepSeek-V3 describes: the tensor core's fp8 accumulation (fewer bits
// than fp32) runs over 128 K at most, the sum over K in the CUDA cores' fp32. What it costs:
//
//   registers      a second set of accumulators. For the warpgroup's 64×256 tile that would be
//                  2 × 128 of the 232 registers a consumer has, so each K step is multiplied in two
//                  halves of 128 columns (one of B's scale blocks each): 128 for the sum, 64 for
//                  the half in flight. (Two dead ends, on the page: a 128×128 tile with a whole
//                  second set, 60-72% of cuBLASLt, a third more bytes per flop from L2; chunks of 64
//                  columns, two in flight, 74-76%: A read from shared memory four times a step.)
//   a wait per half the promotion reads `partial`, so each half waits for its own wgmma
//                  (warpgroup_wait<0>); the other consumer warpgroup's wgmma keep the tensor core
//                  busy meanwhile, if they are queued behind this one's and not beside them: the
//                  two consumers take turns issuing (cuBLASLt's order; passed by a pair of named
//                  barriers, bar.sync on one's own and bar.arrive on the other's, as the ping-pong
//                  kernel passes its turn; without turns they fall into lock-step and promote
//                  together while the tensor core idles: the appendix step fp8_block_scaled_no_turns).
//   the scales     read before the step's first wgmma, never after a wait (DeepGEMM's order), and
//                  from nowhere that makes the K step wait on L2: A's (a float per row and K block)
//                  come with the stage, a third TMA copy on its full barrier, and each thread reads
//                  its two rows from shared memory; B's (one value per warpgroup, column block and
//                  K block) sit in registers, lane l of every warp holding K block k0 + l, and a
//                  shuffle gives each thread the step's pair. Loaded by LDG a step ahead, A's
//                  scales left most of an L2 round trip exposed every K step (issue 35; the
//                  appendix steps fp8_block_scaled_smem_scales, _early_scales, _register_b_scales
//                  measure the way there).
//
// What changes from fp8_per_tensor is the main loop: CollectiveMmaBlockScaled below keeps
// CollectiveMma's K step's loads, adds the scales' copy (CollectiveMmaBlockScaledTmaBase) and replaces
// its mma() with the promotion. The epilogue is fp8_per_tensor's without the scale, the scheduler the
// same. TMA reads scale_a as an (M, Kb) matrix only where M % 4 == 0 (16-byte rows): for other M the
// step runs the same loop with A's scales by LDG (prepare_fp8_block_scaled chooses).
//
// Build: cmake --build build --target ch12_hopper_datatypes
// Run:   build/bin/ch12_hopper_datatypes --kernel fp8_block_scaled
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "gemm/collective_epilogue_sm90.hpp"
#include "gemm/collective_mma_sm90.hpp"
#include "gemm/kernel_adapter.hpp"
#include "gemm/kernel_sm90.hpp"
#include "gemm/launch.hpp"
#include "gemm/problem.hpp"  // kScaleBlock
#include "gemm/tile_scheduler_sm90.hpp"

namespace mm::ch12 {

using bf16 = __nv_bfloat16;
using e4m3 = __nv_fp8_e4m3;

/// A block-scaled tile: BM×BN in K steps of 128 e4m3 (one scale block), multiplied in halves of 128
/// columns (one of B's scale blocks each).
template <int BM, int BN, int Stages>
struct Fp8BlockScaledConfig : KernelConfig<BM, BN, 128, Stages> {
  using HalfN = _128;                     ///< columns one promotion covers: the wgmma's N, one scale block
  static constexpr int kScaleChunk = 64;  ///< the LDG path: K blocks of B's scales staged in shared memory at once
  static_assert(KernelConfig<BM, BN, 128, Stages>::BK::value == kScaleBlock && HalfN::value == kScaleBlock,
                "a K step and a half tile's columns are one scale block");
};

/// fp8_block_scaled: 128×256 tiles; 4 stages of 48 KB, two consumer warpgroups.
struct Fp8BlockCfg : Fp8BlockScaledConfig<128, 256, 4> {};

/// CollectiveMma's loads, and a K step that promotes each scale block's products into the fp32 sum
/// with their scales (see the file comment). `Halves`: B's column blocks of scales a tile touches.
template <class Cfg, int Halves = Cfg::BN::value / Cfg::HalfN::value>
struct CollectiveMmaBlockScaledBase : CollectiveMma<Cfg, e4m3> {
  using Base = CollectiveMma<Cfg, e4m3>;
  /// The rings, and B's scales of the tile's column blocks for kScaleChunk K blocks, per consumer.
  struct TensorStorage : Base::TensorStorage {
    float scale_b[Cfg::kConsumers][Halves][Cfg::kScaleChunk];
  };
  /// The TMA copies, and where the scales are.
  struct Params : Base::Params {
    const float* scale_a;  ///< A's 1×128 scales: (m, kb) at kb·M + m (device memory)
    const float* scale_b;  ///< B's 128×128 scales: (nb, kb) at nb·kb_pitch + kb
    int kb_pitch;          ///< ceil(K/128) rounded up to a multiple of 4
    int m;                 ///< C's rows (rows past M read no scale)
    int column_blocks;     ///< B's 128-row blocks of scales: ceil(N/128) (blocks past N read none)
    int k_tiles;           ///< K steps (= K blocks of scales)
  };
  /// Host: CollectiveMma's copies (A M×K and B N×K, K-major) and the problem's block scales.
  static Params to_underlying_arguments(const GemmProblem& p, const e4m3* A, const e4m3* B) {
    Params params{};
    static_cast<typename Base::Params&>(params) = Base::to_underlying_arguments(A, B, int(p.m), int(p.n), int(p.k), p.k, p.k);
    params.scale_a = p.scale_a;
    params.scale_b = p.scale_b;
    params.kb_pitch = int((launch::ceil_div(p.k, kScaleBlock) + 3) / 4 * 4);
    params.m = int(p.m);
    params.column_blocks = int(launch::ceil_div(p.n, Cfg::HalfN::value));
    params.k_tiles = int(launch::ceil_div(p.k, Cfg::BK::value));
    return params;
  }
  template <class Pipe>
  MM_HD static void load(const Params& params, Pipe& pipeline, typename Base::State& write, TensorStorage& storage, int m0,
                         int n0, int k_begin, int k_end) {
    Base::load(params, pipeline, write, storage, m0, n0, k_begin, k_end);
  }

  /// The scales of K block kb for this thread's two rows of A (rows past M read nothing).
  struct Scales {
    float a0, a1;
  };
  MM_HD static Scales load_scales(const Params& params, int kb, int row0, int row1) {
    const float* sa = params.scale_a + std::int64_t(kb) * params.m;
    return Scales{row0 < params.m ? sa[row0] : 0.0f, row1 < params.m ? sa[row1] : 0.0f};
  }
  /// B's scales go through shared memory, kScaleChunk K blocks at a time: the same value for the
  /// whole warpgroup, which the compiler keeps in a uniform register, and the move there waits for the
  /// load where it is issued (an L2 round trip each K step, measured); from shared memory it is a
  /// short wait. Column blocks first_nb.. ; blocks past N or K read as 0.
  MM_HD static void stage_scales_b(const Params& params, TensorStorage& storage, int cw, int t, int kb0, int first_nb) {
    const int bar_id = 1 + cw;  // a named barrier per consumer warpgroup (0 is __syncthreads')
    named_barrier_sync(bar_id, 128);  // everyone has read the previous chunk
    for (int j = t; j < Halves * Cfg::kScaleChunk; j += 128) {
      const int h = j / Cfg::kScaleChunk, kb = kb0 + j % Cfg::kScaleChunk, nb = first_nb + h;
      storage.scale_b[cw][h][j % Cfg::kScaleChunk] =
          nb < params.column_blocks && kb < params.k_tiles ? params.scale_b[std::int64_t(nb) * params.kb_pitch + kb] : 0.0f;
    }
    named_barrier_sync(bar_id, 128);
  }
};

/// K blocks of B's scales a warp holds in registers (kBScalesInRegisters): one per lane.
inline constexpr int kScaleBLanes = 32;

/// kBScalesInRegisters: B's scales of K blocks kb0 + lane for the tile's column blocks first_nb..
/// (blocks past N or K read 0), from the Params of either base (scale_b, kb_pitch, column_blocks, k_tiles).
template <int Halves, class Params>
MM_HD void load_scales_b_lanes(const Params& params, float (&b)[Halves], int kb0, int first_nb, int lane) {
  const int kb = kb0 + lane;
  MM_UNROLL
  for (int h = 0; h < Halves; ++h) {
    const int nb = first_nb + h;
    b[h] = nb < params.column_blocks && kb < params.k_tiles ? params.scale_b[std::int64_t(nb) * params.kb_pitch + kb] : 0.0f;
  }
}

/// fp8_block_scaled's scales (issue 35's step 2; DeepGEMM's sm90_fp8_gemm_1d2d):
/// A's scales come with the stage. The producer's third TMA copy brings the tile's BM scales of K
/// block kt (scale_a is (m, kb) at kb·M + m: a box of BM × 1 of the (M, Kb) matrix of floats) into a
/// slot beside the stage's A and B, on the same full barrier, so a consumer reads its two rows'
/// scales from shared memory after consumer_wait instead of an LDG from L2 a step ahead, whose
/// long-scoreboard wait step 1 left exposed. Rows past M land as zeros (TMA fills outside the
/// matrix), and those rows of C are never stored.
///
/// Shared memory decides where B's scales go. 227 KB per block: the ring takes 192 KB, C's buffers
/// 32, so the slots' 4 × 512 bytes fill the last 2 KB that are whole (the storage rounds up to 1 KB)
/// and fp8_block_scaled's staging of B's scales (1 KB) no longer fits. B's scale is one value per
/// warpgroup, column block and K block, so registers hold them instead: lane l of every warp holds the
/// two column blocks' scales of K block k0 + l for 32 K blocks (and the next 32, loaded a chunk
/// ahead), and each K step takes its pair with a shuffle. No shared memory, no named barrier.
///
/// TMA needs the map's row pitch, M floats, to be a multiple of 16 bytes, and a 16-byte aligned
/// scale_a: for M % 4 != 0 the step runs the kEarlyScales kernel with its LDG scales instead
/// (prepare_fp8_block_scaled; tma_scales_rejects says why).
template <class Cfg, int Halves = Cfg::BN::value / Cfg::HalfN::value>
struct CollectiveMmaBlockScaledTmaBase : CollectiveMma<Cfg, e4m3> {
  using Base = CollectiveMma<Cfg, e4m3>;
  using BM = typename Cfg::BM;
  /// One K block's scales of the tile's rows in shared memory: (BM,1), contiguous.
  using ScaleStage = Layout<Shape<BM, _1>, Stride<_1, BM>>;
  using TmaScaleA = TmaCopy<SM90_TMA_LOAD_2D, float, ScaleStage>;  ///< a box of BM × 1 of (M, Kb)

  /// The rings, and A's scales of each stage's K block.
  struct TensorStorage : Base::TensorStorage {
    alignas(128) float scale_a[Cfg::kStages][BM::value];  ///< (BM) per stage: TMA writes 128-byte aligned boxes
  };
  /// The TMA copies (A's scales the third), and where B's scales are.
  struct Params : Base::Params {
    TmaScaleA tma_scale_a;  ///< A's 1×128 scales: (M, Kb), (m, kb) at kb·M + m
    const float* scale_b;   ///< B's 128×128 scales: (nb, kb) at nb·kb_pitch + kb
    int kb_pitch;           ///< ceil(K/128) rounded up to a multiple of 4
    int column_blocks;      ///< ceil(N/128) (blocks past N read none)
    int k_tiles;            ///< K steps (= K blocks of scales)
  };
  /// The bytes one stage receives: A's tile, B's tile and A's BM scales.
  static constexpr std::uint32_t kTransactionBytes = Base::kTransactionBytes + TmaScaleA::kTransactionBytes;

  /// Empty when TMA can read scale_a as an (M, Kb) matrix of floats with boxes of BM × 1; otherwise
  /// the rule it breaks: a row pitch of M floats that is a multiple of 16 bytes (M % 4 == 0, asked
  /// even of one K block: the map still carries the pitch, and the driver checks it), then
  /// tma_2d_rejects' (a 16-byte aligned base).
  static std::string tma_scales_rejects(const GemmProblem& p) {
    if (p.m % 4 != 0)
      return "TMA needs a row pitch that is a multiple of 16 bytes: scale_a's rows are M = " + std::to_string(p.m) +
             " floats";
    return tma_2d_rejects(int(sizeof(float)), p.scale_a, p.m, launch::ceil_div(p.k, kScaleBlock), p.m, BM::value, 1,
                          TmaSwizzle::none);
  }
  /// Host: CollectiveMma's copies, A's scales' copy and where B's scales are. Throws
  /// std::invalid_argument where tma_scales_rejects(p) is not empty.
  static Params to_underlying_arguments(const GemmProblem& p, const e4m3* A, const e4m3* B) {
    Params params{};
    static_cast<typename Base::Params&>(params) = Base::to_underlying_arguments(A, B, int(p.m), int(p.n), int(p.k), p.k, p.k);
    const int m = int(p.m), kb = int(launch::ceil_div(p.k, kScaleBlock));
    if (std::string why = tma_scales_rejects(p); !why.empty()) throw std::invalid_argument("A's scales by TMA: " + why);
    params.tma_scale_a =
        make_tma_copy(SM90_TMA_LOAD_2D{}, make_tensor(p.scale_a, make_layout(make_shape(m, kb), make_stride(_1{}, m))), ScaleStage{});
    params.scale_b = p.scale_b;
    params.kb_pitch = int((kb + 3) / 4 * 4);
    params.column_blocks = int(launch::ceil_div(p.n, Cfg::HalfN::value));
    params.k_tiles = int(launch::ceil_div(p.k, Cfg::BK::value));
    return params;
  }
  /// One thread: the three tensor maps into the cache before the first copy.
  MM_HD static void prefetch(const Params& params) {
    Base::prefetch(params);
    params.tma_scale_a.prefetch();
  }
  /// The producer thread: CollectiveMma::load's K steps with a third copy per stage, A's scales of
  /// the tile's rows for K block kt, on the same full barrier.
  template <class Pipe>
  MM_HD static void load(const Params& params, Pipe& pipeline, typename Base::State& write, TensorStorage& storage, int m0,
                         int n0, int k_begin, int k_end) {
    const auto cS = make_identity_tensor(make_shape(typename Cfg::BM{}, _1{}));  // A's scales: (BM,1) of (M, K/128)
    const int rank = block_rank_in_cluster<Cfg::kClusterM * Cfg::kClusterN>();
    for (int kt = k_begin; kt < k_end; ++kt) {
      pipeline.producer_acquire(write);  // every reader of this stage has released it
      std::uint64_t* bar = pipeline.producer_get_barrier(write);
      Base::copy_operands(params, bar, storage, write.index(), m0, n0, kt, rank);  // A and B (multicast in a cluster)
      params.tma_scale_a.copy(bar, make_tensor(make_smem_ptr(storage.scale_a[write.index()]), ScaleStage{}),
                              domain_offset(make_coord(m0, kt), cS));
      ++write;
    }
  }
  /// A's scales come with the stage: nothing to load from global memory (mma()'s LDG path reads none).
  struct Scales {
    float a0, a1;
  };
  MM_HD static Scales load_scales(const Params&, int, int, int) { return {}; }
};

/// The block-scaled main loop: each K step in two halves of 128 columns (one of B's scale blocks
/// each), each half's products into `partial` from zero, waited for, then promoted.
///
/// With no flag (the appendix step fp8_block_scaled_smem_scales, the chapter's step until 2026-11-29):
/// A's scales by LDG a step ahead, B's staged in shared memory, each half's pair read after its wait.
///
/// kEarlyScales (the appendix step fp8_block_scaled_early_scales; DeepGEMM's order): both halves'
/// scale products are formed from shared memory before the step's first wgmma is issued, not after
/// each half's wait, where the warpgroup_wait's memory clobber pins the load and the promotion's
/// FMULs wait for it on the critical path (the SASS: LDS after WARPGROUP.DEPBAR). Four more registers.
///
/// kTmaScales (fp8_block_scaled, with kEarlyScales; issue 35's step 2): A's scales from the
/// stage, where the producer's TMA put them, B's from registers by shuffle
/// (CollectiveMmaBlockScaledTmaBase). No load from global memory in the K loop but B's, one per 32 K
/// blocks.
///
/// kBScalesInRegisters (kTmaScales' B half alone, with kEarlyScales; the appendix step
/// fp8_block_scaled_register_b_scales, an ablation): B's scales by shuffle from registers, A's still by
/// LDG a step ahead. It says how much of step 2 is the registers and no staging barriers.
///
/// Turns (issue 35's step 3a, fp8_block_scaled: per_half): the two consumer warpgroups take turns
/// issuing their halves' wgmma, as cuBLASLt's block-scaled kernel orders its two. Without it, both are
/// released by the same full barrier and issue their groups together; the tensor core interleaves the
/// two groups' wgmma, both finish together and both promote together while the tensor core idles, and
/// the lock-step keeps itself (the appendix step fp8_block_scaled_no_turns). With it, consumer 1's
/// group is queued whole before consumer 0's and is promoted while consumer 0's runs, and so on.
/// per_half passes the turn as the ping-pong kernel does (GemmKernelPingpong; FlashAttention-3's
/// warpgroup scheduling): each consumer waits on its own named barrier (bar.sync) before it issues a
/// half's group and arrives on the other's (bar.arrive) after, a producer/consumer pair of barriers
/// that PTX documents. The same three instructions in both warpgroups, no branch around them.
/// per_half_unaligned (the appendix step fp8_block_scaled_turns_unaligned, the chapter's step before):
/// one barrier, met by consumer 0 before its group and consumer 1 after its own, at two places in the
/// code, so barrier.sync (named_barrier_sync_unaligned; PTX allows bar.sync, barrier.sync.aligned, only
/// where all threads meet at one instruction, and synccheck reports it), which ptxas compiles into a
/// branch around the barrier and a WARPSYNC on each side: that cost ate most of the turn's gain.
/// per_k_block: per_half_unaligned before each K block's first half only (the appendix's ablation).
/// Tried and measured no faster, or refused by synccheck: bar.sync at the two places, one barrier met
/// at one place with the wgmma in two branches or in a two-trip loop, predicated bar.sync, and two
/// mbarriers (CUTLASS's OrderedSequenceBarrier) (notes/issue35_plan.md).
enum class WarpgroupTurns {
  none,                ///< no order (the appendix step fp8_block_scaled_no_turns)
  per_k_block,         ///< per_half_unaligned before each K block's first half (fp8_block_scaled_turns_k_block)
  per_half_unaligned,  ///< one barrier.sync per half, met at two places (fp8_block_scaled_turns_unaligned)
  per_half,            ///< a turn per half by two barriers, bar.sync and bar.arrive (fp8_block_scaled)
};

template <class Cfg, bool kEarlyScales = false, bool kTmaScales = false, bool kBScalesInRegisters = kTmaScales,
          WarpgroupTurns Turns = WarpgroupTurns::none>
struct CollectiveMmaBlockScaled
    : std::conditional_t<kTmaScales, CollectiveMmaBlockScaledTmaBase<Cfg>, CollectiveMmaBlockScaledBase<Cfg>> {
  // The slot of A's scales is refilled once the stage is released, after the last half's wait: they
  // must be in registers before, as kEarlyScales has them.
  static_assert(kEarlyScales || !kTmaScales, "kTmaScales reads A's scales before the stage is released: with kEarlyScales");
  static_assert(kBScalesInRegisters || !kTmaScales, "kTmaScales leaves no shared memory for B's staged scales");
  static_assert(kEarlyScales || !kBScalesInRegisters, "B's scales from registers are read before the wgmma: with kEarlyScales");
  using Self = std::conditional_t<kTmaScales, CollectiveMmaBlockScaledTmaBase<Cfg>, CollectiveMmaBlockScaledBase<Cfg>>;
  using Base = typename Self::Base;
  using HalfN = typename Cfg::HalfN;
  using Atom = SM90_64xNx32_F32E4M3E4M3_SS<HalfN::value>;  // m64n128k32, both operands K-major
  /// The turns' named barriers: per_half takes 5 (consumer 0's) and 6 (consumer 1's), the others 5 (1
  /// and 2 are the epilogue's and the fixup's, per consumer; 3 and 4 the ping-pong kernel's).
  static constexpr int kTurnBarrier = 5;
  static_assert(Turns == WarpgroupTurns::none || Cfg::kConsumers == 2, "turns between two consumer warpgroups");

#if defined(__CUDACC__)  // a C++ compiler (test_ch12.cu's) sees the collective's types and rules, not its device code
  template <class Pipe, class Accumulators>
  MM_HD static void mma(const typename Self::Params& params, Pipe& pipeline, typename Base::State& read, typename Base::State&,
                        typename Self::TensorStorage& storage, Accumulators& accum, int cw, const WorkUnit& work) {
    using BK = typename Cfg::BK;
    constexpr int kHalves = Cfg::BN::value / HalfN::value;
    constexpr int kHalfGroups = HalfN::value / 8;  // 8-column groups of a half
    auto acc = flatten(accum(_, 0, 0));  // (2,2,BN/8): this thread's values of the warpgroup's 64×256 tile: the fp32 sum
    auto partial = make_uninitialized_tensor<float>(GmmaFragmentLayout<HalfN::value>{});  // (2,2,HalfN/8): one half's products over one K block, as the tensor core added them
    auto sA = make_tensor(make_smem_ptr(storage.a), typename Base::RingA{});  // (BM,BK,S)
    auto sB = make_tensor(make_smem_ptr(storage.b), typename Base::RingB{});  // (BN,BK,S)
    const int t = int(threadIdx.x) % 128;
    // This thread's rows of the tile are row0 and row0 + 8 (the accumulator layout): values (c, 0, g)
    // are on the first, (c, 1, g) on the second.
    const int row0 = work.tile.m * Cfg::BM::value + Cfg::kWgmmaM * cw + 16 * (t / 32) + (t % 32) / 4, row1 = row0 + 8;
    typename Self::Scales scales = Self::load_scales(params, work.k_begin, row0, row1);  // kTmaScales: none
    [[maybe_unused]] float b_chunk[kHalves], b_next[kHalves];  // kBScalesInRegisters: B's scales of 32 K blocks, one per lane
    if constexpr (kBScalesInRegisters) {
      load_scales_b_lanes(params, b_chunk, work.k_begin, work.tile.n * kHalves, t % 32);
      load_scales_b_lanes(params, b_next, work.k_begin + kScaleBLanes, work.tile.n * kHalves, t % 32);
    }
    MM_UNROLL
    for (int v = 0; v < int(acc.size()); ++v) acc(v) = 0.0f;
    // per_half: consumer 1 goes first in each unit: consumer 0 arrives on consumer 1's barrier once
    // before the loop, and consumer 1 takes the one arrival too many after it.
    if constexpr (Turns == WarpgroupTurns::per_half)
      if (cw == 0) named_barrier_arrive(kTurnBarrier + 1, 2 * 128);
    for (int kt = work.k_begin; kt < work.k_end; ++kt) {
      [[maybe_unused]] int lane_kb = 0;  // kBScalesInRegisters: the lane that holds K block kt's scales of B
      if constexpr (kBScalesInRegisters) {
        lane_kb = (kt - work.k_begin) % kScaleBLanes;
        if (lane_kb == 0 && kt != work.k_begin) {  // the next 32 K blocks, loaded 32 steps ago; load the ones after
          MM_UNROLL
          for (int h = 0; h < kHalves; ++h) b_chunk[h] = b_next[h];
          load_scales_b_lanes(params, b_next, kt + kScaleBLanes, work.tile.n * kHalves, t % 32);
        }
      } else {
        // A chunk starts every kScaleChunk K blocks, and where a unit's K slice starts (split K).
        if (kt % Cfg::kScaleChunk == 0 || kt == work.k_begin)
          Self::stage_scales_b(params, storage, cw, t, kt - kt % Cfg::kScaleChunk, work.tile.n * kHalves);
      }
      pipeline.consumer_wait(read);
      auto a_tile = local_tile(sA(_, _, read.index()), make_shape(Int<Cfg::kWgmmaM>{}, BK{}), make_coord(cw, 0));
      float early0[kHalves], early1[kHalves];  // kEarlyScales: each half's two scale products, read before any wgmma
      if constexpr (kBScalesInRegisters) {
        // A's scales of this K block from the stage (kTmaScales; rows past M are 0) or the LDG a step
        // ago, B's from the lane that holds them.
        float a0 = scales.a0, a1 = scales.a1;
        if constexpr (kTmaScales) {
          const int r0 = row0 - work.tile.m * Cfg::BM::value;  // the row's index in the tile, and in the slot
          a0 = storage.scale_a[read.index()][r0], a1 = storage.scale_a[read.index()][r0 + 8];
        }
        MM_UNROLL
        for (int h = 0; h < kHalves; ++h) {
          const float b = __shfl_sync(0xffffffffu, b_chunk[h], lane_kb);
          early0[h] = a0 * b, early1[h] = a1 * b;
        }
      } else if constexpr (kEarlyScales) {
        MM_UNROLL
        for (int h = 0; h < kHalves; ++h) {
          const float b = storage.scale_b[cw][h][kt % Cfg::kScaleChunk];
          early0[h] = scales.a0 * b, early1[h] = scales.a1 * b;
        }
      }
      typename Self::Scales next{};
      MM_UNROLL
      for (int h = 0; h < kHalves; ++h) {
        auto b_half = local_tile(sB(_, _, read.index()), make_shape(HalfN{}, BK{}), make_coord(h, 0));  // (128,BK)
        if constexpr (Turns == WarpgroupTurns::per_half) {
          // Wait for the other consumer's group to be queued (its bar.arrive on our barrier), queue
          // ours, then let it go: consumer 1, 0, 1, 0, ... by the same three instructions in both.
          named_barrier_sync(kTurnBarrier + cw, 2 * 128);
          gmma_k_block<Atom, GmmaMajor::K, GmmaMajor::K>(a_tile, b_half, partial, false);
          named_barrier_arrive(kTurnBarrier + 1 - cw, 2 * 128);
        } else {
          const bool turn = Turns == WarpgroupTurns::per_half_unaligned || (Turns == WarpgroupTurns::per_k_block && h == 0);
          // Consumer 0 waits until consumer 1's group is queued, then queues its own. (Two places, one
          // barrier: barrier.sync, which may be met at different instructions.)
          if (turn && cw == 0) named_barrier_sync_unaligned(kTurnBarrier, 2 * 128);
          gmma_k_block<Atom, GmmaMajor::K, GmmaMajor::K>(a_tile, b_half, partial, false);  // 4 × k32, from 0
          if (turn && cw == 1) named_barrier_sync_unaligned(kTurnBarrier, 2 * 128);
        }
        if (h == 0 && kt + 1 < work.k_end) next = Self::load_scales(params, kt + 1, row0, row1);  // while the wgmma run
        warpgroup_wait<0>();  // the promotion reads this half's products
        warpgroup_fence_operand(partial);
        if (h == kHalves - 1) {
          pipeline.consumer_release(read);  // the stage is read: the producer may refill it
          ++read;
        }
        // Promotion: this half's K block, with its scales, into the fp32 accumulators. The half's column
        // group g is the tile's group kHalfGroups·h + g; row half r takes row r's scale.
        float s0, s1;
        if constexpr (kEarlyScales) {
          s0 = early0[h], s1 = early1[h];
        } else {
          const float b = storage.scale_b[cw][h][kt % Cfg::kScaleChunk];
          s0 = scales.a0 * b, s1 = scales.a1 * b;
        }
        MM_UNROLL
        for (int g = 0; g < kHalfGroups; ++g)
          MM_UNROLL
          for (int r = 0; r < 2; ++r)
            MM_UNROLL
            for (int c = 0; c < 2; ++c) acc(c, r, kHalfGroups * h + g) += partial(c, r, g) * (r ? s1 : s0);
      }
      scales = next;
    }
    if constexpr (Turns == WarpgroupTurns::per_half)
      if (cw == 1) named_barrier_sync(kTurnBarrier + 1, 2 * 128);
  }
#endif
};

/// The kernel: the block-scaled main loop (fp8_block_scaled's unless told), fp8_per_tensor's epilogue
/// without its scale, whole tiles.
/// `Scheduler`: whole tiles, or chapter 11's split-K (SplitKScheduler: K blocks in slices, the partial
/// fp32 sums added by the tile's last slice; each K block is promoted on its own, so a slice of whole
/// K blocks is a sum like any other).
template <class Cfg, class Mainloop = CollectiveMmaBlockScaled<Cfg, true, true, true, WarpgroupTurns::per_half>,
          class Scheduler = PersistentTileScheduler>
using Fp8BlockKernel = GemmKernelCooperative<Cfg, Mainloop, CollectiveEpilogueTma<Cfg, bf16>, Scheduler>;

/// The split-K scheduler of a block-scaled kernel: a slot holds one consumer thread's accumulators.
template <class Cfg>
using Fp8BlockSplitK = SplitKScheduler<Cfg::BN::value / 2>;

/// Empty when fp8_block_scaled takes `p`; otherwise the rule it breaks (launch::fp8_rejects: RCR, K %
/// 16 and N % 8 for TMA's 16-byte rows, the rules cuBLASLt's fp8 has too).
inline std::string fp8_block_scaled_rejects(const GemmProblem& p) {
  if (std::string why = launch::fp8_rejects(p); !why.empty()) return why;
  return launch::tma_operand_rejects(p, 1);
}

/// Empty when a block-scaled kernel takes `p` as given; otherwise why not: fp8_block_scaled_rejects'
/// rule, or a problem without its scales.
inline std::string fp8_block_scaled_refuses(const GemmProblem& p) {
  if (std::string why = fp8_block_scaled_rejects(p); !why.empty()) return why;
  if (p.scale_a == nullptr || p.scale_b == nullptr) return "needs the block scales of A and B (GemmProblem::scale_a, scale_b)";
  return {};
}

/// The one-time preparation of one of the block-scaled kernels (`Kernel`): the blocks' arguments,
/// then the adapter (the opt-in, a grid of the blocks the GPU holds at once, at most one per tile, at
/// most `max_blocks` when above 0). Throws std::invalid_argument for a problem it rejects, operands
/// TMA cannot describe, or a problem without its scales.
/// `splits` (a split-K kernel only): K slices per tile, at least 1. `stream_k_units` (a stream-K
/// kernel only): its schedule (StreamKTileScheduler::make).
template <class Cfg, class Kernel>
PreparedGemm prepare_fp8_block_scaled_kernel(const GemmProblem& p, const e4m3* A, const e4m3* B, bf16* C, int max_blocks,
                                             const std::string& name, int splits = 1,
                                             const StreamKTileScheduler& stream_k_units = {}) {
  if (std::string why = fp8_block_scaled_refuses(p); !why.empty()) throw std::invalid_argument(name + ": " + why);
  typename GemmAdapter<Kernel>::Arguments args{};
  args.mainloop = Kernel::Mainloop::to_underlying_arguments(p, A, B);
  args.epilogue = Kernel::Epilogue::to_underlying_arguments(C, int(p.m), int(p.n), p.n);
  if constexpr (std::is_same_v<typename Kernel::Scheduler, StreamKScheduler<Cfg::BN::value / 2>>) {
    args.scheduler = Kernel::Scheduler::to_underlying_arguments(stream_k_units);
  } else {
    args.scheduler = tile_schedule<Cfg, typename Kernel::Scheduler>(p, splits);
  }
  args.max_blocks = max_blocks;
  GemmAdapter<Kernel> gemm;
  gemm.initialize(args);  // a split-K kernel's workspace, once per problem
  return gemm.prepared(name);
}

/// fp8_block_scaled (issue 35's steps 2 and 3, the chapter's step): the kTmaScales kernel where TMA
/// can read A's scales as an (M, Kb) matrix (CollectiveMmaBlockScaledTmaBase::tma_scales_rejects:
/// M % 4 == 0 and a 16-byte aligned scale_a), otherwise the kEarlyScales kernel, whose LDG reads any
/// M; both with the consumers taking `Turns` (per half unless told). The rules and errors of
/// prepare_fp8_block_scaled_kernel.
template <class Cfg = Fp8BlockCfg, WarpgroupTurns Turns = WarpgroupTurns::per_half>
PreparedGemm prepare_fp8_block_scaled(const GemmProblem& p, const e4m3* A, const e4m3* B, bf16* C, int max_blocks = 0,
                                      const char* name = "fp8_block_scaled") {
  using TmaScales = Fp8BlockKernel<Cfg, CollectiveMmaBlockScaled<Cfg, true, true, true, Turns>>;
  using LdgScales = Fp8BlockKernel<Cfg, CollectiveMmaBlockScaled<Cfg, true, false, false, Turns>>;
  if (CollectiveMmaBlockScaledTmaBase<Cfg>::tma_scales_rejects(p).empty())
    return prepare_fp8_block_scaled_kernel<Cfg, TmaScales>(p, A, B, C, max_blocks, name);
  return prepare_fp8_block_scaled_kernel<Cfg, LdgScales>(p, A, B, C, max_blocks, name);
}

}  // namespace mm::ch12
