// Chapter 09: Hopper's asynchronous tensor cores. wgmma reads A and B straight from swizzled shared
// memory through matrix descriptors (layout/mma_sm90.hpp); TMA fills that memory from tensor maps,
// completing on mbarriers with transaction counts (layout/copy_sm90_tma.hpp, layout/mbarrier.hpp).
//
// One generic kernel, several points of one configuration space (Config below); each step of the
// chapter changes one thing (README, "The ladder"):
//   wgmma_cp_async   one warpgroup, 64×128 block tiles; each K step of 64 is four wgmma m64n128k16 from
//                    descriptors; the tiles come by chapter 08's cp.async ring (the only new idea:
//                    the descriptor and the wgmma fence / commit / wait protocol)
//   tma              the same block, its tiles loaded by the copy engine: one thread issues a TMA per
//                    operand and stage, a full barrier per stage counts the bytes in, an empty
//                    barrier per stage counts the warpgroups out
//   two_consumers    128×128 block tiles: two warpgroups share each B tile
//   big_tile         128×256 block tiles (wgmma m64n256k16), 4 stages of 48 KB
//   wgmma_in_flight  big_tile, each warpgroup leaves its last wgmma group running while it waits for
//                    the next stage (wait_group 1 instead of 0)
// C = A·B with A (M×K) row-major, B row-major (RRR: wgmma reads it transposed, N-major) or column-
// major (RCR, C = A·Bᵀ for a B stored N×K: K-major like A), C row-major, bf16 in, fp32 accumulators,
// bf16 out. Any M and N (TMA fills a box's outside elements with zeros; the epilogue stores only
// inside C); K, and N in RRR, must be multiples of 8: TMA needs 16-byte row pitches (the cp.async
// step keeps the same rule, so that the whole chapter takes the same problems).
//
// Build: cmake --build build --target ch09_hopper_wgmma_tma      Run: build/bin/ch09_hopper_wgmma_tma
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "harness/gemm_runner.hpp"
#include "gemm/launch.hpp"
#include "gemm/problem.hpp"
#include "gemm/smem.hpp"
#include "layout/copy_sm90_desc.hpp"
#include "layout/all.hpp"
#include "layout/copy_sm90_tma.hpp"
#include "gemm/epilogue_sm90.hpp"
#include "layout/mbarrier.hpp"
#include "layout/mma_sm90.hpp"

namespace mm::ch09 {

using bf16 = __nv_bfloat16;
using launch::ceil_div;
using launch::max_grid_y;

/// How the shared tiles are filled.
enum class Loader {
  cp_async,  ///< every thread copies 16-byte chunks (chapter 08's ring, one barrier per K step)
  tma,       ///< one thread issues a TMA box per operand and stage; mbarriers track the ring
};

/// A block tile BM×BN, K steps of 64 (one 128-byte swizzle row of bf16), a ring of Stages, BM/64
/// warpgroups each multiplying 64×BN with wgmma m64n{BN}k16; `InFlight` wgmma groups left running
/// while a warpgroup waits for the next stage (0: each K step's group completes before the next).
template <int BM_, int BN_, int Stages_, Loader kLoader_, int InFlight_ = 0>
struct Config {
  using BM = Int<BM_>;
  using BN = Int<BN_>;
  using BK = _64;  ///< 64 bf16 = 128 bytes: one row of the 128-byte swizzle
  static constexpr int kStages = Stages_;
  static constexpr Loader kLoader = kLoader_;
  static constexpr int kInFlight = InFlight_;
  static constexpr int kWarpgroups = BM_ / 64;  ///< one per 64 rows of the block
  static constexpr int kThreads = 128 * kWarpgroups;
  static_assert(BM_ % 64 == 0 && kWarpgroups >= 1 && kWarpgroups <= 2, "BM: 64 or 128 (one or two warpgroups)");
  static_assert(BN_ == 64 || BN_ == 128 || BN_ == 256, "BN: one wgmma N (64, 128, 256)");
  static_assert(Stages_ >= 2, "a pipeline needs at least two stages");
  static_assert(InFlight_ == 0 || (InFlight_ == 1 && kLoader_ == Loader::tma),
                "a group in flight needs the empty barriers of the TMA ring to know when its stage is free");

  /// The wgmma for B stored K-major (RCR) or MN-major (RRR); A is always K-major (row-major).
  template <GmmaMajor MajorB>
  using Atom = SM90_64xNx16_F32BF16BF16_SS<BN_, GmmaMajor::K, MajorB>;

  // ---- Shared memory: the canonical 128-byte-swizzled layouts wgmma reads and TMA writes ----
  //
  // K-major (A, and B in RCR): each MN index is a 128-byte row of 64 k, 8 rows one 1024-byte swizzle
  // pattern; element (mn, k) at mn·64 + k before the swizzle. TMA writes exactly this for a box of
  // 64 k × MN rows. MN-major (B in RRR): each k is a 128-byte row of 64 consecutive n; a panel of 64 n
  // holds all 64 k of the stage (64 rows, 8 KB), panels follow each other along N. TMA writes one
  // panel per box of 64 n × 64 k.
  using SwizzleAtomK = decltype(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_8, _64>, Stride<_64, _1>>{}));
  using SwizzleAtomMN = decltype(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_64, _64>, Stride<_1, _64>>{}));
  template <int MN>
  using SmemK = decltype(tile_to_shape(SwizzleAtomK{}, make_shape(Int<MN>{}, BK{}, Int<Stages_>{})));  ///< (MN,BK,S)
  template <int MN>
  using SmemMN = decltype(tile_to_shape(SwizzleAtomMN{}, make_shape(Int<MN>{}, BK{}, Int<Stages_>{})));  ///< (MN,BK,S)
  using SmemA = SmemK<BM_>;
  template <GmmaMajor MajorB>
  using SmemB = std::conditional_t<MajorB == GmmaMajor::K, SmemK<BN_>, SmemMN<BN_>>;

  /// The swizzle TMA must write: read off the shared layouts, so that a map and a layout can never
  /// disagree (a swizzle wgmma cannot read does not compile in gmma_swizzle_of).
  static constexpr TmaSwizzle kTmaSwizzle = tma_swizzle_for(gmma_swizzle_of<bf16, SwizzleAtomK>());
  static_assert(gmma_swizzle_of<bf16, SwizzleAtomMN>() == gmma_swizzle_of<bf16, SwizzleAtomK>(),
                "one swizzle for every operand: one TMA swizzle mode in the maps");

  static constexpr int kStageBytesA = BM_ * 64 * 2;  ///< one stage of A
  static constexpr int kStageBytesB = BN_ * 64 * 2;  ///< one stage of B
  /// The rings, then 2·Stages mbarriers (8 bytes each), plus 1 KB to align the rings to 1024 bytes
  /// (the swizzle pattern's start: TMA's and wgmma's 128-byte swizzle are functions of the address).
  static constexpr int kSmemBytes = Stages_ * (kStageBytesA + kStageBytesB) + 2 * Stages_ * 8 + 1024;
};

// ---- The ladder's points ----

/// wgmma_cp_async: one warpgroup, 64×128 tiles, 3 stages filled by cp.async.
using WgmmaCpAsyncCfg = Config<64, 128, 3, Loader::cp_async>;
/// tma: the same block, 4 stages filled by TMA, an mbarrier ring.
using TmaCfg = Config<64, 128, 4, Loader::tma>;
/// two_consumers: 128×128 tiles, two warpgroups, 4 stages.
using TwoConsumersCfg = Config<128, 128, 4, Loader::tma>;
/// big_tile: 128×256 tiles, two warpgroups of 64×256, 4 stages (192 KB).
using BigTileCfg = Config<128, 256, 4, Loader::tma>;
/// wgmma_in_flight: big_tile with one wgmma group left running across the wait for the next stage.
using InFlightCfg = Config<128, 256, 4, Loader::tma, 1>;

// ---- The kernel ----

/// What one launch needs. The tensor maps live in the kernel's parameter block (`__grid_constant__`):
/// TMA takes their address there. The cp.async loader reads the pointers instead.
struct Params {
  CUtensorMap map_a;   ///< A as (K inner, M outer), boxes of 64 × BM
  CUtensorMap map_b;   ///< B: RCR (K inner, N outer), boxes 64 × BN; RRR (N inner, K outer), boxes 64 × 64
  bf16 const* a;       ///< A, M×K row-major
  bf16 const* b;       ///< B, K×N row-major (RRR) or N×K row-major (RCR)
  bf16* c;             ///< C, M×N row-major
  int m, n, k;         ///< C is M×N, K the inner dimension
  bool c_pairs;        ///< two neighbouring elements of a row of C are one aligned 32-bit word
};

namespace detail {

/// cp.async loader: the (MN,BK) tile starting at (mn0, k0) of an operand into one stage, 16-byte
/// chunks along its contiguous dimension (K for a K-major operand, MN for an MN-major one). A chunk
/// outside the matrix is zero-filled (K and an MN-major operand's MN are multiples of 8: a chunk is
/// wholly inside or wholly outside). `ld`: the global row pitch in elements.
template <GmmaMajor Major, int kThreads, class Stage>
__device__ void cp_async_tile(Stage const& stage, bf16 const* g, int ld, int mn_extent, int k_extent, int mn0,
                              int k0, int tid) {
  using L = std::remove_cvref_t<decltype(stage.layout())>;
  constexpr int MN = size_v<std::remove_cvref_t<decltype(get<0>(typename L::shape_type{}))>>;
  constexpr int chunks = MN * 64 / 8;
  static_assert(chunks % kThreads == 0, "whole passes of the block over the tile");
#pragma unroll
  for (int i = 0; i < chunks / kThreads; ++i) {
    const int c = tid + i * kThreads;
    // K-major: chunk c is row c/8 (an MN index), k = 8·(c%8). MN-major: row c/(MN/8) is a k.
    const int mn = Major == GmmaMajor::K ? c / 8 : 8 * (c % (MN / 8));
    const int k = Major == GmmaMajor::K ? 8 * (c % 8) : c / (MN / 8);
    const int gmn = mn0 + mn, gk = k0 + k;
    const bool inside = gmn < mn_extent && gk < k_extent;
    const std::int64_t offset = Major == GmmaMajor::K ? std::int64_t(gmn) * ld + gk : std::int64_t(gk) * ld + gmn;
    auto const& src = *reinterpret_cast<uint128_t const*>(inside ? g + offset : g);  // not read when outside
    auto& dst = *reinterpret_cast<uint128_t*>(&stage(mn, k));  // where the swizzled layout puts (mn, k)
    SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>::copy(src, dst, inside);
  }
}

}  // namespace detail

/// One block: C tile (blockIdx.x, blockIdx.y) = A·B. wgmma needs sm_90a: any other device pass
/// compiles a stub (layout/arch.hpp) which the harness never launches.
template <class Cfg, GmmaMajor MajorB>
__global__ void __launch_bounds__(Cfg::kThreads, 1) wgmma_gemm_kernel(const __grid_constant__ Params params) {
  if constexpr (!arch::compiled_for(arch::sm90a)) {
    arch::no_code_for_this_target();
  } else {
    using BM = typename Cfg::BM;
    using BN = typename Cfg::BN;
    constexpr int S = Cfg::kStages;
    constexpr int N = BN::value;
    using Atom = typename Cfg::template Atom<MajorB>;
    extern __shared__ uint128_t smem_raw[];
    // The rings start at the next 1024-byte boundary: the swizzle is a function of the address.
    auto base = (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t(1023);
    bf16* smem_a = reinterpret_cast<bf16*>(base);
    bf16* smem_b = smem_a + S * BM::value * 64;
    auto* full = reinterpret_cast<std::uint64_t*>(smem_b + S * BN::value * 64);  // [S]: stage s has landed
    auto* empty = full + S;                                                      // [S]: stage s may be refilled
    auto sA = make_tensor(make_smem_ptr(smem_a), typename Cfg::SmemA{});                     // (BM,64,S)
    auto sB = make_tensor(make_smem_ptr(smem_b), typename Cfg::template SmemB<MajorB>{});    // (BN,64,S)

    const int tid = int(threadIdx.x);
    const int wg = tid / 128;  // this thread's warpgroup: rows 64·wg .. 64·wg+63 of the block
    const int m0 = int(blockIdx.x) * BM::value, n0 = int(blockIdx.y) * BN::value;
    const int M = params.m, Ncols = params.n, K = params.k;
    const int k_tiles = ceil_div(K, 64);

    // The accumulators: this thread's N/2 values of its warpgroup's 64×N tile, in the order of the
    // atom's C layout (MMA_Traits<Atom>::CLayout).
    float acc[N / 2];
#pragma unroll
    for (int i = 0; i < N / 2; ++i) acc[i] = 0.0f;

    // One K step of 64 from stage s: four wgmma (k = 0, 16, 32, 48), one group.
    auto multiply_stage = [&](int s) {
      auto a_tile = local_tile(sA(_, _, s), make_shape(_64{}, _64{}), make_coord(wg, 0));  // (64,64): this warpgroup's rows
      gmma_k_block<Atom, GmmaMajor::K, MajorB>(a_tile, sB(_, _, s), acc);                  // B: (BN,64)
    };

    if constexpr (Cfg::kLoader == Loader::cp_async) {
      const int ld_b = MajorB == GmmaMajor::K ? K : Ncols;
      auto issue = [&](int kt) {
        const int s = kt % S;
        detail::cp_async_tile<GmmaMajor::K, Cfg::kThreads>(sA(_, _, s), params.a, K, M, K, m0, kt * 64, tid);
        detail::cp_async_tile<MajorB, Cfg::kThreads>(sB(_, _, s), params.b, ld_b, Ncols, K, n0, kt * 64, tid);
      };
      // Prologue: S-1 K steps in flight; every step commits one group (empty past the last).
      for (int s = 0; s < S - 1; ++s) {
        if (s < k_tiles) issue(s);
        cp_async_fence();
      }
      for (int kt = 0; kt < k_tiles; ++kt) {
        cp_async_wait<S - 2>();      // this thread's chunks of step kt have landed
        fence_proxy_async_shared();  // ...and are visible to wgmma, which reads through the async proxy
        __syncthreads();             // everyone's are; everyone's wgmma of step kt-1 has completed
        if (kt + S - 1 < k_tiles) issue(kt + S - 1);  // into the stage step kt-1 used
        cp_async_fence();
        multiply_stage(kt % S);
        warpgroup_wait<0>();
      }
    } else {
      // The TMA ring. full[s]: one arrival (the issuing thread's expect_tx) plus the bytes of both
      // boxes. empty[s]: one arrival per warpgroup, once its wgmma reading stage s have completed.
      constexpr std::uint32_t kStageBytes = Cfg::kStageBytesA + Cfg::kStageBytesB;
      const bool producer = tid == 0;
      if (producer) {
        tma_prefetch_map(&params.map_a);
        tma_prefetch_map(&params.map_b);
        for (int s = 0; s < S; ++s) {
          mbarrier_init(&full[s], 1);
          mbarrier_init(&empty[s], Cfg::kWarpgroups);
        }
        fence_mbarrier_init();
      }
      __syncthreads();
      auto issue = [&](int kt) {  // producer only: K step kt into stage kt % S
        const int s = kt % S;
        mbarrier_arrive_expect_tx(&full[s], kStageBytes);
        SM90_TMA_LOAD_2D::copy(&params.map_a, &full[s], &sA(0, 0, s), kt * 64, m0);
        if constexpr (MajorB == GmmaMajor::K) {
          SM90_TMA_LOAD_2D::copy(&params.map_b, &full[s], &sB(0, 0, s), kt * 64, n0);
        } else {
#pragma unroll
          for (int p = 0; p < N / 64; ++p)  // one box per 64-column panel
            SM90_TMA_LOAD_2D::copy(&params.map_b, &full[s], &sB(64 * p, 0, s), n0 + 64 * p, kt * 64);
        }
      };
      if (producer)
        for (int kt = 0; kt < S && kt < k_tiles; ++kt) issue(kt);
      // A wait that times out (a deadlock: kMbarrierTimeoutNs) stops the loop; the kernel traps once
      // its wgmma have finished (a trap with wgmma in flight would serialize them all, mbarrier.hpp).
      bool stalled = false;
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % S;
        if (!mbarrier_wait_bounded(&full[s], (kt / S) % 2)) {  // round kt/S of stage s has landed
          stalled = true;
          break;
        }
        multiply_stage(s);
        warpgroup_wait<Cfg::kInFlight>();  // every group but the last kInFlight has completed
        const int done = kt - Cfg::kInFlight;  // the K step whose stage is now free
        if (done >= 0) {
          if (tid % 128 == 0) mbarrier_arrive(&empty[done % S]);
          if (producer && done + S < k_tiles) {
            if (mbarrier_wait_bounded(&empty[done % S], (done / S) % 2))  // every warpgroup is done with it
              issue(done + S);
            else
              stalled = true;  // nothing more is issued: the consumers' next waits time out and stop too
          }
        }
        __syncwarp();
      }
      warpgroup_wait<0>();
      if (stalled) __trap();
    }

    // Epilogue: each accumulator to its place in C, as the atom's C layout says (two neighbours
    // along N as one 32-bit store where C's rows allow it).
    store_accumulators_bf16<Atom>(acc, params.c, Ncols, m0 + 64 * wg, n0, M, Ncols, params.c_pairs, tid % 128);
  }
}

// ---- Host ----

/// Empty when TMA can describe the operands of `p` (row-major A and C, bf16); otherwise the rule it
/// breaks. Chapter 10's kernels take the same problems.
inline std::string tma_gemm_rejects(const GemmProblem& p) {
  if (p.a != Order::row || p.c != Order::row) return "takes a row-major A and C (layouts RRR and RCR)";
  if (p.k % 8 != 0)
    return "needs K % 8 == 0: TMA reads rows whose pitch is a multiple of 16 bytes (A is M×K bf16, row-major)";
  if (p.b == Order::row && p.n % 8 != 0)
    return "needs N % 8 == 0 in RRR: TMA reads rows whose pitch is a multiple of 16 bytes (B is K×N bf16, row-major)";
  if (p.m > launch::int32_max || p.n > launch::int32_max || p.k > launch::int32_max)
    return "needs M, N and K below 2^31 (TMA coordinates are 32-bit)";
  return {};
}

/// Empty when the chapter's kernels take `p`; otherwise the constraint it breaks.
template <class Cfg>
std::string wgmma_rejects(const GemmProblem& p) {
  if (std::string why = tma_gemm_rejects(p); !why.empty()) return why;
  if (ceil_div(p.n, Cfg::BN::value) > max_grid_y)
    return "needs N <= " + std::to_string(max_grid_y * Cfg::BN::value) + " (65535 tiles of " +
           std::to_string(Cfg::BN::value) + " columns along grid y)";
  return {};
}

/// The one-time preparation of a launch (outside any timed region): the tensor maps of A and B, the
/// shared-memory opt-in; returns what runs the kernel on a stream. Throws std::invalid_argument for a
/// problem the kernel rejects (wgmma_rejects, or a tensor map that cannot describe the operands).
template <class Cfg>
std::function<void(cudaStream_t)> prepare_wgmma(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C) {
  if (std::string why = wgmma_rejects<Cfg>(p); !why.empty()) throw std::invalid_argument("wgmma_tma: " + why);
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  Params params{};
  params.a = A;
  params.b = B;
  params.c = C;
  params.m = m;
  params.n = n;
  params.k = k;
  params.c_pairs = reinterpret_cast<std::uintptr_t>(C) % 4 == 0 && n % 2 == 0;
  if constexpr (Cfg::kLoader == Loader::tma) {
    // A (M,K) row-major: K is the inner dimension; a box is one stage of the block's rows.
    params.map_a = make_tma_map(A, make_layout(make_shape(m, k), make_stride(k, _1{})), make_shape(typename Cfg::BM{}, _64{}),
                                Cfg::kTmaSwizzle);
    if (p.b == Order::col)  // B stored N×K (RCR): (N,K) with K inner, boxes of BN rows
      params.map_b = make_tma_map(B, make_layout(make_shape(n, k), make_stride(k, _1{})),
                                  make_shape(typename Cfg::BN{}, _64{}), Cfg::kTmaSwizzle);
    else  // B stored K×N (RRR): (N,K) with N inner, boxes of one 64-column panel
      params.map_b = make_tma_map(B, make_layout(make_shape(n, k), make_stride(_1{}, n)), make_shape(_64{}, _64{}),
                                  Cfg::kTmaSwizzle);
  }
  auto kernel = p.b == Order::col ? wgmma_gemm_kernel<Cfg, GmmaMajor::K> : wgmma_gemm_kernel<Cfg, GmmaMajor::MN>;
  opt_in_dynamic_smem(kernel, Cfg::kSmemBytes);
  const dim3 grid(unsigned(ceil_div(p.m, Cfg::BM::value)), unsigned(ceil_div(p.n, Cfg::BN::value)));
  return [kernel, grid, params](cudaStream_t stream) {
    kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(params);
  };
}

/// Prepares and runs once (tests, and the launch signature of the harness).
template <class Cfg>
void launch_wgmma(const GemmProblem& p, const bf16* A, const bf16* B, bf16* C, cudaStream_t stream) {
  prepare_wgmma<Cfg>(p, A, B, C)(stream);
}

/// The chapter driver's row for configuration Cfg: bf16, sm_90a, prepared once per problem.
template <class Cfg>
GemmKernel<bf16, bf16> wgmma_kernel(const char* name) {
  return {.name = name, .dtype = DType::bf16, .launch = launch_wgmma<Cfg>, .rejects = wgmma_rejects<Cfg>,
          .needs = arch::sm90a, .prepare = prepare_wgmma<Cfg>};
}

}  // namespace mm::ch09

// ---- Where the ladder's kernels are compiled ----
//
// Each configuration is instantiated once, in kernels.cu, and linked into the chapter binary and its
// tests.
#define MM_CH09_LADDER(X) X(WgmmaCpAsyncCfg) X(TmaCfg) X(TwoConsumersCfg) X(BigTileCfg) X(InFlightCfg)
#define MM_CH09_DECLARE(Cfg)                                                                                      \
  extern template std::function<void(cudaStream_t)> prepare_wgmma<Cfg>(const GemmProblem&, const bf16*, const bf16*, \
                                                                       bf16*);
namespace mm::ch09 {
MM_CH09_LADDER(MM_CH09_DECLARE)
}  // namespace mm::ch09
#undef MM_CH09_DECLARE
