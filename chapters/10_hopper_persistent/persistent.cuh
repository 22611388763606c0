// Chapter 10, step 2: persistent. warp_specialized with one change: instead of one block per tile,
// a grid of as many blocks as the GPU holds at once (132 on an H200: one per SM), each looping over
// tiles blockIdx.x, blockIdx.x + gridDim.x, ... of the same grouped order. What that buys: the
// producer runs straight on into the next tile's first stages while the consumers are still storing
// the last one (the ring's states carry over from tile to tile), and no block pays a launch and a
// prologue per tile. Correct whether or not every block is resident: no block waits for another.
//
//   diff warp_specialized.cuh persistent.cuh   shows the change: a loop over tiles around each role's
//   K loop, and the grid from the driver's occupancy (gemm/cluster_launch.hpp).
//
// The shared memory, the parameters and the TMA copies are warp_specialized's.
//
// Build: cmake --build build --target ch10_hopper_persistent
// Run:   build/bin/ch10_hopper_persistent --kernel persistent
#pragma once

#include <algorithm>

#include "10_hopper_persistent/warp_specialized.cuh"

namespace mm::ch10 {

/// persistent: warp_specialized's tile and roles, blocks looping over tiles.
struct PersistentCfg : WarpSpecializedCfg {};

/// A grid of the blocks the GPU holds at once, each looping over tiles blockIdx.x, blockIdx.x +
/// gridDim.x, ... of the grouped order. wgmma and setmaxnreg need sm_90a: any other device pass
/// compiles a stub (layout/arch.hpp) which the harness never launches.
template <class Cfg, GmmaMajor MajorB>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    persistent_kernel(const __grid_constant__ Params<Cfg, MajorB> params) {
  if constexpr (!arch::compiled_for(arch::sm90a)) {
    arch::no_code_for_this_target();
  } else {
    using Storage = SharedStorage<Cfg, MajorB>;
    using Pipeline = typename Storage::Pipeline;
    using BM = typename Cfg::BM;
    using BN = typename Cfg::BN;
    using BK = typename Cfg::BK;
    using Atom = SM90_64xNx16_F32BF16BF16_SS<BN::value, GmmaMajor::K, MajorB>;  // B K-major (RCR) or MN-major (RRR)
    extern __shared__ __align__(1024) std::uint8_t smem_raw[];  // 1024-byte aligned: gemm/smem.hpp
    Storage& shared = shared_storage<Storage>(smem_raw);
    auto sA = make_tensor(make_smem_ptr(shared.a), typename Storage::RingA{});  // (BM,BK,S)
    auto sB = make_tensor(make_smem_ptr(shared.b), typename Storage::RingB{});  // (BN,BK,S)

    const int wg = int(threadIdx.x) / 128, t = int(threadIdx.x) % 128;
    typename Pipeline::Params pipe_params;
    pipe_params.transaction_bytes = params.tma_a.kTransactionBytes + params.tma_b.kTransactionBytes;
    pipe_params.consumer_warpgroups = Cfg::kConsumers;
    pipe_params.is_leader = threadIdx.x == 0;
    pipe_params.watchdog = params.watchdog;  // the waits' bound and record (gemm/watchdog.hpp)
    Pipeline pipeline(shared.pipeline, pipe_params, int(threadIdx.x));
    if (threadIdx.x == 0) {
      params.tma_a.prefetch();
      params.tma_b.prefetch();
    }
    __syncthreads();  // the barriers are initialized before anyone uses them

    const GroupedTileScheduler tiles{params.tiles_m, params.tiles_n, Cfg::kGroupM};
    const std::int64_t first = blockIdx.x, step = gridDim.x;  // this block's tiles: first, first + step, ...
    const int k_tiles = int(launch::ceil_div(params.k, BK::value));

    if (wg == 0) {
      // ---- Producer: one thread issues every load; the warpgroup's registers go to the consumers.
      warpgroup_reg_dealloc<Cfg::kProducerRegs>();
      if (t == 0) {
        // The ring's state runs on across tiles: the next tile's first stages fill while the
        // consumers still multiply (or store) the last one.
        auto write = make_producer_start_state<Pipeline>();
        for (std::int64_t i = first; i < tiles.size(); i += step) {
          const TileCoord tile = tiles.tile(i);
          const int m0 = tile.m * BM::value, n0 = tile.n * BN::value;
          for (int kt = 0; kt < k_tiles; ++kt) {
            pipeline.producer_acquire(write);  // every reader of this stage has released it
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
      typename Pipeline::State read;     // the stage to multiply next
      typename Pipeline::State release;  // the oldest stage not yet released: one behind (a group in flight)
      float acc[BN::value / 2];          // this thread's values of the warpgroup's 64×256 tile (the atom's C layout)
      for (std::int64_t i = first; i < tiles.size(); i += step) {
        const TileCoord tile = tiles.tile(i);
        const int m0 = tile.m * BM::value + Cfg::kWgmmaM * cw, n0 = tile.n * BN::value;  // this warpgroup's rows
        for (int kt = 0; kt < k_tiles; ++kt) {
          pipeline.consumer_wait(read);
          auto a_tile = local_tile(sA(_, _, read.index()), make_shape(Int<Cfg::kWgmmaM>{}, BK{}), make_coord(cw, 0));  // (64,BK)
          gmma_k_block<Atom, GmmaMajor::K, MajorB>(a_tile, sB(_, _, read.index()), acc, kt > 0);  // B: (BN,BK)
          warpgroup_wait<1>();  // the previous step's group has completed: its stage is free
          warpgroup_fence_operand(acc);
          if (kt > 0) {
            pipeline.consumer_release(release);
            ++release;
          }
          ++read;
        }
        warpgroup_wait<0>();
        warpgroup_fence_operand(acc);
        pipeline.consumer_release(release);  // the tile's last stage
        ++release;
        // Epilogue: each accumulator to its place in C, as the atom's C layout says.
        store_accumulators_bf16<Atom>(acc, params.c, params.n, m0, n0, params.m, params.n, params.c_pairs, t);
      }
    }
    watchdog_trap_if_gave_up(pipeline.watchdog(), params.watchdog.record);
  }
}

/// Empty when the kernel takes `p`: warp_specialized's rule.
template <class Cfg>
std::string persistent_rejects(const GemmProblem& p) {
  return warp_specialized_rejects<Cfg>(p);
}

/// The one-time preparation of a launch (outside any timed region): the TMA copies, the
/// shared-memory opt-in, and the grid: as many blocks as the GPU holds at once (read from the
/// driver), at most one per tile, and at most `max_blocks` when it is above 0 (tests: a few blocks
/// looping over many tiles). Returns what runs the kernel on a stream. Throws std::invalid_argument
/// for a problem the kernel rejects or operands TMA cannot describe, std::runtime_error when the GPU
/// cannot hold one block.
template <class Cfg>
std::function<void(cudaStream_t)> prepare_persistent(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C,
                                                     int max_blocks = 0) {
  if (std::string why = persistent_rejects<Cfg>(p); !why.empty()) throw std::invalid_argument("persistent: " + why);
  auto prepare = [&](auto major_b) -> std::function<void(cudaStream_t)> {
    constexpr GmmaMajor MajorB = decltype(major_b)::value;
    Params<Cfg, MajorB> params{};
    make_operand_copies(params, p, A, B);
    params.watchdog = host_watchdog();
    params.c = C;
    params.m = int(p.m);
    params.n = int(p.n);
    params.k = int(p.k);
    params.c_pairs = reinterpret_cast<std::uintptr_t>(C) % 4 == 0 && p.n % 2 == 0;
    params.tiles_m = int(launch::ceil_div(p.m, Cfg::BM::value));
    params.tiles_n = int(launch::ceil_div(p.n, Cfg::BN::value));
    const std::int64_t tiles = std::int64_t(params.tiles_m) * params.tiles_n;
    auto kernel = persistent_kernel<Cfg, MajorB>;
    constexpr std::size_t smem = shared_storage_bytes<SharedStorage<Cfg, MajorB>>();
    static_assert(smem <= 227 * 1024, "sm_90 gives a block at most 227 KB of shared memory");
    opt_in_dynamic_smem(kernel, smem);
    std::int64_t blocks = std::min<std::int64_t>(tiles, max_resident_clusters(kernel, 1, Cfg::kThreads, smem));
    if (max_blocks > 0) blocks = std::min<std::int64_t>(blocks, max_blocks);
    const dim3 grid{unsigned(blocks)};
    return [kernel, grid, params](cudaStream_t stream) { kernel<<<grid, Cfg::kThreads, smem, stream>>>(params); };
  };
  if (p.b == Order::col) return prepare(std::integral_constant<GmmaMajor, GmmaMajor::K>{});
  return prepare(std::integral_constant<GmmaMajor, GmmaMajor::MN>{});
}

}  // namespace mm::ch10
