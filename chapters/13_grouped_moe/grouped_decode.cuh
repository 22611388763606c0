// Chapter 13, step 6: grouped_decode. A grouped GEMM at a few rows per expert (decoding: one token
// routed to 8 experts is 8 experts of 1 row) with A and B exchanging places, as chapter 11's swap_ab
// does for one GEMM.
//
// Steps 1-2 give each expert whole 128- or 64-row tiles of its rows: at one row per expert a tile
// multiplies 1 real row and 63 or 127 rows of padding, and the experts' tiles are few (8 experts ×
// N / 256 columns of tiles: 48 for Qwen3's gate+up), so few SMs stream the weights, which are all the
// bytes there are. But C_g = A_g·B_gᵀ is also C_gᵀ = B_g·A_gᵀ: the expert's weight takes wgmma's M
// (tiles of 64 of its N rows) and its few token rows take wgmma's N (16 a tile). A 64×16 tile reads 64
// rows of the weight and 16 rows of tokens; an expert of N = 1536 makes 24 tiles, 8 experts 192, so
// every SM streams weights.
//
//   GemmKernelCooperative          unchanged
//   + CollectiveMma                unchanged: X = the experts' weights stacked (E·N × K), Y = A (rows × K)
//   + CollectiveEpilogueGroupedTransposed  new: the tile of C_gᵀ stored transposed, masked at the expert's end
//   + DecodeGroupTileScheduler     PersistentGroupTileScheduler, the tile's rows BN (16 token rows) and
//                                  its columns BM (64 weight rows), and where such a tile starts (tile_origin)
//
// Only an expert's real rows are stored: the grouped scheduler gives each unit its expert's end
// (row_end), and the epilogue masks every token column at or past it. A's box of 16 token rows still
// reads the rows after the expert's last (its padding: within the 128-row slot of the contiguous
// layout or the capacity of the masked one), whose products are dropped. Nothing but the expert's
// rows of C is written, padding included (steps 1-2 write their tiles' padding rows).
//
// K is not split: the experts' tiles fill the GPU at Qwen3's shapes (192 and 256 tiles at one token,
// 132 SMs); split K is the next step where they do not.
//
// Build: cmake --build build --target ch13_grouped_moe
// Run:   build/bin/ch13_grouped_moe --kernel grouped_contiguous_64,grouped_decode --tokens 1,8 --model qwen3-30b-a3b
#pragma once

#include "13_grouped_moe/grouped_contiguous.cuh"
#include "13_grouped_moe/grouped_rule.hpp"  // kDecodeTileRows, choose_grouped_tile
#include "gemm/collective_epilogue_sm90.hpp"  // CollectiveEpilogueStrided
#include "gemm/epilogue_sm90.hpp"

namespace mm::ch13 {

/// The decode tile: 64 rows of an expert's weight (wgmma's M, one consumer warpgroup) × 16 of its
/// token rows (wgmma's N), K steps of 128, 10 stages of 20 KB: 160 KB of weights in flight an SM (one
/// block an SM: its registers). K steps of 64 in 8 stages (64 KB of weights in flight) streamed Qwen3's
/// 64-token experts at 60% of DRAM's peak against the 64×256 tile's 78% (ncu, call 1 of the session).
struct GroupedDecodeCfg : KernelConfig<64, 16, 128, 10> {};

static_assert(GroupedDecodeCfg::BN::value == kDecodeTileRows, "the dispatchers' rule counts the decode tile's token rows");
static_assert(GroupedCfg::BM::value == kGroupAlignmentRows, "the rule's alignment is the layout's");

/// A unit of the decode schedule: the grouped scheduler's, read with the roles exchanged (its `tile.m`
/// counts tiles of 16 token rows, `b_tile_n` tiles of 64 weight rows in the stacked weights).
struct DecodeWorkTileInfo : GroupWorkTileInfo {};

/// Where a decode tile starts, as the main loop and the epilogue take it: X's (the weights') first row
/// `m0` = expert · N + its weight tile's first row (the epilogue finds the expert from it), the token
/// rows' first row in A and C as both `n0` (C's column of Cᵀ) and `b0` (Y's row).
template <class Cfg>
MM_HD TileOrigin tile_origin(const DecodeWorkTileInfo& w) {
  return {w.b_tile_n * Cfg::BM::value, int(w.row_begin), int(w.row_begin)};
}

/// The grouped scheduler handing out DecodeWorkTileInfo: build its Params with `bm` = the tile's token
/// rows (Cfg::BN) and `tiles_n` = N / Cfg::BM (grouped_decode_schedule).
struct DecodeGroupTileScheduler : PersistentGroupTileScheduler {
  using WorkTileInfo = DecodeWorkTileInfo;  ///< what get_current_work hands out
  using PersistentGroupTileScheduler::PersistentGroupTileScheduler;
  /// The block's current unit.
  MM_HD DecodeWorkTileInfo get_current_work() { return {PersistentGroupTileScheduler::get_current_work()}; }
  /// The next unit `count` steps on.
  MM_HD DecodeWorkTileInfo advance_to_next_work(int count = 1) {
    current += stride * count;
    return get_current_work();
  }
};

/// The decode step's epilogue: a consumer warpgroup's 64×BN tile of C_gᵀ (64 of expert g's N columns
/// × BN of its token rows) to C (rows × N, row-major) transposed, each thread its own values (the
/// register epilogue's store_accumulators_strided), nothing at or past the expert's last row.
template <class Cfg>
struct CollectiveEpilogueGroupedTransposed {
  struct TensorStorage {};  ///< none: the kernel gives it no shared memory

  /// C, its N, and where the experts' rows are (the scheduler's Params, for each expert's end).
  struct Params {
    bf16* c;                                    ///< C in device memory, rows × N
    int n;                                      ///< N
    PersistentGroupTileScheduler::Params rows;  ///< the experts' rows (offsets or counts)
  };

  /// Host: C (rows × n) and the layout the scheduler walks.
  static Params to_underlying_arguments(bf16* C, int n, const PersistentGroupTileScheduler::Params& rows) {
    return {C, n, rows};
  }
  /// Nothing to prefetch: no tensor map.
  MM_HD static void prefetch(const Params&) {}

  /// A consumer warpgroup's side: nothing to set up.
  struct Consumer {
    const Params& params;  ///< where C is
    int t;                 ///< thread in the warpgroup
    /// Thread `thread` of a consumer warpgroup.
    MM_HD Consumer(const Params& p, TensorStorage&, int, int thread) : params(p), t(thread) {}

    /// The tile at tile_origin's (m0 = expert · N + weight row, n0 = first token row) to C: value (r, q)
    /// of the tile at C[(n0 + q)·N + r0 + r], for token rows before the expert's end only.
    template <class Accumulators>
    MM_HD void store(Accumulators& accum, int m0, int n0) {
      const int g = m0 / params.n;
      const PersistentGroupTileScheduler layout(params.rows, 0, 1);
      const std::int64_t end = layout.first_row(g) + layout.rows(g);  // one past the expert's last row
      // The register epilogue on C transposed (as swap_ab's): the tile's rows are N's columns of expert
      // g's weight, its columns C's rows, cut at the expert's end.
      using Strided = CollectiveEpilogueStrided<Cfg, bf16>;
      const typename Strided::Params c{params.c, 1, params.n, params.n, int(end)};
      typename Strided::TensorStorage none;
      typename Strided::Consumer(c, none, 0, t).store(accum, m0 - g * params.n, n0);
    }
    /// No stores in flight to wait for.
    MM_HD void store_tail() {}
  };
};

/// grouped_decode's kernel.
using GroupedDecodeKernel = GemmKernelCooperative<GroupedDecodeCfg, CollectiveMma<GroupedDecodeCfg, bf16>,
                                                  CollectiveEpilogueGroupedTransposed<GroupedDecodeCfg>, DecodeGroupTileScheduler>;

/// The grouped scheduler's arguments for `g` with the decode tile: tiles of 16 token rows (its `bm`)
/// by N / 64 tiles of weight rows (its `tiles_n`); each expert still starts where the layout says.
inline PersistentGroupTileScheduler::Params grouped_decode_schedule(const GroupedProblem& g) {
  using Cfg = GroupedDecodeCfg;
  const int tiles_n = g.n / Cfg::BM::value, k_steps = (g.k + Cfg::BK::value - 1) / Cfg::BK::value;
  return g.offsets ? PersistentGroupTileScheduler::contiguous(g.groups, g.offsets, Cfg::BN::value, tiles_n, Cfg::kGroupM,
                                                              k_steps, kGroupAlignment)
                   : PersistentGroupTileScheduler::masked(g.groups, g.counts, g.capacity, Cfg::BN::value, tiles_n, Cfg::kGroupM,
                                                          k_steps);
}

/// grouped_decode (contiguous or masked, by g's form): the same problem and buffers as
/// prepare_grouped. Throws std::invalid_argument for a problem it refuses (grouped_rejects' rules).
template <class = void>  // compiled where it is called (steps.cu, the library), not where it is included
PreparedGemm prepare_grouped_decode(const GroupedProblem& g, const bf16* A, const bf16* B, bf16* C, int max_blocks = 0) {
  if (std::string why = grouped_rejects(g); !why.empty()) throw std::invalid_argument("grouped_decode: " + why);
  using Kernel = GroupedDecodeKernel;
  typename GemmAdapter<Kernel>::Arguments args{};
  args.mainloop = Kernel::Mainloop::to_underlying_arguments(B, A, g.groups * g.n, int(g.rows), g.k, g.k, g.k);  // X = B, Y = A
  args.scheduler = grouped_decode_schedule(g);
  args.epilogue = Kernel::Epilogue::to_underlying_arguments(C, g.n, args.scheduler);
  args.max_blocks = max_blocks;
  GemmAdapter<Kernel> gemm;
  gemm.initialize(args);
  return gemm.prepared(std::string(g.offsets ? "grouped_decode " : "grouped_masked_decode ") + "64x16 swapped");
}

}  // namespace mm::ch13
