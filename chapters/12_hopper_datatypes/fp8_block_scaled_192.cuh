// Chapter 12, a measured variant of step 3 (appendix): fp8_block_scaled_192. fp8_block_scaled with
// a 128×192 tile whose K step is multiplied in two chunks, 128 and 64 columns, each with accumulators
// of its own, both in flight: the first chunk is promoted while the second's wgmma run
// (warpgroup_wait<1>), where fp8_block_scaled waits for each half before it can issue the next.
// (Rolling the pipeline across K steps as well, chunk 0 of the next step issued before chunk 1 of this
// one is promoted, made ptxas serialize every wgmma: C7514, "non wgmma instructions reading
// accumulator registers of a wgmma between start and end of the pipeline stage"; measured at 46-51%.)
// Registers: 96 for the sum, 64 + 32 for the chunks. A tile starts at a multiple of 64 columns, so
// the first chunk may straddle two of B's 128-column scale blocks, always at its 64th column (group 8
// of the accumulator layout: a compile-time split, the block chosen per tile).
//
//   diff fp8_block_scaled.cuh fp8_block_scaled_192.cuh   shows the change.
//
// Build: cmake -DMM_APPENDIX_STEPS=ON ... && cmake --build build --target ch12_hopper_datatypes
// Run:   build/bin/ch12_hopper_datatypes --kernel fp8_block_scaled_192
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

/// fp8_block_scaled_192: 128×192 tiles, K steps of 128 e4m3 (one scale block), multiplied in chunks
/// of 128 and 64 columns, both in flight; 4 stages, two consumer warpgroups.
struct Fp8Block192Cfg {
  using BM = _128;                     ///< rows of C per tile: 64 per consumer warpgroup
  using BN = _192;                     ///< columns of C per tile: within two blocks of B's scales
  using BK = _128;                     ///< K step: one 128-byte swizzle row of e4m3, one block of scales
  using HalfN = _128;                  ///< columns of one block of B's scales
  using Chunk0N = _128;                ///< the first chunk's columns (its wgmma's N)
  using Chunk1N = _64;                 ///< the second chunk's columns
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
struct Fp8Block192SharedStorage {
  using RingA = GmmaRing<e4m3, GmmaMajor::K, typename Cfg::BM, typename Cfg::BK, Cfg::kStages>;  ///< (BM,BK,S)
  using RingB = GmmaRing<e4m3, GmmaMajor::K, typename Cfg::BN, typename Cfg::BK, Cfg::kStages>;  ///< (BN,BK,S)
  using Piece = decltype(tile_to_shape(GmmaLayoutK_SW128_Atom<bf16>{},
                                       make_shape(Int<Cfg::kPieceM>{}, Int<Cfg::kPieceN>{})));  ///< (64,64), N contiguous
  using Pipeline = PipelineTmaAsync<Cfg::kStages>;
  alignas(1024) e4m3 a[cosize_v<RingA>];
  alignas(1024) e4m3 b[cosize_v<RingB>];
  alignas(1024) bf16 c[Cfg::kConsumers][Cfg::kCBuffers][cosize_v<Piece>];
  /// B's scales of the two column blocks the tile touches, for kScaleChunk K blocks, per consumer warpgroup.
  float scale_b[Cfg::kConsumers][2][Cfg::kScaleChunk];
  typename Pipeline::SharedStorage pipeline;
};

/// What one launch needs; the TMA copies hold their tensor maps (`__grid_constant__`).
template <class Cfg>
struct Fp8Block192Params {
  using Storage = Fp8Block192SharedStorage<Cfg>;
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
    fp8_block_scaled_192_kernel(const __grid_constant__ Fp8Block192Params<Cfg> params) {
  if constexpr (!arch::compiled_for(arch::sm90a)) {
    arch::no_code_for_this_target();
  } else {
    using Storage = Fp8Block192SharedStorage<Cfg>;
    using Pipeline = typename Storage::Pipeline;
    using BM = typename Cfg::BM;
    using BN = typename Cfg::BN;
    using BK = typename Cfg::BK;
    using HalfN = typename Cfg::HalfN;
    using Chunk0N = typename Cfg::Chunk0N;
    using Chunk1N = typename Cfg::Chunk1N;
    using Atom0 = SM90_64xNx32_F32E4M3E4M3_SS<Chunk0N::value>;  // m64n128k32
    using Atom1 = SM90_64xNx32_F32E4M3E4M3_SS<Chunk1N::value>;  // m64n64k32
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
      float acc[BN::value / 2];             // this thread's values of the warpgroup's 64×192 tile: the fp32 sum
      float partial0[Chunk0N::value / 2];   // the first chunk's products over one K block
      float partial1[Chunk1N::value / 2];   // the second chunk's
      constexpr int kHalves = 2;            // column blocks of B's scales a tile touches
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
            const int h = j / Cfg::kScaleChunk, kb = kb0 + j % Cfg::kScaleChunk, nb = n0 / HalfN::value + h;
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
          auto b0 = local_tile(sB(_, _, read.index()), make_shape(Chunk0N{}, BK{}), make_coord(0, 0));  // rows 0-127
          auto b1 = local_tile(sB(_, _, read.index()), make_shape(Chunk1N{}, BK{}), make_coord(2, 0));  // rows 128-191
          gmma_k_block<Atom0, GmmaMajor::K, GmmaMajor::K>(a_tile, b0, partial0, false);  // 4 × k32, from 0
          gmma_k_block<Atom1, GmmaMajor::K, GmmaMajor::K>(a_tile, b1, partial1, false);  // in flight with it
          const Scales next = kt + 1 < k_tiles ? load_scales(kt + 1) : Scales{};  // while the wgmma run
          // B's scales: the first block, and the one the tile's columns reach past it.
          const float first_b = shared.scale_b[cw][0][kt % Cfg::kScaleChunk];
          const float second_b = shared.scale_b[cw][1][kt % Cfg::kScaleChunk];
          warpgroup_wait<1>();  // the first chunk is done; the second still runs
          warpgroup_fence_operand(partial0);
          {
            // Columns 0-63 of the tile are in the first block; 64-127 too where the tile starts on a
            // block (n0 % 128 == 0), else in the second.
            const float upper_b = n0 % HalfN::value == 0 ? first_b : second_b;
            const float s0 = scales.a0 * first_b, s1 = scales.a1 * first_b;
            const float u0 = scales.a0 * upper_b, u1 = scales.a1 * upper_b;
#pragma unroll
            for (int v = 0; v < Chunk0N::value / 2; ++v)
              acc[v] += partial0[v] * (v / 4 < 8 ? ((v / 2) % 2 ? s1 : s0) : ((v / 2) % 2 ? u1 : u0));
            warpgroup_fence_operand(acc);
          }
          warpgroup_wait<0>();
          warpgroup_fence_operand(partial1);
          pipeline.consumer_release(read);  // the stage is read: the producer may refill it
          ++read;
          {
            // Columns 128-191 are always in the second block (n0 is a multiple of 64).
            const float s0 = scales.a0 * second_b, s1 = scales.a1 * second_b;
#pragma unroll
            for (int v = 0; v < Chunk1N::value / 2; ++v)
              acc[Chunk0N::value / 2 + v] += partial1[v] * ((v / 2) % 2 ? s1 : s0);
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
inline std::string fp8_block_scaled_192_rejects(const GemmProblem& p) {
  if (std::string why = launch::fp8_rejects(p); !why.empty()) return why;
  return launch::tma_operand_rejects(p, 1);
}

/// The one-time preparation: the TMA copies, the opt-in, a grid of the blocks the GPU holds at once
/// (at most one per tile, at most `max_blocks` when above 0). Throws std::invalid_argument for a
/// problem it rejects, operands TMA cannot describe, or a problem without its scales.
template <class Cfg = Fp8Block192Cfg>
std::function<void(cudaStream_t)> prepare_fp8_block_scaled_192(const GemmProblem& p, const e4m3* A, const e4m3* B, bf16* C,
                                                               int max_blocks = 0) {
  if (std::string why = fp8_block_scaled_192_rejects(p); !why.empty()) throw std::invalid_argument("fp8_block_scaled_192: " + why);
  if (p.scale_a == nullptr || p.scale_b == nullptr)
    throw std::invalid_argument("fp8_block_scaled_192: needs the block scales of A and B (GemmProblem::scale_a, scale_b)");
  static_assert(Cfg::BK::value == kScaleBlock && Cfg::HalfN::value == kScaleBlock, "a K step and a scale block: 128");
  static_assert(Cfg::BN::value % 64 == 0 && Cfg::Chunk0N::value == 128 && Cfg::Chunk1N::value == 64,
                "the straddle rule of the kernel: chunks of 128 and 64, tiles starting at multiples of 64");
  using Storage = Fp8Block192SharedStorage<Cfg>;
  Fp8Block192Params<Cfg> params{};
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
  auto kernel = fp8_block_scaled_192_kernel<Cfg>;
  constexpr std::size_t smem = shared_storage_bytes<Storage>();
  static_assert(smem <= 227 * 1024, "sm_90 gives a block at most 227 KB of shared memory");
  opt_in_dynamic_smem(kernel, smem);
  std::int64_t blocks = std::min<std::int64_t>(tiles, max_resident_clusters(kernel, 1, Cfg::kThreads, smem));
  if (max_blocks > 0) blocks = std::min<std::int64_t>(blocks, max_blocks);
  const dim3 grid{unsigned(blocks)};
  return [kernel, grid, params](cudaStream_t stream) { kernel<<<grid, Cfg::kThreads, smem, stream>>>(params); };
}

}  // namespace mm::ch12
