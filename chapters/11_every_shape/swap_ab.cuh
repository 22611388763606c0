// Chapter 11, step 4: swap_ab. split_k for skinny problems (M ≤ 64: decoding a few tokens through a
// layer), with A and B exchanging places.
//
// wgmma's M is 64 rows per warpgroup, fixed; its N is anything from 8 to 256 in steps of 8. At M = 16,
// split_k's 128-row tile computes 112 rows of zeros, and its 128×128 tiles over N = 4096 make only 32
// tiles. But C = A·Bᵀ is also Cᵀ = B·Aᵀ: let B's N rows take wgmma's M (128-row tiles along N) and
// A's 16 rows take wgmma's N (a tile as narrow as M, here 16, 32 or 64). Both operands are K-major in
// RCR, so the same TMA copies and shared layouts serve with the roles exchanged; only the epilogue
// changes: the kernel's tile is a tile of Cᵀ, which it stores transposed (row stride 1, column
// stride N) with the register epilogue, after split_k's fixup when K is split.
//
// At this M the product is bound by memory, not by the tensor cores: the weights (N×K bf16) are read
// once, the activations and C are small. What matters is that all SMs stream B at once: K is split
// until the units fill the GPU (choose_swap_splits), counting the workspace's extra traffic.
//
//   diff split_k.cuh swap_ab.cuh   shows the change: the operands' roles, the narrow tile, the
//   transposed store, no TMA store.
//
// Build: cmake --build build --target ch11_every_shape
// Run:   build/bin/ch11_every_shape --kernel swap_ab --sizes 16x4096x4096
#pragma once

#include "11_every_shape/split_k.cuh"

namespace mm::ch11 {

/// The tile of Cᵀ with 16 columns: 128 rows of N (two consumer warpgroups), 16 of M; K steps of 64,
/// 8 stages of 18 KB. The base of the other swap_ab tiles; at M <= 16 itself, SwapAB16Bk128Cfg runs.
struct SwapAB16Cfg : Tile128x256Cfg {
  using BN = _16;  ///< the wgmma's N: columns of Cᵀ (rows of C, of A) per tile
  static constexpr int kStages = 8;
};
/// M from 17 to 32.
struct SwapAB32Cfg : SwapAB16Cfg {
  using BN = _32;
};
/// M from 33 to 64.
struct SwapAB64Cfg : SwapAB16Cfg {
  using BN = _64;
};
/// M <= 16: K steps of 128 (two 128-byte boxes of each row of B per stage, 4 stages of 36 KB): half
/// the stages to wait for and release per byte of B. Measured against SwapAB16Cfg at the 12 decode
/// shapes with M <= 16: better at 10 to 12 of them in each of three runs (appendix step swap_ab_bk64
/// is the other).
struct SwapAB16Bk128Cfg : SwapAB16Cfg {
  using BK = _128;
  static constexpr int kStages = 4;
};
/// M <= 16 when N is small (with_swap_tile): tiles of 64 rows of N, one consumer warpgroup, K steps of
/// 64 (twice the tiles, as cuBLAS's decode kernels have them; appendix step swap_ab_rows64 forces it).
struct SwapAB16Rows64Cfg : SwapAB16Cfg {
  using BM = _64;
  static constexpr int kConsumers = 1;
  static constexpr int kThreads = 128 * (1 + kConsumers);
};

/// M from 17 to 32, and from 33 to 64, when N is small (with_swap_tile): tiles of 64 rows of N, one
/// consumer warpgroup (appendix steps swap_ab_rows64_32 and swap_ab_rows64_64 force them at any M).
struct SwapAB32Rows64Cfg : SwapAB16Rows64Cfg {
  using BN = _32;
};
struct SwapAB64Rows64Cfg : SwapAB16Rows64Cfg {
  using BN = _64;
};

/// The largest M swap_ab takes: beyond it, A fills wgmma's 64 rows by itself.
inline constexpr std::int64_t kSwapMaxM = 64;

/// The modeled time of a swapped problem of `tiles` tiles cut into `splits` K slices, in bytes at the
/// GPU's bandwidth: B's N×K·2 bytes streamed at the fraction of the GPU the units keep busy (units /
/// (rounds × SMs)); each slice beyond one adds its partial sums written and read again (8 bytes for
/// each of the N × `tile_bn` values of its slots); each round of units adds a fixed cost, kRoundBytes
/// (a unit's epilogue and fixup while its ring waits: about 1.5 µs, the bytes the GPU would have moved
/// meanwhile).
inline double modeled_swap_time(const GemmProblem& p, int tile_bn, std::int64_t tiles, int splits, int sms) {
  // Fitted to one case (M = 16, 14336×4096 in the run of the appendix: 7 slices in 6 rounds ran at
  // 68% of cuBLAS where 1 slice, as M = 32's tile chose, ran at 96%).
  constexpr double kRoundBytes = 6e6;
  const double weights = 2.0 * double(p.n) * double(p.k), partial = 8.0 * double(tile_bn) * double(p.n);
  const std::int64_t units = tiles * splits;
  const std::int64_t rounds = launch::ceil_div(units, sms);
  const double busy = double(units) / double(rounds * sms);
  return weights / busy + (splits > 1 ? partial * splits : 0.0) + kRoundBytes * double(rounds);
}

/// How many K slices for a swapped problem of `tiles` tiles, `k_steps` K steps: the count that
/// minimizes modeled_swap_time. At least 4 K steps per slice, at most 16 slices.
inline int choose_swap_splits(const GemmProblem& p, int tile_bn, std::int64_t tiles, int k_steps, int sms) {
  int best = 1;
  double best_time = modeled_swap_time(p, tile_bn, tiles, 1, sms);
  for (int s = 2; s <= 16 && s <= std::max(1, k_steps / 4); ++s) {
    const double time = modeled_swap_time(p, tile_bn, tiles, s, sms);
    if (time < best_time) {
      best = s;
      best_time = time;
    }
  }
  return best;
}

/// What swap_ab tile `Cfg` makes of `p` on `sms` SMs: its tiles of Cᵀ, its K steps, the K slices
/// choose_swap_splits picks for them.
struct SwapPlan {
  std::int64_t tiles;  ///< tiles of Cᵀ: N by the tile's rows, M by its columns
  int k_steps;         ///< K steps of the tile's BK (at least 1)
  int splits;          ///< K slices choose_swap_splits asks for
};
template <class Cfg>
SwapPlan plan_swap(const GemmProblem& p, int sms) {
  const std::int64_t tiles = launch::ceil_div(p.n, Cfg::BM::value) * launch::ceil_div(p.m, Cfg::BN::value);
  const int k_steps = int(std::max<std::int64_t>(1, launch::ceil_div(p.k, Cfg::BK::value)));
  return {tiles, k_steps, choose_swap_splits(p, Cfg::BN::value, tiles, k_steps, sms)};
}

/// The modeled time of `p` on the swap_ab tile `Cfg` with its best slice count.
template <class Cfg>
double modeled_swap_tile_time(const GemmProblem& p, int sms) {
  const SwapPlan plan = plan_swap<Cfg>(p, sms);
  return modeled_swap_time(p, Cfg::BN::value, plan.tiles, plan.splits, sms);
}

/// Calls `f(Rows64{})` or `f(Rows128{})`, whichever tile modeled_swap_tile_time says is faster for `p`.
template <class Rows64, class Rows128, class F>
decltype(auto) with_faster_swap_tile(const GemmProblem& p, int sms, F&& f) {
  if (modeled_swap_tile_time<Rows64>(p, sms) < modeled_swap_tile_time<Rows128>(p, sms)) return f(Rows64{});
  return f(Rows128{});
}

/// Calls `f(Cfg{})` with the swap_ab tile for `p` on `sms` SMs: the narrowest that holds M (16, 32 or
/// 64 columns of Cᵀ), with 128 or 64 rows of N, whichever modeled_swap_tile_time says is faster (64
/// rows at N = 4096: twice the tiles, so half the K slices to fill the GPU and half their partial
/// sums). The one place a problem becomes a swap_ab tile (swap_ab, every_shape's choice and the
/// tests' forced slices go through it).
template <class F>
decltype(auto) with_swap_tile(const GemmProblem& p, int sms, F&& f) {
  if (p.m <= 16) return with_faster_swap_tile<SwapAB16Rows64Cfg, SwapAB16Bk128Cfg>(p, sms, f);
  if (p.m <= 32) return with_faster_swap_tile<SwapAB32Rows64Cfg, SwapAB32Cfg>(p, sms, f);
  return with_faster_swap_tile<SwapAB64Rows64Cfg, SwapAB64Cfg>(p, sms, f);
}

/// The shared memory of the swapped kernel: split_k's rings, no C pieces (the register epilogue).
template <class Cfg>
struct SwapSharedStorage {
  using RingA = GmmaRing<bf16, GmmaMajor::K, typename Cfg::BM, typename Cfg::BK, Cfg::kStages>;  ///< (BM,BK,S): B's rows
  using RingB = GmmaRing<bf16, GmmaMajor::K, typename Cfg::BN, typename Cfg::BK, Cfg::kStages>;  ///< (BN,BK,S): A's rows
  using Pipeline = PipelineTmaAsync<Cfg::kStages>;
  alignas(1024) bf16 a[cosize_v<RingA>];
  alignas(1024) bf16 b[cosize_v<RingB>];
  typename Pipeline::SharedStorage pipeline;
};

/// The kernel's operands: it multiplies X (R×K) by Yᵀ (Y is Q×K) into an R×Q tile grid, X = B and
/// Y = A; element (r, q) of the product is C's (q, r).
template <class Cfg>
struct SwapParams {
  using Storage = SwapSharedStorage<Cfg>;
  TmaCopy<SM90_TMA_LOAD_2D, bf16, GmmaStage<typename Storage::RingA>> tma_x;  ///< B's boxes (wgmma's A)
  TmaCopy<SM90_TMA_LOAD_2D, bf16, GmmaStage<typename Storage::RingB>> tma_y;  ///< A's boxes (wgmma's B)
  bf16* c;                ///< C, M×N row-major: (r, q) at c[q·N + r]
  int r, q, k;            ///< R = N, Q = M, K
  int tiles_r, tiles_q;   ///< tiles along R and Q
  int splits;             ///< K slices per tile
  int k_steps_per_split;  ///< K steps of each slice but maybe the last
  SplitKFixup<Cfg::BN::value / 2> fixup;  ///< split_k's workspace (when splits > 1)
};

/// split_k's kernel with the roles swapped and the transposed register epilogue. sm_90a; a stub elsewhere.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1) swap_ab_kernel(const __grid_constant__ SwapParams<Cfg> params) {
  if constexpr (!arch::compiled_for(arch::sm90a)) {
    arch::no_code_for_this_target();
  } else {
    using Storage = SwapSharedStorage<Cfg>;
    using Pipeline = typename Storage::Pipeline;
    using BM = typename Cfg::BM;
    using BN = typename Cfg::BN;
    using BK = typename Cfg::BK;
    using Atom = SM90_64xNx16_F32BF16BF16_SS<BN::value, GmmaMajor::K, GmmaMajor::K>;
    extern __shared__ __align__(1024) std::uint8_t smem_raw[];
    Storage& shared = shared_storage<Storage>(smem_raw);
    auto sX = make_tensor(make_smem_ptr(shared.a), typename Storage::RingA{});  // (BM,BK,S)
    auto sY = make_tensor(make_smem_ptr(shared.b), typename Storage::RingB{});  // (BN,BK,S)

    const int wg = int(threadIdx.x) / 128, t = int(threadIdx.x) % 128;
    typename Pipeline::Params pipe_params;
    pipe_params.transaction_bytes = params.tma_x.kTransactionBytes + params.tma_y.kTransactionBytes;
    pipe_params.consumer_warpgroups = Cfg::kConsumers;
    pipe_params.is_leader = threadIdx.x == 0;
    Pipeline pipeline(shared.pipeline, pipe_params, int(threadIdx.x));
    if (threadIdx.x == 0) {
      params.tma_x.prefetch();
      params.tma_y.prefetch();
    }
    __syncthreads();

    const SplitKTileScheduler units{GroupedTileScheduler{params.tiles_r, params.tiles_q, Cfg::kGroupM},
                                    int(launch::ceil_div(params.k, BK::value)), params.splits, params.k_steps_per_split};
    const std::int64_t first = blockIdx.x, step = gridDim.x;
    bool stalled = false;

    if (wg == 0) {
      // ---- Producer: B's rows into wgmma's A, A's rows into wgmma's B.
      warpgroup_reg_dealloc<Cfg::kProducerRegs>();
      if (t == 0) {
        auto write = make_producer_start_state<Pipeline>();
        for (std::int64_t i = first; i < units.size() && !stalled; i += step) {
          const WorkUnit u = units.unit(i);
          const int r0 = u.tile.m * BM::value, q0 = u.tile.n * BN::value;
          for (int kt = u.k_begin; kt < u.k_end; ++kt) {
            if (!pipeline.producer_acquire(write)) {
              stalled = true;
              break;
            }
            std::uint64_t* bar = pipeline.producer_get_barrier(write);
            params.tma_x.copy(bar, sX(_, _, write.index()), r0, kt * BK::value);
            params.tma_y.copy(bar, sY(_, _, write.index()), q0, kt * BK::value);
            ++write;
          }
        }
      }
    } else {
      // ---- Consumers: 64 rows of B each; the tile of Cᵀ goes out transposed.
      warpgroup_reg_alloc<Cfg::kConsumerRegs>();
      const int cw = wg - 1;
      typename Pipeline::State read;
      typename Pipeline::State release;
      float acc[BN::value / 2];
      for (std::int64_t i = first; i < units.size(); i += step) {
        const WorkUnit u = units.unit(i);
        const int r0 = u.tile.m * BM::value + Cfg::kWgmmaM * cw, q0 = u.tile.n * BN::value;
        for (int kt = u.k_begin; kt < u.k_end; ++kt) {
          if (!pipeline.consumer_wait(read)) {
            stalled = true;
            break;
          }
          auto x_tile = local_tile(sX(_, _, read.index()), make_shape(Int<Cfg::kWgmmaM>{}, BK{}), make_coord(cw, 0));
          gmma_k_block<Atom, GmmaMajor::K, GmmaMajor::K>(x_tile, sY(_, _, read.index()), acc, kt > u.k_begin);
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
        // split_k's fixup: slices 0 .. S-2 leave a partial sum, the last slice adds them.
        const int bar_id = 1 + cw;
        if (u.split < params.splits - 1) {
          store_partial(acc, params.fixup.slot(u.split, u.tile_index, cw), t);
          __threadfence();
          named_barrier_sync(bar_id, 128);
          if (t == 0) signal_partial(params.fixup.counter(u.tile_index, cw));
          continue;
        }
        if (params.splits > 1) {
          if (t == 0 && !wait_partials(params.fixup.counter(u.tile_index, cw), params.splits - 1)) stalled = true;
          named_barrier_sync(bar_id, 128);
          for (int s = 0; s < params.splits - 1; ++s) add_partial(acc, params.fixup.slot(s, u.tile_index, cw), t);
        }
        // The change of this step's epilogue: (r, q) of the product is C's (q, r): row stride 1,
        // column stride N.
        store_accumulators_strided<Atom>(acc, params.c, 1, params.r, r0, q0, params.r, params.q, t);
      }
    }
    if (stalled) __trap();
  }
}

/// swap_ab's rule: RCR, TMA's rules for the operands, and M ≤ 64.
inline std::string swap_ab_rejects(const GemmProblem& p) {
  if (std::string why = rcr_tma_rejects(p); !why.empty()) return why;
  if (p.m > kSwapMaxM) return "takes M <= 64 (skinny problems: the small side goes in wgmma's N)";
  return {};
}

/// swap_ab's preparation with the configuration given (`splits` <= 0: choose_swap_splits).
template <class Cfg>
std::function<void(cudaStream_t)> prepare_swap_ab_with(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C,
                                                       int splits = 0, int max_blocks = 0) {
  if (std::string why = swap_ab_rejects(p); !why.empty()) throw std::invalid_argument("swap_ab: " + why);
  const int sms = device_sm_count();
  SwapParams<Cfg> params{};
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  params.tma_x = make_tma_copy(SM90_TMA_LOAD_2D{}, make_tensor(B, make_layout(make_shape(n, k), make_stride(k, _1{}))),
                               GmmaStage<typename SwapSharedStorage<Cfg>::RingA>{});
  params.tma_y = make_tma_copy(SM90_TMA_LOAD_2D{}, make_tensor(A, make_layout(make_shape(m, k), make_stride(k, _1{}))),
                               GmmaStage<typename SwapSharedStorage<Cfg>::RingB>{});
  params.c = C;
  params.r = n;
  params.q = m;
  params.k = k;
  params.tiles_r = int(launch::ceil_div(n, Cfg::BM::value));
  params.tiles_q = int(launch::ceil_div(m, Cfg::BN::value));
  const GroupedTileScheduler tiles{params.tiles_r, params.tiles_q, Cfg::kGroupM};
  const int k_steps = int(launch::ceil_div(k, Cfg::BK::value));
  const SplitKTileScheduler units =
      SplitKTileScheduler::make(tiles, k_steps, splits > 0 ? splits : choose_swap_splits(p, Cfg::BN::value, tiles.size(), k_steps, sms));
  params.splits = units.splits;
  params.k_steps_per_split = units.k_steps_per_split;
  std::shared_ptr<void> workspace;
  if (units.splits > 1)
    workspace = make_split_k_workspace(params.fixup, units.splits, tiles.size(), Cfg::kConsumers, "swap_ab");
  auto kernel = swap_ab_kernel<Cfg>;
  constexpr std::size_t smem = shared_storage_bytes<SwapSharedStorage<Cfg>>();
  static_assert(smem <= 227 * 1024, "sm_90 gives a block at most 227 KB of shared memory");
  opt_in_dynamic_smem(kernel, smem);
  const dim3 grid = persistent_grid(kernel, Cfg::kThreads, smem, units.size(), max_blocks);
  return [kernel, grid, params, workspace](cudaStream_t stream) { kernel<<<grid, Cfg::kThreads, smem, stream>>>(params); };
}

/// The step: the narrowest tile that holds M, K split as choose_swap_splits says.
inline std::function<void(cudaStream_t)> prepare_swap_ab(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C,
                                                         int max_blocks = 0) {
  if (std::string why = swap_ab_rejects(p); !why.empty()) throw std::invalid_argument("swap_ab: " + why);
  return with_swap_tile(p, device_sm_count(), [&](auto cfg) { return prepare_swap_ab_with<decltype(cfg)>(p, A, B, C, 0, max_blocks); });
}

}  // namespace mm::ch11
