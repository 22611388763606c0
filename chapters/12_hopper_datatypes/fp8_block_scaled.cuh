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
//                  busy meanwhile.
//   the scales     each thread reads the scale_a of its two rows for the next K step while this
//                  step's wgmma run, and multiplies only when it uses them (a product at the load
//                  would wait for the load, an L2 round trip); the tile's scale_b, one value for the
//                  warpgroup, come from shared memory, staged 64 K blocks at a time.
//
//   diff fp8_per_tensor.cuh fp8_block_scaled.cuh   shows the change.
//
// Build: cmake --build build --target ch12_hopper_datatypes
// Run:   build/bin/ch12_hopper_datatypes --kernel fp8_block_scaled
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
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
#include "harness/dtype.hpp"  // kScaleBlock

namespace mm::ch12 {

using bf16 = __nv_bfloat16;
using e4m3 = __nv_fp8_e4m3;

/// fp8_block_scaled: 128×256 tiles, K steps of 128 e4m3 (one scale block), multiplied in halves of
/// 128 columns; 4 stages, two consumer warpgroups.
struct Fp8BlockCfg {
  using BM = _128;                     ///< rows of C per tile: 64 per consumer warpgroup
  using BN = _256;                     ///< columns of C per tile: two blocks of B's scales
  using BK = _128;                     ///< K step: one 128-byte swizzle row of e4m3, one block of scales
  using HalfN = _128;                  ///< columns one promotion covers: the wgmma's N, one scale block
  static constexpr int kWgmmaM = 64;   ///< rows one wgmma (one consumer warpgroup) multiplies
  static constexpr int kStages = 4;    ///< stages in the ring (4 × 48 KB)
  static constexpr int kScaleChunk = 64;  ///< K blocks of B's scales a consumer stages in shared memory at once
  static constexpr int kConsumers = 2; ///< consumer warpgroups
  static constexpr int kThreads = 128 * (1 + kConsumers);
  static constexpr int kGroupM = 16;   ///< rows of tiles the scheduler walks down before moving right
  static constexpr int kProducerRegs = 40;
  static constexpr int kConsumerRegs = 232;
  static constexpr int kPieceM = 64;   ///< rows of one piece of C in the epilogue
  static constexpr int kPieceN = 64;   ///< columns of one piece: one 128-byte swizzle row of bf16
  static constexpr int kCBuffers = 2;  ///< pieces in flight per consumer warpgroup
};

/// The block's shared memory: the two rings (e4m3), the bf16 C pieces, the pipeline's barriers.
template <class Cfg>
struct Fp8BlockSharedStorage {
  using RingA = GmmaRing<e4m3, GmmaMajor::K, typename Cfg::BM, typename Cfg::BK, Cfg::kStages>;  ///< (BM,BK,S)
  using RingB = GmmaRing<e4m3, GmmaMajor::K, typename Cfg::BN, typename Cfg::BK, Cfg::kStages>;  ///< (BN,BK,S)
  using Piece = decltype(tile_to_shape(GmmaLayoutK_SW128_Atom<bf16>{},
                                       make_shape(Int<Cfg::kPieceM>{}, Int<Cfg::kPieceN>{})));  ///< (64,64), N contiguous
  using Pipeline = PipelineTmaAsync<Cfg::kStages>;
  alignas(1024) e4m3 a[cosize_v<RingA>];
  alignas(1024) e4m3 b[cosize_v<RingB>];
  alignas(1024) bf16 c[Cfg::kConsumers][Cfg::kCBuffers][cosize_v<Piece>];
  /// B's scales of the tile's two column blocks for kScaleChunk K blocks, per consumer warpgroup.
  float scale_b[Cfg::kConsumers][Cfg::BN::value / Cfg::HalfN::value][Cfg::kScaleChunk];
  typename Pipeline::SharedStorage pipeline;
};

/// What one launch needs; the TMA copies hold their tensor maps (`__grid_constant__`).
template <class Cfg>
struct Fp8BlockParams {
  using Storage = Fp8BlockSharedStorage<Cfg>;
  TmaCopy<SM90_TMA_LOAD_2D, e4m3, GmmaStage<typename Storage::RingA>> tma_a;  ///< A's boxes into a stage
  TmaCopy<SM90_TMA_LOAD_2D, e4m3, GmmaStage<typename Storage::RingB>> tma_b;  ///< B's boxes into a stage
  TmaCopy<SM90_TMA_STORE_2D, bf16, typename Storage::Piece> tma_c;            ///< a piece of C out
  const float* scale_a;  ///< A's 1×128 scales: (m, kb) at kb·M + m (device memory)
  const float* scale_b;  ///< B's 128×128 scales: (nb, kb) at nb·kb_pitch + kb
  int kb_pitch;          ///< ceil(K/128) rounded up to a multiple of 4
  int m, n, k;   ///< C is M×N, K the inner dimension
  int tiles_m;   ///< tiles along M
  int tiles_n;   ///< tiles along N
};

/// C = A·Bᵀ with e4m3 A and B scaled per block, bf16 C. wgmma and setmaxnreg need sm_90a: any other
/// device pass compiles a stub which the harness never launches.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    fp8_block_scaled_kernel(const __grid_constant__ Fp8BlockParams<Cfg> params) {
  if constexpr (!arch::compiled_for(arch::sm90a)) {
    arch::no_code_for_this_target();
  } else {
    using Storage = Fp8BlockSharedStorage<Cfg>;
    using Pipeline = typename Storage::Pipeline;
    using BM = typename Cfg::BM;
    using BN = typename Cfg::BN;
    using BK = typename Cfg::BK;
    using HalfN = typename Cfg::HalfN;
    using Atom = SM90_64xNx32_F32E4M3E4M3_SS<HalfN::value>;  // m64n128k32, both operands K-major
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
      float acc[BN::value / 2];         // this thread's values of the warpgroup's 64×256 tile: the fp32 sum
      float partial[HalfN::value / 2];  // one half's products over one K block, as the tensor core added them
      constexpr int kHalves = BN::value / HalfN::value;
      // This thread's rows of the tile are row0 and row0 + 8 (the accumulator layout): values
      // 4i + 0, 1 are on the first, 4i + 2, 3 on the second.
      const int row_in_tile = Cfg::kWgmmaM * cw + 16 * (t / 32) + (t % 32) / 4;
      const int column_blocks = int(launch::ceil_div(params.n, HalfN::value));  // of B's scales
      int pieces = 0;  // C pieces this warpgroup has sent: piece p goes through buffer p % 2
      for (std::int64_t i = first; i < tiles.size(); i += step) {
        const TileCoord tile = tiles.tile(i);
        const int m0 = tile.m * BM::value + Cfg::kWgmmaM * cw, n0 = tile.n * BN::value;
        const int row0 = tile.m * BM::value + row_in_tile, row1 = row0 + 8;
        // The scales of K block kb for this thread's two rows of A (rows past M read nothing), loaded
        // from global memory a step before they are used.
        struct Scales {
          float a0, a1;
        };
        auto load_scales = [&](int kb) {
          const float* sa = params.scale_a + std::int64_t(kb) * params.m;
          return Scales{row0 < params.m ? sa[row0] : 0.0f, row1 < params.m ? sa[row1] : 0.0f};
        };
        Scales scales = load_scales(0);
        // B's scales go through shared memory, kScaleChunk K blocks at a time: the same value for the
        // whole warpgroup, which the compiler keeps in a uniform register, and the move there waits
        // for the load where it is issued (an L2 round trip each K step, measured); from shared
        // memory it is a short wait. Blocks past N or K read as 0.
        const int bar_id = 1 + cw;  // a named barrier per consumer warpgroup (0 is __syncthreads')
        auto stage_scales_b = [&](int kb0) {
          named_barrier_sync(bar_id, 128);  // everyone has read the previous chunk
          for (int j = t; j < kHalves * Cfg::kScaleChunk; j += 128) {
            const int h = j / Cfg::kScaleChunk, kb = kb0 + j % Cfg::kScaleChunk, nb = tile.n * kHalves + h;
            shared.scale_b[cw][h][j % Cfg::kScaleChunk] =
                nb < column_blocks && kb < k_tiles ? params.scale_b[std::int64_t(nb) * params.kb_pitch + kb] : 0.0f;
          }
          named_barrier_sync(bar_id, 128);
        };
#pragma unroll
        for (int v = 0; v < BN::value / 2; ++v) acc[v] = 0.0f;
        for (int kt = 0; kt < k_tiles; ++kt) {
          if (kt % Cfg::kScaleChunk == 0) stage_scales_b(kt);
          if (!pipeline.consumer_wait(read)) {
            stalled = true;
            break;
          }
          auto a_tile = local_tile(sA(_, _, read.index()), make_shape(Int<Cfg::kWgmmaM>{}, BK{}), make_coord(cw, 0));
          Scales next{};
#pragma unroll
          for (int h = 0; h < kHalves; ++h) {
            auto b_half = local_tile(sB(_, _, read.index()), make_shape(HalfN{}, BK{}), make_coord(h, 0));  // (128,BK)
            gmma_k_block<Atom, GmmaMajor::K, GmmaMajor::K>(a_tile, b_half, partial, false);  // 4 × k32, from 0
            if (h == 0 && kt + 1 < k_tiles) next = load_scales(kt + 1);  // while the wgmma run
            warpgroup_wait<0>();  // the promotion reads this half's products
            warpgroup_fence_operand(partial);
            if (h == kHalves - 1) {
              pipeline.consumer_release(read);  // the stage is read: the producer may refill it
              ++read;
            }
            // Promotion: this half's K block, with its scales, into the fp32 accumulators. Values
            // 64h.. of the 64×256 layout are the half's 64 values, in the same order.
            const float b = shared.scale_b[cw][h][kt % Cfg::kScaleChunk];
            const float s0 = scales.a0 * b, s1 = scales.a1 * b;
#pragma unroll
            for (int v = 0; v < HalfN::value / 2; ++v) acc[HalfN::value / 2 * h + v] += partial[v] * ((v / 2) % 2 ? s1 : s0);
          }
          scales = next;
        }
        if (stalled) break;
        // Epilogue: the 64×256 tile leaves as bf16 in 64×64 pieces through this warpgroup's two buffers.
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

/// Empty when fp8_block_scaled takes `p`; otherwise the rule it breaks (launch::fp8_rejects: RCR, K %
/// 16 and N % 8 for TMA's 16-byte rows, the rules cuBLASLt's fp8 has too).
inline std::string fp8_block_scaled_rejects(const GemmProblem& p) {
  if (std::string why = launch::fp8_rejects(p); !why.empty()) return why;
  return launch::tma_operand_rejects(p, 1);
}

/// The one-time preparation: the TMA copies, the opt-in, a grid of the blocks the GPU holds at once
/// (at most one per tile, at most `max_blocks` when above 0). Throws std::invalid_argument for a
/// problem it rejects, operands TMA cannot describe, or a problem without its scales.
template <class Cfg = Fp8BlockCfg>
std::function<void(cudaStream_t)> prepare_fp8_block_scaled(const GemmProblem& p, const e4m3* A, const e4m3* B, bf16* C,
                                                           int max_blocks = 0) {
  if (std::string why = fp8_block_scaled_rejects(p); !why.empty()) throw std::invalid_argument("fp8_block_scaled: " + why);
  if (p.scale_a == nullptr || p.scale_b == nullptr)
    throw std::invalid_argument("fp8_block_scaled: needs the block scales of A and B (GemmProblem::scale_a, scale_b)");
  static_assert(Cfg::BK::value == kScaleBlock && Cfg::HalfN::value == kScaleBlock,
                "a K step and a half tile's columns are one scale block");
  using Storage = Fp8BlockSharedStorage<Cfg>;
  Fp8BlockParams<Cfg> params{};
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  make_rcr_operand_copies(params, p, A, B);
  params.tma_c = make_tma_copy(SM90_TMA_STORE_2D{}, make_tensor(C, make_layout(make_shape(m, n), make_stride(n, _1{}))),
                               typename Storage::Piece{});
  params.scale_a = p.scale_a;
  params.scale_b = p.scale_b;
  params.kb_pitch = int((launch::ceil_div(p.k, kScaleBlock) + 3) / 4 * 4);
  params.m = m;
  params.n = n;
  params.k = k;
  params.tiles_m = int(launch::ceil_div(p.m, Cfg::BM::value));
  params.tiles_n = int(launch::ceil_div(p.n, Cfg::BN::value));
  const std::int64_t tiles = std::int64_t(params.tiles_m) * params.tiles_n;
  auto kernel = fp8_block_scaled_kernel<Cfg>;
  constexpr std::size_t smem = shared_storage_bytes<Storage>();
  static_assert(smem <= 227 * 1024, "sm_90 gives a block at most 227 KB of shared memory");
  opt_in_dynamic_smem(kernel, smem);
  std::int64_t blocks = std::min<std::int64_t>(tiles, max_resident_clusters(kernel, 1, Cfg::kThreads, smem));
  if (max_blocks > 0) blocks = std::min<std::int64_t>(blocks, max_blocks);
  const dim3 grid{unsigned(blocks)};
  return [kernel, grid, params](cudaStream_t stream) { kernel<<<grid, Cfg::kThreads, smem, stream>>>(params); };
}

}  // namespace mm::ch12
