// Chapter 11, appendix: ping_pong. tile_shapes' kernel with the two consumer warpgroups on different
// tiles, taking turns on the tensor cores, so that one's epilogue runs under the other's main loop.
// Measured on the H200, it is slower than tile_shapes at every shape with many tiles (the page's
// "Tried: ping-pong consumers"): a tile per consumer is half a 128×256 tile, and the operand bytes per
// flop that costs outweigh the epilogue it hides.
//
// In tile_shapes (CUTLASS calls it "cooperative") both consumers share each 128×256 tile, 64 rows
// each: they finish its main loop together, then both write C while the tensor cores wait, and only
// then start the next tile. At 4096³ a tile's main loop is 64 K steps and its epilogue stores 64 KB
// through shared memory: a few percent of the SM's time with no wgmma in flight. Here (CUTLASS's
// "ping-pong") each consumer owns a whole tile, the block's tiles alternating between them, and a
// pair of named barriers passes the turn: consumer 0 runs its main loop, hands the tensor cores to
// consumer 1 (bar.arrive), and stores its C while consumer 1 multiplies; then it waits (bar.sync)
// for the turn to come back.
//
//   block's tiles  i0        i1        i2        i3
//   consumer 0     [ main ]--[ C ]     [ main ]--[ C ]
//   consumer 1               [ main ]--[ C ]     [ main ]--[ C ]
//
// What changes from tile_shapes.cuh, all in the consumers: a tile per consumer (every other tile of
// the block's list), both of its 64-row halves multiplied by the one warpgroup (two wgmma per K
// slice); each stage is released by one warpgroup, not two; a consumer skips the stages of the other's
// tile (PipelineState::advance); the turn barriers around the main loop. The producer is unchanged:
// it loads the block's tiles in order, and the ring's stages alternate owners tile by tile.
//
//   diff tile_shapes.cuh ping_pong.cuh
//
// Build: cmake --build build --target ch11_every_shape
// Run:   build/bin/ch11_every_shape --kernel ping_pong   (configured with -DMM_APPENDIX_STEPS=ON)
#pragma once

#include "11_every_shape/tile_shapes.cuh"

namespace mm::ch11 {

/// A 128×128 tile per consumer warpgroup (the two of them hold 128×256 between them, as tile_shapes'
/// largest tile): 128 accumulators per thread, 6 stages of 32 KB.
struct PingPong128x128Cfg : Tile128x256Cfg {
  using BN = _128;
  static constexpr int kStages = 6;
};
/// A 64×256 tile per consumer: each K slice is the one wgmma 64×256 of tile_shapes' consumers; 4
/// stages of 40 KB.
struct PingPong64x256Cfg : Tile128x256Cfg {
  using BM = _64;
};

/// The two turn barriers' ids: consumer c waits on kTurnBarrier + c (ids 1 and 2 are the epilogues').
inline constexpr int kTurnBarrier = 3;

/// The ping-pong kernel: one producer warpgroup, two consumer warpgroups each on its own BM×BN tile.
/// wgmma and setmaxnreg need sm_90a: any other device pass compiles a stub.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1) ping_pong_kernel(const __grid_constant__ Params<Cfg> params) {
  if constexpr (!arch::compiled_for(arch::sm90a)) {
    arch::no_code_for_this_target();
  } else {
    using Storage = SharedStorage<Cfg>;
    using Pipeline = typename Storage::Pipeline;
    using BM = typename Cfg::BM;
    using BN = typename Cfg::BN;
    using BK = typename Cfg::BK;
    using Atom = SM90_64xNx16_F32BF16BF16_SS<BN::value, GmmaMajor::K, GmmaMajor::K>;
    constexpr int kHalves = BM::value / Cfg::kWgmmaM;  // 64-row wgmma per K slice, all by one warpgroup
    extern __shared__ __align__(1024) std::uint8_t smem_raw[];
    Storage& shared = shared_storage<Storage>(smem_raw);
    auto sA = make_tensor(make_smem_ptr(shared.a), typename Storage::RingA{});  // (BM,BK,S)
    auto sB = make_tensor(make_smem_ptr(shared.b), typename Storage::RingB{});  // (BN,BK,S)

    const int wg = int(threadIdx.x) / 128, t = int(threadIdx.x) % 128;
    typename Pipeline::Params pipe_params;
    pipe_params.transaction_bytes = params.tma_a.kTransactionBytes + params.tma_b.kTransactionBytes;
    pipe_params.consumer_warpgroups = 1;  // a stage belongs to one consumer's tile: it alone releases it
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
      // ---- Producer: tile_shapes' own, the block's tiles in order.
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
      // ---- Consumers: consumer c takes the block's tiles c, c + 2, c + 4, ...
      warpgroup_reg_alloc<Cfg::kConsumerRegs>();
      const int cw = wg - 1;
      typename Pipeline::State read;
      typename Pipeline::State release;
      if (cw == 1) {  // the block's first tile, hence its first k_tiles stages, are consumer 0's
        read.advance(std::uint32_t(k_tiles));
        release.advance(std::uint32_t(k_tiles));
      }
      float acc[kHalves][BN::value / 2];  // this thread's values of the consumer's BM×BN tile
      int pieces = 0;                     // C pieces this warpgroup has sent (buffer pieces % 2)
      for (std::int64_t i = first + cw * step; i < tiles.size(); i += 2 * step) {
        const TileCoord tile = tiles.tile(i);
        const int m0 = tile.m * BM::value, n0 = tile.n * BN::value;
        // Our turn on the tensor cores: the other consumer has issued its tile's last wgmma.
        if (i != first) named_barrier_sync(kTurnBarrier + cw, 256);
        for (int kt = 0; kt < k_tiles; ++kt) {
          if (!pipeline.consumer_wait(read)) {
            stalled = true;
            break;
          }
#pragma unroll
          for (int h = 0; h < kHalves; ++h) {
            auto a_tile = local_tile(sA(_, _, read.index()), make_shape(Int<Cfg::kWgmmaM>{}, BK{}), make_coord(h, 0));
            gmma_k_block<Atom, GmmaMajor::K, GmmaMajor::K>(a_tile, sB(_, _, read.index()), acc[h], kt > 0);
          }
          warpgroup_wait<kHalves>();  // this slice's wgmma may run on; the previous slice's are done
#pragma unroll
          for (int h = 0; h < kHalves; ++h) warpgroup_fence_operand(acc[h]);
          if (kt > 0) {
            pipeline.consumer_release(release);
            ++release;
          }
          ++read;
        }
        // The other consumer's turn (when it has a tile left): its main loop runs under our epilogue.
        if (!stalled && i + step < tiles.size()) named_barrier_arrive(kTurnBarrier + (1 - cw), 256);
        warpgroup_wait<0>();
#pragma unroll
        for (int h = 0; h < kHalves; ++h) warpgroup_fence_operand(acc[h]);
        if (stalled) break;
        pipeline.consumer_release(release);
        ++release;
        read.advance(std::uint32_t(k_tiles));  // the other consumer's next tile: its stages are not ours
        release.advance(std::uint32_t(k_tiles));
        // Epilogue: the BM×BN tile leaves in 64×64 pieces through this warpgroup's two buffers.
        const int bar_id = 1 + cw;
#pragma unroll
        for (int h = 0; h < kHalves; ++h) {
#pragma unroll
          for (int j = 0; j < BN::value / Cfg::kPieceN; ++j) {
            auto piece = make_tensor(make_smem_ptr(shared.c[cw][pieces++ % 2]), typename Storage::Piece{});
            if (t == 0) tma_store_wait<1>();
            named_barrier_sync(bar_id, 128);
            stage_accumulators_bf16(acc[h], j, piece, t);
            fence_proxy_async_shared();
            named_barrier_sync(bar_id, 128);
            if (t == 0) {
              params.tma_c.store(piece, m0 + Cfg::kWgmmaM * h, n0 + Cfg::kPieceN * j);
              tma_store_commit();
            }
          }
        }
      }
      if (t == 0) tma_store_wait<0>();
    }
    if (stalled) __trap();
  }
}

/// ping_pong with the tile given: tile_shapes' launch (rules, TMA copies, a grid of the blocks the GPU
/// holds at once, at most one per tile, at most `max_blocks` when above 0), this kernel.
template <class Cfg>
std::function<void(cudaStream_t)> prepare_ping_pong_with(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C,
                                                         int max_blocks = 0) {
  if (std::string why = tile_shapes_rejects(p); !why.empty()) throw std::invalid_argument("ping_pong: " + why);
  Params<Cfg> params{};
  set_tile_params<Cfg>(params, p, A, B, C);
  auto kernel = ping_pong_kernel<Cfg>;
  constexpr std::size_t smem = shared_storage_bytes<SharedStorage<Cfg>>();
  static_assert(smem <= 227 * 1024, "sm_90 gives a block at most 227 KB of shared memory");
  opt_in_dynamic_smem(kernel, smem);
  const dim3 grid = persistent_grid(kernel, Cfg::kThreads, smem, std::int64_t(params.tiles_m) * params.tiles_n, max_blocks);
  return [kernel, grid, params](cudaStream_t stream) { kernel<<<grid, Cfg::kThreads, smem, stream>>>(params); };
}

/// The step: 128×128 tiles per consumer.
inline std::function<void(cudaStream_t)> prepare_ping_pong(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C,
                                                           int max_blocks = 0) {
  return prepare_ping_pong_with<PingPong128x128Cfg>(p, A, B, C, max_blocks);
}

}  // namespace mm::ch11
