// Chapter 06: the 128×128×8 register-tiled matmul of chapter 05, written with TiledCopy and TiledMMA.
//
// One generic kernel. The host chooses, per operand, how the matrix lies in global memory (a stride),
// how the block's 256 threads copy a tile of it (a TiledCopy: thread layout × value layout, 128-bit
// vectors) and how the tile lies in shared memory; the four storage orders RRR, RCR, CRR, CCR are four
// sets of those layouts and one kernel. The TiledMMA gives every thread an 8×8 block of C made of
// 2×2 runs of 4 consecutive rows/columns, so the inner loop reads shared memory with 128-bit loads.
// A configuration (TiledConfig) picks the shared padding, the TiledMMA and prefetch: the chapter's
// steps from chapter 05 (128-bit global loads, then a pad of 4, then the permuted TiledMMA) and its
// variants are configurations of this one kernel.
//
// Build: cmake --build build --target ch06_tiled_copy_mma      Run: build/bin/ch06_tiled_copy_mma
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "05_layout_matmul/layout_matmul.cuh"
#include "gemm/problem.hpp"
#include "layout/all.hpp"

namespace mm::ch06 {

// ---- The block tile, the thread count and the grid limits: chapter 05's, unchanged ----

using ch05::BM;          // 128 rows of C per block
using ch05::BN;          // 128 columns of C per block
using ch05::BK;          // 8: depth of one K step
using ch05::kThreads;    // 256 threads per block: 16×16, each 8×8 of C
using ch05::CtaTiler;    // (BM, BN, BK)
using ch05::max_grid_y;  // 65535 blocks along grid y
using ch05::ceil_div;

// ---- Shared memory: one layout for every storage order ----
//
// (MN,BK):(1,MN+pad). The compute threads read 4 consecutive M (or N) values of one k with a 128-bit
// load, so M is the contiguous mode. A pad of 4 keeps every column 16-byte aligned (an odd pad would
// break the 128-bit loads and stores) and shifts each column by 4 banks, so that a copy writing 4
// different k of 16 rows (a K-major operand) hits 32 different banks. The chapter's first step keeps
// chapter 05's pad of 1, which only scalar shared loads and stores can use.
template <class MN, int kPad>
using SmemLayoutPadded = decltype(make_layout(make_shape(MN{}, BK{}), make_stride(_1{}, Int<MN::value + kPad>{})));  // (MN,BK)
using SmemLayoutA = SmemLayoutPadded<BM, 4>;  // (BM,BK): tiled_vec128's and every later kernel's
using SmemLayoutB = SmemLayoutPadded<BN, 4>;  // (BN,BK)

// ---- TiledCopy: 256 threads, 4 floats (one 128-bit vector) each, 1024 floats = one (128,8) tile ----
//
// The copy's tile is (MN, K), MN being M for A and N for B. The value layout puts each thread's 4
// floats along the dimension that is contiguous in global memory; the thread layout decides which
// vectors the 32 lanes of a warp read together, i.e. whether the warp's request is coalesced.

/// The 128-bit copy atom: one LDG.128 moves four floats.
using VecCopyAtom = Copy_Atom<UniversalCopy<uint128_t>, float>;

/// MN contiguous (column-major A, row-major B): lane i reads floats [4i, 4i+4) of one k-row, so a
/// warp reads 128 consecutive floats = 512 contiguous bytes. Threads: (32,8), MN fastest.
using ThrMNMajor = Layout<Shape<_32, _8>, Stride<_1, _32>>;  // (MN/4, K) -> thread
using ValMNMajor = Layout<Shape<_4, _1>>;                    // (4, 1)    -> value: a float4 along MN
/// K contiguous (row-major A, column-major B): a row of the tile is only 8 floats (32 bytes), two
/// lanes share it, a warp reads 16 rows: 16 full 32-byte sectors. Threads: (128,2), K fastest.
using ThrKMajor = Layout<Shape<_128, _2>, Stride<_2, _1>>;   // (MN, K/4) -> thread
using ValKMajor = Layout<Shape<_1, _4>>;                     // (1, 4)    -> value: a float4 along K

/// The counter-examples: the same vectors, the lanes of a warp spread so that each lands alone in a
/// 32-byte sector and uses half of it. MN contiguous: lanes walk k first, then MN groups 8 apart.
using ThrMNMajorStrided = Layout<Shape<Shape<_8, _4>, _8>, Stride<Stride<_32, _8>, _1>>;  // ((MN/4),K) -> thread
/// K contiguous: lanes walk MN (32 different rows), the other half of each row comes from another warp.
using ThrKMajorStrided = Layout<Shape<_128, _2>, Stride<_1, _128>>;  // (MN, K/4) -> thread

// ---- TiledMMA: 16×16 threads of scalar FMA, each 8×8 values of C ----
//
// Without a permutation thread t would own rows t, t+16, t+32, ... (stride 16: scalar shared loads).
// The permutation (16,4):(4,1) renumbers each 64 rows so that the 16 threads × 4 values become
// 4 consecutive rows per thread: thread t owns rows 4t..4t+3 and 64+4t..64+4t+3, the same for N.
//
// The atom layout numbers the threads, and so decides which lanes read the same 16-byte vector. A
// warp's LDS.128 costs 2 wavefronts when lanes 2i and 2i+1 read the same address, 4 otherwise
// (chapter 03's wavefront rule). M fastest (thread = tm + 16·tn): the two lanes of a pair have
// different tm and one tn, they share their vector of B, not of A. N fastest (16·tm + tn): they
// share A, not B. No numbering shares both: that would be the same element of C.
using MmaAtomLayout = Layout<Shape<_16, _16, _1>>;                                  // (ThrM,ThrN,ThrK) -> thread, M fastest
using MmaAtomLayoutNFastest = Layout<Shape<_16, _16, _1>, Stride<_16, _1, _256>>;  // (ThrM,ThrN,ThrK) -> thread, N fastest
using MmaPermMN = Layout<Shape<_16, _4>, Stride<_4, _1>>;                           // logical row -> actual row, per 64
/// Permuted, M fastest: runs of 4 rows (LDS.128), lane pairs share B. The chapter's TiledMMA.
using TiledMmaT = decltype(make_tiled_mma(UniversalFMA<float, float, float, float>{}, MmaAtomLayout{},
                                          Tile<MmaPermMN, MmaPermMN, Underscore>{}));
/// Not permuted: thread (tm, tn) owns rows tm + 16i and columns tn + 16j (chapter 05's partition): scalar LDS.
using TiledMmaUnpermuted = decltype(make_tiled_mma(UniversalFMA<float, float, float, float>{}, MmaAtomLayout{}));
/// Permuted, N fastest: the same runs of 4 rows and columns, lane pairs share A.
using TiledMmaPairsShareA = decltype(make_tiled_mma(UniversalFMA<float, float, float, float>{},
                                                    MmaAtomLayoutNFastest{}, Tile<MmaPermMN, MmaPermMN, Underscore>{}));

// ---- A configuration: what one kernel of the chapter chooses ----

/// Everything that tells the chapter's kernels apart, besides the storage order (the host's strides):
/// the shared padding, the TiledMMA (and with it the shared-load width and lane order), register
/// prefetch, and the coalesced or strided thread order of the TiledCopies.
template <int kPad_, class TiledMma_, bool kPrefetch_, bool kStridedCopy_ = false>
struct TiledConfig {
  static constexpr int kPad = kPad_;                   ///< floats after each column of sA and sB
  static constexpr bool kPrefetch = kPrefetch_;        ///< load K step k+1 while step k is multiplied
  static constexpr bool kStridedCopy = kStridedCopy_;  ///< the uncoalesced thread order of the copies
  using TiledMma = TiledMma_;                          ///< 16×16 threads, 8×8 of C each
  using SmemLayoutA = SmemLayoutPadded<BM, kPad>;      ///< (BM,BK)
  using SmemLayoutB = SmemLayoutPadded<BN, kPad>;      ///< (BN,BK)
  static_assert(std::is_same_v<TiledMma, TiledMmaUnpermuted> || kPad % 4 == 0,
                "(BM + pad) % 4: the permuted TiledMMA's 128-bit shared loads need 16-byte aligned columns");
};

// ---- The kernel ----

namespace detail {

/// Brings K step `kt` of an operand's (MN,BK) tiles from global memory into the thread's registers.
/// The whole tile inside the matrix and 16-byte aligned vectors: the TiledCopy's 128-bit loads.
/// Otherwise (the last tile along M, N or K, or a leading dimension that is not a multiple of 4)
/// each of the thread's four values is loaded on its own if its coordinate is inside the matrix,
/// zero if not; a zero adds nothing to the sum.
///   src: (CPY,CPY_MN,CPY_K,k)   crd: the same partition of the coordinates   dst: (CPY,CPY_MN,CPY_K)
template <class TiledCopy, class Src, class Crd, class Dst, class Extent>
MM_HD void load_k_tile(TiledCopy const& tiled_copy, Src const& src, Crd const& crd, Dst& dst, Extent const& extent,
                       bool vec_rows, int kt, int K) {
  auto src_k = src(_, _, _, kt);  // (CPY,CPY_MN,CPY_K)
  if (vec_rows && (kt + 1) * BK{} <= K) {
    copy(tiled_copy, src_k, dst);  // one LDG.128
  } else {
    auto crd_k = crd(_, _, _, kt);  // (CPY,CPY_MN,CPY_K) -> (mn,k)
#pragma unroll
    for (int i = 0; i < size(dst); ++i) dst(i) = elem_less(crd_k(i), extent) ? src_k(i) : 0.0f;
  }
}

}  // namespace detail

/// Everything the kernel needs to know about one problem. The strides and tiled copies are the
/// layouts the host chooses per storage order; their types make each order its own instantiation.
template <class AStride, class CopyA, class BStride, class CopyB, class CStride>
struct TiledGemmArgs {
  int m, n, k;      ///< C is M×N, K the inner dimension
  float const* a;   ///< A, seen as (M,K) with strides da
  AStride da;       ///< (M,K) strides of A
  CopyA copy_a;     ///< how 256 threads copy a (BM,BK) tile of A
  bool a_vec;       ///< A's rows (or columns) are 16-byte aligned: 128-bit loads allowed
  float const* b;   ///< B, seen as (N,K) with strides db
  BStride db;       ///< (N,K) strides of B
  CopyB copy_b;     ///< how 256 threads copy a (BN,BK) tile of B
  bool b_vec;       ///< 128-bit loads of B allowed
  float* c;         ///< C, (M,N) with strides dc
  CStride dc;       ///< (M,N) strides of C
};

/// __syncthreads() on the device. (The CPU tests run the block function with 256 host threads and
/// pass a std::barrier instead.)
struct BlockBarrier {
  /// Waits for every thread of the block.
  MM_HD void operator()() const {
#if defined(__CUDA_ARCH__)
    __syncthreads();
#endif
  }
};

/// What thread `tid` of block (block_m, block_n) does: C = A·B for any storage orders, A seen as an
/// (M,K) tensor, B as (N,K), C as (M,N). Cfg (a TiledConfig): the shared layouts, the TiledMMA, and
/// kPrefetch: load the next K step into registers while this one is multiplied. smem_a, smem_b: the
/// block's shared tiles, Cfg's layouts' cosizes; sync_threads: the block's barrier.
template <class Cfg, class Args, class Barrier>
MM_HD void tiled_gemm_block(Args const& args, int block_m, int block_n, int tid, float* smem_a, float* smem_b,
                            Barrier const& sync_threads) {
  using CopyA = std::remove_cvref_t<decltype(args.copy_a)>;
  using CopyB = std::remove_cvref_t<decltype(args.copy_b)>;
  using TiledMma = typename Cfg::TiledMma;
  using TileMK = decltype(make_shape(BM{}, BK{}));
  constexpr bool kPrefetch = Cfg::kPrefetch;
  static_assert(TiledMma::size() == kThreads, "one MMA thread per thread of the block (16×16)");
  static_assert(CopyA::size() == kThreads && CopyB::size() == kThreads, "one copy thread per thread of the block");
  static_assert(std::is_same_v<decltype(CopyA::tiler()), TileMK> && std::is_same_v<decltype(CopyB::tiler()), TileMK>,
                "one pass of a tiled copy moves one (128,8) tile: THR × VAL = (BM,BK)");
  static_assert(BM::value % 64 == 0 && BN::value % 64 == 0, "BM / 64: whole blocks of the MMA permutation");
  const int M = args.m, N = args.n, K = args.k;
  auto const& copy_a = args.copy_a;
  auto const& copy_b = args.copy_b;
  TiledMma mma;
  CtaTiler cta_tiler;

  // Whole matrices, and their coordinates (for predication) with the same shapes.
  auto mA = make_tensor(make_gmem_ptr(args.a), make_shape(M, K), args.da);  // (M,K)
  auto mB = make_tensor(make_gmem_ptr(args.b), make_shape(N, K), args.db);  // (N,K)
  auto mC = make_tensor(make_gmem_ptr(args.c), make_shape(M, N), args.dc);  // (M,N)
  auto cA = make_identity_tensor(shape(mA));                                 // (M,K) -> (m,k)
  auto cB = make_identity_tensor(shape(mB));                                 // (N,K) -> (n,k)
  auto cC = make_identity_tensor(shape(mC));                                 // (M,N) -> (m,n)

  // This block's tiles.
  auto cta_coord = make_coord(block_m, block_n, _);
  auto gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});   // (BM,BK,k)
  auto gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});   // (BN,BK,k)
  auto gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});   // (BM,BN)
  auto kA = local_tile(cA, cta_tiler, cta_coord, Step<_1, X, _1>{});   // (BM,BK,k) -> (m,k)
  auto kB = local_tile(cB, cta_tiler, cta_coord, Step<X, _1, _1>{});   // (BN,BK,k) -> (n,k)
  auto kC = local_tile(cC, cta_tiler, cta_coord, Step<_1, _1, X>{});   // (BM,BN)   -> (m,n)
  auto sA = make_tensor(make_smem_ptr(smem_a), typename Cfg::SmemLayoutA{});  // (BM,BK)
  auto sB = make_tensor(make_smem_ptr(smem_b), typename Cfg::SmemLayoutB{});  // (BN,BK)

  // Copy partitions: what this thread moves, global -> registers -> shared.
  auto thr_copy_a = copy_a.get_slice(tid);
  auto tAgA = thr_copy_a.partition_S(gA);  // (CPY,CPY_M,CPY_K,k)
  auto tAcA = thr_copy_a.partition_S(kA);  // (CPY,CPY_M,CPY_K,k) -> (m,k)
  auto tAsA = thr_copy_a.partition_D(sA);  // (CPY,CPY_M,CPY_K)
  auto tArA = make_fragment_like(tAsA);    // (CPY,CPY_M,CPY_K)
  auto thr_copy_b = copy_b.get_slice(tid);
  auto tBgB = thr_copy_b.partition_S(gB);  // (CPY,CPY_N,CPY_K,k)
  auto tBcB = thr_copy_b.partition_S(kB);  // (CPY,CPY_N,CPY_K,k) -> (n,k)
  auto tBsB = thr_copy_b.partition_D(sB);  // (CPY,CPY_N,CPY_K)
  auto tBrB = make_fragment_like(tBsB);    // (CPY,CPY_N,CPY_K)

  // MMA partitions: what this thread reads from shared memory and accumulates.
  auto thr_mma = mma.get_slice(tid);
  auto tCsA = thr_mma.partition_A(sA);  // (MMA,MMA_M,MMA_K)
  auto tCsB = thr_mma.partition_B(sB);  // (MMA,MMA_N,MMA_K)
  auto tCgC = thr_mma.partition_C(gC);  // (MMA,MMA_M,MMA_N)
  auto tCcC = thr_mma.partition_C(kC);  // (MMA,MMA_M,MMA_N) -> (m,n)
  // Registers for one k of A and of B: the partitions of a (BM,1) and a (BN,1) slice of the tiles.
  auto tCrA = thr_mma.partition_fragment_A(local_tile(sA, make_shape(BM{}, _1{}), make_coord(0, 0)));  // (MMA,MMA_M,1)
  auto tCrB = thr_mma.partition_fragment_B(local_tile(sB, make_shape(BN{}, _1{}), make_coord(0, 0)));  // (MMA,MMA_N,1)
  auto tCrC = thr_mma.make_fragment_C(tCgC);  // (MMA,MMA_M,MMA_N): the 8×8 accumulators
  clear(tCrC);

  // The 128-bit path needs the whole tile inside the matrix (block-uniform: no divergence) and
  // 16-byte aligned rows; along K it is decided per K step (only the last one can be partial).
  const bool a_vec_rows = args.a_vec && (block_m + 1) * BM{} <= M;
  const bool b_vec_rows = args.b_vec && (block_n + 1) * BN{} <= N;
  const int k_tiles = size<3>(tAgA);

  if constexpr (kPrefetch) {
    detail::load_k_tile(copy_a, tAgA, tAcA, tArA, shape(mA), a_vec_rows, 0, K);
    detail::load_k_tile(copy_b, tBgB, tBcB, tBrB, shape(mB), b_vec_rows, 0, K);
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    if constexpr (!kPrefetch) {
      // The warps wait for global memory here, with nothing else to do.
      detail::load_k_tile(copy_a, tAgA, tAcA, tArA, shape(mA), a_vec_rows, kt, K);
      detail::load_k_tile(copy_b, tBgB, tBcB, tBrB, shape(mB), b_vec_rows, kt, K);
    }
    sync_threads();  // every warp has finished reading the previous tile from shared memory
    copy(tArA, tAsA);
    copy(tBrB, tBsB);
    sync_threads();  // the whole tile is in shared memory
    if constexpr (kPrefetch) {
      // Issue the next tile's loads now; nothing reads tArA/tBrB until the next iteration's
      // stores, so the 512 FMAs below run while the loads are in flight.
      if (kt + 1 < k_tiles) {
        detail::load_k_tile(copy_a, tAgA, tAcA, tArA, shape(mA), a_vec_rows, kt + 1, K);
        detail::load_k_tile(copy_b, tBgB, tBcB, tBrB, shape(mB), b_vec_rows, kt + 1, K);
      }
    }
#pragma unroll
    for (int kk = 0; kk < BK{}; ++kk) {
      copy(tCsA(_, _, kk), tCrA(_, _, 0));  // (MMA,MMA_M): 8 floats, two runs of 4 -> 2 LDS.128 (unpermuted: 8 LDS)
      copy(tCsB(_, _, kk), tCrB(_, _, 0));  // (MMA,MMA_N): 2 LDS.128 (unpermuted: 8 LDS)
      gemm(mma, tCrA, tCrB, tCrC);          // (MMA,MMA_M,MMA_N) += outer product: 64 FFMA
    }
  }

  // Epilogue: each thread writes its 8×8 accumulators, the ones inside C.
#pragma unroll
  for (int i = 0; i < size(tCrC); ++i)
    if (elem_less(tCcC(i), shape(mC))) tCgC(i) = tCrC(i);
}

/// The kernel: one block per 128×128 tile of C, blockIdx.x along M, blockIdx.y along N.
/// __launch_bounds__(256, 2): two blocks per SM, so at most 128 registers per thread.
template <class Cfg, class Args>
__global__ void __launch_bounds__(kThreads, 2) tiled_gemm_kernel(Args args) {
  __shared__ alignas(16) float smem_a[cosize_v<typename Cfg::SmemLayoutA>];  // (BM,BK)
  __shared__ alignas(16) float smem_b[cosize_v<typename Cfg::SmemLayoutB>];  // (BN,BK)
  tiled_gemm_block<Cfg>(args, int(blockIdx.x), int(blockIdx.y), int(threadIdx.x), smem_a, smem_b, BlockBarrier{});
}

// ---- Host: one set of layouts per storage order ----

/// The kernels of the chapter. The first three are the steps from chapter 05's layout_padded, one idea each.
enum class Variant {
  ldg128,                  ///< coalesced 128-bit global loads; chapter 05's pad of 1 and unpermuted threads: scalar STS, LDS
  ldg128_pad4,             ///< + a pad of 4: 16-byte aligned columns (STS.128 of an MN-major copy), conflict-free stores
  vec128,                  ///< + the permuted TiledMMA: 4 LDS.128 per k instead of 16 LDS
  vec128_uncoalesced,      ///< the same vectors, lanes spread so every lane is alone in its 32-byte sector
  prefetch,                ///< coalesced 128-bit loads of the next K step in flight while this one is multiplied
  prefetch_pairs_share_a,  ///< prefetch with the threads numbered N fastest: lane pairs share A instead of B
};

/// Each variant's configuration: one row of the chapter's table of kernels.
template <Variant V>
struct VariantConfig;
template <>
struct VariantConfig<Variant::ldg128> : TiledConfig<1, TiledMmaUnpermuted, false> {};
template <>
struct VariantConfig<Variant::ldg128_pad4> : TiledConfig<4, TiledMmaUnpermuted, false> {};
template <>
struct VariantConfig<Variant::vec128> : TiledConfig<4, TiledMmaT, false> {};
template <>
struct VariantConfig<Variant::vec128_uncoalesced> : TiledConfig<4, TiledMmaT, false, true> {};
template <>
struct VariantConfig<Variant::prefetch> : TiledConfig<4, TiledMmaT, true> {};
template <>
struct VariantConfig<Variant::prefetch_pairs_share_a> : TiledConfig<4, TiledMmaPairsShareA, true> {};

/// The TiledCopy for an operand tile (MN,BK): K-major when K is the contiguous dimension in memory.
template <bool kKMajor, bool kStrided>
constexpr auto operand_copy() {
  if constexpr (kKMajor) {
    if constexpr (kStrided) return make_tiled_copy(VecCopyAtom{}, ThrKMajorStrided{}, ValKMajor{});
    else return make_tiled_copy(VecCopyAtom{}, ThrKMajor{}, ValKMajor{});
  } else {
    if constexpr (kStrided) return make_tiled_copy(VecCopyAtom{}, ThrMNMajorStrided{}, ValMNMajor{});
    else return make_tiled_copy(VecCopyAtom{}, ThrMNMajor{}, ValMNMajor{});
  }
}

/// Empty when the kernels take `p`; otherwise the constraint it breaks (for GemmKernel::rejects).
/// Any M, N, K and all eight storage orders are taken within the grid's y limit and chapter 05's
/// 32-bit offsets: the strides are ints, and a partial tile's outside elements get offsets too.
inline std::string tiled_rejects(const GemmProblem& p) {
  if (ceil_div(p.n, BN{}) > max_grid_y)
    return "needs N <= " + std::to_string(max_grid_y * BN{}) + " (65535 tiles of 128 columns along grid y)";
  return launch::int32_offset_rejects(p, BM{}, BN{}, BK{});  // gemm/launch.hpp, the 32-bit rule
}

/// The grid: blockIdx.x walks the tiles of M, blockIdx.y those of N.
inline dim3 tiled_grid(const GemmProblem& p) { return dim3(unsigned(ceil_div(p.m, BM{})), unsigned(ceil_div(p.n, BN{}))); }

/// True when 128-bit loads of a matrix are 16-byte aligned: the base pointer and every row (or column) start.
inline bool vector_aligned(const void* ptr, std::int64_t ld) {
  return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % 4 == 0;
}

namespace detail {
template <bool kStrided, class AStride, class BStride, class F>
void with_strides(const GemmProblem& p, const float* A, AStride dA, const float* B, BStride dB, float* C, F&& f) {
  // K-major operand: its K stride is the compile-time 1.
  constexpr bool a_k_major = is_constant_value_v<1, decltype(get<1>(dA))>;
  constexpr bool b_k_major = is_constant_value_v<1, decltype(get<1>(dB))>;
  auto copy_a = operand_copy<a_k_major, kStrided>();
  auto copy_b = operand_copy<b_k_major, kStrided>();
  const MatrixShape sc = p.shape_c();
  auto dC = make_stride(int(sc.row_stride()), int(sc.col_stride()));  // (M,N): run-time, the epilogue stores scalars
  f(TiledGemmArgs<AStride, decltype(copy_a), BStride, decltype(copy_b), decltype(dC)>{
      int(p.m), int(p.n), int(p.k), A, dA, copy_a, vector_aligned(A, p.shape_a().ld()),
      B, dB, copy_b, vector_aligned(B, p.shape_b().ld()), C, dC});
}
}  // namespace detail

/// Calls f(args) with the layouts for p's storage orders: the only place where they appear.
/// A as (M,K): row-major (K,1), column-major (1,M).  B as (N,K): row-major K×N is (1,N), column-major (K,1).
/// Cfg (a TiledConfig) chooses the coalesced or the strided TiledCopies.
template <class Cfg, class F>
void with_tiled_gemm_args(const GemmProblem& p, const float* A, const float* B, float* C, F&& f) {
  constexpr bool kStrided = Cfg::kStridedCopy;
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  auto a_row = make_stride(k, _1{});
  auto a_col = make_stride(_1{}, m);
  auto b_row = make_stride(_1{}, n);
  auto b_col = make_stride(k, _1{});
  if (p.a == Order::row && p.b == Order::row) detail::with_strides<kStrided>(p, A, a_row, B, b_row, C, f);
  if (p.a == Order::row && p.b == Order::col) detail::with_strides<kStrided>(p, A, a_row, B, b_col, C, f);
  if (p.a == Order::col && p.b == Order::row) detail::with_strides<kStrided>(p, A, a_col, B, b_row, C, f);
  if (p.a == Order::col && p.b == Order::col) detail::with_strides<kStrided>(p, A, a_col, B, b_col, C, f);
}

/// Host launch for any storage order: only the strides (and with them the tiled copies) change.
template <Variant V>
void launch_tiled(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t stream) {
  if (std::string why = tiled_rejects(p); !why.empty()) throw std::invalid_argument("tiled_copy_mma: " + why);
  using Cfg = VariantConfig<V>;
  with_tiled_gemm_args<Cfg>(p, A, B, C, [&](auto const& args) {
    tiled_gemm_kernel<Cfg><<<tiled_grid(p), kThreads, 0, stream>>>(args);
  });
}

/// Step 1 from chapter 05: its computation with coalesced 128-bit global loads (TiledCopy), its pad of
/// 1 and its unpermuted thread grid, so shared memory is still written and read with scalar STS, LDS.
inline void launch_tiled_ldg128(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t s) {
  launch_tiled<Variant::ldg128>(p, A, B, C, s);
}
/// Step 2: the pad of 4. Columns 16-byte aligned (an MN-major copy stores one STS.128) and the K-major
/// copy's stores conflict-free; the inner loop still reads scalars.
inline void launch_tiled_ldg128_pad4(const GemmProblem& p, const float* A, const float* B, float* C,
                                     cudaStream_t s) {
  launch_tiled<Variant::ldg128_pad4>(p, A, B, C, s);
}

/// Step 3, the chapter's kernel: + the permuted TiledMMA, 4 LDS.128 per k. Coalesced 128-bit global
/// loads; load, store to shared memory, multiply, in turn.
inline void launch_tiled_vec128(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t s) {
  launch_tiled<Variant::vec128>(p, A, B, C, s);
}
/// The counter-example: the same 128-bit vectors, assigned to lanes so a warp's request is strided.
inline void launch_tiled_vec128_uncoalesced(const GemmProblem& p, const float* A, const float* B, float* C,
                                            cudaStream_t s) {
  launch_tiled<Variant::vec128_uncoalesced>(p, A, B, C, s);
}
/// Register prefetch: the next K step's loads are in flight while the current one is multiplied.
inline void launch_tiled_prefetch(const GemmProblem& p, const float* A, const float* B, float* C, cudaStream_t s) {
  launch_tiled<Variant::prefetch>(p, A, B, C, s);
}
/// tiled_prefetch with the other lane order: lane pairs share their vector of A, not of B. Still 12
/// wavefronts per k (A 2 + B 4 per load pair instead of A 4 + B 2): the rule's minimum of 8 is out of reach.
inline void launch_tiled_prefetch_pairs_share_a(const GemmProblem& p, const float* A, const float* B, float* C,
                                                cudaStream_t s) {
  launch_tiled<Variant::prefetch_pairs_share_a>(p, A, B, C, s);
}

}  // namespace mm::ch06

// ---- Where the chapter's kernels are compiled ----
//
// Each variant's launch (every storage order) is instantiated once, in kernels.cu, and linked into
// the chapter binary, its tests and chapter 07's binary, instead of being compiled again in each.
namespace mm::ch06 {
extern template void launch_tiled<Variant::ldg128>(const GemmProblem&, const float*, const float*, float*, cudaStream_t);
extern template void launch_tiled<Variant::ldg128_pad4>(const GemmProblem&, const float*, const float*, float*,
                                                        cudaStream_t);
extern template void launch_tiled<Variant::vec128>(const GemmProblem&, const float*, const float*, float*, cudaStream_t);
extern template void launch_tiled<Variant::vec128_uncoalesced>(const GemmProblem&, const float*, const float*, float*,
                                                                cudaStream_t);
extern template void launch_tiled<Variant::prefetch>(const GemmProblem&, const float*, const float*, float*, cudaStream_t);
extern template void launch_tiled<Variant::prefetch_pairs_share_a>(const GemmProblem&, const float*, const float*,
                                                                   float*, cudaStream_t);
}  // namespace mm::ch06
