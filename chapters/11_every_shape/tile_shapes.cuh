// Chapter 11, step 1: tile_shapes. Chapter 10's best kernel (tma_store: a producer warpgroup, two
// consumer warpgroups, a persistent grouped loop over 128×256 tiles, C out through shared memory and
// TMA stores) with the tile's N made a parameter, and a choice of tile per problem.
//
// One tile for all problems wastes the GPU on shapes it does not divide: at 3072³, 128×256 tiles make
// 24 × 12 = 288 tiles for 132 SMs, 2.18 waves, so the third wave runs 24 tiles on 132 SMs; at 1024³,
// 32 tiles leave 100 SMs idle. The kernel below is tma_store's, unchanged but for the tile being the
// configuration's (BN = 64, 128, 192 or 256: wgmma's N, a multiple of the 64-column epilogue piece); what
// is new is choose_tile_shape(), a model of the time as waves × work per tile:
//
//   time(BN) ∝ ceil(tiles(BN) / SMs) × (BM × BN) / efficiency(BN)
//
// efficiency(BN) is what one SM reaches with that tile when every SM is busy (a smaller N reloads A
// more often per flop and issues more, shorter wgmma): measured, see the page.
//
// The kernel is composed from common/gemm's blocks, as every kernel of chapters 11 and 12 is: chapter
// 10's tma_store written out once more would be 200 lines; here it is one line, TileShapesKernel:
//
//   GemmKernelCooperative      a producer warpgroup and kConsumers consumer warpgroups (kernel_sm90.hpp)
//   + CollectiveMma            TMA into a ring of kStages stages, wgmma from it (collective_mma_sm90.hpp)
//   + CollectiveEpilogueTma    64×64 pieces of C out by stmatrix and TMA stores (collective_epilogue_sm90.hpp)
//   + PersistentTileScheduler  whole tiles in chapter 10's grouped order (tile_scheduler_sm90.hpp)
//
// and chapter 10's page shows the written-out kernel it equals. Each later step of the chapter changes
// one block: split_k the scheduler, swap_ab the operands and the epilogue.
//
// Chapter 11 multiplies C = A·Bᵀ (RCR: A M×K and B N×K both K-contiguous, as nn.Linear stores its
// weights): both operands K-major is what swap_ab needs to exchange them, and RRR's MN-major B was
// chapter 10's lesson.
//
// Build: cmake --build build --target ch11_every_shape
// Run:   build/bin/ch11_every_shape --kernel tile_shapes
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "11_every_shape/step_rules.hpp"  // check_step
#include "gemm/cluster_launch.hpp"  // device_sm_count
#include "gemm/collective_epilogue_sm90.hpp"
#include "gemm/collective_mma_sm90.hpp"
#include "gemm/kernel_adapter.hpp"
#include "gemm/kernel_sm90.hpp"
#include "gemm/launch.hpp"
#include "gemm/problem.hpp"
#include "gemm/tile_scheduler_sm90.hpp"

namespace mm::ch11 {

using bf16 = __nv_bfloat16;

/// The tile of chapter 10's best step: 128×256, K steps of 64 (one 128-byte swizzle row of bf16), 4
/// stages of 48 KB, two consumer warpgroups (gemm/kernel_sm90.hpp's KernelConfig has the rest).
struct Tile128x256Cfg : KernelConfig<128, 256, 64, 4> {};
/// 128×192: 3/4 of the work per tile, 4/3 as many tiles (a non-power-of-two N against wave quantization).
struct Tile128x192Cfg : Tile128x256Cfg {
  using BN = _192;
};
/// 128×128: half the work per tile; its 32 KB stages leave room for 6 of them.
struct Tile128x128Cfg : Tile128x256Cfg {
  using BN = _128;
  static constexpr int kStages = 6;
};
/// 128×64: a quarter of the work per tile, 4× as many tiles (small problems, and M ≈ 128 where B's
/// bytes, not the flops, set the time); 24 KB stages, 6 of them.
struct Tile128x64Cfg : Tile128x256Cfg {
  using BN = _64;
  static constexpr int kStages = 6;
};

/// 128×160 and 128×176 (step 9): N a multiple of 16 but not of 64, sized so that the tiles fill their
/// rounds where 128×192's leave SMs idle (512×10240: 256 tiles of 128×160 in 2 rounds against 216 of
/// 128×192; 512×11008: 252 of 128×176 against 232). wgmma takes any N in steps of 8; the epilogue
/// stores the last 32 or 48 columns as a narrower piece (collective_epilogue_sm90.hpp). 5 stages of 36
/// and 38 KB beside the two consumers' C buffers (212 and 222 KB; step 14: a fifth stage, as cuBLAS's
/// 128×176 keeps, 0-3.5% faster than 4 at seven shapes, none slower). every_shape alone chooses them
/// (fill_tile), so that no other step compiles them.
struct Tile128x160Cfg : Tile128x256Cfg {
  using BN = Int<160>;
  static constexpr int kStages = 5;
};
struct Tile128x176Cfg : Tile128x256Cfg {
  using BN = Int<176>;
  static constexpr int kStages = 5;
};
/// The same two with 4 stages: as RRR runs them (step 13: B MN-major in whole 64-column panels, 192
/// columns a stage, leaves room for 4), and step 14's control (appendix steps tile_128x160_s4, _s4).
struct Tile128x160S4Cfg : Tile128x160Cfg {
  static constexpr int kStages = 4;
};
struct Tile128x176S4Cfg : Tile128x176Cfg {
  static constexpr int kStages = 4;
};

/// 128×96 and 64×96 (step 10): 96 columns, for 64 < M <= 128, where B's bytes, not the flops, set the
/// time: 128×11008 makes 115 tiles of 128×96 on 132 SMs against 86 of 128×128, 128×6144 128 of 64×96
/// (one consumer) against 96 of 64×128. Measured 0-5% faster than the tiles they replace, not the
/// 12-17% stream_cost predicts: DRAM's rate stays at 66-70% of its peak however many SMs stream
/// (the page's step 10). wgmma's n96; the
/// epilogue stores the last 32 columns as a narrower piece (step 9's). 6 stages of 28 KB (a seventh
/// would not fit beside two consumers' C buffers) and 10 of 20 KB. every_shape alone chooses them
/// (stream_tile), so that no other step compiles them.
struct Tile128x96Cfg : Tile128x256Cfg {
  using BN = Int<96>;
  static constexpr int kStages = 6;
};
struct Tile64x96Cfg : KernelConfig<64, 96, 64, 10> {};

/// Two appendix variants of 128×96 against M = 128's DRAM rate (ours 66-70% of its peak with any tile
/// or cluster, cuBLAS's 96×128 kernel 75-77% from the same 91 MB at 128×11008×4096: the page's step 10).
/// Measured dead ends (the page's appendix, 2026-12-01): 7 stages level with 6, K steps of 128 slower on
/// the 128-row tiles (DRAM 61-62% of its peak at 128×11008×4096) and level on 64×96.
/// 7 stages, as cuBLAS keeps (nvjet_..._96x128_64x7): one C buffer per consumer makes room, 7 × 28 KB +
/// 2 × 8 KB = 212 KB (two buffers each, 228 KB, do not fit); the epilogue then waits for a piece's
/// store to have read its buffer before staging the next (EpilogueStorePipeline<1>), once a tile.
/// Appendix step tile_128x96_s7.
struct Tile128x96S7Cfg : Tile128x96Cfg {
  static constexpr int kStages = 7;
  static constexpr int kCBuffers = 1;
};
/// K steps of 128: a stage takes each row of A and B as two 128-byte boxes of 64 k issued back to back
/// (a TMA box of the 128-byte swizzle is one swizzle row wide: TmaBoxes' two panels, the second after
/// all the stage's rows), so the 256 contiguous bytes of a B row are asked of DRAM at once rather than
/// a stage apart, and a K step's wait and release move twice the bytes. 3 stages of 56 KB, the bytes in
/// flight of 6 × 28 KB (a fourth, 224 KB, does not fit even beside one C buffer a consumer). The
/// consumers' wgmma walk 8 k-blocks of 16 a stage (gmma_k_block). Appendix step tile_128x96_k128.
struct Tile128x96K128Cfg : Tile128x96Cfg {
  using BK = _128;
  static constexpr int kStages = 3;
};
/// 64×96 (every_shape's tile at 128×6144×4096) in K steps of 128: 5 stages of 40 KB, the 200 KB of
/// 10 × 20 KB. Appendix step tile_64x96_k128.
struct Tile64x96K128Cfg : KernelConfig<64, 96, 128, 5> {};
/// 128×128 in K steps of 128: 3 stages of 64 KB (the 192 KB of 6 × 32 KB) and both C buffers, 224 KB.
/// Appendix step tile_128x128_k128.
struct Tile128x128K128Cfg : Tile128x128Cfg {
  using BK = _128;
  static constexpr int kStages = 3;
};

/// 192×192 with three consumer warpgroups (cuBLAS's tile at 3000³, `192x192_64x4_2x1`): 3000³ makes
/// 256 of them, two rounds of 132 SMs where 128×192 makes three, and each asks the L2 for 384 rows a
/// K step for 2.25 times 128×128's work. 4 stages of 48 KB and one C buffer a consumer (216 KB; two
/// buffers would leave 3 stages). 512 threads share the 64 K registers: the producer warpgroup keeps
/// 40, each consumer 152 (its 96 accumulators, 64 × 192 fp32 over 128 threads). Appendix steps
/// tile_192x192 and tile_192x192_2x1 force it alone and in clusters of 2 along M (the page's appendix:
/// at 3000³ on the rows in place, 10% faster than the copy and 128×192). every_shape runs the clustered
/// one on misaligned rows where aligned_rows.cuh's runs_in_place_192 says it beats the copy (step 15).
struct Tile192x192Cfg : KernelConfig<192, 192, 64, 4> {
  static constexpr int kCBuffers = 1;
  static constexpr int kConsumerRegs = 152;
};
/// ... in clusters of 2 along M: the two blocks share B's boxes, each loading half and multicasting it.
using Tile192x192Cluster = Clustered<Tile192x192Cfg, 2, 1>;

/// 64×32 and 64×48 with one consumer warpgroup (step 12, issue 36): decode at 33-64 rows in one round
/// of tiles of C with K whole, no partial sums, in place of swap_ab's tiles of Cᵀ. wgmma's n32 and n48;
/// the epilogue stores the tile as step 9's narrower piece alone (32 or 48 columns: no whole 64-column
/// piece). A stage holds 12 KB (14 KB), of which 4 KB (6 KB) are B, the bytes that come from DRAM: as
/// many stages as fit beside the C buffers, 17 (221 KB) and 14 (213 KB; a fifteenth would fill the 227
/// KB to the byte), to keep B's bytes in flight. RCR only: RRR's MN-major B comes in 64-column boxes of
/// the 128-byte swizzle. every_shape chooses 64×48 where decode_stream_tile says (every_shape.hpp);
/// 64×32 (cuBLAS's tile at 64×4096×4096) is a measured dead end, an appendix step: on the H200 it never
/// beat swap_ab or 64×48 (64×4096×4096: 17.45 µs against swap_ab's 16.6 in 2 slices; 64×6144×4096: 28.6
/// against 64×48's 18.2, its 192 tiles two rounds), nor did it in clusters of 2 multicasting A (22.3 µs
/// at 64×4096×4096). Appendix steps tile_64x32, tile_64x48 and tile_64x32_1x2 force them.
struct Tile64x32Cfg : KernelConfig<64, 32, 64, 17> {};
struct Tile64x48Cfg : KernelConfig<64, 48, 64, 14> {};

/// 64×64 with one consumer warpgroup and 13 stages of 16 KB (208 KB beside the two C buffers): cuBLAS's
/// kernel at 128×4096×4096 (`nvjet_sm90_tst_64x64_64x13`, in clusters of 2) runs 128 such tiles with K
/// whole where every_shape splits K of 128×64 tiles in two and writes partial sums. Appendix steps
/// tile_64x64 and tile_64x64_2x1 (the two tiles of a column share B) force it.
struct Tile64x64Cfg : KernelConfig<64, 64, 64, 13> {};

/// 64×256 with one consumer warpgroup, for every_shape's widest decode layers (M <= 64, N so wide that
/// its 256-column tiles alone nearly fill the GPU): one tile per SM streaming its 256 rows of B, and
/// not the 64 rows of zeros a 128-row tile would multiply; 5 stages of 40 KB.
struct Tile64x256Cfg : KernelConfig<64, 256, 64, 5> {};
/// 64×128 with one consumer warpgroup: where the model picks 128×64 with K whole, and at 33-64 rows
/// against 64-132 tiles of 128 columns (every_shape.hpp's one_consumer and mid_decode): one consumer on
/// wgmma's N = 128 instead of two on N = 64, the same tiles; 8 stages of 24 KB. Appendix step
/// tile_64x128 forces it.
struct Tile64x128Cfg : KernelConfig<64, 128, 64, 8> {};

/// tile_shapes' kernel for the tile of `Cfg`: chapter 10's tma_store, composed. The main loop, the
/// epilogue and the tile order are what the chapter's later steps change, one at a time (B's
/// major-ness too: step 6 runs RRR's one-consumer tiles with B MN-major).
template <class Cfg, class Scheduler = PersistentTileScheduler, GmmaMajor MajorB = GmmaMajor::K>
using TileKernel =
    GemmKernelCooperative<Cfg, CollectiveMma<Cfg, bf16, GmmaMajor::K, MajorB>, CollectiveEpilogueTma<Cfg, bf16>, Scheduler>;

/// Empty when the chapter's kernels take `p`; otherwise the rule it breaks. RCR only (see the file
/// comment); TMA's rules for the operands; C's rows 16-byte aligned for the TMA store.
inline std::string rcr_tma_rejects(const GemmProblem& p) {
  if (p.a != Order::row || p.b != Order::col || p.c != Order::row)
    return "takes RCR only (C = A·Bᵀ with B stored N×K, as nn.Linear's weights): both operands K-major";
  return launch::tma_operand_rejects(p);
}

/// tile_shapes' rule: rcr_tma_rejects and N % 8 == 0 (the TMA store).
inline std::string tile_shapes_rejects(const GemmProblem& p) {
  if (std::string why = rcr_tma_rejects(p); !why.empty()) return why;
  return tma_store_c_rejects(p, 2);
}

/// The tiles of a problem as the chooser sees them.
struct TileShape {
  int bm;  ///< rows of the tile
  int bn;  ///< columns of the tile
  /// Relative speed of one SM with this tile when all are busy (128×256 = 1), measured on the H200
  /// (the page's "Which tile" table: tile_shapes at 8192³, each tile forced).
  double efficiency;
};
/// The tiles tile_shapes chooses from, in the order of preference on a tie.
inline constexpr TileShape kTileShapes[] = {{128, 256, 1.0}, {128, 192, 0.99}, {128, 128, 0.92}, {128, 64, 0.53}};

/// The model's time of a problem in units of one 128×256 tile's time on one SM: waves × tile work /
/// efficiency, with waves = ceil(tiles / sms).
inline double modeled_time(const GemmProblem& p, const TileShape& s, int sms) {
  const std::int64_t tiles = launch::ceil_div(p.m, s.bm) * launch::ceil_div(p.n, s.bn);
  const double waves = double(launch::ceil_div(tiles, sms));
  return waves * (double(s.bm) * s.bn / (128.0 * 256.0)) / s.efficiency;
}

/// True when the rows of A and B (K bf16 values each) do not start on 128-byte boundaries (K % 64 !=
/// 0): each 128-byte box row of a TMA load then straddles two L2 lines, and the tile that reads the
/// most operand bytes per flop loses most (1000³: 128×64 at 74% of cuBLAS, 128×128 at 84%; 1024³:
/// 88% and 79%; the page's run).
inline bool rows_straddle_lines(const GemmProblem& p) { return p.k % 64 != 0; }

/// The fraction of the SMs that the tiles of `s` keep busy over their rounds: tiles / (rounds × sms).
inline double rounds_filled(const GemmProblem& p, const TileShape& s, int sms) {
  const std::int64_t tiles = launch::ceil_div(p.m, s.bm) * launch::ceil_div(p.n, s.bn);
  return double(tiles) / (double(launch::ceil_div(tiles, sms)) * sms);
}

/// Modeled times within this fraction of each other are a tie (the efficiencies are measured to about 1%) ...
inline constexpr double kTileTie = 0.01;
/// ... which the tile that fills its rounds fuller by this much wins.
inline constexpr double kFullerRounds = 0.05;

/// True when tile `a` is the better choice than tile `b` for `p`: the smaller modeled time, but in a
/// tie (kTileTie) the one whose rounds are fuller by kFullerRounds. The model charges a short last
/// round as a whole one; a tile that leaves fewer SMs idle in it is faster than the tie says. Where it
/// decides: 5 rounds of 128×192 against 7 of 128×128 (3.788 against 3.804), e.g. 512×28672×4096 (600
/// tiles, 91% of 5 rounds, against 896, 97% of 7): 128×128 measured 3-5% faster at four such shapes
/// and both orders (step 8 of the page).
inline bool better_tile(const GemmProblem& p, const TileShape& a, const TileShape& b, int sms) {
  const double ta = modeled_time(p, a, sms), tb = modeled_time(p, b, sms);
  auto tie_and_fuller = [&](const TileShape& x, double tx, const TileShape& y, double ty) {
    return tx <= ty * (1.0 + kTileTie) && rounds_filled(p, x, sms) >= rounds_filled(p, y, sms) + kFullerRounds;
  };
  if (tie_and_fuller(a, ta, b, tb)) return true;
  if (tie_and_fuller(b, tb, a, ta)) return false;
  return ta < tb;
}

/// The index into kTileShapes of the best tile on `sms` SMs (better_tile: the smallest modeled time,
/// a tie to the fuller rounds); tiles narrower than 128 columns only when the operands' rows are
/// 128-byte aligned (rows_straddle_lines).
inline int choose_tile_shape(const GemmProblem& p, int sms) {
  int best = 0;
  for (int i = 1; i < int(std::size(kTileShapes)); ++i) {
    if (kTileShapes[i].bn < 128 && rows_straddle_lines(p)) continue;
    if (better_tile(p, kTileShapes[i], kTileShapes[best], sms)) best = i;
  }
  return best;
}

/// Step 9's tiles, which every_shape's tile_shapes path (RCR, K whole) takes where better_tile prefers
/// one to choose_tile_shape's. Efficiencies on kTileShapes' scale: each tile's rate per round (128·BN·K
/// over time / rounds) against 128×256's, beside the table's own tiles in one process (the page's A/B,
/// ten shapes with M >= 256, medians): 128×160 0.950, 128×176 0.953, 128×128 0.955, 128×192 0.977;
/// level with 128×128, so its 0.92. (At 8192³ the three fall to 0.83-0.86, where the model never takes
/// them: step 9 of the page.)
inline constexpr TileShape kFillTiles[] = {{128, 160, 0.92}, {128, 176, 0.92}};

/// The index into kFillTiles of a tile better than choose_tile_shape's for `p` on `sms` SMs (the best
/// of them by better_tile), or -1 when none is.
inline int choose_fill_tile(const GemmProblem& p, int sms) {
  TileShape best = kTileShapes[choose_tile_shape(p, sms)];
  int index = -1;
  for (int i = 0; i < int(std::size(kFillTiles)); ++i)
    if (better_tile(p, kFillTiles[i], best, sms)) best = kFillTiles[i], index = i;
  return index;
}

/// Calls `f(Cfg{})` with the configuration of kFillTiles[index].
template <class F>
decltype(auto) with_fill_tile(int index, F&& f) {
  if (index == 0) return f(Tile128x160Cfg{});
  return f(Tile128x176Cfg{});
}
/// The index into kFillTiles of the tile bm×bn, or -1 when it is not one of them.
inline int fill_tile_index(int bm, int bn) {
  for (int i = 0; i < int(std::size(kFillTiles)); ++i)
    if (kFillTiles[i].bm == bm && kFillTiles[i].bn == bn) return i;
  return -1;
}
/// The same with the 4-stage configurations RRR's MN-major B leaves room for (step 13).
template <class F>
decltype(auto) with_fill_tile_s4(int index, F&& f) {
  if (index == 0) return f(Tile128x160S4Cfg{});
  return f(Tile128x176S4Cfg{});
}

/// Calls `f(Cfg{})` with the configuration of kTileShapes[index]: the one place an index of the
/// model becomes a kernel's tile (tile_shapes, split_k and its appendix variant dispatch through it).
template <class F>
decltype(auto) with_tile_shape(int index, F&& f) {
  switch (index) {
    case 0: return f(Tile128x256Cfg{});
    case 1: return f(Tile128x192Cfg{});
    case 2: return f(Tile128x128Cfg{});
    default: return f(Tile128x64Cfg{});
  }
}

/// The largest M swap_ab takes (swap_ab.cuh): beyond it, A fills wgmma's 64 rows by itself. Up to it,
/// every_shape's rules treat a problem as decode.
inline constexpr std::int64_t kSwapMaxM = 64;

/// TMA's L2 promotion for the operand maps of a problem of `m` rows: none at decode (m <= kSwapMaxM: B's
/// bytes are read once and streamed, and the 256 bytes a 128-byte box row brings on a miss cost a
/// quarter more L2 reads for nothing), 256 bytes otherwise (where the next K step's row is read soon,
/// the small squares lose 2-4% without it). Measured in step 6.
inline TmaL2Promotion l2_promotion_for(std::int64_t m) { return m <= kSwapMaxM ? TmaL2Promotion::none : TmaL2Promotion::b256; }

/// The largest M at which every_shape weighs step 10's tiles (stream_tile): up to it one or two rows
/// of tiles cover A, and the time is B's bytes streamed per SM.
inline constexpr std::int64_t kStreamMaxM = 128;

/// A tile's rows and columns, for the streaming model (stream_cost): no efficiency, the flops are not
/// what it counts.
struct TileDims {
  int bm;  ///< rows of the tile
  int bn;  ///< columns of the tile
};
/// Step 10's tiles, in the order of preference on a tie: 128×96 (two consumers), 64×96 (one).
inline constexpr TileDims kStreamTiles[] = {{128, 96}, {64, 96}};

/// The streaming model's time of `p` (64 < M <= kStreamMaxM, K whole) in tiles of bm×bn on `sms` SMs:
/// rounds × (bm + bn), the rows of A and B one SM reads per K step of a tile, in each round: the time
/// if each busy SM streamed at a fixed rate. It does not: at 128×11008×4096 115 tiles of 128×96 move
/// 68-70% of DRAM's peak, as 86 of 128×128 do (ncu, step 10), so the tiles it prefers gain less than
/// it says; kept as the rule because they were faster or level (within 1.2%) at three shapes in six rounds.
inline double stream_cost(const GemmProblem& p, int bm, int bn, int sms) {
  const std::int64_t tiles = launch::ceil_div(p.m, bm) * launch::ceil_div(p.n, bn);
  return double(launch::ceil_div(tiles, sms)) * double(bm + bn);
}

/// A streaming tile must save this fraction of the chosen tile's stream_cost to be taken.
inline constexpr double kStreamGain = 0.05;

/// The index into kStreamTiles of a tile that streams `p` (64 < M <= kStreamMaxM) at least kStreamGain
/// faster than the chosen bm×bn tile by stream_cost (the best of them), or -1 when none does.
inline int choose_stream_tile(const GemmProblem& p, int bm, int bn, int sms) {
  if (p.m <= kSwapMaxM || p.m > kStreamMaxM) return -1;
  const double limit = stream_cost(p, bm, bn, sms) * (1.0 - kStreamGain);
  int index = -1;
  double best = 0;
  for (int i = 0; i < int(std::size(kStreamTiles)); ++i) {
    const double c = stream_cost(p, kStreamTiles[i].bm, kStreamTiles[i].bn, sms);
    if (c <= limit && (index < 0 || c < best)) best = c, index = i;  // on a tie, the earlier tile
  }
  return index;
}

/// Calls `f(Cfg{})` with the configuration of kStreamTiles[index].
template <class F>
decltype(auto) with_stream_tile(int index, F&& f) {
  if (index == 0) return f(Tile128x96Cfg{});
  return f(Tile64x96Cfg{});
}

/// Step 12's tile for decode (33 <= M <= 64, K whole): 64×48 with one consumer. every_shape.hpp's
/// decode_stream_tile weighs it against swap_ab's choice. (64×32, the other tile step 12 measured, is
/// not among them: Tile64x32Cfg above.)
inline constexpr TileDims kDecodeTiles[] = {{64, 48}};

/// Calls `f(Cfg{})` with the configuration of kDecodeTiles[index].
template <class F>
decltype(auto) with_decode_tile(int index, F&& f) {
  static_assert(std::size(kDecodeTiles) == 1, "a case per tile");
  (void)index;
  return f(Tile64x48Cfg{});
}

/// The main loop's and the epilogue's arguments of every kernel of the chapter that multiplies A by Bᵀ
/// into a row-major C (tile_shapes, split_k, stream_k, ping_pong): A's and B's TMA copies (rows `pitch`
/// elements apart, 0: K) and C's TMA store. The scheduler's are the step's. Throws
/// std::invalid_argument when TMA cannot describe an operand (a pointer not 16-byte aligned).
template <class Kernel>
typename GemmAdapter<Kernel>::Arguments tile_arguments(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C,
                                                       std::int64_t pitch = 0) {
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  const std::int64_t ld = pitch > 0 ? pitch : p.k;
  typename GemmAdapter<Kernel>::Arguments args{};
  args.mainloop = Kernel::Mainloop::to_underlying_arguments(A, B, m, n, k, ld, ld, l2_promotion_for(m));
  args.epilogue = Kernel::Epilogue::to_underlying_arguments(C, m, n, n);
  return args;
}

/// "128x256": the tile of `Cfg`, as a path names it; in clusters, with the cluster ("128x192 2x1").
template <class Cfg>
std::string tile_name() {
  std::string name = std::to_string(Cfg::BM::value) + "x" + std::to_string(Cfg::BN::value);
  if constexpr (Cfg::kClusterM * Cfg::kClusterN > 1) name += " " + std::to_string(Cfg::kClusterM) + "x" + std::to_string(Cfg::kClusterN);
  return name;
}

/// tile_shapes with the tile given: the blocks' arguments, then the adapter (the opt-in, a grid of
/// the blocks the GPU holds at once, at most one per tile, at most `max_blocks` when above 0); A's
/// and B's rows `pitch` elements apart (0: K). Throws std::invalid_argument for a problem it rejects
/// or operands TMA cannot describe.
template <class Cfg>
PreparedGemm prepare_tile_shape(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, int max_blocks = 0,
                                std::int64_t pitch = 0) {
  check_step("tile_shapes", tile_shapes_rejects(p), A, B, C);
  using Kernel = TileKernel<Cfg>;
  auto args = tile_arguments<Kernel>(p, A, B, C, pitch);
  args.scheduler = whole_tiles<Cfg>(p);
  args.max_blocks = max_blocks;
  GemmAdapter<Kernel> gemm;
  gemm.initialize(args);
  return gemm.prepared("tile_shapes " + tile_name<Cfg>());
}

/// The step: the tile choose_tile_shape picks for this problem on this GPU.
template <class = void>  // compiled where it is called, not where its header is included (step_rules.hpp)
PreparedGemm prepare_tile_shapes(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, int max_blocks = 0) {
  check_step("tile_shapes", tile_shapes_rejects(p), A, B, C);
  return with_tile_shape(choose_tile_shape(p, device_sm_count()), [&](auto cfg) {
    return prepare_tile_shape<decltype(cfg)>(p, A, B, C, max_blocks);
  });
}

}  // namespace mm::ch11
