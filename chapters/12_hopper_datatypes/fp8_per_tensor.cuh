// Chapter 12, step 2: fp8_per_tensor. tf32_wgmma's kernel with fp8 e4m3 operands, each with one
// scale for the whole tensor, fp32 accumulation and a bf16 C: C = scale_a·scale_b·(A·Bᵀ), the GEMM
// of an fp8 linear layer (TransformerEngine's "delayed scaling", cuBLASLt's A/B_SCALE_POINTER).
//
// wgmma's m64nNk32 reads 32 e4m3 of each row of A and B (32 bytes, as tf32's k8 and bf16's k16) and
// does twice bf16's multiply-adds per cycle: 1,979 dense TFLOP/s on the datasheet. Against tf32_wgmma:
//
//   the K step     128: one 128-byte swizzle row holds 128 e4m3. A stage is still 48 KB, 4 of them,
//                  and a K step is 4 wgmma k32, as long as tf32's 4 × k8 but with 4× the K.
//   the scales     two floats in device memory (where an amax reduction on the GPU leaves them), read
//                  once per thread; the epilogue multiplies the accumulators by their product. The
//                  main loop does not see them: a per-tensor scale factors out of the whole sum.
//   the epilogue   C is bf16 again: chapter 10's stmatrix pieces of 64×64.
//   accumulation   each wgmma adds its products into the fp32 accumulators as the tensor core does
//                  for fp8, with fewer bits than fp32 (the page's accuracy section): cuBLASLt's
//                  CUBLASLT_MATMUL_DESC_FAST_ACCUM = 1, which is what this step is measured against.
//
//   diff tf32_wgmma.cuh fp8_per_tensor.cuh   shows the change.
//
// Build: cmake --build build --target ch12_hopper_datatypes
// Run:   build/bin/ch12_hopper_datatypes --kernel fp8_per_tensor
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

namespace mm::ch12 {

using bf16 = __nv_bfloat16;
using e4m3 = __nv_fp8_e4m3;

/// fp8_per_tensor: 128×256 tiles, K steps of 128 e4m3 (128 bytes), 4 stages, two consumer warpgroups.
struct Fp8Cfg {
  using BM = _128;                     ///< rows of C per tile: 64 per consumer warpgroup
  using BN = _256;                     ///< columns of C per tile: the wgmma's N
  using BK = _128;                     ///< K step: one 128-byte swizzle row of e4m3
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

/// The block's shared memory: the two rings (e4m3), the bf16 C pieces, the pipeline's barriers.
template <class Cfg>
struct Fp8SharedStorage {
  using RingA = GmmaRing<e4m3, GmmaMajor::K, typename Cfg::BM, typename Cfg::BK, Cfg::kStages>;  ///< (BM,BK,S)
  using RingB = GmmaRing<e4m3, GmmaMajor::K, typename Cfg::BN, typename Cfg::BK, Cfg::kStages>;  ///< (BN,BK,S)
  using Piece = decltype(tile_to_shape(GmmaLayoutK_SW128_Atom<bf16>{},
                                       make_shape(Int<Cfg::kPieceM>{}, Int<Cfg::kPieceN>{})));  ///< (64,64), N contiguous
  using Pipeline = PipelineTmaAsync<Cfg::kStages>;
  alignas(1024) e4m3 a[cosize_v<RingA>];
  alignas(1024) e4m3 b[cosize_v<RingB>];
  alignas(1024) bf16 c[Cfg::kConsumers][Cfg::kCBuffers][cosize_v<Piece>];
  typename Pipeline::SharedStorage pipeline;
};

/// What one launch needs; the TMA copies hold their tensor maps (`__grid_constant__`).
template <class Cfg>
struct Fp8Params {
  using Storage = Fp8SharedStorage<Cfg>;
  TmaCopy<SM90_TMA_LOAD_2D, e4m3, GmmaStage<typename Storage::RingA>> tma_a;  ///< A's boxes into a stage
  TmaCopy<SM90_TMA_LOAD_2D, e4m3, GmmaStage<typename Storage::RingB>> tma_b;  ///< B's boxes into a stage
  TmaCopy<SM90_TMA_STORE_2D, bf16, typename Storage::Piece> tma_c;            ///< a piece of C out
  const float* scale_a;  ///< A's per-tensor scale (device memory)
  const float* scale_b;  ///< B's per-tensor scale (device memory)
  int m, n, k;   ///< C is M×N, K the inner dimension
  int tiles_m;   ///< tiles along M
  int tiles_n;   ///< tiles along N
};

/// C = scale_a·scale_b·A·Bᵀ with e4m3 A and B, bf16 C. wgmma and setmaxnreg need sm_90a: any other
/// device pass compiles a stub which the harness never launches.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1) fp8_per_tensor_kernel(const __grid_constant__ Fp8Params<Cfg> params) {
  if constexpr (!arch::compiled_for(arch::sm90a)) {
    arch::no_code_for_this_target();
  } else {
    using Storage = Fp8SharedStorage<Cfg>;
    using Pipeline = typename Storage::Pipeline;
    using BM = typename Cfg::BM;
    using BN = typename Cfg::BN;
    using BK = typename Cfg::BK;
    using Atom = SM90_64xNx32_F32E4M3E4M3_SS<BN::value>;  // m64nNk32, both operands K-major
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
      const float scale = *params.scale_a * *params.scale_b;  // C = scale · (codes of A)·(codes of B)ᵀ
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
          gmma_k_block<Atom, GmmaMajor::K, GmmaMajor::K>(a_tile, sB(_, _, read.index()), acc, kt > 0);  // 4 × k32
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
        // Epilogue: scaled, the 64×256 tile leaves as bf16 in 64×64 pieces through two buffers.
#pragma unroll
        for (int v = 0; v < BN::value / 2; ++v) acc[v] *= scale;
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

/// Empty when fp8_per_tensor takes `p`; otherwise the rule it breaks (launch::fp8_rejects: RCR, K % 16
/// and N % 8 for TMA's 16-byte rows, the rules cuBLASLt's fp8 has too).
inline std::string fp8_per_tensor_rejects(const GemmProblem& p) {
  if (std::string why = launch::fp8_rejects(p); !why.empty()) return why;
  return launch::tma_operand_rejects(p, 1);
}

/// The one-time preparation: the TMA copies, the opt-in, a grid of the blocks the GPU holds at once
/// (at most one per tile, at most `max_blocks` when above 0). Throws std::invalid_argument for a
/// problem it rejects, operands TMA cannot describe, or a problem without its scales.
template <class Cfg = Fp8Cfg>
std::function<void(cudaStream_t)> prepare_fp8_per_tensor(const GemmProblem& p, const e4m3* A, const e4m3* B, bf16* C,
                                                         int max_blocks = 0) {
  if (std::string why = fp8_per_tensor_rejects(p); !why.empty()) throw std::invalid_argument("fp8_per_tensor: " + why);
  if (p.scale_a == nullptr || p.scale_b == nullptr)
    throw std::invalid_argument("fp8_per_tensor: needs the per-tensor scales of A and B (GemmProblem::scale_a, scale_b)");
  using Storage = Fp8SharedStorage<Cfg>;
  Fp8Params<Cfg> params{};
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  make_rcr_operand_copies(params, p, A, B);
  params.tma_c = make_tma_copy(SM90_TMA_STORE_2D{}, make_tensor(C, make_layout(make_shape(m, n), make_stride(n, _1{}))),
                               typename Storage::Piece{});
  params.scale_a = p.scale_a;
  params.scale_b = p.scale_b;
  params.m = m;
  params.n = n;
  params.k = k;
  params.tiles_m = int(launch::ceil_div(p.m, Cfg::BM::value));
  params.tiles_n = int(launch::ceil_div(p.n, Cfg::BN::value));
  const std::int64_t tiles = std::int64_t(params.tiles_m) * params.tiles_n;
  auto kernel = fp8_per_tensor_kernel<Cfg>;
  constexpr std::size_t smem = shared_storage_bytes<Storage>();
  static_assert(smem <= 227 * 1024, "sm_90 gives a block at most 227 KB of shared memory");
  opt_in_dynamic_smem(kernel, smem);
  std::int64_t blocks = std::min<std::int64_t>(tiles, max_resident_clusters(kernel, 1, Cfg::kThreads, smem));
  if (max_blocks > 0) blocks = std::min<std::int64_t>(blocks, max_blocks);
  const dim3 grid{unsigned(blocks)};
  return [kernel, grid, params](cudaStream_t stream) { kernel<<<grid, Cfg::kThreads, smem, stream>>>(params); };
}

}  // namespace mm::ch12
