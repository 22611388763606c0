// Chapter 12, step 1: tf32_wgmma. Chapter 11's tile_shapes kernel at its 128×256 tile (chapter 10's
// best: a producer warpgroup, two consumer warpgroups, a persistent grouped loop over tiles, C out
// through shared memory and TMA stores), with fp32 operands multiplied as tf32.
//
// wgmma takes tf32 straight from shared memory: m64nNk8 reads 8 fp32 of each row of A and B (32
// bytes, as bf16's k16 does) and uses each value's sign, exponent and top 10 mantissa bits. So the
// kernel is the bf16 one with the element type changed, and three consequences of 4-byte elements:
//
//   the K step          32 instead of 64: one 128-byte swizzle row holds 32 fp32. A stage is still
//                       (128 + 256) rows × 128 bytes = 48 KB, 4 of them; a K step is 4 wgmma k8.
//   the operands' order tf32 (like fp8) is read K-major only: A row-major and B stored N×K, C = A·Bᵀ
//                       (RCR), go in as they are; a row-major B (RRR) would have to be transposed on
//                       its way to shared memory, which no TMA box does (the page measures what that
//                       costs with a transposing copy in front).
//   C is fp32           (what cuBLAS's tf32 GEMM writes): stmatrix moves 16-bit values only, so the
//                       pieces are staged with ordinary 8-byte stores (stage_accumulators_f32), and a
//                       piece is 64×32 (128-byte rows) instead of 64×64: 8 pieces a tile, not 4.
//
//   diff ../11_every_shape/tile_shapes.cuh tf32_wgmma.cuh   shows the change.
//
// Build: cmake --build build --target ch12_hopper_datatypes
// Run:   build/bin/ch12_hopper_datatypes --kernel tf32_wgmma
#pragma once

#include <cuda.h>
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

namespace mm::ch12 {

/// tf32_wgmma: 128×256 tiles, K steps of 32 fp32 (128 bytes), 4 stages, two consumer warpgroups.
struct Tf32Cfg {
  using BM = _128;                     ///< rows of C per tile: 64 per consumer warpgroup
  using BN = _256;                     ///< columns of C per tile: the wgmma's N
  using BK = _32;                      ///< K step: one 128-byte swizzle row of fp32
  static constexpr int kWgmmaM = 64;   ///< rows one wgmma (one consumer warpgroup) multiplies
  static constexpr int kStages = 4;    ///< stages in the ring (4 × 48 KB)
  static constexpr int kConsumers = 2; ///< consumer warpgroups
  static constexpr int kThreads = 128 * (1 + kConsumers);
  static constexpr int kGroupM = 16;   ///< rows of tiles the scheduler walks down before moving right
  static constexpr int kProducerRegs = 40;
  static constexpr int kConsumerRegs = 232;
  static constexpr int kPieceM = 64;   ///< rows of one piece of C in the epilogue
  static constexpr int kPieceN = 32;   ///< columns of one piece: one 128-byte swizzle row of fp32
  static constexpr int kCBuffers = 2;  ///< pieces in flight per consumer warpgroup
};

/// The block's shared memory: the two rings (fp32), the fp32 C pieces, the pipeline's barriers.
template <class Cfg>
struct Tf32SharedStorage {
  using RingA = GmmaRing<float, GmmaMajor::K, typename Cfg::BM, typename Cfg::BK, Cfg::kStages>;  ///< (BM,BK,S)
  using RingB = GmmaRing<float, GmmaMajor::K, typename Cfg::BN, typename Cfg::BK, Cfg::kStages>;  ///< (BN,BK,S)
  using Piece = decltype(tile_to_shape(GmmaLayoutK_SW128_Atom<float>{},
                                       make_shape(Int<Cfg::kPieceM>{}, Int<Cfg::kPieceN>{})));  ///< (64,32), N contiguous
  using Pipeline = PipelineTmaAsync<Cfg::kStages>;
  alignas(1024) float a[cosize_v<RingA>];
  alignas(1024) float b[cosize_v<RingB>];
  alignas(1024) float c[Cfg::kConsumers][Cfg::kCBuffers][cosize_v<Piece>];
  typename Pipeline::SharedStorage pipeline;
};

/// What one launch needs; the TMA copies hold their tensor maps (`__grid_constant__`).
template <class Cfg>
struct Tf32Params {
  using Storage = Tf32SharedStorage<Cfg>;
  TmaCopy<SM90_TMA_LOAD_2D, float, GmmaStage<typename Storage::RingA>> tma_a;  ///< A's boxes into a stage
  TmaCopy<SM90_TMA_LOAD_2D, float, GmmaStage<typename Storage::RingB>> tma_b;  ///< B's boxes into a stage
  TmaCopy<SM90_TMA_STORE_2D, float, typename Storage::Piece> tma_c;            ///< a piece of C out
  int m, n, k;   ///< C is M×N, K the inner dimension
  int tiles_m;   ///< tiles along M
  int tiles_n;   ///< tiles along N
};

/// C = A·Bᵀ in tf32, fp32 C. wgmma and setmaxnreg need sm_90a: any other device pass compiles a stub
/// which the harness never launches.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1) tf32_wgmma_kernel(const __grid_constant__ Tf32Params<Cfg> params) {
  if constexpr (!arch::compiled_for(arch::sm90a)) {
    arch::no_code_for_this_target();
  } else {
    using Storage = Tf32SharedStorage<Cfg>;
    using Pipeline = typename Storage::Pipeline;
    using BM = typename Cfg::BM;
    using BN = typename Cfg::BN;
    using BK = typename Cfg::BK;
    using Atom = SM90_64xNx8_F32TF32TF32_SS<BN::value>;  // m64nNk8, both operands K-major
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
      // ---- Consumers: warpgroup 1 multiplies rows 0-63 of the tile, warpgroup 2 rows 64-127.
      warpgroup_reg_alloc<Cfg::kConsumerRegs>();
      const int cw = wg - 1;
      typename Pipeline::State read;
      typename Pipeline::State release;
      float acc[BN::value / 2];  // this thread's values of the warpgroup's 64×256 tile
      int pieces = 0;            // C pieces this warpgroup has sent: piece p goes through buffer p % 2
      for (std::int64_t i = first; i < tiles.size(); i += step) {
        const TileCoord tile = tiles.tile(i);
        const int m0 = tile.m * BM::value + Cfg::kWgmmaM * cw, n0 = tile.n * BN::value;
        for (int kt = 0; kt < k_tiles; ++kt) {
          if (!pipeline.consumer_wait(read)) {
            stalled = true;
            break;
          }
          auto a_tile = local_tile(sA(_, _, read.index()), make_shape(Int<Cfg::kWgmmaM>{}, BK{}), make_coord(cw, 0));
          gmma_k_block<Atom, GmmaMajor::K, GmmaMajor::K>(a_tile, sB(_, _, read.index()), acc, kt > 0);  // 4 × k8
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
        // Epilogue: the 64×256 fp32 tile leaves in 64×32 pieces through this warpgroup's two buffers.
        const int bar_id = 1 + cw;
#pragma unroll
        for (int j = 0; j < BN::value / Cfg::kPieceN; ++j) {
          auto piece = make_tensor(make_smem_ptr(shared.c[cw][pieces++ % 2]), typename Storage::Piece{});
          if (t == 0) tma_store_wait<1>();
          named_barrier_sync(bar_id, 128);
          stage_accumulators_f32(acc, j, piece, t);
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

/// Empty when tf32_wgmma takes `p`; otherwise the rule it breaks: RCR (both operands K-major), and
/// rows of A, B and C whose pitch is a multiple of 16 bytes (K and N multiples of 4 fp32) for TMA.
inline std::string tf32_wgmma_rejects(const GemmProblem& p) {
  if (p.a != Order::row || p.b != Order::col || p.c != Order::row)
    return "takes RCR only (C = A·Bᵀ with B stored N×K): wgmma reads tf32 only K-major";
  if (std::string why = launch::tma_operand_rejects(p, 4); !why.empty()) return why;
  if (p.n % 4 != 0)
    return "needs N % 4 == 0: TMA stores rows whose pitch is a multiple of 16 bytes (C is M×N fp32, row-major)";
  return {};
}

/// The one-time preparation: the TMA copies, the opt-in, a grid of the blocks the GPU holds at once
/// (at most one per tile, at most `max_blocks` when above 0). Throws std::invalid_argument for a
/// problem it rejects or operands TMA cannot describe.
template <class Cfg = Tf32Cfg>
std::function<void(cudaStream_t)> prepare_tf32_wgmma(const GemmProblem& p, const float* A, const float* B, float* C,
                                                     int max_blocks = 0) {
  if (std::string why = tf32_wgmma_rejects(p); !why.empty()) throw std::invalid_argument("tf32_wgmma: " + why);
  using Storage = Tf32SharedStorage<Cfg>;
  Tf32Params<Cfg> params{};
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  make_rcr_operand_copies(params, p, A, B);
  params.tma_c = make_tma_copy(SM90_TMA_STORE_2D{}, make_tensor(C, make_layout(make_shape(m, n), make_stride(n, _1{}))),
                               typename Storage::Piece{});
  params.m = m;
  params.n = n;
  params.k = k;
  params.tiles_m = int(launch::ceil_div(p.m, Cfg::BM::value));
  params.tiles_n = int(launch::ceil_div(p.n, Cfg::BN::value));
  const std::int64_t tiles = std::int64_t(params.tiles_m) * params.tiles_n;
  auto kernel = tf32_wgmma_kernel<Cfg>;
  constexpr std::size_t smem = shared_storage_bytes<Storage>();
  static_assert(smem <= 227 * 1024, "sm_90 gives a block at most 227 KB of shared memory");
  opt_in_dynamic_smem(kernel, smem);
  std::int64_t blocks = std::min<std::int64_t>(tiles, max_resident_clusters(kernel, 1, Cfg::kThreads, smem));
  if (max_blocks > 0) blocks = std::min<std::int64_t>(blocks, max_blocks);
  const dim3 grid{unsigned(blocks)};
  return [kernel, grid, params](cudaStream_t stream) { kernel<<<grid, Cfg::kThreads, smem, stream>>>(params); };
}

}  // namespace mm::ch12
