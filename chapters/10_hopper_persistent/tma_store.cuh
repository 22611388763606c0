// Chapter 10, step 3: tma_store. persistent with a new epilogue: instead of each consumer thread
// storing its 128 accumulators to global memory itself (64 scattered 4-byte stores a thread, which
// queue up in the load-store unit while the tensor cores wait: the "LG throttle" stall of chapter 09's
// profile), each 64×64 piece of the warpgroup's tile is converted to bf16, written to a 128-byte-
// swizzled shared buffer with stmatrix (conflict-free), and one thread sends the whole piece out with
// a TMA store. Two buffers per consumer warpgroup: the store of one piece overlaps the staging of
// the next, and the next tile's main loop starts without waiting for the stores to land.
//
//   diff persistent.cuh tma_store.cuh   shows the change: the C buffers in the shared storage, the
//   TMA copy of C in the parameters, and the epilogue loop.
//
// TMA stores C by rows 16-byte aligned: N must be a multiple of 8 and C 16-byte aligned (the
// register epilogue of the steps before takes any C; this one refuses what it cannot store).
//
// Build: cmake --build build --target ch10_hopper_persistent
// Run:   build/bin/ch10_hopper_persistent --kernel tma_store
#pragma once

#include "10_hopper_persistent/persistent.cuh"
#include "layout/mbarrier.hpp"  // fence_proxy_async_shared

namespace mm::ch10 {

/// tma_store: persistent, C through shared memory and TMA stores in 64×64 pieces.
struct TmaStoreCfg : PersistentCfg {
  static constexpr int kPieceM = 64;  ///< rows of one piece of C: a consumer warpgroup's rows
  static constexpr int kPieceN = 64;  ///< columns of one piece: one 128-byte swizzle row of bf16
  static constexpr int kCBuffers = 2; ///< pieces in flight per consumer warpgroup
};

/// persistent's shared memory plus two 64×64 C buffers per consumer warpgroup, 128-byte swizzled as a
/// TMA store with the 128-byte swizzle reads them (and stmatrix writes them without bank conflicts).
template <class Cfg, GmmaMajor MajorB>
struct StoreSharedStorage {
  using RingA = GmmaRing<bf16, GmmaMajor::K, typename Cfg::BM, typename Cfg::BK, Cfg::kStages>;  ///< (BM,BK,S)
  using RingB = GmmaRing<bf16, MajorB, typename Cfg::BN, typename Cfg::BK, Cfg::kStages>;       ///< (BN,BK,S)
  using Piece = decltype(tile_to_shape(GmmaLayoutK_SW128_Atom<bf16>{},
                                       make_shape(Int<Cfg::kPieceM>{}, Int<Cfg::kPieceN>{})));  ///< (64,64), N contiguous
  using Pipeline = PipelineTmaAsync<Cfg::kStages>;
  alignas(1024) bf16 a[cosize_v<RingA>];
  alignas(1024) bf16 b[cosize_v<RingB>];
  alignas(1024) bf16 c[Cfg::kConsumers][Cfg::kCBuffers][cosize_v<Piece>];
  typename Pipeline::SharedStorage pipeline;
};

/// persistent's parameters plus the TMA copy of C.
template <class Cfg, GmmaMajor MajorB>
struct StoreParams {
  using Storage = StoreSharedStorage<Cfg, MajorB>;
  TmaCopy<SM90_TMA_LOAD_2D, bf16, GmmaStage<typename Storage::RingA>> tma_a;  ///< A's boxes into a stage
  TmaCopy<SM90_TMA_LOAD_2D, bf16, GmmaStage<typename Storage::RingB>> tma_b;  ///< B's boxes into a stage
  TmaCopy<SM90_TMA_STORE_2D, bf16, typename Storage::Piece> tma_c;            ///< a piece of C out
  bf16* c;        ///< C, M×N row-major
  int m, n, k;    ///< C is M×N, K the inner dimension
  Watchdog watchdog;  ///< the mbarrier waits' bound and record (gemm/watchdog.hpp)
  bool c_pairs;   ///< (unused here: the register epilogue's)
  int tiles_m;    ///< tiles along M
  int tiles_n;    ///< tiles along N
};

/// persistent's blocks and loops, with C stored through shared memory and TMA. wgmma and setmaxnreg need sm_90a: any other device pass
/// compiles a stub (layout/arch.hpp) which the harness never launches.
template <class Cfg, GmmaMajor MajorB>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    tma_store_kernel(const __grid_constant__ StoreParams<Cfg, MajorB> params) {
  if constexpr (!arch::compiled_for(arch::sm90a)) {
    arch::no_code_for_this_target();
  } else {
    using Storage = StoreSharedStorage<Cfg, MajorB>;
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
      params.tma_c.prefetch();
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
        // Epilogue, the change of this step: the 64×256 tile leaves in four 64×64 pieces, each written
        // to shared memory with stmatrix and sent out by one TMA store, alternating between this
        // warpgroup's two buffers. Before a buffer is refilled, its store (two pieces ago) must have
        // finished reading it; the consumer then goes back to the next tile's main loop without
        // waiting for the last stores to reach global memory.
        const int bar_id = 1 + cw;  // a named barrier per consumer warpgroup (0 is __syncthreads')
#pragma unroll
        for (int j = 0; j < BN::value / Cfg::kPieceN; ++j) {
          auto piece = make_tensor(make_smem_ptr(shared.c[cw][j % 2]), typename Storage::Piece{});  // (64,64)
          if (t == 0) tma_store_wait<1>();  // at most one store (the other buffer's) still reads
          named_barrier_sync(bar_id, 128);
          stage_accumulators_bf16(acc, j, piece, t);
          fence_proxy_async_shared();  // the stmatrix writes, visible to the copy engine
          named_barrier_sync(bar_id, 128);
          if (t == 0) {
            params.tma_c.store(piece, m0, n0 + Cfg::kPieceN * j);  // elements outside C are not stored
            tma_store_commit();
          }
        }
      }
      if (t == 0) tma_store_wait<0>();  // the stores have read shared memory before the block exits
    }
    watchdog_trap_if_gave_up(pipeline.watchdog(), params.watchdog.record);
  }
}

/// Empty when the kernel takes `p`; otherwise the constraint it breaks: TMA's rules for the operands,
/// and C's rows 16-byte aligned for the TMA store.
template <class Cfg>
std::string tma_store_rejects(const GemmProblem& p) {
  if (std::string why = persistent_rejects<Cfg>(p); !why.empty()) return why;
  if (p.n % 8 != 0)
    return "needs N % 8 == 0: TMA stores rows whose pitch is a multiple of 16 bytes (C is M×N bf16, row-major)";
  return {};
}

/// The one-time preparation of a launch (outside any timed region): the TMA copies, the
/// shared-memory opt-in, and the grid: as many blocks as the GPU holds at once (read from the
/// driver), at most one per tile, and at most `max_blocks` when it is above 0 (tests: a few blocks
/// looping over many tiles). Returns what runs the kernel on a stream. Throws std::invalid_argument
/// for a problem the kernel rejects or operands TMA cannot describe, std::runtime_error when the GPU
/// cannot hold one block.
template <class Cfg>
std::function<void(cudaStream_t)> prepare_tma_store(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C,
                                                     int max_blocks = 0) {
  if (std::string why = tma_store_rejects<Cfg>(p); !why.empty()) throw std::invalid_argument("tma_store: " + why);
  auto prepare = [&](auto major_b) -> std::function<void(cudaStream_t)> {
    constexpr GmmaMajor MajorB = decltype(major_b)::value;
    StoreParams<Cfg, MajorB> params{};
    make_operand_copies(params, p, A, B);
    params.watchdog = host_watchdog();
    params.c = C;
    params.m = int(p.m);
    params.n = int(p.n);
    params.k = int(p.k);
    params.c_pairs = reinterpret_cast<std::uintptr_t>(C) % 4 == 0 && p.n % 2 == 0;
    // C (M,N) row-major, stored in 64×64 pieces; a misaligned C is refused here, with TMA's rule.
    params.tma_c = make_tma_copy(SM90_TMA_STORE_2D{},
                                 make_tensor(C, make_layout(make_shape(int(p.m), int(p.n)), make_stride(int(p.n), _1{}))),
                                 typename StoreSharedStorage<Cfg, MajorB>::Piece{});
    params.tiles_m = int(launch::ceil_div(p.m, Cfg::BM::value));
    params.tiles_n = int(launch::ceil_div(p.n, Cfg::BN::value));
    const std::int64_t tiles = std::int64_t(params.tiles_m) * params.tiles_n;
    auto kernel = tma_store_kernel<Cfg, MajorB>;
    constexpr std::size_t smem = shared_storage_bytes<StoreSharedStorage<Cfg, MajorB>>();
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
