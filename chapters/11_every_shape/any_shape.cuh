// Chapter 11, every_shape's last case (step 6): any M, N, K >= 1, in both storage orders (RCR and
// RRR), from any pointer a bf16 may start at. What the chapter's other kernels refuse, and why:
//
//   TMA reads a row pitch that is a multiple of 16 bytes   A (K elements a row), and B's rows: K in
//   from an address on a 16-byte boundary                   RCR (B stored N×K), N in RRR (B stored K×N)
//   TMA stores such rows too                               C (N elements a row)
//
// Each rule has its own way round, and the path takes only those it needs:
//
//   staged A / staged B  the operand copied into rows of round_up(·, 64) elements (128-byte lines) in
//                        a workspace, by copy_rows below: one pass over it, 2 bytes read and written
//                        per element; TMA then reads the copy (its map ends at K or N: past the end
//                        TMA fills zeros, so the padding is never read)
//   C strided            C stored by the consumers' registers, one bf16 at a time (the epilogue
//                        swap_ab already has, CollectiveEpilogueStrided), not by TMA: any pitch, any
//                        address
//   B MN-major           RRR: B's rows are N values long, so TMA loads B's tiles N-contiguous and wgmma
//                        reads them transposed (chapter 10's RRR, GmmaMajor::MN); for M <= 64 the
//                        swapped kernel reads B as its MN-major first operand
//
// The kernels are split_k's (the tile of choose_tile_shape, K split by choose_splits), tile_shapes'
// (K whole, C by TMA) and swap_ab's (M <= 64), composed with the blocks above: the main loop with B's
// major-ness, and the epilogue. Nothing else changes. Where nothing is staged and TMA stores C (RRR
// with N and K multiples of 8), every_shape's one-consumer rules (every_shape.hpp: wide_decode,
// mid_decode, one_consumer) hold as in RCR, and tile_shapes' kernel runs the 64×256 or 64×128 tile
// with B MN-major.
//
// Build: cmake --build build --target ch11_every_shape
// Run:   build/bin/ch11_every_shape --kernel every_shape --layout RRR --sizes 4095x4095x4095
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "11_every_shape/aligned_rows.cuh"
#include "11_every_shape/swap_ab.cuh"
#include "gemm/workspace.hpp"  // zero_workspace

namespace mm::ch11 {

namespace detail {
/// The 8 bf16 values that start `Shift` values into the 16 bytes `lo` (and continue into `hi`, the
/// next 16 bytes of memory): words taken whole for an even shift, two halves each for an odd one.
template <int Shift>
__device__ uint4 shifted_chunk(uint4 lo, uint4 hi) {
  const std::uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  std::uint32_t r[4];
  MM_UNROLL
  for (int i = 0; i < 4; ++i)
    r[i] = Shift % 2 == 0 ? w[Shift / 2 + i] : __funnelshift_r(w[Shift / 2 + i], w[Shift / 2 + i + 1], 16);
  return make_uint4(r[0], r[1], r[2], r[3]);
}

/// A warp's 16-byte chunks j in [begin, end) of a row whose source starts `Shift` values past the
/// 16-byte chunk `aligned`: chunk j from aligned chunks j and j + 1 (j alone for Shift 0). A lane has
/// kBatch chunks in flight (j = base + lane + 32u, the loads predicated, no remainder loop), and takes
/// chunk j + 1 from its neighbour's registers (a shuffle) instead of loading it again: one load per
/// chunk, two batches for a row of 4,096 values (step 11).
template <int Shift>
__device__ void copy_shifted_chunks(const uint4* __restrict__ aligned, uint4* __restrict__ to, std::int64_t begin,
                                    std::int64_t end, int lane) {
  constexpr int kBatch = 8;
  // For Shift > 0 aligned chunk `end` is read too (chunk end - 1's second half): inside the row, as
  // copy_rows' `fast` bound guarantees.
  const std::int64_t last = Shift == 0 ? end : end + 1;
  for (std::int64_t base = begin; base < end; base += 32 * kBatch) {  // the same for the whole warp
    // The batch's chunks as 32-bit offsets from its first: fewer registers than kBatch 64-bit indices.
    const int loads = int(std::min<std::int64_t>(last - base, 32 * kBatch + 1));  // chunks base .. base + loads - 1
    const int stores = int(std::min<std::int64_t>(end - base, 32 * kBatch));
    const uint4* from = aligned + base;
    uint4 lo[kBatch + 1];
    MM_UNROLL
    for (int u = 0; u < kBatch; ++u) lo[u] = lane + 32 * u < loads ? __ldg(from + lane + 32 * u) : uint4{};
    // Lane 31's chunk after the batch's last slot: the next batch's first chunk, loaded by it alone.
    lo[kBatch] = Shift != 0 && lane == 31 && 32 * kBatch < loads ? __ldg(from + 32 * kBatch) : uint4{};
    uint4* dest = to + base;
    MM_UNROLL
    for (int u = 0; u < kBatch; ++u) {
      uint4 hi{};
      if constexpr (Shift != 0) {
        // Lane l reads lane l + 1's chunk of slot u; lane 31 reads lane 0's of slot u + 1 (lane 0 offers it).
        const uint4 offer = lane == 0 ? lo[u + 1] : lo[u];
        const int next = (lane + 1) % 32;
        hi = make_uint4(__shfl_sync(0xffffffffu, offer.x, next), __shfl_sync(0xffffffffu, offer.y, next),
                        __shfl_sync(0xffffffffu, offer.z, next), __shfl_sync(0xffffffffu, offer.w, next));
        if (lane == 31 && u == kBatch - 1) hi = lo[kBatch];
      }
      if (lane + 32 * u < stores) dest[lane + 32 * u] = shifted_chunk<Shift>(lo[u], hi);
    }
  }
}
}  // namespace detail

/// One matrix copy_rows copies: rows × cols bf16, rows `ld_in` elements apart from any 2-byte aligned
/// `in`, into `out` (16-byte aligned), rows `ld_out` apart (a multiple of 8). rows 0: nothing.
template <class T>
struct RowsCopy {
  const T* in;
  T* out;
  std::int64_t rows, cols, ld_in, ld_out;
  /// 16-byte chunks of a copied row that hold values.
  MM_HD std::int64_t chunks() const { return (cols + 7) / 8; }
  /// Rows from which a warp copies a whole row.
  static constexpr std::int64_t kWholeRows = 1024;
  /// Chunks of a piece below kWholeRows rows: 4 per lane of a warp (half of copy_shifted_chunks' batch).
  static constexpr std::int64_t kPieceChunks = 128;
  /// Chunks a warp copies at a time: the whole row where there are rows enough (a warp streams its
  /// row), else kPieceChunks, so that a few long rows (A's, at decode) still keep many warps busy.
  /// Measured (profiles/session_2026-11-30q.txt, calls 4-5): a warp a row copied B's 4096 rows in
  /// 19 us where pieces took 29; pieces copied A's 16 rows in the same launch as B where a warp a row
  /// took 6-10 us on its own.
  MM_HD std::int64_t piece() const { return rows >= kWholeRows ? chunks() : kPieceChunks; }
  /// A warp's pieces of the copy.
  MM_HD std::int64_t pieces() const { return rows * ((chunks() + piece() - 1) / piece()); }
};

/// Copies two matrices (`first`, then `second`: A and B, either may have no rows) into staged rows, in
/// one launch: a warp a piece of a row at a time (RowsCopy::piece), 16 bytes a lane.
/// A source row starts anywhere, `o` values past a 16-byte boundary (the same for the whole warp):
/// each lane loads one aligned 16-byte chunk of the source, takes the next from its neighbour (a
/// shuffle), and shifts the two by `o` into its 8 values, eight chunks' loads in flight; where an
/// aligned chunk would reach outside the row (before its start when o > 0, past its end), it reads a
/// value at a time, so that nothing outside the matrix is read. The last chunk of a row is padded with
/// zeros. (A template only so that the header can be included by several files.)
template <class T = bf16>
__global__ void copy_rows(RowsCopy<T> first, RowsCopy<T> second) {
  static_assert(sizeof(T) == 2, "bf16 rows: 8 values a 16-byte chunk");
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  const int lane = int(threadIdx.x % 32);
  const std::int64_t first_pieces = first.pieces(), all = first_pieces + second.pieces();
  for (std::int64_t w = std::int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; w < all; w += warps) {
    const bool in_first = w < first_pieces;
    const RowsCopy<T>& m = in_first ? first : second;
    const std::int64_t piece = in_first ? w : w - first_pieces;
    const std::int64_t size = m.piece(), per_row = (m.chunks() + size - 1) / size;
    const std::int64_t r = piece / per_row, begin = piece % per_row * size;
    const std::int64_t end = begin + size < m.chunks() ? begin + size : m.chunks();
    const T* from = m.in + r * m.ld_in;
    uint4* to = reinterpret_cast<uint4*>(m.out + r * m.ld_out);
    const auto address = reinterpret_cast<std::uintptr_t>(from);
    const int o = int(address % 16 / 2);  // values between the 16-byte boundary and the row's start
    const uint4* aligned = reinterpret_cast<const uint4*>(address - 2 * std::uintptr_t(o));
    // Chunk j's values are from[8j .. 8j+7]: aligned chunks j and j+1 (j alone when o == 0), which
    // lie inside the row for j from 1 (0 when o == 0) while 8j + 16 - o <= cols (8j + 8 <= cols).
    const std::int64_t head = o == 0 ? 0 : 1;
    const std::int64_t fast = std::max(head, o == 0 ? m.cols / 8 : (m.cols + o >= 16 ? (m.cols + o - 16) / 8 + 1 : 0));
    const std::int64_t fast_begin = std::max(begin, head), fast_end = std::min(end, fast);
    switch (o) {  // the same for the whole warp
      case 0: detail::copy_shifted_chunks<0>(aligned, to, fast_begin, fast_end, lane); break;
      case 1: detail::copy_shifted_chunks<1>(aligned, to, fast_begin, fast_end, lane); break;
      case 2: detail::copy_shifted_chunks<2>(aligned, to, fast_begin, fast_end, lane); break;
      case 3: detail::copy_shifted_chunks<3>(aligned, to, fast_begin, fast_end, lane); break;
      case 4: detail::copy_shifted_chunks<4>(aligned, to, fast_begin, fast_end, lane); break;
      case 5: detail::copy_shifted_chunks<5>(aligned, to, fast_begin, fast_end, lane); break;
      case 6: detail::copy_shifted_chunks<6>(aligned, to, fast_begin, fast_end, lane); break;
      default: detail::copy_shifted_chunks<7>(aligned, to, fast_begin, fast_end, lane); break;
    }
    // The chunks at the row's ends (the first when o > 0, those from `fast` on): a value at a time.
    auto by_values = [&](std::int64_t j) {
      T values[8];
      MM_UNROLL
      for (int i = 0; i < 8; ++i) values[i] = 8 * j + i < m.cols ? from[8 * j + i] : T(0.0f);
      to[j] = *reinterpret_cast<const uint4*>(values);
    };
    if (begin == 0 && head == 1 && lane == 0) by_values(0);
    for (std::int64_t j = std::max(begin, fast) + lane; j < end; j += 32) by_values(j);
  }
}

/// Elements of a staged row: `cols` rounded up to 64 (128 bytes of bf16, one L2 line).
inline std::int64_t staged_pitch(std::int64_t cols) { return (cols + 63) / 64 * 64; }

/// True when TMA can read or write rows of `cols` bf16 values, `cols` apart, starting at `ptr`.
inline bool tma_rows_ok(std::int64_t cols, const void* ptr) {
  return cols % 8 == 0 && reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0;
}

/// What the any-shape path does for a problem and its pointers (data: the tests check the choice).
struct AnyShapePlan {
  bool stage_a;     ///< A copied into 128-byte rows first
  bool stage_b;     ///< B copied into 128-byte rows first
  bool c_strided;   ///< C stored by the registers (CollectiveEpilogueStrided), not by TMA
  bool b_mn_major;  ///< RRR: B's tiles N-contiguous (wgmma's transposed read)
};

/// The plan for `p` (RCR or RRR) with A, B and C at the given addresses: an operand is staged when
/// TMA cannot read it, or when its rows miss 32-byte sectors and the copy pays (aligned_rows.cuh's
/// model, which RCR's K % 8 == 0 problems take on the chapter's kernels: 3000³ in RRR here).
inline AnyShapePlan plan_any_shape(const GemmProblem& p, const void* A, const void* B, const void* C) {
  const bool rrr = p.b == Order::row;
  const std::int64_t b_cols = rrr ? p.n : p.k;
  const bool pays = copies_to_aligned_rows(p);  // K % 16 != 0 and the problem is big enough
  GemmProblem by_n = p;  // RRR's B: rows of N values, the same rule with N in K's place
  by_n.k = p.n;
  const bool b_pays = rrr ? copies_to_aligned_rows(by_n) : pays;
  return {!tma_rows_ok(p.k, A) || pays, !tma_rows_ok(b_cols, B) || b_pays, !tma_rows_ok(p.n, C), rrr};
}

/// Throws std::invalid_argument when an operand does not start on a bf16's 2-byte boundary (what no
/// path can read), before anything asks the GPU.
inline void check_bf16_pointers(const void* A, const void* B, const void* C) {
  for (const void* ptr : {A, B, C})
    if (reinterpret_cast<std::uintptr_t>(ptr) % alignof(bf16) != 0)
      throw std::invalid_argument("every_shape: an operand starts at an odd address: bf16 values are 2-byte aligned");
}

/// The any-shape path's rule: RCR or RRR, M, N and K from 1 to below 2^31.
inline std::string any_shape_rejects(const GemmProblem& p) {
  if (p.a != Order::row || p.c != Order::row) return "takes a row-major A and C (RCR and RRR)";
  if (p.m < 1 || p.n < 1 || p.k < 1) return "needs M, N and K >= 1";
  if (std::string why = launch::int32_index_rejects(p.m, p.n, 128, 256); !why.empty()) return why;
  if (p.k > launch::int32_max) return "needs K below 2^31 (TMA coordinates are 32-bit)";
  return {};
}

/// The kernel of a tile `Cfg` with B of major-ness `MajorB` and the epilogue `Epilogue` (C by TMA or
/// by the registers), K split or not: split_k's kernel with two of its blocks given.
template <class Cfg, GmmaMajor MajorB, class Epilogue>
using AnyShapeKernel =
    GemmKernelCooperative<Cfg, CollectiveMma<Cfg, bf16, GmmaMajor::K, MajorB>, Epilogue, SplitKScheduler<Cfg::BN::value / 2>>;

/// swap_ab's kernel with its first operand (B's rows of N) of major-ness `MajorX`: MN for RRR.
template <class Cfg, GmmaMajor MajorX>
using AnySwapKernel = GemmKernelCooperative<Cfg, CollectiveMma<Cfg, bf16, MajorX, GmmaMajor::K>,
                                            CollectiveEpilogueStrided<Cfg, bf16>, SplitKScheduler<Cfg::BN::value / 2>>;

/// The M, N and K the main loop's tensor maps describe (the problem's, but for a staged operand of one
/// row: prepare_any_shape).
struct Extents {
  std::int64_t m, n, k;
};

namespace detail {
/// Where the kernel reads an operand: the caller's pointer and pitch, or the staged copy's.
struct Operand {
  const bf16* ptr;
  std::int64_t ld;
};

/// The adapter of `Kernel` (a tile kernel: A M×K, B N×K of the kernel's major-ness) with C's
/// epilogue arguments given.
template <class Kernel>
PreparedGemm prepare_any_tile_kernel(Extents maps, Operand a, Operand b, typename Kernel::Epilogue::Params epilogue,
                                     const SplitKTileScheduler& units, int max_blocks, const std::string& path) {
  typename GemmAdapter<Kernel>::Arguments args{};
  args.mainloop = Kernel::Mainloop::to_underlying_arguments(a.ptr, b.ptr, int(maps.m), int(maps.n), int(maps.k), a.ld, b.ld,
                                                            l2_promotion_for(maps.m));
  args.epilogue = epilogue;
  args.scheduler = Kernel::Scheduler::to_underlying_arguments(units);
  args.max_blocks = max_blocks;
  GemmAdapter<Kernel> gemm;
  gemm.initialize(args);
  return gemm.prepared(path);
}

/// tile_shapes' kernel of `Cfg` with B of major-ness `MajorB`: whole tiles (K whole, the persistent
/// scheduler), C by TMA.
template <class Cfg, GmmaMajor MajorB>
PreparedGemm prepare_any_whole_tiles(const GemmProblem& p, Extents maps, Operand a, Operand b, bf16* C, int max_blocks) {
  using Kernel = TileKernel<Cfg, PersistentTileScheduler, MajorB>;
  typename GemmAdapter<Kernel>::Arguments args{};
  args.mainloop = Kernel::Mainloop::to_underlying_arguments(a.ptr, b.ptr, int(maps.m), int(maps.n), int(maps.k), a.ld, b.ld,
                                                            l2_promotion_for(maps.m));
  args.epilogue = Kernel::Epilogue::to_underlying_arguments(C, int(p.m), int(p.n), int(p.n));
  args.scheduler = whole_tiles<Cfg>(p);
  args.max_blocks = max_blocks;
  GemmAdapter<Kernel> gemm;
  gemm.initialize(args);
  return gemm.prepared("tile_shapes " + tile_name<Cfg>());
}

/// The tile kernel (M > 64) of `Cfg` for the plan: A M×K K-major, B N×K K- or MN-major, C M×N by
/// TMA or by the registers; split_k's kernel when K is split or C is stored by the registers, else
/// tile_shapes'.
template <class Cfg, GmmaMajor MajorB>
PreparedGemm prepare_any_tile(const GemmProblem& p, Extents maps, Operand a, Operand b, bf16* C, bool c_strided, int max_blocks) {
  const GroupedTileScheduler tiles = tile_order<Cfg>(p);
  const int k_steps = k_steps_of<Cfg>(p);
  const SplitKTileScheduler units =
      SplitKTileScheduler::make(tiles, k_steps, choose_splits(tiles.size(), k_steps, device_sm_count()));
  // K whole and C by TMA: tile_shapes' kernel (the persistent scheduler, a few percent ahead of split_k's
  // with one slice on short problems: the page's step 6).
  if (units.splits == 1 && !c_strided) return prepare_any_whole_tiles<Cfg, MajorB>(p, maps, a, b, C, max_blocks);
  const std::string path = "split_k " + tile_name<Cfg>() + " x" + std::to_string(units.splits) + (c_strided ? " C strided" : "");
  if (c_strided) {
    using Kernel = AnyShapeKernel<Cfg, MajorB, CollectiveEpilogueStrided<Cfg, bf16>>;
    return prepare_any_tile_kernel<Kernel>(maps, a, b, Kernel::Epilogue::to_underlying_arguments(C, int(p.m), int(p.n), p.n, 1),
                                           units, max_blocks, path);
  }
  using Kernel = AnyShapeKernel<Cfg, MajorB, CollectiveEpilogueTma<Cfg, bf16>>;
  return prepare_any_tile_kernel<Kernel>(maps, a, b, Kernel::Epilogue::to_underlying_arguments(C, int(p.m), int(p.n), int(p.n)),
                                         units, max_blocks, path);
}

/// The swapped kernel (M <= 64) of `Cfg`: X = B (N×K, K- or MN-major), Y = A, Cᵀ stored transposed.
template <class Cfg, GmmaMajor MajorX>
PreparedGemm prepare_any_swap(const GemmProblem& p, Extents maps, Operand a, Operand b, bf16* C, int max_blocks) {
  using Kernel = AnySwapKernel<Cfg, MajorX>;
  const int m = int(p.m), n = int(p.n);
  const SwapPlan plan = plan_swap<Cfg>(p, device_sm_count());
  const GroupedTileScheduler tiles{int(launch::ceil_div(n, Cfg::BM::value)), int(launch::ceil_div(m, Cfg::BN::value)),
                                   Cfg::kGroupM};
  const SplitKTileScheduler units = SplitKTileScheduler::make(tiles, plan.k_steps, plan.splits);
  typename GemmAdapter<Kernel>::Arguments args{};
  args.mainloop = Kernel::Mainloop::to_underlying_arguments(b.ptr, a.ptr, int(maps.n), int(maps.m), int(maps.k), b.ld, a.ld,
                                                            l2_promotion_for(p.m));
  args.epilogue = Kernel::Epilogue::to_underlying_arguments(C, n, m, 1, p.n);  // (r, q) at C[q·N + r]
  args.scheduler = Kernel::Scheduler::to_underlying_arguments(units);
  args.max_blocks = max_blocks;
  GemmAdapter<Kernel> gemm;
  gemm.initialize(args);
  return gemm.prepared("swap_ab " + tile_name<Cfg>() + " x" + std::to_string(units.splits));
}
}  // namespace detail

/// The any-shape path: stage what TMA cannot read, store C by the registers where TMA cannot write
/// it, multiply with choose_tile_shape's tile (M > 64: split_k's kernel, or tile_shapes' where K is
/// whole and TMA stores C) or swap_ab's (M <= 64), B K- or MN-major; or, where every_shape's choice
/// names one (`tile`: RRR with nothing staged and C by TMA), tile_shapes' kernel on that tile, K whole:
/// 64×128 or 64×256 with one consumer, or step 9's 128×160 and 128×176 with B's panels whole. The
/// staging workspace is allocated here, once per problem, and each launch copies, then multiplies (one
/// stream). Throws std::invalid_argument for
/// a problem it refuses (any_shape_rejects), a pointer not 2-byte aligned, or a tile the plan cannot
/// take.
template <class = void>  // compiled where it is called, not where its header is included (step_rules.hpp)
PreparedGemm prepare_any_shape(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, int max_blocks = 0,
                               TileDims tile = {0, 0}) {
  if (std::string why = any_shape_rejects(p); !why.empty()) throw std::invalid_argument("every_shape: " + why);
  check_bf16_pointers(A, B, C);
  const AnyShapePlan plan = plan_any_shape(p, A, B, C);
  const bool rrr = plan.b_mn_major;
  // A tile every_shape names: K whole, tile_shapes' kernel, nothing staged and C stored by TMA; step 9's
  // tiles in RRR only (what every_shape sends here with nothing staged is RRR: step 13).
  const int fill_index = fill_tile_index(tile.bm, tile.bn);
  const bool one_consumer_tile = tile.bm == 64 && (tile.bn == 128 || tile.bn == 256);
  if (tile.bm != 0 &&
      (!(one_consumer_tile || (fill_index >= 0 && rrr)) || plan.stage_a || plan.stage_b || plan.c_strided))
    throw std::invalid_argument("every_shape: a " + std::to_string(tile.bm) + "x" + std::to_string(tile.bn) +
                                " tile needs 64x128 or 64x256 (or in RRR 128x160 or 128x176), nothing staged"
                                " and C stored by TMA");
  // B as the kernels see it: rows × cols of storage (RCR: N×K; RRR: K×N).
  const std::int64_t b_rows = rrr ? p.k : p.n, b_cols = rrr ? p.n : p.k;
  const std::int64_t a_pitch = plan.stage_a ? staged_pitch(p.k) : p.k, b_pitch = plan.stage_b ? staged_pitch(b_cols) : b_cols;
  // The extents the tensor maps describe. The driver refuses a map of one row whose pitch is wider
  // than the row (cuTensorMapEncodeTiled, CUDA_ERROR_INVALID_VALUE, measured): a staged operand of one
  // row gets a second row of zeros (the buffer is zeroed once), a row of C that is never stored (A's
  // M, B's N in RCR) or a k that adds 0 (B's K in RRR; K = 1, so A is staged too and its second
  // column is zero as well).
  Extents maps{p.m, p.n, p.k};
  if (plan.stage_a && p.m == 1) maps.m = 2;
  if (plan.stage_b && b_rows == 1) (rrr ? maps.k : maps.n) = 2;
  const std::int64_t a_rows = maps.m, b_rows_staged = rrr ? maps.k : maps.n;
  const std::size_t staged = std::size_t(plan.stage_a ? a_rows * a_pitch : 0) + std::size_t(plan.stage_b ? b_rows_staged * b_pitch : 0);
  std::shared_ptr<void> owner;
  if (staged > 0) {
    void* buffer = nullptr;
    if (cudaError_t e = cudaMalloc(&buffer, staged * sizeof(bf16)); e != cudaSuccess)
      throw std::runtime_error(std::string("every_shape: cannot allocate the staged operands: ") + cudaGetErrorString(e));
    owner.reset(buffer, [](void* q) { cudaFree(q); });
    // The padding rows and columns, zero before this returns: a staging copy on the caller's stream,
    // whichever it is, must never be overwritten by these zeros (gemm/workspace.hpp).
    zero_workspace(buffer, staged * sizeof(bf16));
  }
  bf16* a_copy = plan.stage_a ? static_cast<bf16*>(owner.get()) : nullptr;
  bf16* b_copy = plan.stage_b ? static_cast<bf16*>(owner.get()) + (plan.stage_a ? a_rows * a_pitch : 0) : nullptr;
  const detail::Operand a{plan.stage_a ? a_copy : A, a_pitch}, b{plan.stage_b ? b_copy : B, b_pitch};

  const int sms = device_sm_count();
  PreparedGemm gemm;
  auto whole_k_one_consumer = [&](auto cfg) {
    using Cfg = decltype(cfg);
    return rrr ? detail::prepare_any_whole_tiles<Cfg, GmmaMajor::MN>(p, maps, a, b, C, max_blocks)
               : detail::prepare_any_whole_tiles<Cfg, GmmaMajor::K>(p, maps, a, b, C, max_blocks);
  };
  auto whole_k_mn = [&](auto cfg) {  // step 9's tiles: RRR only
    return detail::prepare_any_whole_tiles<decltype(cfg), GmmaMajor::MN>(p, maps, a, b, C, max_blocks);
  };
  if (one_consumer_tile && tile.bn == 256) {
    gemm = whole_k_one_consumer(Tile64x256Cfg{});
  } else if (one_consumer_tile) {
    gemm = whole_k_one_consumer(Tile64x128Cfg{});
  } else if (fill_index >= 0) {  // RRR: B MN-major, its panels whole (collective_mma_sm90.hpp's RingExtent)
    gemm = with_fill_tile_s4(fill_index, whole_k_mn);  // 4 stages: B's whole panels leave no room for a fifth
  } else if (p.m <= kSwapMaxM) {
    gemm = with_swap_tile(p, sms, [&](auto cfg) {
      using Cfg = decltype(cfg);
      return rrr ? detail::prepare_any_swap<Cfg, GmmaMajor::MN>(p, maps, a, b, C, max_blocks)
                 : detail::prepare_any_swap<Cfg, GmmaMajor::K>(p, maps, a, b, C, max_blocks);
    });
  } else {
    GemmProblem aligned = p;  // the tile model as if the rows were 128-byte aligned where they are staged
    if (plan.stage_a) aligned.k = a_pitch;
    gemm = with_tile_shape(choose_tile_shape(aligned, sms), [&](auto cfg) {
      using Cfg = decltype(cfg);
      return rrr ? detail::prepare_any_tile<Cfg, GmmaMajor::MN>(p, maps, a, b, C, plan.c_strided, max_blocks)
                 : detail::prepare_any_tile<Cfg, GmmaMajor::K>(p, maps, a, b, C, plan.c_strided, max_blocks);
    });
  }
  // copy_rows takes 96 registers a thread (its batch of 8 chunks): blocks of 4 warps, 5 of them an SM,
  // where blocks of 8 fit twice (20 warps an SM against 16).
  const int blocks = 16 * sms, threads = 128;
  const RowsCopy<bf16> copy_a{A, a_copy, plan.stage_a ? p.m : 0, p.k, p.k, a_pitch};
  const RowsCopy<bf16> copy_b{B, b_copy, plan.stage_b ? b_rows : 0, b_cols, b_cols, b_pitch};
  const std::int64_t pieces = copy_a.pieces() + copy_b.pieces();
  auto run = [=](cudaStream_t stream) {
    if (pieces > 0)  // A's rows and B's in one launch
      copy_rows<<<unsigned(std::min<std::int64_t>(blocks, launch::ceil_div(pieces, threads / 32))), threads, 0, stream>>>(copy_a, copy_b);
    gemm(stream);
    (void)owner;
  };
  std::string staging = plan.stage_a && plan.stage_b ? "stage A and B + " : plan.stage_a ? "stage A + " : plan.stage_b ? "stage B + " : "";
  return PreparedGemm(run, staging + gemm.path + (rrr ? " (B MN-major)" : ""));
}

}  // namespace mm::ch11
