// Chapter 11, step 3: stream_k. split_k's kernel with the work cut evenly across the blocks instead
// of evenly across each tile's K.
//
// split_k fixes the case of too few tiles by cutting every tile into S slices; it cannot help a
// problem with many tiles that do not make whole rounds: at 6000³, 1128 tiles of 128×256 make 8.55
// rounds of 132 SMs, the ninth with 72 tiles while 60 SMs idle (5% of the time). Stream-K (Osama et
// al., PPoPP 2023; CUTLASS's stream-K tile scheduler) leaves the whole rounds as they are and spreads
// the K steps of the remaining tiles evenly over all blocks: each block multiplies 72/132 of a tile's K
// steps, which may end in one tile and go on in the next (gemm/tile_scheduler.hpp's
// StreamKTileScheduler: the pieces run in an order that keeps the blocks at the same K steps, for L2).
// A tile whose K steps are shared comes out of the piece that holds its last K step (the finisher),
// after it has added the partial sums of the pieces that other blocks multiplied; a block leaves at
// most one partial sum (its first piece), so the workspace is a slot per block, and the finisher adds
// the slots of the blocks before it in block order: C is bit-identical run to run (tests/ch11 checks
// it), no atomics on the data.
//
// The tile no longer needs to fit the rounds, so it is always the most efficient one, 128×256; and
// fewer tiles than SMs (1024³: 32 tiles) are spread the same way, over all the SMs.
//
//   diff split_k.cuh stream_k.cuh   shows the change: the block's units, the slot per block, the
//   finisher adding the slots of the blocks before it.
//
// Build: cmake --build build --target ch11_every_shape
// Run:   build/bin/ch11_every_shape --kernel stream_k
#pragma once

#include <memory>

#include "11_every_shape/split_k.cuh"

namespace mm::ch11 {

/// tile_shapes' parameters plus the stream-K schedule and the fixup's workspace.
template <class Cfg>
struct StreamKParams : Params<Cfg> {
  std::int64_t sk_tiles;                  ///< tiles shared by K ranges (StreamKTileScheduler)
  /// split_k's workspace with a slot and a counter per block where split_k has them per tile and
  /// slice: slot(0, b, wg) holds block b's one partial sum, counter(b, wg) says it is there.
  SplitKFixup<Cfg::BN::value / 2> fixup;
};

/// tile_shapes' kernel over each block's stream-K pieces, then its whole tiles. sm_90a; a stub elsewhere.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1) stream_k_kernel(const __grid_constant__ StreamKParams<Cfg> params) {
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

    // The change of this step: this block's units, pieces of tiles then whole tiles.
    const int k_steps = int(launch::ceil_div(params.k, BK::value));
    const StreamKTileScheduler units{GroupedTileScheduler{params.tiles_m, params.tiles_n, Cfg::kGroupM}, k_steps,
                                     int(gridDim.x), params.sk_tiles};
    const int block = int(blockIdx.x), n_units = units.units(block);
    bool stalled = false;

    if (wg == 0) {
      // ---- Producer: the K steps of each unit.
      warpgroup_reg_dealloc<Cfg::kProducerRegs>();
      if (t == 0) {
        auto write = make_producer_start_state<Pipeline>();
        for (int i = 0; i < n_units && !stalled; ++i) {
          const WorkUnit u = units.unit(block, i);
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
      // ---- Consumers: the unit's K steps, then C (a whole tile, or a finisher's) or a partial sum.
      warpgroup_reg_alloc<Cfg::kConsumerRegs>();
      const int cw = wg - 1;
      typename Pipeline::State read;
      typename Pipeline::State release;
      float acc[BN::value / 2];
      int pieces = 0;  // C pieces sent: piece p through buffer p % 2 (tile_shapes)
      for (int i = 0; i < n_units; ++i) {
        const WorkUnit u = units.unit(block, i);
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
        // The change of this step: a piece that ends before the tile's last K step leaves its partial
        // sum in this block's slot; the piece that holds the last K step adds those of the blocks
        // before it that share the tile.
        const int bar_id = 1 + cw;  // a named barrier per consumer warpgroup (0 is __syncthreads')
        if (u.k_end < k_steps) {
          store_partial(acc, params.fixup.slot(0, block, cw), t);
          __threadfence();                   // this thread's partial, visible to the GPU ...
          named_barrier_sync(bar_id, 128);   // ... and the whole warpgroup's, before it is counted in
          if (t == 0) signal_partial(params.fixup.counter(block, cw));
          continue;
        }
        if (u.k_begin > 0) {
          const int first = units.contributors_begin(block, u.tile_index);
          for (int c = first; c < block; ++c)
            if (t == 0 && !wait_partials(params.fixup.counter(c, cw), 1)) stalled = true;
          named_barrier_sync(bar_id, 128);   // thread 0 has seen every partial counted in
          for (int c = first; c < block; ++c) add_partial(acc, params.fixup.slot(0, c, cw), t);
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

/// stream_k's rule: tile_shapes'.
inline std::string stream_k_rejects(const GemmProblem& p) { return tile_shapes_rejects(p); }

/// The blocks of stream_k's grid for `tiles` tiles of `k_steps` K steps when `resident` blocks fit on
/// the GPU at once: all of them, but no more than the shared K steps give kMinSteps each when the
/// tiles are fewer than the blocks (and never fewer blocks than tiles).
inline int stream_k_blocks(std::int64_t tiles, int k_steps, int resident) {
  constexpr int kMinSteps = 4;
  if (tiles >= resident) return resident;
  return int(std::max<std::int64_t>(tiles, std::min<std::int64_t>(resident, tiles * k_steps / kMinSteps)));
}

/// stream_k's preparation with the tile given: the grid of stream_k_blocks (at most `max_blocks` when
/// above 0), the schedule of StreamKTileScheduler::make, the workspace (a slot and a zeroed counter
/// per block) allocated here, once per problem, when some tiles are shared.
template <class Cfg>
std::function<void(cudaStream_t)> prepare_stream_k_with(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C,
                                                        int max_blocks = 0) {
  if (std::string why = stream_k_rejects(p); !why.empty()) throw std::invalid_argument("stream_k: " + why);
  StreamKParams<Cfg> params{};
  set_tile_params<Cfg>(params, p, A, B, C);
  const GroupedTileScheduler tiles{params.tiles_m, params.tiles_n, Cfg::kGroupM};
  const int k_steps = int(launch::ceil_div(p.k, Cfg::BK::value));
  auto kernel = stream_k_kernel<Cfg>;
  constexpr std::size_t smem = shared_storage_bytes<SharedStorage<Cfg>>();
  opt_in_dynamic_smem(kernel, smem);
  int resident = max_resident_clusters(kernel, 1, Cfg::kThreads, smem);
  if (max_blocks > 0) resident = std::min(resident, max_blocks);
  const int blocks = stream_k_blocks(tiles.size(), k_steps, resident);
  const StreamKTileScheduler units = StreamKTileScheduler::make(tiles, k_steps, blocks);
  params.sk_tiles = units.sk_tiles;
  std::shared_ptr<void> workspace;
  if (units.sk_tiles > 0) workspace = make_split_k_workspace(params.fixup, 2, blocks, Cfg::kConsumers, "stream_k");
  const dim3 grid{unsigned(blocks)};
  return [kernel, grid, params, workspace](cudaStream_t stream) { kernel<<<grid, Cfg::kThreads, smem, stream>>>(params); };
}

/// The step: 128×256 tiles, the last round's spread over every block.
inline std::function<void(cudaStream_t)> prepare_stream_k(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C,
                                                          int max_blocks = 0) {
  return prepare_stream_k_with<Tile128x256Cfg>(p, A, B, C, max_blocks);
}

}  // namespace mm::ch11
