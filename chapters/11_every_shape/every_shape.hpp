// Chapter 11, step 5: every_shape. The entry point that picks one of the chapter's kernels for a
// problem, from its shape and the GPU's SM count. It is what the chapter's binary and figures call
// "ours".
//
//   M = 17-64,       tile_shapes' 64×256 tile with one consumer (Tile64x256Cfg), when N's 256-column
//     N wide         tiles fill at least 3/4 of the SMs in one round (wide_decode): a tile per SM
//   M = 33-64        tile_shapes' 64×128 tile with one consumer (Tile64x128Cfg), when N's 128-column
//                    tiles make 64 or more and one round (mid_decode)
//   M <= 64          swap_ab: the small side in wgmma's N, K split until the units fill the GPU
//                    (choose_swap_splits); at 33-64 rows, RCR, a 64×48 tile with one consumer and
//                    K whole instead where its one round streams B on more SMs (decode_stream_tile,
//                    step 12)
//   K % 16 != 0, big A and B first copied into rows on 128-byte boundaries, then tile_shapes
//                    (copies_to_aligned_rows; aligned_rows.cuh, the one kernel this step adds)
//   otherwise        the tile of choose_tile_shape (waves × work / efficiency); split_k when the tiles
//                    fill less than half the GPU (choose_splits), else tile_shapes' kernel itself
//                    (split_k's with one slice does the same work with a few more instructions); its
//                    128×64 tile, K whole, as 64×128 with one consumer (one_consumer); and, K whole,
//                    128×160 or 128×176 where the model prefers one (fill_tile, step 9); at
//                    64 < M <= 128, K whole, 128×96 or 64×96 where their rounds stream B in less
//                    time (stream_tile, step 10)
//
// and, before all of these, what none of them takes goes to any_shape.cuh's path: RRR, a K or N that
// is not a multiple of 8, an operand not on a 16-byte boundary (staged copies, C stored by the
// registers, B MN-major; split_k's, tile_shapes' and swap_ab's kernels); but at M <= 8 (RRR) or 16 (RCR)
// a B that path would stage goes to ragged_decode.cuh's kernels (read in place by plain loads). Where that path stages
// nothing and stores C by TMA (RRR with N and K multiples of 8), the three one-consumer rules hold
// there too, B MN-major.
//
// stream_k is not among them: where the chapter's suite has a short last round, the tile choice or
// split_k did better in every measurement (the page).
//
// choose() returns the decision as data, for the tests and the page, and prepare_every_shape launches
// what it names. It composes the helpers the launches call themselves (choose_tile_shape,
// choose_splits, choose_swap_splits, copies_to_aligned_rows: each rule lives there once); what
// choose() adds is the order of the cases above.
//
// Build: cmake --build build --target ch11_every_shape
// Run:   build/bin/ch11_every_shape --kernel every_shape
#pragma once

#include "11_every_shape/aligned_rows.cuh"
#include "11_every_shape/any_shape.cuh"
#include "11_every_shape/ragged_decode.cuh"
#include "11_every_shape/swap_ab.cuh"

namespace mm::ch11 {

/// Which of the chapter's kernels a problem gets, and with what.
struct Choice {
  enum Kernel { tile_shapes, split_k, swap_ab, ragged_decode } kernel;  ///< which step's kernel runs
  int tile_bm;                                          ///< the kernel's tile: rows (of C; of Cᵀ for swap_ab)
  int tile_bn;                                          ///< columns
  int splits;                                           ///< K slices per tile (1 for tile_shapes)
  bool aligned_rows = false;                            ///< A and B copied into aligned rows first (aligned_rows.cuh)
  bool any_shape = false;                               ///< any_shape.cuh's path: `plan` says what it does
  AnyShapePlan plan{};                                  ///< any_shape's staging, C store and B major-ness
};

/// True when the chapter's TMA kernels take `p` as it is (RCR, K and N multiples of 8, the operands
/// their tensor maps hold on 16-byte boundaries: C only for M > 64, swap_ab stores it by the
/// registers); otherwise every_shape takes any_shape.cuh's path.
inline bool tma_kernels_take(const GemmProblem& p, const void* A, const void* B, const void* C) {
  const bool swapped = p.m <= kSwapMaxM;
  if (!(swapped ? swap_ab_rejects(p) : split_k_rejects(p)).empty()) return false;
  return launch::tma_pointer_rejects({{"A", A}, {"B", B}, {"C", swapped ? nullptr : C}}).empty();
}

/// A 16-byte aligned address, for choose()'s operands when the caller has none (the harness's).
inline const void* const kAligned = reinterpret_cast<const void*>(std::uintptr_t(256));

/// True when `p` is a decode problem (M from 17 to 64) whose N alone, in 256-column tiles, fills at
/// least 3/4 of `sms` SMs in one round, and C can be stored by TMA (`tma_store`: N % 8 == 0, C on 16
/// bytes): then a 64×256 tile per SM streams B evenly, where swap_ab's 128-row tiles would make 1.7
/// rounds (N = 28672: 112 tiles of 256 columns against 224 of 128 rows, on 132 SMs). Not at M <= 16:
/// there swap_ab's 128×16 tile (K steps of 128) streams as fast or faster, measured after step 6's L2
/// rule at N = 28672 in three rounds (profiles/session_2026-11-30q.txt, call 9): 4-8% less time at
/// M = 1, 0-3% at M = 16.
inline bool wide_decode(const GemmProblem& p, int sms, bool tma_store) {
  const std::int64_t tiles = launch::ceil_div(p.n, Tile64x256Cfg::BN::value);
  return tma_store && p.m > SwapAB16Cfg::BN::value && p.m <= Tile64x256Cfg::BM::value && tiles <= sms &&
         4 * tiles >= 3 * std::int64_t(sms);
}

/// True when `p` (33 <= M <= 64) makes between 64 tiles and one round of `sms` SMs of 64×128 tiles
/// (N = 8065-16896 on 132 SMs) and C can be stored by TMA: then one consumer warpgroup per 64×128 tile
/// of C (Tile64x128Cfg, K whole) streams B faster than swap_ab's 128-row tiles of Cᵀ with two
/// consumers each on a 64-column wgmma. Measured (appendix step tile_64x128, the second of two rounds
/// in ch11_every_shape_one_consumer_appendix.csv): 64×11008×4096 96.7% against swap_ab's 92.1%,
/// 64×10240×8192 91.4 against 88.3; level at 48 tiles (N = 6144), behind at 32 (N = 4096).
inline bool mid_decode(const GemmProblem& p, int sms, bool tma_store) {
  const std::int64_t tiles = launch::ceil_div(p.n, Tile64x128Cfg::BN::value);
  return tma_store && p.m > 32 && p.m <= Tile64x128Cfg::BM::value && tiles >= 64 && tiles <= sms;
}

/// swap_ab's choice for `p` (M <= 64): the tile with_swap_tile picks and the K slices it gets.
inline Choice swap_choice(const GemmProblem& p, int sms) {
  return with_swap_tile(p, sms, [&](auto cfg) {
    using Cfg = decltype(cfg);
    const SwapPlan plan = plan_swap<Cfg>(p, sms);
    return Choice{Choice::swap_ab, Cfg::BM::value, Cfg::BN::value,
                  SplitKTileScheduler::make({1, 1, 1}, plan.k_steps, plan.splits).splits};
  });
}

/// modeled_swap_time of `p` in one bm×bn tile of C per unit, K whole (an unswapped tile: no partial
/// sums): the bytes of B at the rate its rounds' units draw, full from `streaming_units` units on, and a
/// fixed cost a round.
inline double modeled_tile_stream_time(const GemmProblem& p, int bm, int bn, int sms, double streaming_units = kStreamingUnits) {
  const std::int64_t tiles = launch::ceil_div(p.m, std::int64_t(bm)) * launch::ceil_div(p.n, std::int64_t(bn));
  return modeled_swap_time(p, bn, tiles, 1, sms, streaming_units);
}

/// The index into kDecodeTiles of the tile whose one round (at most `sms` tiles) streams `p` (33 <= M <=
/// 64) at least kStreamGain faster than swap_ab's choice `swap` (its tile and K slices), or -1 when none
/// does; the least modeled time among them (the earlier on a tie). Both sides by modeled_swap_time, the
/// model swap_ab's slices come from, but with DRAM's rate full only when every SM streams
/// (`streaming_units` = `sms`), not from kStreamingUnits units on: between these two kernels the units
/// beyond 80 still paid. Measured on the H200 (2026-12-01, three rounds, RCR, median µs;
/// ch11_every_shape_m64_tiles_appendix.csv), against the model in MB on 132 SMs:
///
///   shape           64×48 tile        swap_ab x1        swap_ab x2        model: tile against swap_ab
///   64×6144×4096    18.2 (128 tiles)  19.9 (96 units)   23.6              63.9 against 81.2 (x1): taken
///   64×4400×4096    17.6 (92 tiles)   18.8 (69 units)   23.0              63.7 against 81.0 (x1): taken
///   64×4096×4096    17.3 (86 tiles)   18.7              16.6 (128 units)  63.5 against 50.8 (x2): not
///   64×4096×8192    28.9              30.3              24.9              115.0 against 85.4 (x2): not
///   64×4096×11008   36.6              38.2              29.9              150.4 against 109.2 (x2): not
///   (48× and 33×4096×4096 as 64×: 17.3 and 17.5 against 16.6 and 17.8 in 2 slices)
///
/// The tile wins by 7-9% where swap_ab runs K whole and the tile's one round has more units than swap_ab's;
/// it loses where swap_ab's 2 slices make 128 units. Saturating at 80 units, the model read 96 and 128
/// units alike and left 64×6144×4096 to swap_ab (cuBLAS 18.4 µs). One round only: at 64×11008×4096 the
/// model prefers 230 tiles of 64×48 in two rounds (127.5 against 150.4), which ran 29.9 µs against
/// swap_ab's 28.1 (mid_decode's 64×128 tile takes that shape, 26.7). 64×32 is not a candidate though the
/// model rates its 128 tiles 8% under swap_ab's 2 slices at N = 4096 (46.6 against 50.8): measured 17.45
/// against 16.6 µs (Tile64x32Cfg).
inline int choose_decode_tile(const GemmProblem& p, const Choice& swap, int sms) {
  const std::int64_t swap_tiles = launch::ceil_div(p.n, std::int64_t(swap.tile_bm)) * launch::ceil_div(p.m, std::int64_t(swap.tile_bn));
  const double limit = modeled_swap_time(p, swap.tile_bn, swap_tiles, swap.splits, sms, sms) * (1.0 - kStreamGain);
  int index = -1;
  double best = 0;
  for (int i = 0; i < int(std::size(kDecodeTiles)); ++i) {
    const TileDims t = kDecodeTiles[i];
    const std::int64_t tiles = launch::ceil_div(p.m, std::int64_t(t.bm)) * launch::ceil_div(p.n, std::int64_t(t.bn));
    const double time = modeled_tile_stream_time(p, t.bm, t.bn, sms, sms);
    if (tiles <= sms && time <= limit && (index < 0 || time < best)) best = time, index = i;  // on a tie, the earlier tile
  }
  return index;
}

/// Step 12: a 64×48 tile of C with one consumer and K whole (tile_shapes' kernel, Tile64x48Cfg) in place
/// of swap_ab's choice where choose_decode_tile finds it faster: at 33-64 rows (at M <= 32 the tile would
/// multiply 32 or more rows of zeros), C stored by TMA (`tma_store`), B K-major (RCR: RRR's MN-major B
/// comes in 64-column boxes of the 128-byte swizzle, which 48 columns do not fill; and RCR reaches the
/// any-shape path only with a staged operand, never `tma_store`); tile_bm 0 otherwise.
inline Choice decode_stream_tile(const GemmProblem& p, int sms, bool tma_store) {
  if (tma_store && p.b == Order::col && p.m > SwapAB32Cfg::BN::value && p.m <= kSwapMaxM)
    if (const int i = choose_decode_tile(p, swap_choice(p, sms), sms); i >= 0)
      return {Choice::tile_shapes, kDecodeTiles[i].bm, kDecodeTiles[i].bn, 1};
  return {Choice::tile_shapes, 0, 0, 1};
}

/// The tile choose_tile_shape picks for `tile_problem` (`p`, or `p` with a staged operand's K) and the
/// K slices choose_splits gives `p`'s tiles: split_k when K is split, else tile_shapes.
inline Choice tile_choice(const GemmProblem& p, const GemmProblem& tile_problem, int sms) {
  const int k_steps = int(std::max<std::int64_t>(1, launch::ceil_div(p.k, Tile128x256Cfg::BK::value)));  // every tile's BK
  const TileShape s = kTileShapes[choose_tile_shape(tile_problem, sms)];
  const std::int64_t tiles = launch::ceil_div(p.m, s.bm) * launch::ceil_div(p.n, s.bn);
  const int splits = SplitKTileScheduler::make({1, 1, 1}, k_steps, choose_splits(tiles, k_steps, sms)).splits;
  return {splits > 1 ? Choice::split_k : Choice::tile_shapes, s.bm, s.bn, splits};
}

/// tile_shapes' 128×64 tile with K whole, run as 64×128 with one consumer warpgroup (Tile64x128Cfg):
/// the same number of tiles (at M = 128 the same), each consumer on wgmma's N = 128 instead of two on
/// N = 64, the tile whose efficiency the model rates lowest. Measured (appendix step tile_64x128, two
/// rounds, ch11_every_shape_one_consumer_appendix.csv, the second) at every suite shape where the model
/// picks 128×64 unsplit: 512³ 90.7 -> 96.9%, 1024³ 88.5 -> 97.6%, 128×6144×4096 84.2 -> 94.2%,
/// 128×8192×8192 93.4 -> 99.0%, 128×8192×28672 93.5 -> 102.8%. Split K keeps 128×64 (not measured as
/// 64×128).
inline Choice one_consumer(Choice c) {
  if (c.kernel == Choice::tile_shapes && c.tile_bm == Tile128x64Cfg::BM::value && c.tile_bn == Tile128x64Cfg::BN::value && !c.aligned_rows)
    return {Choice::tile_shapes, Tile64x128Cfg::BM::value, Tile64x128Cfg::BN::value, 1};
  return c;
}

/// Step 9: tile_shapes' choice `c` for `p` (RCR, its operands where they lie) as 128×160 or 128×176
/// where choose_fill_tile prefers one of them (K whole: those tiles are tile_shapes' kernel only).
inline Choice fill_tile(const GemmProblem& p, int sms, Choice c) {
  if (c.kernel != Choice::tile_shapes || c.tile_bm != Tile128x256Cfg::BM::value) return c;
  if (const int i = choose_fill_tile(p, sms); i >= 0) return {Choice::tile_shapes, kFillTiles[i].bm, kFillTiles[i].bn, 1};
  return c;
}

/// Step 10: tile_shapes' choice `c` for `p` (RCR, 64 < M <= kStreamMaxM, its operands where they lie)
/// as 128×96 or 64×96 where choose_stream_tile finds one whose rounds stream B faster (K whole: those
/// tiles are tile_shapes' kernel only; RRR's MN-major B comes in 64-column boxes, which 96 does not
/// divide).
inline Choice stream_tile(const GemmProblem& p, int sms, Choice c) {
  if (c.kernel != Choice::tile_shapes || c.aligned_rows) return c;
  if (const int i = choose_stream_tile(p, c.tile_bm, c.tile_bn, sms); i >= 0)
    return {Choice::tile_shapes, kStreamTiles[i].bm, kStreamTiles[i].bn, 1};
  return c;
}

/// The one-consumer tiles' rules in order (wide_decode, mid_decode, step 12's decode_stream_tile), as a
/// choice; tile_bm 0 when none holds.
inline Choice decode_tile(const GemmProblem& p, int sms, bool tma_store) {
  if (wide_decode(p, sms, tma_store)) return {Choice::tile_shapes, Tile64x256Cfg::BM::value, Tile64x256Cfg::BN::value, 1};
  if (mid_decode(p, sms, tma_store)) return {Choice::tile_shapes, Tile64x128Cfg::BM::value, Tile64x128Cfg::BN::value, 1};
  return decode_stream_tile(p, sms, tma_store);
}

/// True when `p` is a decode problem whose B any_shape.cuh would copy into aligned rows first (`plan`):
/// ragged_decode's plain loads read B once, in place, where the copy moves it three times.
inline bool ragged_decode_takes(const GemmProblem& p, const AnyShapePlan& plan) {
  return plan.stage_b && p.m <= (p.b == Order::row ? kRaggedDecodeMaxM : kRaggedMmaMaxM);
}

/// The kernel, tile and K slices every_shape runs for `p` on a GPU of `sms` SMs, with A, B and C at
/// the given addresses (only their alignment matters).
inline Choice choose(const GemmProblem& p, int sms, const void* A = kAligned, const void* B = kAligned,
                     const void* C = kAligned) {
  if (!tma_kernels_take(p, A, B, C)) {  // any_shape.cuh: swap_ab's, split_k's or tile_shapes' kernel
    const AnyShapePlan plan = plan_any_shape(p, A, B, C);
    if (ragged_decode_takes(p, plan)) return {Choice::ragged_decode, 0, 0, 1, false, false, plan};
    // RRR with nothing staged and C stored by TMA: the one-consumer rules hold as in RCR (B MN-major).
    const bool plain = !plan.stage_a && !plan.stage_b && !plan.c_strided;
    GemmProblem aligned = p;  // the tile model as if staged rows were 128-byte aligned
    if (plan.stage_a) aligned.k = staged_pitch(p.k);
    Choice c = decode_tile(p, sms, plain);
    const bool decode = c.tile_bm != 0;
    if (!decode) c = p.m <= kSwapMaxM ? swap_choice(p, sms) : tile_choice(p, aligned, sms);
    if (plain) c = one_consumer(c);
    // Step 13: step 9's tiles in RRR too, B's 64-column panels whole, the third read in part
    // (collective_mma_sm90.hpp's RingExtent). Not step 10's 96-column tiles: their B read a third more
    // from L2 and lost 2-8% at M = 128 (the page's step 13).
    if (plain && !decode) c = fill_tile(p, sms, c);
    // K whole: tile_shapes' kernel (B MN-major in RRR), but where C is stored by the registers (split_k's)
    if (c.kernel == Choice::tile_shapes && plan.c_strided) c.kernel = Choice::split_k;
    c.any_shape = true;
    c.plan = plan;
    return c;
  }
  const bool tma_store = tile_shapes_rejects(p).empty() && launch::tma_pointer_rejects({{"C", C}}).empty();
  if (const Choice c = decode_tile(p, sms, tma_store); c.tile_bm != 0) return c;
  if (p.m <= kSwapMaxM) return swap_choice(p, sms);
  if (copies_to_aligned_rows(p)) {
    if (runs_in_place_192(p, sms)) return {Choice::tile_shapes, 192, 192, 1};  // step 15: in clusters of 2, in place
    const TileShape s = kTileShapes[aligned_rows_tile(p, sms)];
    return {Choice::tile_shapes, s.bm, s.bn, 1, true};
  }
  return stream_tile(p, sms, fill_tile(p, sms, one_consumer(tile_choice(p, p, sms))));
}

/// every_shape's rule: any_shape's (RCR or RRR, M, N and K from 1 to below 2^31).
inline std::string every_shape_rejects(const GemmProblem& p) { return any_shape_rejects(p); }

/// The step: the kernel choose() names.
template <class = void>  // compiled where it is called, not where its header is included (step_rules.hpp)
PreparedGemm prepare_every_shape(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, int max_blocks = 0) {
  if (std::string why = every_shape_rejects(p); !why.empty()) throw std::invalid_argument("every_shape: " + why);
  check_bf16_pointers(A, B, C);  // before the SM count asks the GPU
  const Choice c = choose(p, device_sm_count(), A, B, C);
  if (c.kernel == Choice::ragged_decode) return prepare_ragged_decode(p, A, B, C);
  if (c.any_shape) {  // a tile it names: one of those plain RRR takes (prepare_any_shape)
    const bool named = c.kernel == Choice::tile_shapes && !c.plan.stage_a && !c.plan.stage_b && !c.plan.c_strided &&
                       (c.tile_bm == Tile64x128Cfg::BM::value || c.tile_bn % 64 != 0);  // one consumer, or step 9's
    return prepare_any_shape(p, A, B, C, max_blocks, named ? TileDims{c.tile_bm, c.tile_bn} : TileDims{0, 0});
  }
  if (c.kernel == Choice::swap_ab) return prepare_swap_ab(p, A, B, C, max_blocks);
  if (c.kernel == Choice::split_k) return prepare_split_k(p, A, B, C, max_blocks);
  if (c.aligned_rows) return prepare_aligned_rows(p, A, B, C, max_blocks);
  if (c.tile_bm == 192) return prepare_tile_shape<Tile192x192Cluster>(p, A, B, C, max_blocks);  // step 15
  if (c.tile_bm == 64 && c.tile_bn == Tile64x256Cfg::BN::value) return prepare_tile_shape<Tile64x256Cfg>(p, A, B, C, max_blocks);
  if (c.tile_bm == 64 && c.tile_bn == Tile64x128Cfg::BN::value) return prepare_tile_shape<Tile64x128Cfg>(p, A, B, C, max_blocks);
  for (int i = 0; i < int(std::size(kDecodeTiles)); ++i)  // step 12's tiles
    if (c.tile_bm == kDecodeTiles[i].bm && c.tile_bn == kDecodeTiles[i].bn)
      return with_decode_tile(i, [&](auto cfg) { return prepare_tile_shape<decltype(cfg)>(p, A, B, C, max_blocks); });
  for (int i = 0; i < int(std::size(kStreamTiles)); ++i)  // step 10's tiles
    if (c.tile_bm == kStreamTiles[i].bm && c.tile_bn == kStreamTiles[i].bn)
      return with_stream_tile(i, [&](auto cfg) { return prepare_tile_shape<decltype(cfg)>(p, A, B, C, max_blocks); });
  if (const int i = fill_tile_index(c.tile_bm, c.tile_bn); i >= 0)  // step 9's tiles
    return with_fill_tile(i, [&](auto cfg) { return prepare_tile_shape<decltype(cfg)>(p, A, B, C, max_blocks); });
  return prepare_tile_shapes(p, A, B, C, max_blocks);
}

}  // namespace mm::ch11
