// Chapter 11, step 4: swap_ab. split_k for skinny problems (M ≤ 64: decoding a few tokens through a
// layer), with A and B exchanging places.
//
// wgmma's M is 64 rows per warpgroup, fixed; its N is anything from 8 to 256 in steps of 8. At M = 16,
// split_k's 128-row tile computes 112 rows of zeros, and its 128×128 tiles over N = 4096 make only 32
// tiles. But C = A·Bᵀ is also Cᵀ = B·Aᵀ: let B's N rows take wgmma's M (128-row tiles along N) and
// A's 16 rows take wgmma's N (a tile as narrow as M, here 16, 32 or 64). Both operands are K-major in
// RCR, so the same TMA copies and shared layouts serve with the roles exchanged; only the epilogue
// changes: the kernel's tile is a tile of Cᵀ, which it stores transposed (row stride 1, column
// stride N) with the register epilogue, after split_k's fixup when K is split.
//
// At this M the product is bound by memory, not by the tensor cores: the weights (N×K bf16) are read
// once, the activations and C are small. What matters is that all SMs stream B at once: K is split
// until the units fill the GPU (choose_swap_splits), counting the workspace's extra traffic.
//
// What changes from split_k: the operands given to the main loop (B's rows as its A, A's as its B:
// the same CollectiveMma), the narrow tile, and the epilogue: CollectiveEpilogueStrided with C's layout
// transposed on the host, row stride 1 and column stride N (no TMA store, no C buffers).
//
// Build: cmake --build build --target ch11_every_shape
// Run:   build/bin/ch11_every_shape --kernel swap_ab --sizes 16x4096x4096
#pragma once

#include "11_every_shape/split_k.cuh"

namespace mm::ch11 {

/// The tile of Cᵀ with 16 columns: 128 rows of N (two consumer warpgroups), 16 of M; K steps of 64,
/// 8 stages of 18 KB. The base of the other swap_ab tiles; at M <= 16 itself, SwapAB16Bk128Cfg runs.
struct SwapAB16Cfg : Tile128x256Cfg {
  using BN = _16;  ///< the wgmma's N: columns of Cᵀ (rows of C, of A) per tile
  static constexpr int kStages = 8;
};
/// M from 17 to 32.
struct SwapAB32Cfg : SwapAB16Cfg {
  using BN = _32;
};
/// M from 33 to 64.
struct SwapAB64Cfg : SwapAB16Cfg {
  using BN = _64;
};
/// M <= 16: K steps of 128 (two 128-byte boxes of each row of B per stage, 4 stages of 36 KB): half
/// the stages to wait for and release per byte of B. Measured against SwapAB16Cfg at the 12 decode
/// shapes with M <= 16: better at 10 to 12 of them in each of three runs (appendix step swap_ab_bk64
/// is the other).
struct SwapAB16Bk128Cfg : SwapAB16Cfg {
  using BK = _128;
  static constexpr int kStages = 4;
};
/// M <= 16 when N is small (with_swap_tile): tiles of 64 rows of N, one consumer warpgroup, K steps of
/// 64 (twice the tiles, as cuBLAS's decode kernels have them; appendix step swap_ab_rows64 forces it).
struct SwapAB16Rows64Cfg : SwapAB16Cfg {
  using BM = _64;
  static constexpr int kConsumers = 1;
  static constexpr int kThreads = 128 * (1 + kConsumers);
};

/// M from 17 to 32, and from 33 to 64, when N is small (with_swap_tile): tiles of 64 rows of N, one
/// consumer warpgroup (appendix steps swap_ab_rows64_32 and swap_ab_rows64_64 force them at any M).
struct SwapAB32Rows64Cfg : SwapAB16Rows64Cfg {
  using BN = _32;
};
struct SwapAB64Rows64Cfg : SwapAB16Rows64Cfg {
  using BN = _64;
};

/// modeled_swap_time's units streaming at once from which DRAM's rate is full. Measured, not the SM
/// count: DRAM streams at its full rate once 80 units stream at once (80-86 unsplit tiles of 128 rows,
/// on 132 SMs, ran at 98-104% of cuBLAS where K in 3 slices ran at 85-95%; 64 tiles of 64 rows
/// ran at 86-88% unsplit against 93-97% in 2 slices: call 1 of profiles/session_2026-11-30n_issue36.txt,
/// the slices forced by appendix steps swap_ab_x1 and swap_ab_x2). cuBLAS streams these shapes with 86
/// unsplit tiles too. Until then the rate was units / SMs, which read 86 units as 65% of the bandwidth
/// and split K.
inline constexpr double kStreamingUnits = 80;

/// The modeled time of a swapped problem of `tiles` tiles cut into `splits` K slices, in bytes at the
/// GPU's bandwidth: B's N×K·2 bytes streamed at the rate a round's units draw (all of it from
/// `streaming_units` units on, in proportion below); each slice beyond one adds its partial sums written
/// and read again (8 bytes for each of the N × `tile_bn` values of its slots); each round of units adds
/// a fixed cost, kRoundBytes (a unit's epilogue and fixup while its ring waits: about 3 µs, the bytes
/// the GPU would have moved meanwhile).
///
/// swap_ab's slices (choose_swap_splits) count from kStreamingUnits; step 12's rule, which weighs a
/// 64-row tile of C against swap_ab's choice at 33-64 rows, passes the SM count (every_shape.hpp's
/// choose_decode_tile says why).
inline double modeled_swap_time(const GemmProblem& p, int tile_bn, std::int64_t tiles, int splits, int sms,
                                double streaming_units = kStreamingUnits) {
  // Fitted to two cases: M = 16, 14336×4096 (the appendix's run: 7 slices in 6 rounds ran at 68% of
  // cuBLAS where 1 slice, as M = 32's tile chose, ran at 96%; any cost above 3 MB a round picks 1
  // slice), and M = 16, 6144×4096 (2026-11-29, every step at the suite's slow shapes: 48 tiles of 128
  // rows in 5 slices, 2 rounds, ran at 81%, one round of 96 tiles of 64 rows unsplit at 92.5%; with 6 MB
  // a round the model preferred the 5 slices, above 10 MB it picks the one round).
  constexpr double kRoundBytes = 12e6;
  const double weights = 2.0 * double(p.n) * double(p.k), partial = 8.0 * double(tile_bn) * double(p.n);
  const std::int64_t units = tiles * splits;
  const std::int64_t rounds = launch::ceil_div(units, sms);
  const double busy = std::min(1.0, double(units) / double(rounds) / std::min<double>(streaming_units, sms));
  return weights / busy + (splits > 1 ? partial * splits : 0.0) + kRoundBytes * double(rounds);
}

/// How many K slices for a swapped problem of `tiles` tiles, `k_steps` K steps: the count that
/// minimizes modeled_swap_time. At least 4 K steps per slice, at most 16 slices.
inline int choose_swap_splits(const GemmProblem& p, int tile_bn, std::int64_t tiles, int k_steps, int sms) {
  int best = 1;
  double best_time = modeled_swap_time(p, tile_bn, tiles, 1, sms);
  for (int s = 2; s <= 16 && s <= std::max(1, k_steps / 4); ++s) {
    const double time = modeled_swap_time(p, tile_bn, tiles, s, sms);
    if (time < best_time) {
      best = s;
      best_time = time;
    }
  }
  return best;
}

/// What swap_ab tile `Cfg` makes of `p` on `sms` SMs: its tiles of Cᵀ, its K steps, the K slices
/// choose_swap_splits picks for them.
struct SwapPlan {
  std::int64_t tiles;  ///< tiles of Cᵀ: N by the tile's rows, M by its columns
  int k_steps;         ///< K steps of the tile's BK (at least 1)
  int splits;          ///< K slices choose_swap_splits asks for
};
template <class Cfg>
SwapPlan plan_swap(const GemmProblem& p, int sms) {
  const std::int64_t tiles = launch::ceil_div(p.n, Cfg::BM::value) * launch::ceil_div(p.m, Cfg::BN::value);
  const int k_steps = int(std::max<std::int64_t>(1, launch::ceil_div(p.k, Cfg::BK::value)));
  return {tiles, k_steps, choose_swap_splits(p, Cfg::BN::value, tiles, k_steps, sms)};
}

/// The modeled time of `p` on the swap_ab tile `Cfg` with its best slice count.
template <class Cfg>
double modeled_swap_tile_time(const GemmProblem& p, int sms) {
  const SwapPlan plan = plan_swap<Cfg>(p, sms);
  return modeled_swap_time(p, Cfg::BN::value, plan.tiles, plan.splits, sms);
}

/// Calls `f(Rows64{})` or `f(Rows128{})`, whichever tile modeled_swap_tile_time says is faster for `p`.
template <class Rows64, class Rows128, class F>
decltype(auto) with_faster_swap_tile(const GemmProblem& p, int sms, F&& f) {
  if (modeled_swap_tile_time<Rows64>(p, sms) < modeled_swap_tile_time<Rows128>(p, sms)) return f(Rows64{});
  return f(Rows128{});
}

/// Calls `f(Cfg{})` with the swap_ab tile for `p` on `sms` SMs: the narrowest that holds M (16, 32 or
/// 64 columns of Cᵀ), with 128 or 64 rows of N, whichever modeled_swap_tile_time says is faster (64
/// rows at N = 4096: twice the tiles, so half the K slices to fill the GPU and half their partial
/// sums). The one place a problem becomes a swap_ab tile (swap_ab, every_shape's choice and the
/// tests' forced slices go through it).
template <class F>
decltype(auto) with_swap_tile(const GemmProblem& p, int sms, F&& f) {
  if (p.m <= 16) return with_faster_swap_tile<SwapAB16Rows64Cfg, SwapAB16Bk128Cfg>(p, sms, f);
  if (p.m <= 32) return with_faster_swap_tile<SwapAB32Rows64Cfg, SwapAB32Cfg>(p, sms, f);
  return with_faster_swap_tile<SwapAB64Rows64Cfg, SwapAB64Cfg>(p, sms, f);
}

/// swap_ab's kernel: split_k's with the register epilogue storing Cᵀ. The main loop multiplies X
/// (R×K) by Yᵀ (Y is Q×K) into an R×Q tile grid, X = B and Y = A; element (r, q) of the product is
/// C's (q, r).
template <class Cfg>
using SwapKernel = GemmKernelCooperative<Cfg, CollectiveMma<Cfg, bf16>, CollectiveEpilogueStrided<Cfg, bf16>,
                                         SplitKScheduler<Cfg::BN::value / 2>>;

/// swap_ab's rule: RCR, TMA's rules for the operands, and M ≤ 64.
inline std::string swap_ab_rejects(const GemmProblem& p) {
  if (std::string why = rcr_tma_rejects(p); !why.empty()) return why;
  if (p.m > kSwapMaxM) return "takes M <= 64 (skinny problems: the small side goes in wgmma's N)";
  return {};
}

/// swap_ab's preparation with the configuration given (`splits` <= 0: choose_swap_splits).
template <class Cfg>
PreparedGemm prepare_swap_ab_with(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, int splits = 0,
                                  int max_blocks = 0) {
  check_step("swap_ab", swap_ab_rejects(p), A, B, nullptr);
  using Kernel = SwapKernel<Cfg>;
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  const GroupedTileScheduler tiles{int(launch::ceil_div(n, Cfg::BM::value)), int(launch::ceil_div(m, Cfg::BN::value)),
                                   Cfg::kGroupM};
  const int k_steps = int(launch::ceil_div(k, Cfg::BK::value));
  const SplitKTileScheduler units = SplitKTileScheduler::make(
      tiles, k_steps, splits > 0 ? splits : choose_swap_splits(p, Cfg::BN::value, tiles.size(), k_steps, device_sm_count()));
  typename GemmAdapter<Kernel>::Arguments args{};
  args.mainloop = Kernel::Mainloop::to_underlying_arguments(B, A, n, m, k, k, k, l2_promotion_for(m));  // X = B, Y = A
  args.epilogue = Kernel::Epilogue::to_underlying_arguments(C, n, m, 1, n);         // (r, q) at C[q·N + r]
  args.scheduler = Kernel::Scheduler::to_underlying_arguments(units);
  args.max_blocks = max_blocks;
  GemmAdapter<Kernel> gemm;
  gemm.initialize(args);
  return gemm.prepared("swap_ab " + tile_name<Cfg>() + " x" + std::to_string(units.splits));
}

/// The step: the narrowest tile that holds M, K split as choose_swap_splits says.
template <class = void>  // compiled where it is called, not where its header is included (step_rules.hpp)
PreparedGemm prepare_swap_ab(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, int max_blocks = 0) {
  check_step("swap_ab", swap_ab_rejects(p), A, B, nullptr);
  return with_swap_tile(p, device_sm_count(), [&](auto cfg) { return prepare_swap_ab_with<decltype(cfg)>(p, A, B, C, 0, max_blocks); });
}

}  // namespace mm::ch11
