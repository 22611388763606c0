// Chapter 11, appendix: split_k_second_kernel. split_k as first written: every slice, the last one
// too, stores its fp32 partial C (row-major, M×N per slice) with the register epilogue, and a second
// kernel (gemm/reduce_split_k.cuh) adds the slices in order and writes C. Simpler than split_k's
// fixup (no unit waits for another), as deterministic, and measured slower where split-K matters:
// the second launch and the extra pass over S partials cost more than the split saved (the page's
// appendix). Built with MM_APPENDIX_STEPS.
//
//   diff split_k_second_kernel.cuh split_k.cuh   shows what the fixup changed.
//
// Run:   build/bin/ch11_every_shape --kernel split_k_second_kernel   (a build with -DMM_APPENDIX_STEPS=ON)
#pragma once

#include <memory>

#include "11_every_shape/split_k.cuh"
#include "gemm/reduce_split_k.cuh"

namespace mm::ch11 {

/// tile_shapes' parameters plus the split-K schedule and the workspace of partial sums.
template <class Cfg>
struct SplitKSecondKernelParams : Params<Cfg> {
  int splits;             ///< K slices per tile (1: no workspace, C stored by TMA)
  int k_steps_per_split;  ///< K steps of each slice but maybe the last
  float* workspace;       ///< splits × M × N fp32: slice s's partial C at workspace + s·M·N, row-major
};

/// tile_shapes' kernel over units of (tile, K slice). sm_90a; a stub elsewhere.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1) split_k_second_kernel_kernel(const __grid_constant__ SplitKSecondKernelParams<Cfg> params) {
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
    __syncthreads();

    // The change of this step: units of (tile, K slice) instead of tiles.
    const SplitKTileScheduler units{GroupedTileScheduler{params.tiles_m, params.tiles_n, Cfg::kGroupM},
                                    int(launch::ceil_div(params.k, BK::value)), params.splits, params.k_steps_per_split};
    const std::int64_t first = blockIdx.x, step = gridDim.x;
    bool stalled = false;

    if (wg == 0) {
      // ---- Producer: the K steps of each unit's slice.
      warpgroup_reg_dealloc<Cfg::kProducerRegs>();
      if (t == 0) {
        auto write = make_producer_start_state<Pipeline>();
        for (std::int64_t i = first; i < units.size() && !stalled; i += step) {
          const WorkUnit u = units.unit(i);
          const int m0 = u.tile.m * BM::value, n0 = u.tile.n * BN::value;
          for (int kt = u.k_begin; kt < u.k_end; ++kt) {
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
      // ---- Consumers: the unit's slice of K, then C (one slice) or a partial sum (several).
      warpgroup_reg_alloc<Cfg::kConsumerRegs>();
      const int cw = wg - 1;
      typename Pipeline::State read;
      typename Pipeline::State release;
      float acc[BN::value / 2];
      int pieces = 0;  // C pieces sent: piece p through buffer p % 2 (tile_shapes)
      for (std::int64_t i = first; i < units.size(); i += step) {
        const WorkUnit u = units.unit(i);
        const int m0 = u.tile.m * BM::value + Cfg::kWgmmaM * cw, n0 = u.tile.n * BN::value;
        for (int kt = u.k_begin; kt < u.k_end; ++kt) {
          if (!pipeline.consumer_wait(read)) {
            stalled = true;
            break;
          }
          auto a_tile = local_tile(sA(_, _, read.index()), make_shape(Int<Cfg::kWgmmaM>{}, BK{}), make_coord(cw, 0));
          gmma_k_block<Atom, GmmaMajor::K, GmmaMajor::K>(a_tile, sB(_, _, read.index()), acc, kt > u.k_begin);
          warpgroup_wait<1>();
          warpgroup_fence_operand(acc);
          if (kt > u.k_begin) {
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
        if (params.splits > 1) {
          // A partial sum: fp32, straight from the registers into slice u.split of the workspace.
          float* slice = params.workspace + std::int64_t(u.split) * params.m * params.n;
          store_accumulators_strided<Atom>(acc, slice, params.n, 1, m0, n0, params.m, params.n, t);
          continue;
        }
        // The whole of K: tile_shapes' epilogue, 64×64 pieces out by TMA.
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

/// split_k's preparation with the tile and the number of slices given (`splits` <= 0: choose_splits).
/// The workspace is allocated here, once per problem, and freed with the returned launch.
template <class Cfg>
std::function<void(cudaStream_t)> prepare_split_k_second_kernel_with(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C,
                                                       int splits = 0, int max_blocks = 0) {
  if (std::string why = split_k_rejects(p); !why.empty()) throw std::invalid_argument("split_k_second_kernel: " + why);
  const int sms = device_sm_count();
  SplitKSecondKernelParams<Cfg> params{};
  set_tile_params<Cfg>(params, p, A, B, C);  // C by TMA when K is not split (the map is made either way)
  const GroupedTileScheduler tiles{params.tiles_m, params.tiles_n, Cfg::kGroupM};
  const int k_steps = int(launch::ceil_div(p.k, Cfg::BK::value));
  const SplitKTileScheduler units =
      SplitKTileScheduler::make(tiles, k_steps, splits > 0 ? splits : choose_splits(tiles.size(), k_steps, sms));
  params.splits = units.splits;
  params.k_steps_per_split = units.k_steps_per_split;
  std::shared_ptr<float> workspace;
  if (units.splits > 1) {
    float* w = nullptr;
    const std::size_t bytes = std::size_t(units.splits) * std::size_t(p.m) * std::size_t(p.n) * sizeof(float);
    if (cudaError_t e = cudaMalloc(&w, bytes); e != cudaSuccess)
      throw std::runtime_error(std::string("split_k_second_kernel: cannot allocate the workspace: ") + cudaGetErrorString(e));
    workspace.reset(w, [](float* q) { cudaFree(q); });
  }
  params.workspace = workspace.get();
  auto kernel = split_k_second_kernel_kernel<Cfg>;
  constexpr std::size_t smem = shared_storage_bytes<SharedStorage<Cfg>>();
  opt_in_dynamic_smem(kernel, smem);
  const dim3 grid = persistent_grid(kernel, Cfg::kThreads, smem, units.size(), max_blocks);
  const std::int64_t count = p.m * p.n;
  return [kernel, grid, params, workspace, count, C, sms](cudaStream_t stream) {
    kernel<<<grid, Cfg::kThreads, smem, stream>>>(params);
    if (params.splits > 1) launch_reduce_split_k_bf16(workspace.get(), params.splits, count, C, sms, stream);
  };
}

/// The step: tile_shapes' tile for this problem, K split as choose_splits says.
inline std::function<void(cudaStream_t)> prepare_split_k_second_kernel(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C,
                                                         int max_blocks = 0) {
  if (std::string why = split_k_rejects(p); !why.empty()) throw std::invalid_argument("split_k_second_kernel: " + why);
  return with_tile_shape(choose_tile_shape(p, device_sm_count()), [&](auto cfg) {
    return prepare_split_k_second_kernel_with<decltype(cfg)>(p, A, B, C, 0, max_blocks);
  });
}

}  // namespace mm::ch11
