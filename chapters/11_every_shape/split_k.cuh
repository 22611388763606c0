// Chapter 11, step 2: split_k. tile_shapes with each tile's K cut into slices that different blocks
// multiply at the same time, when there are too few tiles to fill the GPU.
//
// At 1024³ the best tile still gives 64 tiles for 132 SMs; at M = 128, N = 8192 (a batch of 128
// tokens through an 8192×8192 layer) 128×128 tiles give 64, each with 128 K steps to walk alone. K is
// the one dimension left: with S slices, each (tile, slice) is a unit of work
// (gemm/tile_scheduler.hpp's SplitKTileScheduler), S × tiles units fill the SMs, and each unit walks
// 1/S of K. The price: the S partial tiles must be added. The units of slices 0 .. S-2 store their
// fp32 accumulators in a workspace and count themselves in; the unit of the last slice waits for
// them, adds their partial sums in slice order and stores C (gemm/split_k_fixup.hpp). Deterministic:
// the same sum in the same order on every run, bit for bit (tests/ch11 checks it); no atomics on
// the data. (Adding the slices in a second kernel is simpler and was measured first: its launch and
// its extra pass cost more than the split saved at 1024³; the page's appendix.)
//
// When the tiles fill the GPU on their own (choose_splits gives 1), the units are the tiles and the
// kernel does what tile_shapes does.
//
//   diff tile_shapes.cuh split_k.cuh   shows the change: the units and their K ranges in both roles'
//   loops, the fixup before the epilogue, the workspace.
//
// Build: cmake --build build --target ch11_every_shape
// Run:   build/bin/ch11_every_shape --kernel split_k
#pragma once

#include <memory>

#include "11_every_shape/tile_shapes.cuh"
#include "gemm/split_k_fixup.hpp"

namespace mm::ch11 {

/// tile_shapes' parameters plus the split-K schedule and the fixup's workspace.
template <class Cfg>
struct SplitKParams : Params<Cfg> {
  int splits;                             ///< K slices per tile (1: no workspace)
  int k_steps_per_split;                  ///< K steps of each slice but maybe the last
  SplitKFixup<Cfg::BN::value / 2> fixup;  ///< partial sums of slices 0 .. S-2 and a counter per tile
};

/// tile_shapes' kernel over units of (tile, K slice). sm_90a; a stub elsewhere.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1) split_k_kernel(const __grid_constant__ SplitKParams<Cfg> params) {
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
        // The change of this step: slices 0 .. S-2 leave a partial sum; the last slice adds them.
        const int bar_id = 1 + cw;  // a named barrier per consumer warpgroup (0 is __syncthreads')
        if (u.split < params.splits - 1) {
          store_partial(acc, params.fixup.slot(u.split, u.tile_index, cw), t);
          __threadfence();                   // this thread's partial, visible to the GPU ...
          named_barrier_sync(bar_id, 128);   // ... and the whole warpgroup's, before it is counted in
          if (t == 0) signal_partial(params.fixup.counter(u.tile_index, cw));
          continue;
        }
        if (params.splits > 1) {
          if (t == 0 && !wait_partials(params.fixup.counter(u.tile_index, cw), params.splits - 1)) stalled = true;
          named_barrier_sync(bar_id, 128);   // thread 0 has seen every slice counted in
          for (int s = 0; s < params.splits - 1; ++s) add_partial(acc, params.fixup.slot(s, u.tile_index, cw), t);
        }
        // The whole of K: tile_shapes' epilogue, 64×64 pieces out by TMA.
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
    if (stalled) __trap();  // a wait timed out: a deadlock (the watchdog)
  }
}

/// split_k's rule: tile_shapes' (C goes out by TMA when K is not split).
inline std::string split_k_rejects(const GemmProblem& p) { return tile_shapes_rejects(p); }

/// How many K slices for `tiles` tiles of `k_steps` K steps on `sms` SMs: 1 when the tiles fill at
/// least half the GPU; otherwise as many as bring the units to about one per SM, keeping at least
/// kMinKSteps K steps per slice (a slice's prologue, epilogue and fixup must stay small beside its
/// loop: at 1000³, 64 tiles of 128×128 split into 2 slices of 8 steps ran at 69% of cuBLAS, unsplit
/// at 85%).
inline int choose_splits(std::int64_t tiles, int k_steps, int sms) {
  constexpr int kMinKSteps = 16;
  if (2 * tiles >= sms) return 1;
  const std::int64_t by_sms = sms / tiles, by_k = std::max(1, k_steps / kMinKSteps);
  return int(std::max<std::int64_t>(1, std::min(by_sms, by_k)));
}

/// Allocates the fixup's workspace for `splits` slices of `tiles` tiles (partial sums, then the
/// counters, zeroed) and points `fixup` at it; the returned pointer owns it. Throws std::runtime_error
/// naming `who` when the GPU has no room.
template <class Fixup>
std::shared_ptr<void> make_split_k_workspace(Fixup& fixup, int splits, std::int64_t tiles, int consumers, const char* who) {
  const std::size_t partial = std::size_t(Fixup::partial_bytes(splits, tiles, consumers));
  const std::size_t counters = std::size_t(tiles) * consumers * sizeof(int);
  void* w = nullptr;
  if (cudaError_t e = cudaMalloc(&w, partial + counters); e != cudaSuccess)
    throw std::runtime_error(std::string(who) + ": cannot allocate the split-K workspace: " + cudaGetErrorString(e));
  std::shared_ptr<void> owner(w, [](void* q) { cudaFree(q); });
  if (cudaError_t e = cudaMemset(static_cast<char*>(w) + partial, 0, counters); e != cudaSuccess)
    throw std::runtime_error(std::string(who) + ": cannot zero the split-K counters: " + cudaGetErrorString(e));
  fixup.partials = static_cast<float*>(w);
  fixup.counters = reinterpret_cast<int*>(static_cast<char*>(w) + partial);
  fixup.tiles = tiles;
  fixup.consumers = consumers;
  return owner;
}

/// split_k's preparation with the tile and the number of slices given (`splits` <= 0: choose_splits).
/// The workspace is allocated here, once per problem, and freed with the returned launch. The units
/// of one launch wait for each other: the grid is never larger than what the GPU holds at once.
template <class Cfg>
std::function<void(cudaStream_t)> prepare_split_k_with(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C,
                                                       int splits = 0, int max_blocks = 0) {
  if (std::string why = split_k_rejects(p); !why.empty()) throw std::invalid_argument("split_k: " + why);
  const int sms = device_sm_count();
  SplitKParams<Cfg> params{};
  set_tile_params<Cfg>(params, p, A, B, C);  // C by TMA when K is not split (the map is made either way)
  const GroupedTileScheduler tiles{params.tiles_m, params.tiles_n, Cfg::kGroupM};
  const int k_steps = int(launch::ceil_div(p.k, Cfg::BK::value));
  const SplitKTileScheduler units =
      SplitKTileScheduler::make(tiles, k_steps, splits > 0 ? splits : choose_splits(tiles.size(), k_steps, sms));
  params.splits = units.splits;
  params.k_steps_per_split = units.k_steps_per_split;
  // The fixup's workspace: slots for slices 0 .. S-2 and a zeroed counter per (tile, warpgroup),
  // allocated once per problem (the counters are back at zero after every launch).
  std::shared_ptr<void> workspace;
  if (units.splits > 1)
    workspace = make_split_k_workspace(params.fixup, units.splits, tiles.size(), Cfg::kConsumers, "split_k");
  auto kernel = split_k_kernel<Cfg>;
  constexpr std::size_t smem = shared_storage_bytes<SharedStorage<Cfg>>();
  opt_in_dynamic_smem(kernel, smem);
  const dim3 grid = persistent_grid(kernel, Cfg::kThreads, smem, units.size(), max_blocks);
  return [kernel, grid, params, workspace](cudaStream_t stream) { kernel<<<grid, Cfg::kThreads, smem, stream>>>(params); };
}

/// The step: tile_shapes' tile for this problem, K split as choose_splits says.
inline std::function<void(cudaStream_t)> prepare_split_k(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C,
                                                         int max_blocks = 0) {
  if (std::string why = split_k_rejects(p); !why.empty()) throw std::invalid_argument("split_k: " + why);
  return with_tile_shape(choose_tile_shape(p, device_sm_count()), [&](auto cfg) {
    return prepare_split_k_with<decltype(cfg)>(p, A, B, C, 0, max_blocks);
  });
}

}  // namespace mm::ch11
