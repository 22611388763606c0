// Chapter 07: fp32 on the CUDA cores: a cp.async pipeline in shared memory, warp tiling, swizzled
// shared memory, registers loaded one k ahead, deeper K steps and a bigger block tile.
//
// One generic kernel, several points of one configuration space (Config below). Each step of the
// chapter changes one thing (README, "The ladder"):
//   pipelined_s2/s3/s4  chapter 06's tile, its tiles arriving in a ring of 2, 3 or 4 shared-memory
//                       stages copied by cp.async (no register staging, one barrier per K step)
//   warp_tiled          pipelined_s3 with the threads numbered by warps (a warp owns 64×32 of C)
//   swizzled            warp_tiled with a Swizzle in place of the padding of the shared tiles
//   fragment_pipelined  pipelined_s3 with registers for two k (the next k loads while this one multiplies)
//   deep_k              fragment_pipelined with K steps of 16, shared memory beyond 48 KB
//   big_tile            deep_k with 128×256 block tiles, 8×16 outputs per thread, one block per SM
// Every storage order (RRR, RCR, CRR, CCR, and a column-major C) is a set of strides and tiled
// copies chosen on the host; any M, N, K: partial tiles are predicated, misaligned pointers or
// leading dimensions take 4-byte copies.
//
// Build: cmake --build build --target ch07_pipelined_simt      Run: build/bin/ch07_pipelined_simt
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "harness/cuda_check.hpp"
#include "gemm/launch.hpp"
#include "gemm/smem.hpp"
#include "gemm/problem.hpp"
#include "layout/all.hpp"

namespace mm::ch07 {

using launch::ceil_div;    // blocks that cover an extent
using launch::max_grid_y;  // 65535 blocks along grid y

// ---- Which shared-memory layout a configuration uses ----

/// How a (MN,BK) tile lies in shared memory. MN is the contiguous mode in both: the compute threads
/// read 4 consecutive M (or N) values of one k with one 128-bit load.
enum class Smem {
  padded,    ///< (MN,BK):(1,MN+4): each k-row shifted by 4 banks
  swizzled,  ///< (MN,BK):(1,MN) with the 16-byte units of each k-row permuted by k (Swizzle<3,2,log2 MN>)
};

// ---- The thread arrangement of the TiledMMA ----

/// Chapter 06's numbering: thread t at (t % ThrM, t / ThrM) of the ThrM×ThrN grid of compute threads.
/// The lanes of a pair (2i, 2i+1) differ along M and share N: a 128-bit load of A costs 4 wavefronts,
/// one of B 2 (README, "the pair rule").
template <int ThrM, int ThrN>
using PlainThreads = Layout<Shape<Int<ThrM>, Int<ThrN>, _1>>;  // (ThrM,ThrN,1) -> thread

/// Warp tiling: a warp is an 8×4 grid of lanes (lane = lm + 8·ln), the warps tile the rest, so a warp
/// owns a compact block of C and half a warp reads only 8 distinct 16-byte vectors of A. The pair
/// rule still prices a load of A at 4 wavefronts (the lanes of a pair differ along M): no numbering
/// can make a pair share both its A and its B vector.
template <int ThrM, int ThrN>
using WarpThreads =
    Layout<Shape<Shape<_8, Int<ThrM / 8>>, Shape<_4, Int<ThrN / 4>>, _1>,
           Stride<Stride<_1, _32>, Stride<_8, Int<32 * (ThrM / 8)>>, _0>>;  // ((lm,wm),(ln,wn),1) -> thread

// ---- One point of the configuration space ----

/// A block tile of BM×BN, K steps of BK, a ring of Stages shared tiles, ThrM×ThrN compute threads
/// numbered by ThrLayout, each owning RunsM×RunsN runs of 4×4 outputs of C.
template <int BM_, int BN_, int BK_, int Stages_, class ThrLayout, int RunsM, int RunsN, Smem kSmem_, int MinBlocks_,
          bool kFragmentPipeline_ = false, class FragVec_ = float4, bool kL2Prefetch_ = false>
struct Config {
  using BM = Int<BM_>;  ///< rows of C per block
  using BN = Int<BN_>;  ///< columns of C per block
  using BK = Int<BK_>;  ///< depth of one K step
  static constexpr int kStages = Stages_;       ///< shared-memory tiles in flight
  static constexpr int kMinBlocks = MinBlocks_;  ///< blocks per SM the register budget must allow
  static constexpr Smem kSmem = kSmem_;
  /// Registers hold the fragments of two k: those of k+1 load from shared memory while k multiplies,
  /// also across the barrier between K steps.
  static constexpr bool kFragmentPipeline = kFragmentPipeline_;
  /// The 128-bit copy from shared memory to registers: the TiledMMA's permutation makes each run of
  /// 4 values of a thread's fragment 4 consecutive, 16-byte aligned floats (one LDS.128). The vector
  /// type is CUDA's float4: the same LDS.128 as the library's uint128_t (two 64-bit words), but ptxas
  /// then assigns the FFMA operands to registers with fewer dispatch stalls (README, "Registers for two k").
  using SmemToRegs = Copy_Atom<UniversalCopy<FragVec_>, float>;
  /// The tile copies carry the `.L2::128B` hint: the L2 fetches whole 128-byte lines, which the next
  /// K steps' copies of the same rows then find there (cuBLAS's kernel copies this way).
  static constexpr bool kL2Prefetch = kL2Prefetch_;
  static constexpr int kThrM = size_v<decltype(layout<0>(ThrLayout{}))>;  ///< compute threads along M
  static constexpr int kThrN = size_v<decltype(layout<1>(ThrLayout{}))>;  ///< compute threads along N
  static constexpr int kThreads = kThrM * kThrN;                           ///< threads per block
  static_assert(BM_ == kThrM * 4 * RunsM, "BM = ThrM × (RunsM runs of 4 rows)");
  static_assert(BN_ == kThrN * 4 * RunsN, "BN = ThrN × (RunsN runs of 4 columns)");
  static_assert(BK_ % 8 == 0, "BK: whole 8-deep k groups (the K-major copy puts 8 lanes along k)");
  static_assert(Stages_ >= 2, "a pipeline needs at least two stages");

  using CtaTiler = decltype(make_shape(BM{}, BN{}, BK{}));  ///< (BM,BN,BK)

  /// The permutation that gives each thread runs of 4 consecutive rows (columns): logical position
  /// t + Thr·v (thread t, value v < 4) is row 4t + v, in blocks of 4·Thr rows; the runs of a thread
  /// are 4·Thr rows apart.
  using PermM = Layout<Shape<Int<kThrM>, _4>, Stride<_4, _1>>;
  using PermN = Layout<Shape<Int<kThrN>, _4>, Stride<_4, _1>>;
  using TiledMma = decltype(make_tiled_mma(UniversalFMA<float, float, float, float>{}, ThrLayout{},
                                           Tile<PermM, PermN, Underscore>{}));

  /// A (MN,BK,Stages) ring of tiles in shared memory.
  template <int MN>
  static constexpr auto smem_layout() {
    if constexpr (kSmem_ == Smem::padded) {
      constexpr int ld = MN + 4;  // + 4 floats: 16-byte aligned rows, each shifted by 4 banks
      return make_layout(make_shape(Int<MN>{}, BK{}, Int<Stages_>{}), make_stride(_1{}, Int<ld>{}, Int<ld * BK_>{}));
    } else {
      // XOR the k index (bits log2(MN).. of the offset) into the 16-byte unit index (bits 2..4): the
      // 8 k-rows of one group of 8 units land on 8 different bank groups. The pattern repeats every
      // 8 k-rows (8·MN floats), so each stage (a multiple of that) is swizzled alike.
      constexpr int log2_mn = MN == 64 ? 6 : MN == 128 ? 7 : MN == 256 ? 8 : -1;
      static_assert(log2_mn > 0, "swizzled tiles: MN of 64, 128 or 256");
      return composition(Swizzle<3, 2, log2_mn - 2>{}, make_layout(make_shape(Int<MN>{}, BK{}, Int<Stages_>{})));
    }
  }
  using SmemLayoutA = decltype(smem_layout<BM_>());  ///< (BM,BK,Stages)
  using SmemLayoutB = decltype(smem_layout<BN_>());  ///< (BN,BK,Stages)
  /// Shared memory of one block, in bytes (both rings).
  static constexpr int kSmemBytes = int(sizeof(float)) * (cosize_v<SmemLayoutA> + cosize_v<SmemLayoutB>);

  // ---- How the block's threads copy an (MN,BK) tile of an operand ----
  //
  // One pass of the threads covers part of the tile; the partitions repeat it over the rest (the
  // CPY_MN and CPY_K modes). MN contiguous in global memory (column-major A, row-major B): 16-byte
  // cp.async, lane l takes the four floats [4l, 4l+4) of one k-row: a warp reads 512 contiguous bytes
  // and writes them to shared memory as they are. K contiguous (row-major A, column-major B): shared
  // memory wants MN contiguous, so each float is copied on its own (4-byte cp.async) into its
  // transposed place: lane l takes k = l % 8 of row l / 8, a warp reads 4 rows × 32 bytes (4 full
  // sectors) and writes 4 consecutive MN of 8 k-rows, which the padding (4 banks per k-row) or the
  // swizzle puts on 32 different banks.
  template <int MN>
  static constexpr auto mn_major_copy() {
    constexpr int tm = MN / 4, tk = kThreads / tm;  // threads along MN (one float4 each), along K
    static_assert(tm * tk == kThreads && BK_ % tk == 0, "MN-major copy: threads tile (MN/4, BK)");
    using Op = std::conditional_t<kL2Prefetch_, SM80_CP_ASYNC_CACHEGLOBAL_L2_128B<uint128_t>,
                                  SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>>;
    return make_tiled_copy(Copy_Atom<Op, float>{},
                           Layout<Shape<Int<tm>, Int<tk>>>{},  // (MN/4,tk) -> thread, MN fastest
                           Layout<Shape<_4, _1>>{});           // (4,1) -> value: a float4 along MN
  }
  template <int MN>
  static constexpr auto k_major_copy() {
    constexpr int tm = kThreads / 8;  // 8 lanes along K, the rest along MN
    static_assert(MN % tm == 0, "K-major copy: threads tile (MN, 8)");
    using Op = std::conditional_t<kL2Prefetch_, SM80_CP_ASYNC_CACHEALWAYS_L2_128B<float>, SM80_CP_ASYNC_CACHEALWAYS<float>>;
    return make_tiled_copy(Copy_Atom<Op, float>{},
                           Layout<Shape<Int<tm>, _8>, Stride<_8, _1>>{},  // (tm,8) -> thread, K fastest
                           Layout<Shape<_1, _1>>{});                       // one float each pass
  }
};

// ---- The ladder's points ----

using Plain16x16 = PlainThreads<16, 16>;
using Warp16x16 = WarpThreads<16, 16>;
/// pipelined_sS: chapter 06's tile (128×128×8, 16×16 threads of 8×8, padded), S stages of cp.async.
template <int S>
using PipelinedCfg = Config<128, 128, 8, S, Plain16x16, 2, 2, Smem::padded, 2>;
/// warp_tiled: pipelined_s3 with the threads numbered by warps of 8×4 lanes.
using WarpTiledCfg = Config<128, 128, 8, 3, Warp16x16, 2, 2, Smem::padded, 2>;
/// swizzled: warp_tiled with swizzled shared tiles in place of padded ones.
using SwizzledCfg = Config<128, 128, 8, 3, Warp16x16, 2, 2, Smem::swizzled, 2>;
/// fragment_pipelined: pipelined_s3 (the numbering and padding that measured best) with registers
/// for two k: the next k's fragments load while this k multiplies, across the K-step barrier too.
using FragmentPipelinedCfg = Config<128, 128, 8, 3, Plain16x16, 2, 2, Smem::padded, 2, true>;
/// deep_k: fragment_pipelined with K steps of 16: half the barriers per FMA; 3 stages of 25 KB take
/// shared memory past the 48 KB a kernel gets without asking. The chapter's best.
using DeepKCfg = Config<128, 128, 16, 3, Plain16x16, 2, 2, Smem::padded, 2, true>;
/// big_tile: deep_k with cuBLAS's shape: 128×256 block tiles, 8×16 outputs per thread (fewer shared
/// loads per FMA), 4 stages (98 KB), one block per SM and up to 255 registers per thread.
using BigTileCfg = Config<128, 256, 16, 4, Plain16x16, 2, 4, Smem::padded, 1, true>;

// ---- The kernel ----

/// Everything one problem needs: sizes, pointers, the (MN,K) strides of A and B and the (M,N) strides
/// of C (types: which storage order), the tiled copies, and whether 16-byte copies are aligned.
template <class AStride, class CopyA, class BStride, class CopyB, class CStride>
struct GemmArgs {
  int m, n, k;     ///< C is M×N, K the inner dimension
  float const* a;  ///< A, seen as (M,K) with strides da
  AStride da;      ///< (M,K) strides of A
  CopyA copy_a;    ///< how the block copies a (BM,BK) tile of A
  bool a_vec;      ///< an MN-major A is 16-byte aligned (pointer and leading dimension): 16-byte copies allowed
  float const* b;  ///< B, seen as (N,K) with strides db
  BStride db;      ///< (N,K) strides of B
  CopyB copy_b;    ///< how the block copies a (BN,BK) tile of B
  bool b_vec;      ///< 16-byte copies of an MN-major B allowed
  float* c;        ///< C, (M,N) with strides dc
  CStride dc;      ///< (M,N) strides of C
};

/// __syncthreads() on the device. (The CPU tests run the block function on host threads and pass a
/// std::barrier instead.)
struct BlockBarrier {
  /// Waits for every thread of the block.
  MM_HD void operator()() const {
#if defined(__CUDA_ARCH__)
    __syncthreads();
#endif
  }
};

namespace detail {

/// Starts the copy of K step `kt` of an operand into one stage of its shared ring, as cp.async
/// copies that land while the block computes. Inside the matrix and 16-byte aligned (`vec`): the
/// tiled copy's own atom (16-byte copies for an MN-major operand, 4-byte for a K-major one). At an
/// edge (or misaligned): each float on its own, zero where its coordinate lies outside the matrix
/// (cp.async's zero fill), so the partial tile adds nothing to C.
///   src: (CPY,CPY_MN,CPY_K,k)   crd: the coordinates of src   dst: (CPY,CPY_MN,CPY_K)
template <class TiledCopy, class Src, class Crd, class Dst, class Extent>
MM_HD void issue_k_tile(TiledCopy const& tiled_copy, Src const& src, Crd const& crd, Dst& dst, Extent const& extent,
                        bool vec, int kt) {
  if (vec) {
    copy(tiled_copy, src(_, _, _, kt), dst);
  } else {
    auto inside = make_predicate(crd(_, _, _, kt), extent);  // (CPY,CPY_MN,CPY_K): coordinate inside the matrix
    copy_if(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<float>, float>{}, inside, src(_, _, _, kt), dst);
  }
}

/// Copies the fragment of one k, (MMA,MMA_MN), as runs of 4 with the 128-bit atom `Vec`: the two
/// modes grouped into one, which the atom divides into vectors of 4.
template <class Vec, class Src, class Dst>
MM_HD void copy_fragment(Src const& src, Dst&& dst) {
  copy(Vec{}, group_modes<0, 2>(src), group_modes<0, 2>(dst));
}

/// Slot `s` of a two-k register fragment (MMA,MMA_MN,2), as the one-k fragment (MMA,MMA_MN,1) that
/// gemm() multiplies.
template <class Frag>
MM_HD auto k_slot(Frag& frag, int s) {
  auto slot = frag(_, _, s);  // (MMA,MMA_MN)
  return make_tensor(slot.data(), append(slot.layout(), Layout<_1, _0>{}));
}

}  // namespace detail

/// What thread `tid` of block (block_m, block_n) does: C = A·B for any storage orders. A is seen as
/// an (M,K) tensor, B as (N,K), C as (M,N). `smem` holds both rings (Cfg::kSmemBytes). cp.async needs
/// sm_80: a device pass for an older target compiles a stub (layout/arch.hpp), which the harness
/// never launches; the host pass keeps the body for the CPU tests.
template <class Cfg, class Args, class Barrier>
MM_HD void pipelined_gemm_block(Args const& args, int block_m, int block_n, int tid, float* smem,
                                Barrier const& sync_threads) {
  if constexpr (!arch::compiled_for(arch::sm80)) {
    arch::no_code_for_this_target();
  } else {
    using BM = typename Cfg::BM;
    using BN = typename Cfg::BN;
    using BK = typename Cfg::BK;
    constexpr int S = Cfg::kStages;
    using TiledMma = typename Cfg::TiledMma;
    static_assert(TiledMma::size() == Cfg::kThreads, "one compute thread per thread of the block");
    const int M = args.m, N = args.n, K = args.k;
    TiledMma mma;
    typename Cfg::CtaTiler cta_tiler;

    // Whole matrices, and their coordinates (for predication) with the same shapes.
    auto mA = make_tensor(make_gmem_ptr(args.a), make_shape(M, K), args.da);  // (M,K)
    auto mB = make_tensor(make_gmem_ptr(args.b), make_shape(N, K), args.db);  // (N,K)
    auto mC = make_tensor(make_gmem_ptr(args.c), make_shape(M, N), args.dc);  // (M,N)
    auto cA = make_identity_tensor(shape(mA));                                 // (M,K) -> (m,k)
    auto cB = make_identity_tensor(shape(mB));                                 // (N,K) -> (n,k)
    auto cC = make_identity_tensor(shape(mC));                                 // (M,N) -> (m,n)

    // This block's tiles, and the shared rings.
    auto cta_coord = make_coord(block_m, block_n, _);
    auto gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (BM,BK,k)
    auto gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (BN,BK,k)
    auto gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (BM,BN)
    auto kA = local_tile(cA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (BM,BK,k) -> (m,k)
    auto kB = local_tile(cB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (BN,BK,k) -> (n,k)
    auto kC = local_tile(cC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (BM,BN)   -> (m,n)
    auto sA = make_tensor(make_smem_ptr(smem), typename Cfg::SmemLayoutA{});  // (BM,BK,S)
    auto sB = make_tensor(make_smem_ptr(smem + cosize_v<typename Cfg::SmemLayoutA>),
                          typename Cfg::SmemLayoutB{});                       // (BN,BK,S)

    // Copy partitions: what this thread moves from global to shared memory.
    auto thr_copy_a = args.copy_a.get_slice(tid);
    auto tAgA = thr_copy_a.partition_S(gA);  // (CPY,CPY_M,CPY_K,k)
    auto tAcA = thr_copy_a.partition_S(kA);  // (CPY,CPY_M,CPY_K,k) -> (m,k)
    auto thr_copy_b = args.copy_b.get_slice(tid);
    auto tBgB = thr_copy_b.partition_S(gB);  // (CPY,CPY_N,CPY_K,k)
    auto tBcB = thr_copy_b.partition_S(kB);  // (CPY,CPY_N,CPY_K,k) -> (n,k)

    // MMA partitions: what this thread accumulates (and, per stage below, reads from shared memory).
    auto thr_mma = mma.get_slice(tid);
    auto tCgC = thr_mma.partition_C(gC);  // (MMA,MMA_M,MMA_N)
    auto tCcC = thr_mma.partition_C(kC);  // (MMA,MMA_M,MMA_N) -> (m,n)
    auto tCrC = thr_mma.make_fragment_C(tCgC);  // (MMA,MMA_M,MMA_N): the accumulators
    clear(tCrC);

    // The unpredicated path needs the whole tile inside the matrix (block-uniform: no divergence) and,
    // for 16-byte copies, aligned rows; along K it is decided per K step (only the last can be partial).
    const bool a_rows = args.a_vec && (block_m + 1) * BM{} <= M;
    const bool b_rows = args.b_vec && (block_n + 1) * BN{} <= N;
    const int k_tiles = size<3>(tAgA);
    auto issue = [&](int kt) {
      const bool k_inside = (kt + 1) * BK{} <= K;
      const int stage = kt % S;
      auto tAsA = thr_copy_a.partition_D(sA(_, _, stage));  // (CPY,CPY_M,CPY_K)
      auto tBsB = thr_copy_b.partition_D(sB(_, _, stage));  // (CPY,CPY_N,CPY_K)
      detail::issue_k_tile(args.copy_a, tAgA, tAcA, tAsA, shape(mA), a_rows && k_inside, kt);
      detail::issue_k_tile(args.copy_b, tBgB, tBcB, tBsB, shape(mB), b_rows && k_inside, kt);
    };

    // Prologue: S-1 K steps in flight before the first multiply. Every K step commits one group
    // (empty past the last one), so "S-2 groups may still be pending" always means "the oldest landed".
    for (int s = 0; s < S - 1; ++s) {
      if (s < k_tiles) issue(s);
      cp_async_fence();
    }

    if constexpr (!Cfg::kFragmentPipeline) {
      // Registers for one k of A and of B: partitions of a (BM,1) and a (BN,1) slice of a stage.
      auto tCrA = thr_mma.partition_fragment_A(local_tile(sA(_, _, 0), make_shape(BM{}, _1{}), make_coord(0, 0)));  // (MMA,MMA_M,1)
      auto tCrB = thr_mma.partition_fragment_B(local_tile(sB(_, _, 0), make_shape(BN{}, _1{}), make_coord(0, 0)));  // (MMA,MMA_N,1)
      for (int kt = 0; kt < k_tiles; ++kt) {
        cp_async_wait<S - 2>();  // this thread's copies of step kt have landed
        sync_threads();          // everyone's have; and everyone has finished reading step kt-1's stage
        // Refill the stage that step kt-1 used (the barrier above makes that safe) with step kt+S-1.
        if (kt + S - 1 < k_tiles) issue(kt + S - 1);
        cp_async_fence();
        const int stage = kt % S;
        auto tCsA = thr_mma.partition_A(sA(_, _, stage));  // (MMA,MMA_M,BK)
        auto tCsB = thr_mma.partition_B(sB(_, _, stage));  // (MMA,MMA_N,BK)
  #pragma unroll
        for (int kk = 0; kk < BK{}; ++kk) {
          detail::copy_fragment<typename Cfg::SmemToRegs>(tCsA(_, _, kk), tCrA(_, _, 0));  // RunsM LDS.128
          detail::copy_fragment<typename Cfg::SmemToRegs>(tCsB(_, _, kk), tCrB(_, _, 0));  // RunsN LDS.128
          gemm(mma, tCrA, tCrB, tCrC);                            // (MMA,MMA_M,MMA_N) += outer product
        }
      }
    } else {
      // Registers for two k: slot kk % 2 is multiplied while slot (kk+1) % 2 loads. The loads of the
      // next K step's first k are issued right after the barrier that makes its stage readable, so
      // the barrier's wait overlaps the multiply of the current step's last k.
      auto tCrA = thr_mma.partition_fragment_A(local_tile(sA(_, _, 0), make_shape(BM{}, _2{}), make_coord(0, 0)));  // (MMA,MMA_M,2)
      auto tCrB = thr_mma.partition_fragment_B(local_tile(sB(_, _, 0), make_shape(BN{}, _2{}), make_coord(0, 0)));  // (MMA,MMA_N,2)
      cp_async_wait<S - 2>();
      sync_threads();
      int read_stage = 0;
      auto tCsA = thr_mma.partition_A(sA(_, _, read_stage));  // (MMA,MMA_M,BK)
      auto tCsB = thr_mma.partition_B(sB(_, _, read_stage));  // (MMA,MMA_N,BK)
      detail::copy_fragment<typename Cfg::SmemToRegs>(tCsA(_, _, 0), tCrA(_, _, 0));
      detail::copy_fragment<typename Cfg::SmemToRegs>(tCsB(_, _, 0), tCrB(_, _, 0));
      for (int kt = 0; kt < k_tiles; ++kt) {
  #pragma unroll
        for (int kk = 0; kk < BK{}; ++kk) {
          if (kk == BK{} - 1) {
            // Step kt+1 must have landed, and every thread must be done with step kt's stage
            // (its last fragment was loaded one k ago) before step kt+S reuses it below.
            cp_async_wait<S - 2>();
            sync_threads();
            read_stage = read_stage + 1 == S ? 0 : read_stage + 1;
            tCsA = thr_mma.partition_A(sA(_, _, read_stage));
            tCsB = thr_mma.partition_B(sB(_, _, read_stage));
          }
          const int kk_next = kk + 1 == BK{} ? 0 : kk + 1;
          detail::copy_fragment<typename Cfg::SmemToRegs>(tCsA(_, _, kk_next), tCrA(_, _, (kk + 1) % 2));
          detail::copy_fragment<typename Cfg::SmemToRegs>(tCsB(_, _, kk_next), tCrB(_, _, (kk + 1) % 2));
          if (kk == 0) {
            // Refill the stage step kt-1 used: everyone passed the barrier of step kt-1's last k.
            if (kt + S - 1 < k_tiles) issue(kt + S - 1);
            cp_async_fence();
          }
          gemm(mma, detail::k_slot(tCrA, kk % 2), detail::k_slot(tCrB, kk % 2), tCrC);
        }
      }
    }
    cp_async_wait<0>();  // nothing may still be writing shared memory when the block exits

    // Epilogue: each thread writes its accumulators, the ones inside C.
  #pragma unroll
    for (int i = 0; i < size(tCrC); ++i)
      if (elem_less(tCcC(i), shape(mC))) tCgC(i) = tCrC(i);
  }
}

/// The kernel: one block per BM×BN tile of C, blockIdx.x along M, blockIdx.y along N; shared memory
/// is dynamic (Cfg::kSmemBytes, which may exceed 48 KB).
template <class Cfg, class Args>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) pipelined_gemm_kernel(Args args) {
  extern __shared__ float4 smem_f4[];  // float4: the rings' 16-byte alignment
  pipelined_gemm_block<Cfg>(args, int(blockIdx.x), int(blockIdx.y), int(threadIdx.x),
                            reinterpret_cast<float*>(smem_f4), BlockBarrier{});
}

// ---- Host: the layouts of each storage order, the launch ----

/// Empty when the kernels take `p`; otherwise the constraint it breaks (for GemmKernel::rejects).
template <class Cfg>
std::string pipelined_rejects(const GemmProblem& p) {
  if (ceil_div(p.n, Cfg::BN::value) > max_grid_y)
    return "needs N <= " + std::to_string(max_grid_y * Cfg::BN::value) + " (65535 tiles of " +
           std::to_string(Cfg::BN::value) + " columns along grid y)";
  // Offsets are ints, those of a partial tile's outside elements included (computed, never read).
  return launch::int32_offset_rejects(p, Cfg::BM::value, Cfg::BN::value, Cfg::BK::value);
}

/// True when 16-byte copies of a matrix are aligned: the base pointer and every row (or column) start.
inline bool vector_aligned(const void* ptr, std::int64_t ld) {
  return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % 4 == 0;
}

/// Calls f(args) with the layouts of p's storage orders: the only place where they appear. A as
/// (M,K): row-major (K,1) is K-major, column-major (1,M) MN-major. B as (N,K): row-major K×N is
/// (1,N), MN-major; column-major (K,1), K-major. C as (M,N): row-major (N,1), column-major (1,M).
/// kRowMajorA: instantiate the two orders with a row-major A only (the tuning sweep's RRR and RCR,
/// half the kernels to compile); the caller has rejected the others.
template <class Cfg, bool kRowMajorA = false, class F>
void with_gemm_args(const GemmProblem& p, const float* A, const float* B, float* C, F&& f) {
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  const MatrixShape sc = p.shape_c();
  auto dC = make_stride(int(sc.row_stride()), int(sc.col_stride()));  // (M,N): run-time, scalar stores
  auto call = [&](auto dA, auto dB) {
    constexpr bool a_k_major = is_constant_value_v<1, decltype(get<1>(dA))>;
    constexpr bool b_k_major = is_constant_value_v<1, decltype(get<1>(dB))>;
    auto copy_a = [] {
      if constexpr (a_k_major) return Cfg::template k_major_copy<Cfg::BM::value>();
      else return Cfg::template mn_major_copy<Cfg::BM::value>();
    }();
    auto copy_b = [] {
      if constexpr (b_k_major) return Cfg::template k_major_copy<Cfg::BN::value>();
      else return Cfg::template mn_major_copy<Cfg::BN::value>();
    }();
    // A K-major operand always takes 4-byte copies: only the bounds decide its path.
    const bool a_vec = a_k_major || vector_aligned(A, p.shape_a().ld());
    const bool b_vec = b_k_major || vector_aligned(B, p.shape_b().ld());
    f(GemmArgs<decltype(dA), decltype(copy_a), decltype(dB), decltype(copy_b), decltype(dC)>{
        m, n, k, A, dA, copy_a, a_vec, B, dB, copy_b, b_vec, C, dC});
  };
  auto a_row = make_stride(k, _1{});
  auto a_col = make_stride(_1{}, m);
  auto b_row = make_stride(_1{}, n);
  auto b_col = make_stride(k, _1{});
  if (p.a == Order::row && p.b == Order::row) call(a_row, b_row);
  if (p.a == Order::row && p.b == Order::col) call(a_row, b_col);
  if constexpr (!kRowMajorA) {
    if (p.a == Order::col && p.b == Order::row) call(a_col, b_row);
    if (p.a == Order::col && p.b == Order::col) call(a_col, b_col);
  }
}

/// The grid: blockIdx.x walks the tiles of M, blockIdx.y those of N.
template <class Cfg>
dim3 gemm_grid(const GemmProblem& p) {
  return dim3(unsigned(ceil_div(p.m, Cfg::BM::value)), unsigned(ceil_div(p.n, Cfg::BN::value)));
}

/// Host launch for any storage order: the kernel instantiation of p's layouts, its shared memory
/// raised past 48 KB where the configuration needs it (once per instantiation).
template <class Cfg, bool kRowMajorA = false>
void launch_pipelined(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream) {
  if (std::string why = pipelined_rejects<Cfg>(p); !why.empty()) throw std::invalid_argument("pipelined_simt: " + why);
  if (kRowMajorA && p.a != Order::row) throw std::invalid_argument("pipelined_simt: this build takes a row-major A only");
  with_gemm_args<Cfg, kRowMajorA>(p, A, B, C, [&](auto const& args) {
    auto kernel = pipelined_gemm_kernel<Cfg, std::remove_cvref_t<decltype(args)>>;
    opt_in_dynamic_smem(kernel, Cfg::kSmemBytes);  // beyond 48 KB a kernel must ask (once)
    kernel<<<gemm_grid<Cfg>(p), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(args);
  });
}

}  // namespace mm::ch07

// ---- Where the ladder's kernels are compiled ----
//
// Each configuration's launch (every storage order) is instantiated once, in kernels.cu, and linked
// into the chapter binary and its tests, instead of being compiled again in each of them.
#define MM_CH07_LADDER(X)                                                                               \
  X(PipelinedCfg<2>) X(PipelinedCfg<3>) X(PipelinedCfg<4>) X(WarpTiledCfg) X(SwizzledCfg) X(FragmentPipelinedCfg) \
  X(DeepKCfg) X(BigTileCfg)
#define MM_CH07_DECLARE(Cfg) \
  extern template void launch_pipelined<Cfg, false>(const GemmProblem&, const float*, const float*, float*, cudaStream_t);
namespace mm::ch07 {
MM_CH07_LADDER(MM_CH07_DECLARE)
}  // namespace mm::ch07
#undef MM_CH07_DECLARE
