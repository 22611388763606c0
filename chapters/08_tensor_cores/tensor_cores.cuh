// Chapter 08: tensor cores with mma.sync. The tiled, cp.async-pipelined GEMM of chapter 07 with each
// warp's arithmetic done by mma.sync (bf16 m16n8k16, tf32 m16n8k8), its fragments described by the
// atoms' thread-value layouts (layout/mma_sm80.hpp).
//
// One generic kernel, several points of one configuration space (Config below); each step of the
// chapter changes one thing (README, "The ladder"):
//   mma_fragments       fragments copied element by element from shared memory, as the MMA's TV
//                       layouts place them (the point: which lane holds what)
//   ldmatrix            fragments loaded by ldmatrix.x4 (.trans for an N-major B), plain tiles
//   swizzled            XOR-swizzled shared tiles: one wavefront per ldmatrix matrix
//   big_tile            128×256 block tiles, 8 warps, 4 stages
//   register_pipelined  fragments loaded one k-block ahead, across K steps too
//   deep_k              K steps of 64
//   stage_in_pointer    a stage's start in the pointer, outside the swizzle
//   zfill_edges         the K loop's copies only 16-byte cp.async, zero-filled at the edges
//   hoisted_swizzle     each lane's ldmatrix addresses swizzled once, outside the K loop
//   one_copy_path       every K step takes the predicated copy, its shared destinations hoisted too
//   no_copy_branch      the copy issued on every K step, no branch: one block, copies among the mma.sync
//   four_stages         a fourth stage: each copy issued three K steps ahead (measured: no faster)
//   two_blocks_per_sm   128×128 tiles, 64×32 warp tiles, under 128 registers: four warps per scheduler
//   tf32_*              the same steps with the tf32 atom, then
//   tf32_conflict_free_b  RRR's N-major B swizzled in 32-byte units: conflict-free element-wise reads
//   tf32_rounded_once   inputs rounded to tf32 once, in shared memory (measured: slower)
//   tf32_deep_k         tf32_rounded_once with K steps of 32
// C = A·B with A (M×K) row-major, B row-major (RRR) or column-major (RCR, C = A·Bᵀ for a B stored N×K),
// C row-major, by layouts alone; any M, N, K: partial or misaligned tiles take an element-wise,
// zero-filling copy.
//
// Build: cmake --build build --target ch08_tensor_cores      Run: build/bin/ch08_tensor_cores
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

/// How a warp's A and B fragments get from shared memory into registers.
enum class FragLoad {
  elementwise,  ///< one shared load per element, at the place the MMA's TV layout says
  ldmatrix,     ///< ldmatrix.x4: a warp loads four 8×8 b16 matrices, each lane gets its fragment values
};

/// Log2 of a power of two, at compile time.
constexpr int log2_exact(int x) { return x == 1 ? 0 : 1 + log2_exact(x / 2); }

/// A block tile of BM×BN, K steps of BK, a ring of Stages shared tiles, WarpsM×WarpsN warps each
/// multiplying with the atom `Op`; `kSwizzle` XOR-swizzles the shared tiles (else they are plain).
/// `Fallback_` (not void): the K loop copies with 16-byte cp.async only, zero-filled past the edges,
/// and the configuration `Fallback_` takes the problems whose vectors are not whole (kZfillEdges).
template <class Op_, int BM_, int BN_, int BK_, int Stages_, int WarpsM, int WarpsN, FragLoad kFragLoad_,
          bool kSwizzle_, int MinBlocks_ = 1, bool kFragmentPipeline_ = false, bool kStageInPointer_ = false,
          class Fallback_ = void, bool kHoistSwizzle_ = false, bool kOneCopyPath_ = false, bool kNoCopyBranch_ = false,
          bool kRoundInSmem_ = false, bool kWideUnitSwizzle_ = false>
struct Config {
  using Op = Op_;                                       ///< the mma.sync atom
  using T = typename MMA_Traits<Op>::ValTypeA;          ///< element type in memory (bf16, or fp32 for tf32)
  static constexpr bool kTf32 = std::is_same_v<T, float>;  ///< fp32 inputs rounded to tf32 in registers
  using BM = Int<BM_>;
  using BN = Int<BN_>;
  using BK = Int<BK_>;
  static constexpr int kStages = Stages_;
  static constexpr int kMinBlocks = MinBlocks_;
  static constexpr FragLoad kFragLoad = kFragLoad_;
  static constexpr bool kSwizzle = kSwizzle_;
  /// Registers one k-block ahead of the multiply, across the K-step barrier too.
  static constexpr bool kFragmentPipeline = kFragmentPipeline_;
  /// A stage's start goes into the pointer, not into the swizzled layout's offset (see the kernel).
  static constexpr bool kStageInPointer = kStageInPointer_;
  /// The K loop holds one kind of copy, 16-byte cp.async, predicated at the edges (cp.async's zero
  /// fill): every 16-byte vector of A and B must lie wholly inside or wholly outside the matrix, and be
  /// aligned. Problems where they are not (a pointer or a leading dimension off 16 bytes) go to Fallback,
  /// whose element-wise edge copy takes anything; that copy's code then stays out of this kernel.
  static constexpr bool kZfillEdges = !std::is_void_v<Fallback_>;
  using Fallback = Fallback_;  ///< the configuration for problems the zero-fill kernel cannot take
  /// Each lane's ldmatrix addresses swizzled once (hoist_swizzle): in the K loop an address is a stage's
  /// start, an XOR with a constant and an immediate offset.
  static constexpr bool kHoistSwizzle = kHoistSwizzle_;
  /// Every K step takes the predicated copy (no whole-tile branch beside it), its shared destinations
  /// swizzled once like the ldmatrix sources.
  static constexpr bool kOneCopyPath = kOneCopyPath_;
  static_assert(!kOneCopyPath_ || (kHoistSwizzle_ && !std::is_void_v<Fallback_>), "kOneCopyPath: on a zero-fill kernel");
  /// The K loop's copy is issued on every K step, past the last tile too (its predicates are then all
  /// false: zeros into a stage nobody reads again), so no branch cuts the step into separate blocks and
  /// the compiler can interleave the copy's instructions with the mma.sync.
  static constexpr bool kNoCopyBranch = kNoCopyBranch_;
  static_assert(!kNoCopyBranch_ || kOneCopyPath_, "kNoCopyBranch: on the one predicated copy path");
  /// tf32: each thread rounds the vectors it copied (cvt.rna) in shared memory once they have landed,
  /// before the barrier that makes the stage readable, instead of every warp rounding the fragment
  /// registers it loads: an element of A is loaded by WarpsN warps and one of B by WarpsM, and in
  /// registers each value costs two instructions (sm_90's cvt.rna.tf32 is a test for infinity or NaN and
  /// an integer add). Measured slower (README): the load-round-store chain sits before the barrier.
  static constexpr bool kRoundInSmem = kRoundInSmem_;
  static_assert(!kRoundInSmem_ || (std::is_same_v<typename MMA_Traits<Op_>::ValTypeA, float> && kNoCopyBranch_),
                "kRoundInSmem: tf32, on the no_copy_branch kernel (every stage's copy issued by the same threads)");
  static_assert(!kHoistSwizzle_ || (kSwizzle_ && kStageInPointer_ && kFragLoad_ == FragLoad::ldmatrix),
                "kHoistSwizzle: ldmatrix from swizzled tiles, a stage's start in the pointer");
  /// tf32, an MN-major B (RRR): its fragments are read element by element (ldmatrix cannot transpose
  /// 32-bit elements). A warp's read takes 8 consecutive n at 4 values of k, which the 16-byte-unit
  /// swizzle leaves 2-way conflicted (k and k^1 XOR neighbouring units into each other); XORing k into
  /// 32-byte units instead puts the 4 rows on 4 different 32-byte bank groups: one wavefront.
  static constexpr bool kWideUnitSwizzle = kWideUnitSwizzle_;
  static_assert(!kWideUnitSwizzle_ || std::is_same_v<typename MMA_Traits<Op_>::ValTypeA, float>,
                "kWideUnitSwizzle: for tf32's element-wise MN-major B");
  static constexpr int kThreads = 32 * WarpsM * WarpsN;
  static constexpr int kVec = 16 / int(sizeof(T));  ///< elements in one 16-byte copy: 8 bf16, 4 fp32
  using AtomMNK = typename MMA_Traits<Op>::Shape_MNK;
  static constexpr int kAtomK = size_v<decltype(get<2>(AtomMNK{}))>;
  static_assert(BK_ % kAtomK == 0, "BK: whole atoms along K");
  static_assert(BM_ % (16 * WarpsM) == 0 && BN_ % (16 * WarpsN) == 0, "BM, BN: whole 16×16 warp tiles");
  static_assert(Stages_ >= 2, "a pipeline needs at least two stages");

  using CtaTiler = decltype(make_shape(BM{}, BN{}, BK{}));  ///< (BM,BN,BK)

  /// The ldmatrix for an operand whose shared tile is K-major (`.x4`: a lane's fragment values come
  /// in K-contiguous pairs, as the MMA wants them) or MN-major (`.x4.trans`: the transposing load,
  /// bf16 only: it moves 16-bit elements).
  template <bool kKMajor>
  using LdsmFor = std::conditional_t<kKMajor, SM75_U32x4_LDSM_N, SM75_U16x8_LDSM_T>;

  /// The warps tile the block's C; the permutation (16·WarpsM, 16·WarpsN) gives each warp 16×16 of C
  /// per repetition: one A atom and two B atoms (n8 each), the pieces an ldmatrix.x4 loads at once.
  using TiledMma = decltype(make_tiled_mma(Op{}, Layout<Shape<Int<WarpsM>, Int<WarpsN>, _1>>{},
                                           Tile<Int<16 * WarpsM>, Int<16 * WarpsN>, Underscore>{}));

  // ---- Shared memory ----
  //
  // A K-major tile (MN,BK), K contiguous: ldmatrix reads 8 rows of 16 bytes at one k. Rows of BK·sizeof(T)
  // bytes put rows r and r + 128/(BK·sizeof(T)) on the same banks; the swizzle XORs the 128-byte line's
  // index into the 16-byte unit index, so 8 consecutive rows at one k land on 8 different units.
  // An MN-major tile (MN,BK), MN contiguous (B of RRR): ldmatrix.trans reads 8 k-rows of 16 bytes at
  // one n, all on the same banks unless the k index is XORed into the unit index.
  static constexpr int kRowBytesK = BK_ * int(sizeof(T));
  static_assert(kRowBytesK % 16 == 0 && kRowBytesK <= 128, "K-major rows of 16 to 128 bytes");
  template <int MN>
  static constexpr auto k_major_smem() {
    constexpr int units = BK_ / kVec;  // 16-byte units per row
    auto atom = Layout<Shape<_8, BK>, Stride<BK, _1>>{};  // (8,BK): 8 rows, K contiguous
    auto shape = make_shape(Int<MN>{}, BK{}, Int<Stages_>{});
    if constexpr (kSwizzle_)
      return tile_to_shape(composition(Swizzle<log2_exact(units), log2_exact(kVec), 3>{}, atom), shape);
    else
      return tile_to_shape(atom, shape);
  }
  template <int MN>
  static constexpr auto mn_major_smem() {
    static_assert(MN * int(sizeof(T)) >= 128, "MN-major rows of at least 128 bytes");
    auto atom = Layout<Shape<Int<MN>, _8>>{};  // (MN,8): MN contiguous
    auto shape = make_shape(Int<MN>{}, BK{}, Int<Stages_>{});
    constexpr int unit = log2_exact(kVec) + (kWideUnitSwizzle_ ? 1 : 0);  // log2 of the swizzled unit, in elements
    if constexpr (kSwizzle_)
      return tile_to_shape(composition(Swizzle<3, unit, log2_exact(MN) - unit>{}, atom), shape);
    else
      return tile_to_shape(atom, shape);
  }

  // ---- Global -> shared copies: 16-byte cp.async, one pass of all threads covers part of the tile ----
  template <int MN>
  static constexpr auto k_major_copy() {
    constexpr int tk = BK_ / kVec, tm = kThreads / tk;  // threads along K (one vector each), along MN
    static_assert(tm * tk == kThreads && MN % tm == 0, "K-major copy: threads tile (MN, BK/vec)");
    return make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, T>{},
                           Layout<Shape<Int<tm>, Int<tk>>, Stride<Int<tk>, _1>>{},  // K fastest
                           Layout<Shape<_1, Int<kVec>>>{});                          // a vector along K
  }
  template <int MN>
  static constexpr auto mn_major_copy() {
    constexpr int tm = MN / kVec, tk = kThreads / tm;
    static_assert(tm * tk == kThreads && BK_ % tk == 0, "MN-major copy: threads tile (MN/vec, BK)");
    return make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, T>{},
                           Layout<Shape<Int<tm>, Int<tk>>>{},  // MN fastest
                           Layout<Shape<Int<kVec>, _1>>{});    // a vector along MN
  }
};

// ---- The ladder's points ----

using Bf16Atom = SM80_16x8x16_F32BF16BF16F32_TN;
using Tf32Atom = SM80_16x8x8_F32TF32TF32F32_TN;
/// mma_fragments: 128×128×32 tiles, 3 stages, 2×2 warps of 64×64; fragments element by element.
using FragmentsCfg = Config<Bf16Atom, 128, 128, 32, 3, 2, 2, FragLoad::elementwise, false>;
/// ldmatrix: mma_fragments with the fragments loaded by ldmatrix.x4 (.trans for an N-major B).
using LdmatrixCfg = Config<Bf16Atom, 128, 128, 32, 3, 2, 2, FragLoad::ldmatrix, false>;
/// swizzled: ldmatrix from XOR-swizzled shared tiles: 8 rows of one ldmatrix on 8 different bank groups.
using SwizzledCfg = Config<Bf16Atom, 128, 128, 32, 3, 2, 2, FragLoad::ldmatrix, true>;
/// big_tile: 128×256 block tiles, 8 warps of 64×64, 4 stages (96 KB), one block per SM.
using BigTileCfg = Config<Bf16Atom, 128, 256, 32, 4, 2, 4, FragLoad::ldmatrix, true>;
/// register_pipelined: big_tile with the fragments loaded one k-block ahead, across K steps too.
using RegisterPipelinedCfg = Config<Bf16Atom, 128, 256, 32, 4, 2, 4, FragLoad::ldmatrix, true, 1, true>;
/// deep_k: register_pipelined with K steps of 64 (128-byte rows, Swizzle<3,3,3>), 3 stages (144 KB): the
/// per-K-step work (cp.async issue, barrier, stage turn) spread over twice the mma.sync.
using DeepKCfg = Config<Bf16Atom, 128, 256, 64, 3, 2, 4, FragLoad::ldmatrix, true, 1, true>;
/// stage_in_pointer: deep_k with each stage's start in the pointer, outside the swizzle.
using StageInPointerCfg = Config<Bf16Atom, 128, 256, 64, 3, 2, 4, FragLoad::ldmatrix, true, 1, true, true>;
/// zfill_edges: stage_in_pointer whose K loop holds only 16-byte cp.async (zero-filled at the edges);
/// problems with vectors that are not whole go to stage_in_pointer.
using ZfillEdgesCfg = Config<Bf16Atom, 128, 256, 64, 3, 2, 4, FragLoad::ldmatrix, true, 1, true, true, StageInPointerCfg>;
/// hoisted_swizzle: zfill_edges with each lane's ldmatrix addresses swizzled once, outside the K loop.
using HoistedSwizzleCfg =
    Config<Bf16Atom, 128, 256, 64, 3, 2, 4, FragLoad::ldmatrix, true, 1, true, true, StageInPointerCfg, true>;
/// one_copy_path: hoisted_swizzle whose K steps all take the predicated 16-byte copy, its shared
/// destinations swizzled once.
using OneCopyPathCfg =
    Config<Bf16Atom, 128, 256, 64, 3, 2, 4, FragLoad::ldmatrix, true, 1, true, true, StageInPointerCfg, true, true>;
/// no_copy_branch: one_copy_path with the copy issued on every K step, with no branch around it.
using NoCopyBranchCfg = Config<Bf16Atom, 128, 256, 64, 3, 2, 4, FragLoad::ldmatrix, true, 1, true, true,
                               StageInPointerCfg, true, true, true>;
/// four_stages: no_copy_branch with a fourth stage (192 KB): the copy of a K step is issued three K steps
/// before its use instead of two.
using FourStagesCfg = Config<Bf16Atom, 128, 256, 64, 4, 2, 4, FragLoad::ldmatrix, true, 1, true, true,
                             StageInPointerCfg, true, true, true>;
/// two_blocks_per_sm: hoisted_swizzle at 128×128 block tiles of 8 warps of 64×32, fragments loaded just
/// before their multiply (no register pipeline), 3 stages (96 KB): under 128 registers, so two blocks
/// fit an SM and four warps share each scheduler instead of two.
using TwoBlocksCfg =
    Config<Bf16Atom, 128, 128, 64, 3, 2, 4, FragLoad::ldmatrix, true, 2, false, true, StageInPointerCfg, true>;
/// tf32_fragments: mma_fragments with tf32 (K steps of 16 fp32: 64-byte rows).
using Tf32FragmentsCfg = Config<Tf32Atom, 128, 128, 16, 3, 2, 2, FragLoad::elementwise, false>;
/// tf32_swizzled: ldmatrix (K-major operands) from swizzled tiles, tf32.
using Tf32SwizzledCfg = Config<Tf32Atom, 128, 128, 16, 3, 2, 2, FragLoad::ldmatrix, true>;
/// tf32_big_tile: 128×256×16 tiles, 8 warps, 4 stages, the register pipeline.
using Tf32BigTileCfg = Config<Tf32Atom, 128, 256, 16, 4, 2, 4, FragLoad::ldmatrix, true, 1, true>;
/// tf32_stage_in_pointer: tf32_big_tile with each stage's start in the pointer.
using Tf32StageInPointerCfg = Config<Tf32Atom, 128, 256, 16, 4, 2, 4, FragLoad::ldmatrix, true, 1, true, true>;
/// tf32_zfill_edges: tf32_stage_in_pointer whose K loop holds only 16-byte cp.async.
using Tf32ZfillEdgesCfg =
    Config<Tf32Atom, 128, 256, 16, 4, 2, 4, FragLoad::ldmatrix, true, 1, true, true, Tf32StageInPointerCfg>;
/// tf32_hoisted_swizzle: tf32_zfill_edges with the ldmatrix addresses swizzled once.
using Tf32HoistedSwizzleCfg =
    Config<Tf32Atom, 128, 256, 16, 4, 2, 4, FragLoad::ldmatrix, true, 1, true, true, Tf32StageInPointerCfg, true>;
/// tf32_no_copy_branch: tf32_hoisted_swizzle with bf16's last two copy steps (one predicated copy path, its
/// destinations hoisted; the copy issued on every K step, no branch).
using Tf32NoCopyBranchCfg = Config<Tf32Atom, 128, 256, 16, 4, 2, 4, FragLoad::ldmatrix, true, 1, true, true,
                                   Tf32StageInPointerCfg, true, true, true>;
/// tf32_conflict_free_b: tf32_no_copy_branch whose MN-major B tile (RRR) is swizzled in 32-byte units, so that
/// the element-wise fragment reads of a warp hit 32 different banks (RCR: the same kernel as before).
using Tf32ConflictFreeBCfg = Config<Tf32Atom, 128, 256, 16, 4, 2, 4, FragLoad::ldmatrix, true, 1, true, true,
                                    Tf32StageInPointerCfg, true, true, true, false, true>;
/// tf32_rounded_once: tf32_conflict_free_b with the inputs rounded to tf32 once per element, in shared
/// memory, by the thread that copied them, instead of in every warp's fragment registers.
using Tf32RoundedOnceCfg = Config<Tf32Atom, 128, 256, 16, 4, 2, 4, FragLoad::ldmatrix, true, 1, true, true,
                                  Tf32StageInPointerCfg, true, true, true, true, true>;
/// tf32_deep_k: tf32_rounded_once with K steps of 32 (128-byte rows), 4 stages (192 KB): the per-K-step
/// work (barrier, copies' addresses, stage turn) spread over twice the mma.sync, as bf16's deep_k.
using Tf32DeepKCfg = Config<Tf32Atom, 128, 256, 32, 4, 2, 4, FragLoad::ldmatrix, true, 1, true, true,
                            Tf32StageInPointerCfg, true, true, true, true, true>;

// ---- The kernel ----

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

namespace detail {

/// Starts the copy of K step `kt` of an operand into one stage of its ring. A whole, aligned tile:
/// 16-byte cp.async. Otherwise (an edge, a misaligned matrix): element by element, zero where the
/// coordinate lies outside the matrix, so that a partial tile adds nothing to C. The plain stores
/// land before the barrier that precedes the stage's use, like the cp.async copies.
/// With kZfill (Config::kZfillEdges: the vectors are whole and aligned), an edge tile takes the same
/// 16-byte cp.async, each vector predicated on its first element and zero-filled outside the matrix.
/// With kOnePath every tile does (Config::kOneCopyPath): nvcc turns two paths into one block of
/// predicated instructions, so a branch between them costs both.
///   src: (CPY,CPY_MN,CPY_K,k)   crd: the coordinates of src   dst: (CPY,CPY_MN,CPY_K)
template <bool kZfill, bool kOnePath = false, class TiledCopy, class Src, class Crd, class Dst, class Extent>
__device__ void issue_k_tile(TiledCopy const& tiled_copy, Src const& src, Crd const& crd, Dst&& dst,
                             Extent const& extent, bool vec, int kt) {
  using T = std::remove_cvref_t<decltype(dst(0))>;
  if constexpr (kOnePath) {
    copy_if(tiled_copy, make_predicate(crd(_, _, _, kt), extent), src(_, _, _, kt), dst);
    return;
  }
  if constexpr (kZfill) {
    if (vec) copy(tiled_copy, src(_, _, _, kt), dst);
    else copy_if(tiled_copy, make_predicate(crd(_, _, _, kt), extent), src(_, _, _, kt), dst);
    return;
  }
  if (vec) {
    copy(tiled_copy, src(_, _, _, kt), dst);
  } else {
    auto s = src(_, _, _, kt);
    auto c = crd(_, _, _, kt);
#pragma unroll
    for (int i = 0; i < size(dst); ++i) dst(i) = elem_less(c(i), extent) ? s(i) : T(0.0f);
  }
}

/// The fragments of one k-block (the atom's K) from shared memory into registers, as the MMA
/// partitions them: element by element. tf32 values are rounded to tf32 on the way (cvt.rna).
template <class Cfg, class Src, class Dst>
__device__ void load_fragment(Src const& src, Dst&& dst) {
#pragma unroll
  for (int i = 0; i < size(dst); ++i) {
    if constexpr (Cfg::kTf32 && !Cfg::kRoundInSmem) dst(i) = to_tf32(src(i));
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

}  // namespace detail

/// One block: C tile (block_m, block_n) = A·B for any M, N, K. mma.sync and cp.async need sm_80: an
/// older device pass compiles a stub (layout/arch.hpp) which the harness never launches.
template <class Cfg, class Args>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) tensor_core_gemm_kernel(Args args) {
  if constexpr (!arch::compiled_for(arch::sm80)) {
    arch::no_code_for_this_target();
  } else {
    using T = typename Cfg::T;
    using BM = typename Cfg::BM;
    using BN = typename Cfg::BN;
    using BK = typename Cfg::BK;
    constexpr int S = Cfg::kStages;
    extern __shared__ uint128_t smem_u128[];  // 16-byte aligned: the rings take 16-byte copies
    T* smem = reinterpret_cast<T*>(smem_u128);
    const int tid = int(threadIdx.x), block_m = int(blockIdx.x), block_n = int(blockIdx.y);
    const int M = args.m, N = args.n, K = args.k;
    typename Cfg::TiledMma mma;
    typename Cfg::CtaTiler cta_tiler;

    auto mA = make_tensor(make_gmem_ptr(args.a), make_shape(M, K), args.da);  // (M,K)
    auto mB = make_tensor(make_gmem_ptr(args.b), make_shape(N, K), args.db);  // (N,K)
    auto mC = make_tensor(make_gmem_ptr(args.c), make_shape(M, N), args.dc);  // (M,N)
    auto cA = make_identity_tensor(shape(mA));                                 // (M,K) -> (m,k)
    auto cB = make_identity_tensor(shape(mB));                                 // (N,K) -> (n,k)
    auto cC = make_identity_tensor(shape(mC));                                 // (M,N) -> (m,n)

    auto cta_coord = make_coord(block_m, block_n, _);
    auto gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (BM,BK,k)
    auto gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (BN,BK,k)
    auto gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (BM,BN)
    auto kA = local_tile(cA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (BM,BK,k) -> (m,k)
    auto kB = local_tile(cB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (BN,BK,k) -> (n,k)
    auto kC = local_tile(cC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (BM,BN)   -> (m,n)
    // One stage of a ring, (MN,BK). Sliced as ring(_, _, s), a swizzled stage carries its start as a
    // run-time offset *inside* the swizzle, so every address is XOR-swizzled anew after adding it.
    // Stages are a whole number of the swizzle's period apart (2^(B+M+S) elements: the smem atoms'
    // size), and adding such a multiple commutes with the swizzle; kStageInPointer moves the start
    // into the pointer instead, so that the swizzled part of each address (thread and k-block only)
    // no longer depends on the stage and the compiler can keep it out of the loop.
    auto stage_of = [](auto const& ring, int s) {
      if constexpr (Cfg::kStageInPointer) {
        const int stage_elems = int(size<0>(ring)) * int(size<1>(ring));  // MN·BK: the stages are compact
        return make_tensor(ring.data() + s * stage_elems, ring(_, _, 0).layout());
      } else {
        return ring(_, _, s);
      }
    };
    using SmemLayoutA = typename Args::SmemLayoutA;
    auto sA = make_tensor(make_smem_ptr(smem), SmemLayoutA{});                                       // (BM,BK,S)
    auto sB = make_tensor(make_smem_ptr(smem + cosize_v<SmemLayoutA>), typename Args::SmemLayoutB{});  // (BN,BK,S)

    // Global -> shared: what this thread copies.
    auto thr_copy_a = args.copy_a.get_slice(tid);
    auto tAgA = thr_copy_a.partition_S(gA);  // (CPY,CPY_M,CPY_K,k)
    auto tAcA = thr_copy_a.partition_S(kA);  // (CPY,CPY_M,CPY_K,k) -> (m,k)
    auto thr_copy_b = args.copy_b.get_slice(tid);
    auto tBgB = thr_copy_b.partition_S(gB);  // (CPY,CPY_N,CPY_K,k)
    auto tBcB = thr_copy_b.partition_S(kB);  // (CPY,CPY_N,CPY_K,k) -> (n,k)

    // The MMA: this thread's accumulators and its fragments of one K step.
    auto thr_mma = mma.get_slice(tid);
    auto tCgC = thr_mma.partition_C(gC);                    // (MMA,MMA_M,MMA_N)
    auto tCcC = thr_mma.partition_C(kC);                    // (MMA,MMA_M,MMA_N) -> (m,n)
    auto tCrC = thr_mma.make_fragment_C(tCgC);              // (MMA,MMA_M,MMA_N): fp32 accumulators
    // Registers for two k-blocks (the atom's K each) of A and B: one multiplies while the other loads.
    using TwoKBlocks = Int<2 * Cfg::kAtomK>;
    auto tCrA = thr_mma.partition_fragment_A(make_identity_tensor(make_shape(BM{}, TwoKBlocks{})));  // (MMA,MMA_M,2)
    auto tCrB = thr_mma.partition_fragment_B(make_identity_tensor(make_shape(BN{}, TwoKBlocks{})));  // (MMA,MMA_N,2)
    clear(tCrC);

    // Shared -> registers, one k-block (the atom's K) of an operand. With ldmatrix, the tiled copy
    // built from the MMA hands each lane its fragment, and retile_D regroups the fragment's values as
    // the copy delivers them (for B, one ldmatrix.x4 fills two atoms along N). A tf32 operand stored
    // MN-major cannot use it (the transposing ldmatrix moves 16-bit elements): element by element.
    constexpr bool a_ldsm = Cfg::kFragLoad == FragLoad::ldmatrix;
    constexpr bool b_ldsm = Cfg::kFragLoad == FragLoad::ldmatrix && (Args::kBKMajor || !Cfg::kTf32);
    // A lane's ldmatrix sources in a stage, (CPY,CPY_MN,KB). With kHoistSwizzle the swizzle of the lane's
    // offset is computed once: the stage is in the pointer, so that offset does not change in the loop
    // and the compiler keeps Sw(t) (and hoist_swizzle's check) out of it.
    auto ldsm_source = [](auto const& partition) {
      if constexpr (Cfg::kHoistSwizzle) return hoist_swizzle(partition);
      else return partition;
    };
    // k-block kk of a stage into register slot kk % 2.
    auto load_a = [&](auto const& sA_stage, int kk) {  // sA_stage: (BM,BK)
      if constexpr (a_ldsm) {
        auto s2r = make_tiled_copy_A(Copy_Atom<typename Cfg::template LdsmFor<true>, T>{}, mma);
        auto thr = s2r.get_slice(tid);
        copy(s2r, ldsm_source(thr.partition_S(sA_stage))(_, _, kk), thr.retile_D(tCrA)(_, _, kk % 2));  // (CPY,CPY_M)
        if constexpr (Cfg::kTf32 && !Cfg::kRoundInSmem) detail::round_to_tf32(tCrA(_, _, kk % 2));
      } else {
        detail::load_fragment<Cfg>(thr_mma.partition_A(sA_stage)(_, _, kk), tCrA(_, _, kk % 2));  // (MMA,MMA_M)
      }
    };
    auto load_b = [&](auto const& sB_stage, int kk) {  // sB_stage: (BN,BK)
      if constexpr (b_ldsm) {
        auto s2r = make_tiled_copy_B(Copy_Atom<typename Cfg::template LdsmFor<Args::kBKMajor>, T>{}, mma);
        auto thr = s2r.get_slice(tid);
        copy(s2r, ldsm_source(thr.partition_S(sB_stage))(_, _, kk), thr.retile_D(tCrB)(_, _, kk % 2));  // (CPY,CPY_N)
        if constexpr (Cfg::kTf32 && !Cfg::kRoundInSmem) detail::round_to_tf32(tCrB(_, _, kk % 2));
      } else {
        detail::load_fragment<Cfg>(thr_mma.partition_B(sB_stage)(_, _, kk), tCrB(_, _, kk % 2));  // (MMA,MMA_N)
      }
    };

    const bool a_rows = args.a_vec && (block_m + 1) * BM{} <= M;
    const bool b_rows = args.b_vec && (block_n + 1) * BN{} <= N;
    const int k_tiles = size<3>(tAgA);
    // kNoCopyBranch: this thread's cp.async destinations in stage 0, swizzled once before the loop and
    // moved to a stage by the pointer (stages are whole swizzle periods apart; checked below).
    [[maybe_unused]] const auto tAsA0 = [&] {
      if constexpr (Cfg::kNoCopyBranch) return hoist_swizzle(thr_copy_a.partition_D(stage_of(sA, 0)));
      else return 0;
    }();
    [[maybe_unused]] const auto tBsB0 = [&] {
      if constexpr (Cfg::kNoCopyBranch) return hoist_swizzle(thr_copy_b.partition_D(stage_of(sB, 0)));
      else return 0;
    }();
    // This thread's cp.async destinations in one stage of a ring, (CPY,CPY_MN,CPY_K).
    auto copy_dst = [&](auto const& thr_copy, auto const& ring, auto const& stage0, int stage) {
      if constexpr (Cfg::kNoCopyBranch) {
        using Sw = typename std::remove_cvref_t<decltype(ring.layout())>::fn_type;
        constexpr int stage_elems = size_v<decltype(ring(_, _, 0).layout().layout())>;
        static_assert(stage_elems % Sw::block_size() == 0, "kNoCopyBranch: stages a whole number of swizzle periods apart");
        return make_tensor(stage0.data().shifted(stage * stage_elems), stage0.layout());
      } else if constexpr (Cfg::kOneCopyPath) {
        return hoist_swizzle(thr_copy.partition_D(stage_of(ring, stage)));
      } else {
        return thr_copy.partition_D(stage_of(ring, stage));
      }
    };
    auto issue = [&](int kt) {
      const bool k_inside = (kt + 1) * BK{} <= K;
      const int stage = kt % S;
      constexpr bool one = Cfg::kOneCopyPath;
      detail::issue_k_tile<Cfg::kZfillEdges, one>(args.copy_a, tAgA, tAcA, copy_dst(thr_copy_a, sA, tAsA0, stage),
                                                  shape(mA), a_rows && k_inside, kt);
      detail::issue_k_tile<Cfg::kZfillEdges, one>(args.copy_b, tBgB, tBcB, copy_dst(thr_copy_b, sB, tBsB0, stage),
                                                  shape(mB), b_rows && k_inside, kt);
    };
    // kRoundInSmem: once this thread's copies of a stage have landed, it rounds them to tf32 in place.
    auto round_landed = [&](int stage) {
      if constexpr (Cfg::kRoundInSmem) {
        detail::round_vectors_to_tf32(copy_dst(thr_copy_a, sA, tAsA0, stage));
        detail::round_vectors_to_tf32(copy_dst(thr_copy_b, sB, tBsB0, stage));
      }
    };

    // Prologue: S-1 K steps in flight. Every K step commits one group (empty past the last), so
    // "S-2 groups may still be pending" always means "the oldest has landed".
    for (int s = 0; s < S - 1; ++s) {
      // kRoundInSmem rounds whole stages, so every stage gets its copy (zeros past the last K step).
      if (Cfg::kRoundInSmem || s < k_tiles) issue(s);
      cp_async_fence();
    }
    constexpr int KB = Cfg::BK::value / Cfg::kAtomK;  // k-blocks (the atom's K) per K step
    if constexpr (!Cfg::kFragmentPipeline) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        cp_async_wait<S - 2>();  // this thread's copies of step kt have landed
        __syncthreads();         // everyone's have, and everyone is done reading step kt-1's stage
        if (kt + S - 1 < k_tiles) issue(kt + S - 1);
        cp_async_fence();
        const int stage = kt % S;
#pragma unroll
        for (int kk = 0; kk < KB; ++kk) {
          load_a(stage_of(sA, stage), kk);
          load_b(stage_of(sB, stage), kk);
          gemm(mma, tCrA(_, _, kk % 2), tCrB(_, _, kk % 2), tCrC);
        }
      }
    } else {
      // Registers one k-block ahead: k-block kk+1's fragments load while kk multiplies, across the
      // K-step boundary too (the next step's first k-block loads right after the barrier that makes
      // its stage readable, before this step's last k-block multiplies).
      static_assert(KB % 2 == 0, "the register pipeline: an even number of k-blocks per K step (slot kk % 2)");
      cp_async_wait<S - 2>();
      round_landed(0);
      __syncthreads();
      int read_stage = 0;
      load_a(stage_of(sA, read_stage), 0);
      load_b(stage_of(sB, read_stage), 0);
      for (int kt = 0; kt < k_tiles; ++kt) {
#pragma unroll
        for (int kk = 0; kk < KB; ++kk) {
          if (kk == KB - 1) {
            // Step kt+1 must have landed, and every thread must be done with step kt's stage (its
            // last k-block was loaded one k-block ago) before step kt+S refills it below.
            if constexpr (!Cfg::kRoundInSmem) cp_async_wait<S - 2>();  // (kRoundInSmem: waited at kk == 0)
            __syncthreads();
            read_stage = read_stage + 1 == S ? 0 : read_stage + 1;
          }
          const int kk_next = kk + 1 == KB ? 0 : kk + 1;
          load_a(stage_of(sA, read_stage), kk_next);
          load_b(stage_of(sB, read_stage), kk_next);
          if (kk == 0) {
            // Refill the stage step kt-1 used: every thread passed the barrier of step kt-1's last k-block.
            if (Cfg::kNoCopyBranch || kt + S - 1 < k_tiles) issue(kt + S - 1);
            cp_async_fence();
            if constexpr (Cfg::kRoundInSmem) {
              // Step kt+1 (issued S-1 steps ago) has landed: round it here, among this step's mma.sync,
              // not just before the barrier that publishes it, where every warp would wait on the
              // loads and stores of its rounding with nothing else to issue (short-scoreboard stalls).
              cp_async_wait<S - 2>();
              round_landed(read_stage + 1 == S ? 0 : read_stage + 1);
            }
          }
          gemm(mma, tCrA(_, _, kk % 2), tCrB(_, _, kk % 2), tCrC);
        }
      }
    }
    cp_async_wait<0>();

    detail::store_c(tCrC, tCgC, tCcC, shape(mC), args.c_pairs);
  }
}

// ---- Host ----

/// Empty when the kernel takes `p`; otherwise the constraint it breaks.
template <class Cfg>
std::string tensor_core_rejects(const GemmProblem& p) {
  if (p.a != Order::row || p.c != Order::row)
    return "takes a row-major A and C (layouts RRR and RCR)";
  if (ceil_div(p.n, Cfg::BN::value) > max_grid_y)
    return "needs N <= " + std::to_string(max_grid_y * Cfg::BN::value) + " (65535 tiles of " +
           std::to_string(Cfg::BN::value) + " columns along grid y)";
  return launch::int32_offset_rejects(p, Cfg::BM::value, Cfg::BN::value, Cfg::BK::value);
}

/// Calls f(args) with the layouts of p's storage orders. A as (M,K) row-major: (K,1), K-major.
/// B as (N,K): row-major K×N is (1,N), N-major; column-major (K,1), K-major. C row-major (N,1).
template <class Cfg, class TOut, class F>
void with_gemm_args(const GemmProblem& p, const typename Cfg::T* A, const typename Cfg::T* B, TOut* C, F&& f) {
  using T = typename Cfg::T;
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  auto aligned = [](const void* ptr, std::int64_t ld) {
    return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && (ld * std::int64_t(sizeof(T))) % 16 == 0;
  };
  auto dA = make_stride(k, _1{});
  auto dC = make_stride(n, _1{});
  auto call = [&](auto dB, auto copy_b, auto smem_b) {
    auto copy_a = Cfg::template k_major_copy<Cfg::BM::value>();
    auto smem_a = Cfg::template k_major_smem<Cfg::BM::value>();
    f(GemmArgs<T, TOut, decltype(dA), decltype(copy_a), decltype(smem_a), decltype(dB), decltype(copy_b),
               decltype(smem_b), decltype(dC)>{m, n, k, A, dA, copy_a, aligned(A, p.shape_a().ld()), B, dB,
                                                copy_b, aligned(B, p.shape_b().ld()), C, dC,
                                                reinterpret_cast<std::uintptr_t>(C) % (2 * sizeof(TOut)) == 0 && n % 2 == 0});
  };
  if (p.b == Order::row)
    call(make_stride(_1{}, n), Cfg::template mn_major_copy<Cfg::BN::value>(), Cfg::template mn_major_smem<Cfg::BN::value>());
  else
    call(make_stride(k, _1{}), Cfg::template k_major_copy<Cfg::BN::value>(), Cfg::template k_major_smem<Cfg::BN::value>());
}

/// Host launch: the kernel of p's storage orders, its shared memory raised past 48 KB where needed.
template <class Cfg, class TOut>
void launch_tensor_core(const GemmProblem& p, const typename Cfg::T* A, const typename Cfg::T* B, TOut* C,
                        cudaStream_t stream) {
  if (std::string why = tensor_core_rejects<Cfg>(p); !why.empty()) throw std::invalid_argument("tensor_cores: " + why);
  with_gemm_args<Cfg>(p, A, B, C, [&](auto const& args) {
    using Args = std::remove_cvref_t<decltype(args)>;
    if constexpr (Cfg::kZfillEdges) {
      // A or B with vectors that are not whole (a pointer or leading dimension off 16 bytes): the
      // fallback, whose edge copy goes element by element.
      if (!args.a_vec || !args.b_vec) return launch_tensor_core<typename Cfg::Fallback, TOut>(p, A, B, C, stream);
    }
    constexpr int smem_bytes =
        int(sizeof(typename Cfg::T)) * (cosize_v<typename Args::SmemLayoutA> + cosize_v<typename Args::SmemLayoutB>);
    auto kernel = tensor_core_gemm_kernel<Cfg, Args>;
    opt_in_dynamic_smem(kernel, smem_bytes);
    const dim3 grid(unsigned(ceil_div(p.m, Cfg::BM::value)), unsigned(ceil_div(p.n, Cfg::BN::value)));
    kernel<<<grid, Cfg::kThreads, smem_bytes, stream>>>(args);
  });
}

}  // namespace mm::ch08

// ---- Where the ladder's kernels are compiled ----
//
// Each (configuration, output type) of the ladder is instantiated once, in kernels_bf16.cu,
// kernels_bf16_late.cu (the steps after stage_in_pointer) or kernels_tf32.cu, and linked into the
// chapter binary and its tests: the translation units compile in parallel, and nothing compiles the
// kernels twice.
#define MM_CH08_BF16_LADDER(X) \
  X(FragmentsCfg, __nv_bfloat16) X(LdmatrixCfg, __nv_bfloat16) X(SwizzledCfg, __nv_bfloat16) \
  X(BigTileCfg, __nv_bfloat16) X(RegisterPipelinedCfg, __nv_bfloat16) X(DeepKCfg, __nv_bfloat16)       \
  X(StageInPointerCfg, __nv_bfloat16)
#define MM_CH08_BF16_LATE(X) \
  X(ZfillEdgesCfg, __nv_bfloat16) X(HoistedSwizzleCfg, __nv_bfloat16) X(OneCopyPathCfg, __nv_bfloat16) \
  X(NoCopyBranchCfg, __nv_bfloat16) X(FourStagesCfg, __nv_bfloat16) X(TwoBlocksCfg, __nv_bfloat16)
#define MM_CH08_TF32_LADDER(X) \
  X(Tf32FragmentsCfg, float) X(Tf32SwizzledCfg, float) X(Tf32BigTileCfg, float) X(Tf32StageInPointerCfg, float) \
  X(Tf32ZfillEdgesCfg, float) X(Tf32HoistedSwizzleCfg, float) X(Tf32NoCopyBranchCfg, float)               \
  X(Tf32ConflictFreeBCfg, float) X(Tf32RoundedOnceCfg, float) X(Tf32DeepKCfg, float)
#define MM_CH08_DECLARE(Cfg, TOut)                                                                              \
  extern template void launch_tensor_core<Cfg, TOut>(const GemmProblem&, const typename Cfg::T*, const typename Cfg::T*, \
                                                     TOut*, cudaStream_t);
namespace mm::ch08 {
MM_CH08_BF16_LADDER(MM_CH08_DECLARE)
MM_CH08_BF16_LATE(MM_CH08_DECLARE)
MM_CH08_TF32_LADDER(MM_CH08_DECLARE)
}  // namespace mm::ch08
#undef MM_CH08_DECLARE
/// The explicit instantiation of one (configuration, output type): kernels_bf16*.cu, kernels_tf32.cu.
#define MM_CH08_INSTANTIATE(Cfg, TOut)                                                                           \
  template void launch_tensor_core<Cfg, TOut>(const GemmProblem&, const typename Cfg::T*, const typename Cfg::T*, \
                                              TOut*, cudaStream_t);
