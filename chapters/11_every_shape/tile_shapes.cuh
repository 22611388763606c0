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

#include "gemm/cluster_launch.hpp"
#include "gemm/epilogue_sm90.hpp"
#include "gemm/launch.hpp"
#include "gemm/pipeline.hpp"
#include "gemm/problem.hpp"
#include "gemm/smem.hpp"
#include "gemm/smem_layout_sm90.hpp"
#include "gemm/tile_scheduler.hpp"
#include "gemm/tma_operands.hpp"  // make_rcr_operand_copies
#include "gemm/warp_specialization.hpp"
#include "layout/all.hpp"
#include "layout/copy_traits_sm90_tma.hpp"
#include "layout/mbarrier.hpp"  // fence_proxy_async_shared
#include "layout/mma_sm90.hpp"

namespace mm::ch11 {

using bf16 = __nv_bfloat16;

/// The tile of chapter 10's best step: 128×256, K steps of 64, 4 stages, two consumer warpgroups.
struct Tile128x256Cfg {
  using BM = _128;                     ///< rows of C per tile: 64 per consumer warpgroup
  using BN = _256;                     ///< columns of C per tile: the wgmma's N
  using BK = _64;                      ///< K step: one 128-byte swizzle row of bf16
  static constexpr int kWgmmaM = 64;   ///< rows one wgmma (one consumer warpgroup) multiplies
  static constexpr int kStages = 4;    ///< stages in the ring (4 × 48 KB)
  static constexpr int kConsumers = 2; ///< consumer warpgroups
  static constexpr int kThreads = 128 * (1 + kConsumers);
  static constexpr int kGroupM = 16;   ///< rows of tiles the scheduler walks down before moving right
  static constexpr int kProducerRegs = 40;
  static constexpr int kConsumerRegs = 232;
  static constexpr int kPieceM = 64;   ///< rows of one piece of C in the epilogue
  static constexpr int kPieceN = 64;   ///< columns of one piece: one 128-byte swizzle row of bf16
  static constexpr int kCBuffers = 2;  ///< pieces in flight per consumer warpgroup
};
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

/// 64×256 with one consumer warpgroup, for every_shape's widest decode layers (M <= 64, N so wide that
/// its 256-column tiles alone nearly fill the GPU): one tile per SM streaming its 256 rows of B, and
/// not the 64 rows of zeros a 128-row tile would multiply; 5 stages of 40 KB.
struct Tile64x256Cfg : Tile128x256Cfg {
  using BM = _64;
  static constexpr int kConsumers = 1;
  static constexpr int kThreads = 128 * (1 + kConsumers);
  static constexpr int kStages = 5;
};

/// The block's shared memory: the two rings, the C pieces, the pipeline's barriers.
template <class Cfg>
struct SharedStorage {
  using RingA = GmmaRing<bf16, GmmaMajor::K, typename Cfg::BM, typename Cfg::BK, Cfg::kStages>;  ///< (BM,BK,S)
  using RingB = GmmaRing<bf16, GmmaMajor::K, typename Cfg::BN, typename Cfg::BK, Cfg::kStages>;  ///< (BN,BK,S)
  using Piece = decltype(tile_to_shape(GmmaLayoutK_SW128_Atom<bf16>{},
                                       make_shape(Int<Cfg::kPieceM>{}, Int<Cfg::kPieceN>{})));  ///< (64,64), N contiguous
  using Pipeline = PipelineTmaAsync<Cfg::kStages>;
  alignas(1024) bf16 a[cosize_v<RingA>];
  alignas(1024) bf16 b[cosize_v<RingB>];
  alignas(1024) bf16 c[Cfg::kConsumers][Cfg::kCBuffers][cosize_v<Piece>];
  typename Pipeline::SharedStorage pipeline;
};

/// What one launch needs; the TMA copies hold their tensor maps (`__grid_constant__`).
template <class Cfg>
struct Params {
  using Storage = SharedStorage<Cfg>;
  TmaCopy<SM90_TMA_LOAD_2D, bf16, GmmaStage<typename Storage::RingA>> tma_a;  ///< A's boxes into a stage
  TmaCopy<SM90_TMA_LOAD_2D, bf16, GmmaStage<typename Storage::RingB>> tma_b;  ///< B's boxes into a stage
  TmaCopy<SM90_TMA_STORE_2D, bf16, typename Storage::Piece> tma_c;            ///< a piece of C out
  int m, n, k;   ///< C is M×N, K the inner dimension
  int tiles_m;   ///< tiles along M
  int tiles_n;   ///< tiles along N
};

/// Chapter 10's tma_store kernel for a K-major B, any tile of the configuration. wgmma and
/// setmaxnreg need sm_90a: any other device pass compiles a stub which the harness never launches.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1) tile_shapes_kernel(const __grid_constant__ Params<Cfg> params) {
  if constexpr (!arch::compiled_for(arch::sm90a)) {
    arch::no_code_for_this_target();
  } else {
    using Storage = SharedStorage<Cfg>;
    using Pipeline = typename Storage::Pipeline;
    using BM = typename Cfg::BM;
    using BN = typename Cfg::BN;
    using BK = typename Cfg::BK;
    using Atom = SM90_64xNx16_F32BF16BF16_SS<BN::value, GmmaMajor::K, GmmaMajor::K>;
    extern __shared__ __align__(1024) std::uint8_t smem_raw[];
    Storage& shared = shared_storage<Storage>(smem_raw);
    auto sA = make_tensor(make_smem_ptr(shared.a), typename Storage::RingA{});  // (BM,BK,S)
    auto sB = make_tensor(make_smem_ptr(shared.b), typename Storage::RingB{});  // (BN,BK,S)

    const int wg = int(threadIdx.x) / 128, t = int(threadIdx.x) % 128;
    typename Pipeline::Params pipe_params;
    pipe_params.transaction_bytes = params.tma_a.kTransactionBytes + params.tma_b.kTransactionBytes;
    pipe_params.consumer_warpgroups = Cfg::kConsumers;
    pipe_params.is_leader = threadIdx.x == 0;
    Pipeline pipeline(shared.pipeline, pipe_params, int(threadIdx.x));
    if (threadIdx.x == 0) {
      params.tma_a.prefetch();
      params.tma_b.prefetch();
      params.tma_c.prefetch();
    }
    __syncthreads();  // the barriers are initialized before anyone uses them

    const GroupedTileScheduler tiles{params.tiles_m, params.tiles_n, Cfg::kGroupM};
    const std::int64_t first = blockIdx.x, step = gridDim.x;
    const int k_tiles = int(launch::ceil_div(params.k, BK::value));
    bool stalled = false;  // a wait timed out (the watchdog): stop, trap once the wgmma are done

    if (wg == 0) {
      // ---- Producer: one thread issues every load.
      warpgroup_reg_dealloc<Cfg::kProducerRegs>();
      if (t == 0) {
        auto write = make_producer_start_state<Pipeline>();
        for (std::int64_t i = first; i < tiles.size() && !stalled; i += step) {
          const TileCoord tile = tiles.tile(i);
          const int m0 = tile.m * BM::value, n0 = tile.n * BN::value;
          for (int kt = 0; kt < k_tiles; ++kt) {
            if (!pipeline.producer_acquire(write)) {
              stalled = true;
              break;
            }
            std::uint64_t* bar = pipeline.producer_get_barrier(write);
            params.tma_a.copy(bar, sA(_, _, write.index()), m0, kt * BK::value);
            params.tma_b.copy(bar, sB(_, _, write.index()), n0, kt * BK::value);
            ++write;
          }
        }
      }
    } else {
      // ---- Consumers: warpgroup 1 multiplies rows 0-63 of the tile, warpgroup 2 (if any) rows 64-127.
      warpgroup_reg_alloc<Cfg::kConsumerRegs>();
      const int cw = wg - 1;
      typename Pipeline::State read;
      typename Pipeline::State release;
      float acc[BN::value / 2];  // this thread's values of the warpgroup's 64×BN tile
      // C pieces this warpgroup has sent: piece p goes through buffer p % 2, counted across tiles.
      // (Counting within the tile, j % 2, breaks with 3 pieces a tile: the next tile's first piece
      // would refill the buffer whose store, the last one issued, may still be reading it.)
      int pieces = 0;
      for (std::int64_t i = first; i < tiles.size(); i += step) {
        const TileCoord tile = tiles.tile(i);
        const int m0 = tile.m * BM::value + Cfg::kWgmmaM * cw, n0 = tile.n * BN::value;
        for (int kt = 0; kt < k_tiles; ++kt) {
          if (!pipeline.consumer_wait(read)) {
            stalled = true;
            break;
          }
          auto a_tile = local_tile(sA(_, _, read.index()), make_shape(Int<Cfg::kWgmmaM>{}, BK{}), make_coord(cw, 0));
          gmma_k_block<Atom, GmmaMajor::K, GmmaMajor::K>(a_tile, sB(_, _, read.index()), acc, kt > 0);
          warpgroup_wait<1>();
          warpgroup_fence_operand(acc);
          if (kt > 0) {
            pipeline.consumer_release(release);
            ++release;
          }
          ++read;
        }
        warpgroup_wait<0>();
        warpgroup_fence_operand(acc);
        if (stalled) break;
        pipeline.consumer_release(release);
        ++release;
        // Epilogue: the 64×BN tile leaves in 64×64 pieces through this warpgroup's two buffers.
        const int bar_id = 1 + cw;
#pragma unroll
        for (int j = 0; j < BN::value / Cfg::kPieceN; ++j) {
          auto piece = make_tensor(make_smem_ptr(shared.c[cw][pieces++ % 2]), typename Storage::Piece{});
          if (t == 0) tma_store_wait<1>();
          named_barrier_sync(bar_id, 128);
          stage_accumulators_bf16(acc, j, piece, t);
          fence_proxy_async_shared();
          named_barrier_sync(bar_id, 128);
          if (t == 0) {
            params.tma_c.store(piece, m0, n0 + Cfg::kPieceN * j);
            tma_store_commit();
          }
        }
      }
      if (t == 0) tma_store_wait<0>();
    }
    if (stalled) __trap();
  }
}

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
  if (p.n % 8 != 0)
    return "needs N % 8 == 0: TMA stores rows whose pitch is a multiple of 16 bytes (C is M×N bf16, row-major)";
  return {};
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

/// The index into kTileShapes of the tile with the smallest modeled time on `sms` SMs; tiles narrower
/// than 128 columns only when the operands' rows are 128-byte aligned (rows_straddle_lines).
inline int choose_tile_shape(const GemmProblem& p, int sms) {
  int best = 0;
  for (int i = 1; i < int(std::size(kTileShapes)); ++i) {
    if (kTileShapes[i].bn < 128 && rows_straddle_lines(p)) continue;
    if (modeled_time(p, kTileShapes[i], sms) < modeled_time(p, kTileShapes[best], sms)) best = i;
  }
  return best;
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

/// What each kernel of the chapter built on tile_shapes' (split_k, stream_k, ping_pong, ...) starts its
/// parameters with: A's and B's TMA copies (rows `pitch` elements apart, 0: K), C's TMA store in the
/// epilogue's 64×64 pieces, the problem's extents and its count of tiles of the configuration's size.
template <class Cfg, class P>
void set_tile_params(P& params, const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, std::int64_t pitch = 0) {
  make_rcr_operand_copies(params, p, A, B, pitch);
  params.tma_c = make_tma_copy(SM90_TMA_STORE_2D{},
                               make_tensor(C, make_layout(make_shape(int(p.m), int(p.n)), make_stride(int(p.n), _1{}))),
                               typename SharedStorage<Cfg>::Piece{});
  params.m = int(p.m);
  params.n = int(p.n);
  params.k = int(p.k);
  params.tiles_m = int(launch::ceil_div(p.m, Cfg::BM::value));
  params.tiles_n = int(launch::ceil_div(p.n, Cfg::BN::value));
}

/// The grid of a persistent kernel: the blocks of `threads` threads and `smem` bytes the GPU holds at
/// once, at most one per unit of work and at most `max_blocks` when above 0.
template <class Kernel>
dim3 persistent_grid(Kernel kernel, int threads, std::size_t smem, std::int64_t units, int max_blocks) {
  std::int64_t blocks = std::min<std::int64_t>(units, max_resident_clusters(kernel, 1, threads, smem));
  if (max_blocks > 0) blocks = std::min<std::int64_t>(blocks, max_blocks);
  return dim3{unsigned(blocks)};
}

/// tile_shapes with the tile given: the TMA copies, the opt-in, a grid of the blocks the GPU holds at
/// once (at most one per tile, at most `max_blocks` when above 0); A's and B's rows `pitch` elements
/// apart (0: K). Throws std::invalid_argument for a problem it rejects or operands TMA cannot describe.
template <class Cfg>
std::function<void(cudaStream_t)> prepare_tile_shape(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C,
                                                     int max_blocks = 0, std::int64_t pitch = 0) {
  if (std::string why = tile_shapes_rejects(p); !why.empty()) throw std::invalid_argument("tile_shapes: " + why);
  Params<Cfg> params{};
  set_tile_params<Cfg>(params, p, A, B, C, pitch);
  auto kernel = tile_shapes_kernel<Cfg>;
  constexpr std::size_t smem = shared_storage_bytes<SharedStorage<Cfg>>();
  static_assert(smem <= 227 * 1024, "sm_90 gives a block at most 227 KB of shared memory");
  opt_in_dynamic_smem(kernel, smem);
  const dim3 grid = persistent_grid(kernel, Cfg::kThreads, smem, std::int64_t(params.tiles_m) * params.tiles_n, max_blocks);
  return [kernel, grid, params](cudaStream_t stream) { kernel<<<grid, Cfg::kThreads, smem, stream>>>(params); };
}

/// The step: the tile choose_tile_shape picks for this problem on this GPU.
inline std::function<void(cudaStream_t)> prepare_tile_shapes(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C,
                                                             int max_blocks = 0) {
  if (std::string why = tile_shapes_rejects(p); !why.empty()) throw std::invalid_argument("tile_shapes: " + why);
  return with_tile_shape(choose_tile_shape(p, device_sm_count()), [&](auto cfg) {
    return prepare_tile_shape<decltype(cfg)>(p, A, B, C, max_blocks);
  });
}

}  // namespace mm::ch11
