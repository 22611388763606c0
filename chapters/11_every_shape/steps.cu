// Chapter 11's steps, in the order of its page: the one list the binary, the tests and the compiled
// kernels come from (docs/extending.md). A new step is one line here.
#include "11_every_shape/steps.hpp"

#include <utility>

#include "11_every_shape/every_shape.hpp"
#include "11_every_shape/stream_k.cuh"
#if MM_APPENDIX_STEPS
#include "11_every_shape/narrow_tiles.cuh"
#include "11_every_shape/ping_pong.cuh"
#include "11_every_shape/split_k_second_kernel.cuh"
#endif

namespace mm::ch11 {

namespace {
/// A step whose launch is prepared once per problem (tensor maps, the workspace, the grid): bf16, sm_90a.
GemmKernel<bf16, bf16> step(const char* name, GemmPrepare<bf16, bf16> prepare,
                            std::function<std::string(const GemmProblem&)> rejects) {
  return prepared_kernel<bf16, bf16>(name, DType::bf16, std::move(prepare), std::move(rejects), arch::sm90a);
}
/// `prepare(p, a, b, c, max_blocks)` with the grid's cap fixed.
template <class Prepare>
GemmPrepare<bf16, bf16> on_grid(Prepare prepare, int max_blocks) {
  return [=](const GemmProblem& p, const bf16* a, const bf16* b, bf16* c) { return prepare(p, a, b, c, max_blocks); };
}
/// tile_shapes with the tile of `Cfg` forced, the grid's cap fixed.
template <class Cfg>
GemmPrepare<bf16, bf16> forced_tile(int max_blocks) {
  return [=](const GemmProblem& p, const bf16* a, const bf16* b, bf16* c) { return prepare_tile_shape<Cfg>(p, a, b, c, max_blocks); };
}
/// swap_ab with with_swap_tile's tile and K in `splits` slices.
auto forced_swap_slices(int splits) {
  return [splits](const GemmProblem& p, const bf16* a, const bf16* b, bf16* c, int blocks) {
    if (std::string why = swap_ab_rejects(p); !why.empty()) throw std::invalid_argument("swap_ab: " + why);
    return with_swap_tile(p, device_sm_count(), [&](auto cfg) { return prepare_swap_ab_with<decltype(cfg)>(p, a, b, c, splits, blocks); });
  };
}
#if MM_APPENDIX_STEPS
/// The rule of any_shape's whole-tile kernel on operands where they lie (nothing staged, C by TMA):
/// RCR or RRR, K % 8 == 0 and N % 8 == 0 (the operands' 16-byte-aligned addresses: at the launch).
std::string unstaged_rejects(const GemmProblem& p) {
  if (std::string why = any_shape_rejects(p); !why.empty()) return why;
  if (p.k % 8 != 0 || p.n % 8 != 0) return "reads A and B where they lie: needs K % 8 == 0 and N % 8 == 0";
  return {};
}
/// tile_shapes' kernel of `Cfg` on A and B where they lie (B MN-major in RRR), whole tiles, C by TMA.
template <class Cfg>
PreparedGemm unstaged_tile(const GemmProblem& p, const bf16* a, const bf16* b, bf16* c, int blocks) {
  check_step("any_tile", unstaged_rejects(p), a, b, c);
  const bool rrr = p.b == Order::row;
  const Extents maps{p.m, p.n, p.k};
  const detail::Operand oa{a, p.k}, ob{b, rrr ? p.n : p.k};
  PreparedGemm g = rrr ? detail::prepare_any_whole_tiles<Cfg, GmmaMajor::MN>(p, maps, oa, ob, c, blocks)
                       : detail::prepare_any_whole_tiles<Cfg, GmmaMajor::K>(p, maps, oa, ob, c, blocks);
  if (rrr) g.path += " (B MN-major)";
  return g;
}
#endif
}  // namespace

std::vector<GemmKernel<bf16, bf16>> steps() { return steps_on_grid(0); }

std::vector<GemmKernel<bf16, bf16>> steps_on_grid(int max_blocks, int splits) {
  // split_k and swap_ab with their slice count forced (the tests) or chosen (splits == 0).
  auto split_k = [splits](const GemmProblem& p, const bf16* a, const bf16* b, bf16* c, int blocks) {
    if (splits <= 0) return prepare_split_k(p, a, b, c, blocks);
    return prepare_split_k_with<Tile128x128Cfg>(p, a, b, c, splits, blocks);
  };
  auto swap_ab = [splits](const GemmProblem& p, const bf16* a, const bf16* b, bf16* c, int blocks) {
    if (splits <= 0) return prepare_swap_ab(p, a, b, c, blocks);
    return forced_swap_slices(splits)(p, a, b, c, blocks);
  };
  return {
      // tile_shapes.cuh: chapter 10's tma_store kernel, the tile (128×256, ×192, ×128, ×64) chosen per problem
      step("tile_shapes", on_grid(prepare_tile_shapes<>, max_blocks), tile_shapes_rejects),
      // split_k.cuh: K cut into slices when the tiles cannot fill the GPU, a deterministic reduction
      step("split_k", on_grid(split_k, max_blocks), split_k_rejects),
      // stream_k.cuh: 128×256 tiles, the K steps of the last round's tiles spread evenly over every block
      step("stream_k", on_grid(prepare_stream_k<>, max_blocks), stream_k_rejects),
      // swap_ab.cuh: M <= 64, Cᵀ = B·Aᵀ so that N takes wgmma's 64-row M
      step("swap_ab", on_grid(swap_ab, max_blocks), swap_ab_rejects),
      // every_shape.hpp: the kernel picked from the shape and the SM count
      step("every_shape", on_grid(prepare_every_shape<>, max_blocks), every_shape_rejects),
      // ragged_decode.cuh: M <= 16, B read in place by plain loads (every_shape takes it where TMA
      // cannot read B)
      step("ragged_decode", prepare_ragged_decode<>, ragged_decode_rejects),
#if MM_APPENDIX_STEPS
      // Each tile forced (the efficiencies of tile_shapes' model are measured with these).
      step("tile_128x256", forced_tile<Tile128x256Cfg>(max_blocks), tile_shapes_rejects),
      step("tile_128x192", forced_tile<Tile128x192Cfg>(max_blocks), tile_shapes_rejects),
      step("tile_128x128", forced_tile<Tile128x128Cfg>(max_blocks), tile_shapes_rejects),
      step("tile_128x64", forced_tile<Tile128x64Cfg>(max_blocks), tile_shapes_rejects),
      step("tile_64x256", forced_tile<Tile64x256Cfg>(max_blocks), tile_shapes_rejects),
      step("tile_64x128", forced_tile<Tile64x128Cfg>(max_blocks), tile_shapes_rejects),
      // step 9's tiles (every_shape takes them where the model prefers them; here forced)
      step("tile_128x160", forced_tile<Tile128x160Cfg>(max_blocks), tile_shapes_rejects),
      step("tile_128x176", forced_tile<Tile128x176Cfg>(max_blocks), tile_shapes_rejects),
      // ... with 4 stages, as before step 14 (RRR's, step 13)
      step("tile_128x160_s4", forced_tile<Tile128x160S4Cfg>(max_blocks), tile_shapes_rejects),
      step("tile_128x176_s4", forced_tile<Tile128x176S4Cfg>(max_blocks), tile_shapes_rejects),
      // step 10's tiles (every_shape takes them at 64 < M <= 128 where stream_cost prefers them; here forced)
      step("tile_128x96", forced_tile<Tile128x96Cfg>(max_blocks), tile_shapes_rejects),
      step("tile_64x96", forced_tile<Tile64x96Cfg>(max_blocks), tile_shapes_rejects),
      // ... in clusters along N that multicast A (cuBLAS runs 96 of N × 128 rows in clusters of 4 at 128×11008)
      step("tile_128x96_1x2", forced_tile<Clustered<Tile128x96Cfg, 1, 2>>(max_blocks), tile_shapes_rejects),
      step("tile_128x96_1x4", forced_tile<Clustered<Tile128x96Cfg, 1, 4>>(max_blocks), tile_shapes_rejects),
      step("tile_64x96_1x2", forced_tile<Clustered<Tile64x96Cfg, 1, 2>>(max_blocks), tile_shapes_rejects),
      // ... against M = 128's DRAM rate (66-70% of its peak, cuBLAS's 75-77%): 128×96 with 7 stages and one
      // C buffer a consumer (cuBLAS keeps 7), and 128×96, 128×128 and 64×96 in K steps of 128 (each B row's
      // 256 bytes asked of DRAM at once)
      step("tile_128x96_s7", forced_tile<Tile128x96S7Cfg>(max_blocks), tile_shapes_rejects),
      step("tile_128x96_k128", forced_tile<Tile128x96K128Cfg>(max_blocks), tile_shapes_rejects),
      step("tile_128x128_k128", forced_tile<Tile128x128K128Cfg>(max_blocks), tile_shapes_rejects),
      step("tile_64x96_k128", forced_tile<Tile64x96K128Cfg>(max_blocks), tile_shapes_rejects),
      // step 12's tiles (decode at 33 <= M <= 64 in one round, K whole; here forced: every_shape takes
      // 64×48 where its round outnumbers swap_ab's units, 64×32 never won), and 64×32 in clusters of 2
      // along N that multicast A (cuBLAS's nvjet 64x32 at 64×4096×4096, clusters of 2: each tile reads
      // half of A from the L2; slower still)
      step("tile_64x32", forced_tile<Tile64x32Cfg>(max_blocks), tile_shapes_rejects),
      step("tile_64x48", forced_tile<Tile64x48Cfg>(max_blocks), tile_shapes_rejects),
      step("tile_64x32_1x2", forced_tile<Clustered<Tile64x32Cfg, 1, 2>>(max_blocks), tile_shapes_rejects),
      // cuBLAS's tile at 128×4096×4096: 64×64 with K whole, 13 stages, alone and in clusters of 2 along M
      // (the column's two tiles share B, multicast), where every_shape splits K of 128×64 tiles in two
      step("tile_64x64", forced_tile<Tile64x64Cfg>(max_blocks), tile_shapes_rejects),
      step("tile_64x64_2x1", forced_tile<Clustered<Tile64x64Cfg, 2, 1>>(max_blocks), tile_shapes_rejects),
      // ... and 64×128 (every_shape's tile at 64×10240×8192) in clusters of 2 and 4 along N, A multicast:
      // cuBLAS's kernel there runs clusters of 4 and reads a quarter of our L2 sectors of A (What is left)
      step("tile_64x128_1x2", forced_tile<Clustered<Tile64x128Cfg, 1, 2>>(max_blocks), tile_shapes_rejects),
      step("tile_64x128_1x4", forced_tile<Clustered<Tile64x128Cfg, 1, 4>>(max_blocks), tile_shapes_rejects),
      // stream_k with 128×128 tiles (twice the tiles, half the partial sum per block)
      step("stream_k_128x128", on_grid(prepare_stream_k_with<Tile128x128Cfg>, max_blocks), stream_k_rejects),
      // stream_k with 128×192 tiles (every_shape's tile at M = 512 against wide weights, 1.6-1.8 rounds)
      step("stream_k_128x192", on_grid(prepare_stream_k_with<Tile128x192Cfg>, max_blocks), stream_k_rejects),
      // tile_shapes' tiles in clusters of two (Clustered: the cluster's blocks multicast the operand they
      // share; 2x1 shares B between two tiles of a column, 1x2 A between two of a row), as cuBLAS runs
      // its large tiles (nvjet_..._2x1_...)
      step("tile_128x256_2x1", forced_tile<Clustered<Tile128x256Cfg, 2, 1>>(max_blocks), tile_shapes_rejects),
      step("tile_128x192_2x1", forced_tile<Clustered<Tile128x192Cfg, 2, 1>>(max_blocks), tile_shapes_rejects),
      step("tile_64x128_2x1", forced_tile<Clustered<Tile64x128Cfg, 2, 1>>(max_blocks), tile_shapes_rejects),
      // ... and 128×64, as few flops a byte as 64×128 but two consumer warpgroups: which of the two sets a
      // cluster's cost (64×128 loses 29% in clusters of 2 at 3072³, 128×192 1%)?
      step("tile_128x64_2x1", forced_tile<Clustered<Tile128x64Cfg, 2, 1>>(max_blocks), tile_shapes_rejects),
      // ... and in clusters of 2×2 (A multicast along N and B along M: each block asks the L2 for half of
      // its rows of each), for rows whose pitch straddles 128-byte lines (1000³, 3000³ in place)
      step("tile_64x128_2x2", forced_tile<Clustered<Tile64x128Cfg, 2, 2>>(max_blocks), tile_shapes_rejects),
      step("tile_128x128_2x2", forced_tile<Clustered<Tile128x128Cfg, 2, 2>>(max_blocks), tile_shapes_rejects),
      step("tile_128x192_2x2", forced_tile<Clustered<Tile128x192Cfg, 2, 2>>(max_blocks), tile_shapes_rejects),
      // ... and the tile cuBLAS runs at 3000³: 192×192, three consumer warpgroups, alone and in clusters of 2
      step("tile_192x192", forced_tile<Tile192x192Cfg>(max_blocks), tile_shapes_rejects),
      step("tile_192x192_2x1", forced_tile<Tile192x192Cluster>(max_blocks), tile_shapes_rejects),
      // the same clusters on any_shape's whole-tile kernel, nothing staged (RRR: B MN-major, read in place)
      // (RRR's MN-major B comes in boxes of 64 columns: 128×192's three would not divide among 2 blocks)
      step("any_128x256_2x1", on_grid(unstaged_tile<Clustered<Tile128x256Cfg, 2, 1>>, max_blocks), unstaged_rejects),
      step("any_128x192", on_grid(unstaged_tile<Tile128x192Cfg>, max_blocks), unstaged_rejects),
      step("any_128x128", on_grid(unstaged_tile<Tile128x128Cfg>, max_blocks), unstaged_rejects),
      // ping_pong.cuh: each consumer warpgroup its own tile, one's epilogue under the other's main loop
      // (CUTLASS's ping-pong kernel): 128×128 per consumer, and 64×256 (tile_shapes' wgmma)
      step("ping_pong", on_grid(prepare_ping_pong<>, max_blocks), tile_shapes_rejects),
      step("ping_pong_64x256", on_grid(prepare_ping_pong_with<PingPong64x256Cfg>, max_blocks), tile_shapes_rejects),
      // swap_ab's decode variants with the 16-wide tile at any M <= 64: K steps of 64 (the 16-wide tile
      // before K steps of 128 were measured better); tiles of 64 rows of N
      step("swap_ab_bk64", on_grid([](const GemmProblem& p, const bf16* a, const bf16* b, bf16* c, int blocks) {
             return prepare_swap_ab_with<SwapAB16Cfg>(p, a, b, c, 0, blocks);
           }, max_blocks), swap_ab_rejects),
      step("swap_ab_rows64", on_grid([](const GemmProblem& p, const bf16* a, const bf16* b, bf16* c, int blocks) {
             return prepare_swap_ab_with<SwapAB16Rows64Cfg>(p, a, b, c, 0, blocks);
           }, max_blocks), swap_ab_rejects),
      // aligned_rows.cuh: A and B copied into 128-byte-aligned rows first, at any K (every_shape copies
      // only when K % 16 != 0 and the problem is big enough: copies_to_aligned_rows)
      step("aligned_rows", on_grid(prepare_aligned_rows<>, max_blocks), tile_shapes_rejects),
      step("swap_ab_rows64_32", on_grid([](const GemmProblem& p, const bf16* a, const bf16* b, bf16* c, int blocks) {
             return prepare_swap_ab_with<SwapAB32Rows64Cfg>(p, a, b, c, 0, blocks);
           }, max_blocks), swap_ab_rejects),
      step("swap_ab_rows64_64", on_grid([](const GemmProblem& p, const bf16* a, const bf16* b, bf16* c, int blocks) {
             return prepare_swap_ab_with<SwapAB64Rows64Cfg>(p, a, b, c, 0, blocks);
           }, max_blocks), swap_ab_rejects),
      // swap_ab's tile with K cut into 1, 2 or 3 slices whatever choose_swap_splits says: does a round of
      // fewer units than SMs stream B as fast as the slices? (Its model said they stream at units / SMs
      // until the measurement of these steps.)
      step("swap_ab_x1", on_grid(forced_swap_slices(1), max_blocks), swap_ab_rejects),
      step("swap_ab_x2", on_grid(forced_swap_slices(2), max_blocks), swap_ab_rejects),
      step("swap_ab_x3", on_grid(forced_swap_slices(3), max_blocks), swap_ab_rejects),
      // any_shape.cuh's staged path at any M (every_shape reads B in place at M <= 8 in RRR, 16 in RCR: ragged_decode)
      step("any_shape_staged", on_grid([](const GemmProblem& p, const bf16* a, const bf16* b, bf16* c, int blocks) {
             return prepare_any_shape(p, a, b, c, blocks);
           }, max_blocks), any_shape_rejects),
      // ragged_decode's first form (session s): SIMT kernels, fp32 FMAs in both orders, 2-byte loads in RRR
      step("ragged_decode_simt", prepare_ragged_decode_simt<>, ragged_decode_rejects),
      // ragged_decode's second form (session t): RRR in 4-byte words (at every shape), RCR on mma.sync
      step("ragged_decode_second", prepare_ragged_decode_second<>, ragged_decode_rejects),
      // narrow_tiles.cuh: 64-row tiles whose N is cut to one round of the SMs (decode unswapped, small problems)
      step("narrow_tiles", on_grid(prepare_narrow_tiles<>, max_blocks), narrow_tiles_rejects),
      // split_k.cuh's first form: the slices added by a second kernel (split_k_second_kernel.cuh)
      step("split_k_second_kernel", on_grid(prepare_split_k_second_kernel<>, max_blocks), split_k_rejects),
#endif
  };
}

GemmKernel<bf16, bf16> best() { return kernel_named(steps(), "every_shape", "ch11_every_shape"); }

PreparedGemm ragged_decode_form(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, RaggedForm form) {
  return prepare_ragged_decode_form(p, A, B, C, form);
}

}  // namespace mm::ch11
