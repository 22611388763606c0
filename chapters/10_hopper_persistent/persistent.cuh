// Chapter 10: keeping Hopper's tensor cores busy all the time. Chapter 09's 128×256 tile and 4-stage
// TMA ring, reorganized: one warpgroup only loads, two only multiply, blocks stay resident and loop
// over tiles, pairs of blocks share their B tiles, and C leaves through the copy engine.
//
// One generic kernel, several points of one configuration space (Config below); each step of the
// chapter adds one mechanism (README, "The ladder"):
//   warp_specialized   384 threads: warpgroup 0 is the producer (one thread issues every TMA) and
//                      gives its registers away (setmaxnreg 40), warpgroups 1 and 2 are consumers
//                      (setmaxnreg 232) that only wait, multiply and release; one block per tile
//   persistent         one block per SM, each looping over tiles in a grouped order (the scheduler
//                      in gemm/tile_scheduler.hpp); the producer fills the next tile's stages
//                      while the consumers are still storing the last one
//   tma_store          the epilogue stages each 64×64 piece of C in shared memory (stmatrix) and
//                      one thread stores it with TMA, two buffers per consumer, so the consumers
//                      return to the next tile's main loop without waiting for their stores
//   cluster_multicast  clusters of 2 blocks on vertically adjacent tiles: each loads half of the B
//                      tile they share and multicasts it into both (TMA multicast): L2 reads of B halve
// C = A·B with A (M×K) row-major and B row-major (RRR) or stored N×K (RCR), C row-major; bf16 in, fp32
// accumulators, bf16 out. Any M and N; K, and N in RRR, multiples of 8 (TMA's 16-byte row pitch,
// chapter 09's rule). The TMA-store epilogue needs C's rows 16-byte aligned too (N % 8 == 0 and an
// aligned pointer); otherwise that step stores from registers, as the others do.
//
// Build: cmake --build build --target ch10_hopper_persistent      Run: build/bin/ch10_hopper_persistent
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "09_hopper_wgmma_tma/wgmma_tma.cuh"  // chapter 09's tile configuration (shared layouts, atoms)
#include "gemm/cluster_launch.hpp"
#include "harness/cuda_check.hpp"
#include "harness/gemm_runner.hpp"
#include "gemm/launch.hpp"
#include "gemm/problem.hpp"
#include "gemm/smem.hpp"
#include "layout/copy_sm90_desc.hpp"
#include "layout/all.hpp"
#include "layout/cluster.hpp"
#include "layout/copy_sm90_tma.hpp"
#include "gemm/epilogue_sm90.hpp"
#include "layout/mma_sm90.hpp"
#include "gemm/pipeline.hpp"
#include "gemm/tile_scheduler.hpp"
#include "gemm/warp_specialization.hpp"

namespace mm::ch10 {

using bf16 = __nv_bfloat16;
using launch::ceil_div;

/// How the accumulators reach C.
enum class Epilogue {
  registers,  ///< each thread stores its own values to global memory (chapter 09's epilogue)
  tma_store,  ///< 64×64 pieces staged in shared memory with stmatrix, stored by TMA
};

/// A warp-specialized block: a producer warpgroup and two consumer warpgroups over chapter 09's
/// 128×256 tile with K steps of 64 in a ring of `Stages`. `Persistent`: a grid of the blocks the GPU
/// holds at once, each looping over tiles (else one block per tile). `ClusterM`: blocks per cluster,
/// on tiles stacked along M that share their B tile. `GroupM`: rows of block tiles the scheduler
/// walks down before it moves right.
template <bool Persistent_, int ClusterM_, Epilogue kEpilogue_, int Stages_ = 4, int GroupM_ = 16>
struct Config {
  /// The tile, its shared layouts and wgmma atoms: chapter 09's (BM = 128, BN = 256, BK = 64).
  using Tile = ch09::Config<128, 256, Stages_, ch09::Loader::tma, 1>;
  using BM = typename Tile::BM;  ///< 128 rows of C per block: 64 per consumer
  using BN = typename Tile::BN;  ///< 256 columns of C per block
  static constexpr int kStages = Stages_;
  static constexpr bool kPersistent = Persistent_;
  static constexpr int kClusterM = ClusterM_;
  static constexpr Epilogue kEpilogue = kEpilogue_;
  static constexpr int kGroupM = GroupM_;
  static constexpr int kConsumers = 2;                    ///< warpgroups that multiply, 64 rows each
  static constexpr int kThreads = 128 * (1 + kConsumers);  ///< plus the producer warpgroup
  /// setmaxnreg: the producer keeps 40 registers a thread, each consumer grows to 232
  /// (40·128 + 232·256 = 64512 of the SM's 65536).
  static constexpr int kProducerRegs = 40;
  static constexpr int kConsumerRegs = 232;
  static_assert(kProducerRegs * 128 + kConsumerRegs * 128 * kConsumers <= 65536, "the SM's register file");
  static_assert(ClusterM_ == 1 || ClusterM_ == 2 || ClusterM_ == 4, "clusters of 1, 2 or 4 blocks along M");
  static_assert(GroupM_ % ClusterM_ == 0, "the scheduler's groups are whole clusters");
  static_assert(Tile::kWarpgroups == kConsumers, "one consumer warpgroup per 64 rows of the tile");

  /// One 64×64 piece of C in shared memory: 128-byte rows swizzled as a TMA store with the 128-byte
  /// swizzle reads them (and stmatrix writes them without bank conflicts).
  using SmemC = decltype(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_64, _64>, Stride<_64, _1>>{}));  ///< (64,64)
  static constexpr int kCBuffers = kEpilogue_ == Epilogue::tma_store ? 2 * kConsumers : 0;  ///< two per consumer
  static constexpr int kCElems = kCBuffers * 64 * 64;

  static constexpr std::uint32_t kStageBytes = Tile::kStageBytesA + Tile::kStageBytesB;  ///< A and B of one K step
  /// The ring, the C buffers, 2·Stages mbarriers, and 1 KB to align the ring to 1024 bytes.
  static constexpr int kSmemBytes = Stages_ * int(kStageBytes) + kCElems * 2 + 2 * Stages_ * 8 + 1024;
};

// ---- The ladder's points ----

/// warp_specialized: a producer warpgroup and two consumers, one block per tile.
using WarpSpecializedCfg = Config<false, 1, Epilogue::registers>;
/// persistent: as many blocks as fit, each looping over tiles in grouped order.
using PersistentCfg = Config<true, 1, Epilogue::registers>;
/// tma_store: the epilogue through shared memory and TMA stores.
using TmaStoreCfg = Config<true, 1, Epilogue::tma_store>;
/// cluster_multicast: tma_store in clusters of two blocks sharing their B tile through TMA multicast.
using ClusterCfg = Config<true, 2, Epilogue::tma_store>;

// ---- The kernel ----

/// What one launch needs. The tensor maps live in the kernel's parameter block (`__grid_constant__`).
struct Params {
  CUtensorMap map_a;  ///< A as (K inner, M outer), boxes of 64 × 128
  CUtensorMap map_b;  ///< B: RCR (K inner, N outer), boxes 64 × (256 / ClusterM); RRR (N inner, K outer), 64 × 64
  CUtensorMap map_c;  ///< C as (N inner, M outer), boxes 64 × 64 (tma_store only)
  bf16* c;            ///< C, M×N row-major
  int m, n, k;        ///< C is M×N, K the inner dimension
  bool c_pairs;       ///< two neighbouring elements of a row of C are one aligned 32-bit word
  bool c_tma;         ///< C's rows are 16-byte aligned: the TMA-store epilogue may run
  int tiles_m;        ///< cluster tiles along M (each ClusterM·128 rows)
  int tiles_n;        ///< tiles along N (256 columns)
};

namespace detail {

/// The producer's loads of B for one stage: this block's share of the BN columns (all of them
/// without a cluster; 1/ClusterM of them, multicast into every block of the cluster, with one).
template <class Cfg, GmmaMajor MajorB, class SB>
__device__ void load_b_stage(Params const& params, std::uint64_t* bar, SB& sB, int s, int n0, int k0, int rank) {
  constexpr int C = Cfg::kClusterM, N = Cfg::BN::value;
  constexpr std::uint16_t everyone = multicast_mask(0, C);  // the cluster's blocks share n0
  if constexpr (MajorB == GmmaMajor::K) {  // RCR: one box of N / C rows (n) of 64 k
    constexpr int rows = N / C;
    if constexpr (C == 1)
      SM90_TMA_LOAD_2D::copy(&params.map_b, bar, &sB(0, 0, s), k0, n0);
    else
      SM90_TMA_LOAD_MULTICAST_2D::copy(&params.map_b, bar, &sB(rows * rank, 0, s), k0, n0 + rows * rank, everyone);
  } else {  // RRR: panels of 64 n × 64 k (a box row is at most one 128-byte swizzle row)
    constexpr int panels = N / 64 / C;
#pragma unroll
    for (int i = 0; i < panels; ++i) {
      const int p = panels * rank + i;
      if constexpr (C == 1)
        SM90_TMA_LOAD_2D::copy(&params.map_b, bar, &sB(64 * p, 0, s), n0 + 64 * p, k0);
      else
        SM90_TMA_LOAD_MULTICAST_2D::copy(&params.map_b, bar, &sB(64 * p, 0, s), n0 + 64 * p, k0, everyone);
    }
  }
}

}  // namespace detail

/// The persistent, warp-specialized GEMM. wgmma and setmaxnreg need sm_90a: any other device pass
/// compiles a stub (layout/arch.hpp) which the harness never launches.
template <class Cfg, GmmaMajor MajorB>
__global__ void __launch_bounds__(Cfg::kThreads, 1) persistent_gemm_kernel(const __grid_constant__ Params params) {
  if constexpr (!arch::compiled_for(arch::sm90a)) {
    arch::no_code_for_this_target();
  } else {
    constexpr int S = Cfg::kStages, C = Cfg::kClusterM;
    constexpr int BM = Cfg::BM::value, BN = Cfg::BN::value;
    using Atom = typename Cfg::Tile::template Atom<MajorB>;
    extern __shared__ uint128_t smem_raw[];
    // The ring starts at the next 1024-byte boundary: the swizzle is a function of the address.
    auto base = (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t(1023);
    bf16* smem_a = reinterpret_cast<bf16*>(base);
    bf16* smem_b = smem_a + S * BM * 64;
    bf16* smem_c = smem_b + S * BN * 64;  // tma_store: [consumer][buffer] 64×64 pieces of C
    auto* bars = reinterpret_cast<std::uint64_t*>(smem_c + Cfg::kCElems);
    auto sA = make_tensor(make_smem_ptr(smem_a), typename Cfg::Tile::SmemA{});                   // (BM,64,S)
    auto sB = make_tensor(make_smem_ptr(smem_b), typename Cfg::Tile::template SmemB<MajorB>{});  // (BN,64,S)
    const TmaPipeline<S, C> pipe{bars, bars + S};

    const int wg = int(threadIdx.x) / 128, t = int(threadIdx.x) % 128;
    const int rank = C > 1 ? int(cluster_ctarank()) : 0;  // this block's place in its cluster (along M)
    if (threadIdx.x == 0) {
      pipe.init(Cfg::kConsumers);
      tma_prefetch_map(&params.map_a);
      tma_prefetch_map(&params.map_b);
      if constexpr (Cfg::kEpilogue == Epilogue::tma_store) tma_prefetch_map(&params.map_c);
    }
    // The barriers are initialized before anyone uses them: in every block of the cluster, since a
    // peer's multicast signals them and its consumers release our stages.
    if constexpr (C > 1) cluster_sync();
    else __syncthreads();

    // Cluster tile i of the grouped order covers rows (i.m·C + rank)·BM.. of this block.
    const GroupedTileScheduler tiles{params.tiles_m, params.tiles_n, Cfg::kGroupM / C};
    const std::int64_t first = blockIdx.x / C, step = gridDim.x / C;  // this cluster, and how many there are
    const int k_tiles = ceil_div(params.k, 64);
    // A wait that times out (a deadlock: kMbarrierTimeoutNs) stops this thread's loops; the kernel
    // traps once its wgmma have finished (a trap with wgmma in flight would serialize them all).
    bool stalled = false;

    if (wg == 0) {
      // ---- Producer: one thread issues every load; the warpgroup's registers go to the consumers.
      warpgroup_reg_dealloc<Cfg::kProducerRegs>();
      if (t == 0) {
        PipelineState<S> write;
        for (std::int64_t i = first; i < tiles.size() && !stalled; i += step) {
          const TileCoord tile = tiles.tile(i);
          const int m0 = (tile.m * C + rank) * BM, n0 = tile.n * BN;
          for (int kt = 0; kt < k_tiles; ++kt) {
            if (!pipe.producer_acquire(write)) {  // every reader of this stage has released it
              stalled = true;
              break;
            }
            // This block's copy of the stage receives A (its own) and all of B (its share and its peers').
            std::uint64_t* bar = pipe.producer_expect(write, Cfg::kStageBytes);
            SM90_TMA_LOAD_2D::copy(&params.map_a, bar, &sA(0, 0, write.index), kt * 64, m0);
            detail::load_b_stage<Cfg, MajorB>(params, bar, sB, write.index, n0, kt * 64, rank);
            write.advance();
          }
        }
      }
    } else {
      // ---- Consumers: warpgroup 1 multiplies rows 0-63 of the tile, warpgroup 2 rows 64-127.
      warpgroup_reg_alloc<Cfg::kConsumerRegs>();
      const int cw = wg - 1;
      PipelineState<S> read;     // the stage to multiply next
      PipelineState<S> release;  // the oldest stage not yet released (one behind: a wgmma group in flight)
      float acc[BN / 2];         // this thread's values of its warpgroup's 64×256 tile (the atom's C layout)
      for (std::int64_t i = first; i < tiles.size(); i += step) {
        const TileCoord tile = tiles.tile(i);
        const int m0 = (tile.m * C + rank) * BM + 64 * cw, n0 = tile.n * BN;  // this warpgroup's 64 rows
#pragma unroll
        for (int v = 0; v < BN / 2; ++v) acc[v] = 0.0f;
        for (int kt = 0; kt < k_tiles; ++kt) {
          if (!pipe.consumer_wait(read)) {
            stalled = true;
            break;
          }
          auto a_tile = local_tile(sA(_, _, read.index), make_shape(_64{}, _64{}), make_coord(cw, 0));  // (64,64)
          gmma_k_block<Atom, GmmaMajor::K, MajorB>(a_tile, sB(_, _, read.index), acc);                 // B: (BN,64)
          warpgroup_wait<1>();  // the previous step's group has completed: its stage is free
          if (kt > 0) {
            pipe.consumer_release(release, t);
            release.advance();
          }
          read.advance();
        }
        warpgroup_wait<0>();
        if (stalled) break;
        pipe.consumer_release(release, t);  // the tile's last stage
        release.advance();

        if (Cfg::kEpilogue == Epilogue::tma_store && params.c_tma) {
          // Four 64×64 pieces, alternating between this warpgroup's two buffers: before refilling a
          // buffer, its previous store (two pieces ago) must have finished reading it.
          bf16* buffers = smem_c + cw * 2 * 64 * 64;
          const int bar_id = 1 + cw;  // a named barrier per consumer (0 is __syncthreads')
#pragma unroll
          for (int j = 0; j < BN / 64; ++j) {
            auto piece = make_tensor(make_smem_ptr(buffers + (j % 2) * 64 * 64), typename Cfg::SmemC{});  // (64,64)
            if (t == 0) tma_store_wait<1>();
            named_barrier_sync(bar_id, 128);
            stage_accumulators_bf16(acc, j, piece, t);
            fence_proxy_async_shared();  // the stmatrix writes, visible to the copy engine
            named_barrier_sync(bar_id, 128);
            if (t == 0) {
              SM90_TMA_STORE_2D::copy(&params.map_c, &piece(0, 0), n0 + 64 * j, m0);  // outside C: not stored
              tma_store_commit();
            }
          }
        } else {
          store_accumulators_bf16<Atom>(acc, params.c, params.n, m0, n0, params.m, params.n, params.c_pairs, t);
        }
      }
      if (Cfg::kEpilogue == Epilogue::tma_store && t == 0) tma_store_wait<0>();  // reads done before exit
    }
    if (stalled) __trap();
    // No block leaves while a peer may still multicast into it or release its stages.
    if constexpr (C > 1) cluster_sync();
  }
}

// ---- Host ----

/// Empty when the chapter's kernels take `p`; otherwise the constraint it breaks: chapter 09's TMA
/// rules (the grid is one-dimensional here, so N has no grid limit).
template <class Cfg>
std::string persistent_rejects(const GemmProblem& p) {
  return ch09::tma_gemm_rejects(p);
}

/// The one-time preparation of a launch (outside any timed region): the tensor maps, the
/// shared-memory opt-in, the grid (for a persistent kernel, the clusters the GPU holds at once);
/// returns what runs the kernel on a stream. Throws std::invalid_argument for a problem the kernel
/// rejects, std::runtime_error when the GPU cannot hold one block or cluster.
template <class Cfg>
std::function<void(cudaStream_t)> prepare_persistent(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C) {
  if (std::string why = persistent_rejects<Cfg>(p); !why.empty()) throw std::invalid_argument("persistent: " + why);
  constexpr int CM = Cfg::kClusterM;
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  Params params{};
  params.c = C;
  params.m = m;
  params.n = n;
  params.k = k;
  params.c_pairs = reinterpret_cast<std::uintptr_t>(C) % 4 == 0 && n % 2 == 0;
  params.c_tma = reinterpret_cast<std::uintptr_t>(C) % 16 == 0 && n % 8 == 0;
  params.tiles_m = int(ceil_div(m, CM * Cfg::BM::value));
  params.tiles_n = int(ceil_div(n, Cfg::BN::value));
  constexpr TmaSwizzle swizzle = Cfg::Tile::kTmaSwizzle;
  // A (M,K) row-major: K is the inner dimension; a box is one stage of the block's rows.
  params.map_a = make_tma_map(A, make_layout(make_shape(m, k), make_stride(k, _1{})), make_shape(typename Cfg::BM{}, _64{}),
                              swizzle);
  if (p.b == Order::col)  // B stored N×K (RCR): (N,K) with K inner; each block of a cluster loads BN / CM rows
    params.map_b = make_tma_map(B, make_layout(make_shape(n, k), make_stride(k, _1{})),
                                make_shape(Int<Cfg::BN::value / CM>{}, _64{}), swizzle);
  else  // B stored K×N (RRR): (N,K) with N inner, boxes of one 64-column panel
    params.map_b = make_tma_map(B, make_layout(make_shape(n, k), make_stride(_1{}, n)), make_shape(_64{}, _64{}), swizzle);
  if (Cfg::kEpilogue == Epilogue::tma_store && params.c_tma)  // C (M,N) row-major, 64×64 pieces
    params.map_c = make_tma_map(C, make_layout(make_shape(m, n), make_stride(n, _1{})), make_shape(_64{}, _64{}),
                                tma_swizzle_for(gmma_swizzle_of<bf16, typename Cfg::SmemC>()));

  auto kernel = p.b == Order::col ? persistent_gemm_kernel<Cfg, GmmaMajor::K> : persistent_gemm_kernel<Cfg, GmmaMajor::MN>;
  opt_in_dynamic_smem(kernel, Cfg::kSmemBytes);
  const std::int64_t tiles = std::int64_t(params.tiles_m) * params.tiles_n;  // cluster tiles
  std::int64_t clusters = tiles;
  if constexpr (Cfg::kPersistent)
    clusters = std::min<std::int64_t>(tiles, max_resident_clusters(kernel, CM, Cfg::kThreads, Cfg::kSmemBytes));
  if (clusters * CM > launch::max_grid_x)
    throw std::invalid_argument("persistent: needs at most 2^31 - 1 blocks (" + std::to_string(clusters * CM) + " tiles)");
  const dim3 grid(unsigned(clusters * CM));
  return [kernel, grid, params](cudaStream_t stream) {
    MM_CUDA_CHECK(launch_in_clusters(kernel, grid, dim3(Cfg::kThreads), Cfg::kSmemBytes, stream, CM, params));
  };
}

/// Prepares and runs once (tests, and the launch signature of the harness).
template <class Cfg>
void launch_persistent(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, cudaStream_t stream) {
  prepare_persistent<Cfg>(p, A, B, C)(stream);
}

/// The chapter driver's row for configuration Cfg: bf16, sm_90a, prepared once per problem.
template <class Cfg>
GemmKernel<bf16, bf16> persistent_kernel(const char* name) {
  return {.name = name, .dtype = DType::bf16, .launch = launch_persistent<Cfg>, .rejects = persistent_rejects<Cfg>,
          .needs = arch::sm90a, .prepare = prepare_persistent<Cfg>};
}

}  // namespace mm::ch10

// ---- Where the ladder's kernels are compiled ----
//
// Each configuration is instantiated once, in kernels.cu, and linked into the chapter binary and its
// tests.
#define MM_CH10_LADDER(X) X(WarpSpecializedCfg) X(PersistentCfg) X(TmaStoreCfg) X(ClusterCfg)
#define MM_CH10_DECLARE(Cfg)                                                                                  \
  extern template std::function<void(cudaStream_t)> prepare_persistent<Cfg>(const GemmProblem&, const bf16*, \
                                                                            const bf16*, bf16*);
namespace mm::ch10 {
MM_CH10_LADDER(MM_CH10_DECLARE)
}  // namespace mm::ch10
#undef MM_CH10_DECLARE
