// Chapter 08: what every kernel of the chapter shares and none of them teaches. The kernel files
// (mma_fragments.cuh, ldmatrix.cuh, register_pipelined.cuh, ...) each hold one kernel body; this
// header holds the quantities a configuration implies (KernelTraits: the thread count, the TiledMMA,
// the shared layouts and the global->shared copies), the problem's arguments (GemmArgs), the copies
// of one K tile (issue_k_tile, issue_k_tile_zfill), the fragment and tf32-rounding helpers, the
// epilogue (store_c) and the host side every kernel repeats (the size rule, the launch).
//
// These pieces stay in the chapter: they are the mma.sync ladder's own (chapter 09 moves to wgmma
// and TMA, whose shared layouts, copies and epilogue are common/gemm's and common/layout's).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "gemm/launch.hpp"
#include "gemm/problem.hpp"
#include "gemm/smem.hpp"
#include "layout/all.hpp"

namespace mm::ch08 {

using launch::ceil_div;
using launch::max_grid_y;

/// The two mma.sync atoms of the chapter: bf16 m16n8k16 and tf32 m16n8k8, fp32 accumulators.
using Bf16Atom = SM80_16x8x16_F32BF16BF16F32_TN;
using Tf32Atom = SM80_16x8x8_F32TF32TF32F32_TN;

/// Log2 of a power of two, at compile time.
constexpr int log2_exact(int x) { return x == 1 ? 0 : 1 + log2_exact(x / 2); }

/// The element type in memory of a configuration: bf16, or fp32 for the tf32 atom.
template <class Cfg>
using Element = typename MMA_Traits<typename Cfg::Op>::ValTypeA;

/// What a configuration implies. A configuration (a kernel file's `...Cfg` struct) names its members:
///   Op                  the mma.sync atom
///   BM, BN, BK          the block tile (Int<>), K steps of BK
///   kStages             the ring of shared tiles
///   kWarpsM, kWarpsN    the warps tiling the block's C
///   kMinBlocks          blocks per SM that __launch_bounds__ asks registers for
///   kSwizzle            XOR-swizzled shared tiles (else plain)
///   kMnSwizzleUnitBytes the unit an MN-major tile's swizzle permutes (16 bytes; 32: tf32_conflict_free_b)
/// and the steps after it change one of them at a time; everything below is computed from them, so
/// that a configuration that changes BN gets the TiledMMA, layouts and copies of the new BN.
template <class Cfg>
struct KernelTraits {
  using T = Element<Cfg>;                                  ///< element type in memory
  static constexpr bool kTf32 = std::is_same_v<T, float>;  ///< fp32 inputs rounded to tf32
  using BM = typename Cfg::BM;
  using BN = typename Cfg::BN;
  using BK = typename Cfg::BK;
  static constexpr int kStages = Cfg::kStages;
  static constexpr int kThreads = 32 * Cfg::kWarpsM * Cfg::kWarpsN;
  static constexpr int kVec = 16 / int(sizeof(T));  ///< elements in one 16-byte copy: 8 bf16, 4 fp32
  using AtomMNK = typename MMA_Traits<typename Cfg::Op>::Shape_MNK;
  static constexpr int kAtomK = size_v<decltype(get<2>(AtomMNK{}))>;
  static_assert(BK::value % kAtomK == 0, "BK: whole atoms along K");
  static_assert(BM::value % (16 * Cfg::kWarpsM) == 0 && BN::value % (16 * Cfg::kWarpsN) == 0,
                "BM, BN: whole 16×16 warp tiles");
  static_assert(kStages >= 2, "a pipeline needs at least two stages");

  using CtaTiler = decltype(make_shape(BM{}, BN{}, BK{}));  ///< (BM,BN,BK)

  /// The ldmatrix for an operand whose shared tile is K-major (`.x4`: a lane's fragment values come
  /// in K-contiguous pairs, as the MMA wants them) or MN-major (`.x4.trans`: the transposing load,
  /// bf16 only: it moves 16-bit elements).
  template <bool kKMajor>
  using LdsmFor = std::conditional_t<kKMajor, SM75_U32x4_LDSM_N, SM75_U16x8_LDSM_T>;

  /// The warps tile the block's C; the permutation (16·WarpsM, 16·WarpsN) gives each warp 16×16 of C
  /// per repetition: one A atom and two B atoms (n8 each), the pieces an ldmatrix.x4 loads at once.
  using TiledMma = decltype(make_tiled_mma(typename Cfg::Op{}, Layout<Shape<Int<Cfg::kWarpsM>, Int<Cfg::kWarpsN>, _1>>{},
                                           Tile<Int<16 * Cfg::kWarpsM>, Int<16 * Cfg::kWarpsN>, Underscore>{}));

  // ---- Shared memory ----
  //
  // A K-major tile (MN,BK), K contiguous: ldmatrix reads 8 rows of 16 bytes at one k. Rows of BK·sizeof(T)
  // bytes put rows r and r + 128/(BK·sizeof(T)) on the same banks; the swizzle XORs the 128-byte line's
  // index into the 16-byte unit index, so 8 consecutive rows at one k land on 8 different units.
  // An MN-major tile (MN,BK), MN contiguous (B of RRR): ldmatrix.trans reads 8 k-rows of 16 bytes at
  // one n, all on the same banks unless the k index is XORed into the unit index.
  static constexpr int kRowBytesK = BK::value * int(sizeof(T));
  static_assert(kRowBytesK % 16 == 0 && kRowBytesK <= 128, "K-major rows of 16 to 128 bytes");
  template <int MN>
  static constexpr auto k_major_smem() {
    constexpr int units = BK::value / kVec;  // 16-byte units per row
    auto atom = Layout<Shape<_8, BK>, Stride<BK, _1>>{};  // (8,BK): 8 rows, K contiguous
    auto shape = make_shape(Int<MN>{}, BK{}, Int<kStages>{});
    if constexpr (Cfg::kSwizzle)
      return tile_to_shape(composition(Swizzle<log2_exact(units), log2_exact(kVec), 3>{}, atom), shape);
    else
      return tile_to_shape(atom, shape);
  }
  template <int MN>
  static constexpr auto mn_major_smem() {
    static_assert(MN * int(sizeof(T)) >= 128, "MN-major rows of at least 128 bytes");
    auto atom = Layout<Shape<Int<MN>, _8>>{};  // (MN,8): MN contiguous
    auto shape = make_shape(Int<MN>{}, BK{}, Int<kStages>{});
    constexpr int unit = log2_exact(Cfg::kMnSwizzleUnitBytes / int(sizeof(T)));  // log2 of the swizzled unit, in elements
    if constexpr (Cfg::kSwizzle)
      return tile_to_shape(composition(Swizzle<3, unit, log2_exact(MN) - unit>{}, atom), shape);
    else
      return tile_to_shape(atom, shape);
  }

  // ---- Global -> shared copies: 16-byte cp.async, one pass of all threads covers part of the tile ----
  template <int MN>
  static constexpr auto k_major_copy() {
    constexpr int tk = BK::value / kVec, tm = kThreads / tk;  // threads along K (one vector each), along MN
    static_assert(tm * tk == kThreads && MN % tm == 0, "K-major copy: threads tile (MN, BK/vec)");
    return make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, T>{},
                           Layout<Shape<Int<tm>, Int<tk>>, Stride<Int<tk>, _1>>{},  // K fastest
                           Layout<Shape<_1, Int<kVec>>>{});                          // a vector along K
  }
  template <int MN>
  static constexpr auto mn_major_copy() {
    constexpr int tm = MN / kVec, tk = kThreads / tm;
    static_assert(tm * tk == kThreads && BK::value % tk == 0, "MN-major copy: threads tile (MN/vec, BK)");
    return make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, T>{},
                           Layout<Shape<Int<tm>, Int<tk>>>{},  // MN fastest
                           Layout<Shape<Int<kVec>, _1>>{});    // a vector along MN
  }
};

/// Everything one problem needs: sizes, pointers, the (MN,K) strides of A and B, the (M,N) strides of C
/// (their types say which storage order), the global->shared copies, and whether 16-byte copies are
/// aligned (pointer and leading dimension).
template <class T, class TOut, class AStride, class CopyA, class SmemA, class BStride, class CopyB, class SmemB,
          class CStride>
struct GemmArgs {
  // The shared layouts are compile-time: carried as types, not members. (A swizzled layout holds its
  // inner layout [[no_unique_address]], which the host compiler honours and the device compiler does
  // not: as a member, it gave the kernel's parameter block a different layout on each side.)
  using SmemLayoutA = SmemA;  ///< (BM,BK,Stages) in shared memory
  using SmemLayoutB = SmemB;  ///< (BN,BK,Stages) in shared memory
  /// B is K-major (RCR): its shared tile is K-contiguous too.
  static constexpr bool kBKMajor = is_constant_value_v<1, std::remove_cvref_t<decltype(get<1>(BStride{}))>>;
  int m, n, k;     ///< C is M×N, K the inner dimension
  T const* a;      ///< A, seen as (M,K) with strides da
  AStride da;      ///< (M,K) strides of A
  CopyA copy_a;    ///< how the block copies a (BM,BK) tile of A
  bool a_vec;      ///< 16-byte copies of A allowed
  T const* b;      ///< B, seen as (N,K) with strides db
  BStride db;      ///< (N,K) strides of B
  CopyB copy_b;    ///< how the block copies a (BN,BK) tile of B
  bool b_vec;      ///< 16-byte copies of B allowed
  TOut* c;         ///< C, (M,N) with strides dc
  CStride dc;      ///< (M,N) strides of C
  bool c_pairs;    ///< two neighbouring elements of a row of C are one aligned 32-bit word
};

/// Starts the copy of K step `kt` of an operand into one stage of its ring. A whole, aligned tile
/// (`vec`): 16-byte cp.async. Otherwise (an edge, a misaligned matrix): element by element, zero where
/// the coordinate lies outside the matrix, so that a partial tile adds nothing to C. The plain stores
/// land before the barrier that precedes the stage's use, like the cp.async copies.
///   src: (CPY,CPY_MN,CPY_K,k)   crd: the coordinates of src   dst: (CPY,CPY_MN,CPY_K)
template <class TiledCopy, class Src, class Crd, class Dst, class Extent>
__device__ void issue_k_tile(TiledCopy const& tiled_copy, Src const& src, Crd const& crd, Dst&& dst,
                             Extent const& extent, bool vec, int kt) {
  using T = std::remove_cvref_t<decltype(dst(0))>;
  if (vec) {
    copy(tiled_copy, src(_, _, _, kt), dst);
  } else {
    auto s = src(_, _, _, kt);
    auto c = crd(_, _, _, kt);
#pragma unroll
    for (int i = 0; i < size(dst); ++i) dst(i) = elem_less(c(i), extent) ? s(i) : T(0.0f);
  }
}

/// issue_k_tile for a matrix whose 16-byte vectors are whole and aligned (zfill_edges on): an edge
/// tile takes the same 16-byte cp.async, each vector predicated on its first element and zero-filled
/// outside the matrix (cp.async's src-size 0), so the kernel holds one kind of copy.
template <class TiledCopy, class Src, class Crd, class Dst, class Extent>
__device__ void issue_k_tile_zfill(TiledCopy const& tiled_copy, Src const& src, Crd const& crd, Dst&& dst,
                                   Extent const& extent, bool whole, int kt) {
  if (whole) copy(tiled_copy, src(_, _, _, kt), dst);
  else copy_if(tiled_copy, make_predicate(crd(_, _, _, kt), extent), src(_, _, _, kt), dst);
}

/// The fragments of one k-block (the atom's K) from shared memory into registers, as the MMA
/// partitions them: element by element; with kRoundToTf32, rounded to tf32 on the way (cvt.rna).
template <bool kRoundToTf32, class Src, class Dst>
__device__ void load_fragment(Src const& src, Dst&& dst) {
#pragma unroll
  for (int i = 0; i < size(dst); ++i) {
    if constexpr (kRoundToTf32) dst(i) = to_tf32(src(i));
    else dst(i) = src(i);
  }
}

/// Rounds a register fragment of fp32 values to tf32 in place (cvt.rna).
template <class Frag>
__device__ void round_to_tf32(Frag&& frag) {
#pragma unroll
  for (int i = 0; i < size(frag); ++i) frag(i) = to_tf32(frag(i));
}

/// Rounds to tf32 (cvt.rna), in shared memory, the 16-byte vectors of fp32 this thread copied into one
/// stage, `dst` (CPY,CPY_MN,CPY_K) as its cp.async partition gives them: each vector is read and written
/// whole. Call it after the thread's copies of the stage have landed and before the barrier that lets
/// the other warps read it.
template <class Dst>
__device__ void round_vectors_to_tf32(Dst const& dst) {
#pragma unroll
  for (int j = 0; j < size<2>(dst); ++j)
#pragma unroll
    for (int i = 0; i < size<1>(dst); ++i) {
      float4* p = reinterpret_cast<float4*>(&dst(0, i, j));  // a cp.async vector: 16 contiguous bytes
      float4 v = *p;
      v = make_float4(to_tf32(v.x), to_tf32(v.y), to_tf32(v.z), to_tf32(v.w));
      *p = v;
    }
}

/// The epilogue: this thread's accumulators (MMA,MMA_M,MMA_N), converted to C's type, stored where
/// they lie inside C. The atom's values 0 and 1 are neighbours along N (the C layout's first value
/// mode): where rows start at even elements and C is aligned (`pairs`), a pair is one store (32 bits
/// of bf16, 64 of fp32): half the store instructions.
template <class Acc, class Dst, class Crd, class Extent>
__device__ void store_c(Acc const& acc, Dst& dst, Crd const& crd, Extent const& extent, bool pairs) {
  using TOut = std::remove_cvref_t<decltype(dst(0))>;
  using Pair = std::conditional_t<std::is_same_v<TOut, __nv_bfloat16>, __nv_bfloat162, float2>;
  auto make_pair = [](float x, float y) {
    if constexpr (std::is_same_v<TOut, __nv_bfloat16>) return __floats2bfloat162_rn(x, y);
    else return make_float2(x, y);
  };
  {
    if (pairs) {
#pragma unroll
      for (int n = 0; n < size<2>(acc); ++n)
#pragma unroll
        for (int m = 0; m < size<1>(acc); ++m)
#pragma unroll
          for (int h = 0; h < 2; ++h) {  // the atom's rows m and m+8
            auto first = make_coord(make_coord(_0{}, h), m, n);
            auto second = make_coord(make_coord(_1{}, h), m, n);
            if (elem_less(crd(second), extent))
              *reinterpret_cast<Pair*>(&dst(first)) = make_pair(acc(first), acc(second));
            else if (elem_less(crd(first), extent))
              dst(first) = TOut(acc(first));
          }
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < size(acc); ++i)
    if (elem_less(crd(i), extent)) dst(i) = TOut(acc(i));
}

// ---- Host ----

/// Empty when the chapter's kernels take `p`; otherwise the constraint it breaks. A kernel whose copies
/// run `kKTilesPastEnd` K tiles past the last one (no_copy_branch: predicated off, never read, but
/// their offsets are computed) passes that many, so that the 32-bit rule covers those offsets too.
template <class Cfg, int kKTilesPastEnd = 0>
std::string tensor_core_rejects(const GemmProblem& p) {
  if (p.a != Order::row || p.c != Order::row)
    return "takes a row-major A and C (layouts RRR and RCR)";
  if (ceil_div(p.n, Cfg::BN::value) > max_grid_y)
    return "needs N <= " + std::to_string(max_grid_y * Cfg::BN::value) + " (65535 tiles of " +
           std::to_string(Cfg::BN::value) + " columns along grid y)";
  return launch::int32_offset_rejects(p, Cfg::BM::value, Cfg::BN::value, Cfg::BK::value, kKTilesPastEnd);
}

/// Calls f(args) with the layouts of p's storage orders. A as (M,K) row-major: (K,1), K-major.
/// B as (N,K): row-major K×N is (1,N), N-major; column-major (K,1), K-major. C row-major (N,1).
template <class Cfg, class TOut, class F>
void with_gemm_args(const GemmProblem& p, const Element<Cfg>* A, const Element<Cfg>* B, TOut* C, F&& f) {
  using T = Element<Cfg>;
  using Tr = KernelTraits<Cfg>;
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  auto aligned = [](const void* ptr, std::int64_t ld) {
    return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && (ld * std::int64_t(sizeof(T))) % 16 == 0;
  };
  auto dA = make_stride(k, _1{});
  auto dC = make_stride(n, _1{});
  auto call = [&](auto dB, auto copy_b, auto smem_b) {
    auto copy_a = Tr::template k_major_copy<Cfg::BM::value>();
    auto smem_a = Tr::template k_major_smem<Cfg::BM::value>();
    f(GemmArgs<T, TOut, decltype(dA), decltype(copy_a), decltype(smem_a), decltype(dB), decltype(copy_b),
               decltype(smem_b), decltype(dC)>{m, n, k, A, dA, copy_a, aligned(A, p.shape_a().ld()), B, dB,
                                                copy_b, aligned(B, p.shape_b().ld()), C, dC,
                                                reinterpret_cast<std::uintptr_t>(C) % (2 * sizeof(TOut)) == 0 && n % 2 == 0});
  };
  if (p.b == Order::row)
    call(make_stride(_1{}, n), Tr::template mn_major_copy<Cfg::BN::value>(), Tr::template mn_major_smem<Cfg::BN::value>());
  else
    call(make_stride(k, _1{}), Tr::template k_major_copy<Cfg::BN::value>(), Tr::template k_major_smem<Cfg::BN::value>());
}

#if defined(__CUDACC__)  // the launch: nvcc's (the CPU tests include the rest of this file from C++)
/// Launches `kernel` (a kernel of the chapter for `args`' storage orders) on a grid of block tiles,
/// its dynamic shared memory (both rings) raised past 48 KB where needed.
template <class Cfg, class Args>
void launch_block_tiles(void (*kernel)(Args), Args const& args, const GemmProblem& p, cudaStream_t stream) {
  constexpr int smem_bytes =
      int(sizeof(Element<Cfg>)) * (cosize_v<typename Args::SmemLayoutA> + cosize_v<typename Args::SmemLayoutB>);
  opt_in_dynamic_smem(kernel, smem_bytes);
  const dim3 grid(unsigned(ceil_div(p.m, Cfg::BM::value)), unsigned(ceil_div(p.n, Cfg::BN::value)));
  kernel<<<grid, KernelTraits<Cfg>::kThreads, smem_bytes, stream>>>(args);
}
#endif  // defined(__CUDACC__)

}  // namespace mm::ch08
