// Hopper's warpgroup MMA (wgmma, sm_90a): the raw instructions, the shared-memory matrix descriptor
// they read A and B through, and beside them the traits (which thread holds which accumulator).
//
//   raw instruction                          traits
//   SM90_64xNx16_F32BF16BF16_SS<N, A, B>  <-> MMA_Traits<...>: D(64×N,f32) += A(64×16,bf16)·B(16×N,bf16)
//   SM90_64xNx8_F32TF32TF32_SS<N>           D(64×N,f32) += A(64×8,tf32)·B(8×N,tf32), K-major only
//   SM90_64xNx32_F32E4M3E4M3_SS<N>          D(64×N,f32) += A(64×32,e4m3)·B(32×N,e4m3), K-major only
//   GmmaDescriptor, make_gmma_desc          the 64-bit word that tells the tensor core where a tile of
//                                           A or B lies in shared memory and how it is swizzled
//
// Unlike mma.sync, a wgmma is issued by a warpgroup (four consecutive warps, 128 threads, the first
// warp's index a multiple of 4), reads A and B straight from shared memory, and runs asynchronously:
// the issuing threads go on until they wait for it (warpgroup_wait). The protocol (PTX ISA,
// "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions"):
//   warpgroup_arrive()        wgmma.fence: the accumulator registers (and shared memory written
//                             before) are ready for the wgmma that follow
//   wgmma ... ; wgmma ...     issued back to back, all adding into the same accumulators
//   warpgroup_commit()        wgmma.commit_group: the wgmma issued since the last commit form a group
//   warpgroup_wait<N>()       wgmma.wait_group N: at most N groups are still running; the others'
//                             accumulators may be read and their shared-memory tiles overwritten
// While a group runs, its accumulator registers belong to the tensor core: code must not read or
// write them, and the compiler must not move such accesses across the asm statements
// (warpgroup_fence_operand keeps it from doing so).
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "layout/copy.hpp"  // detail::smem_address
#include "layout/mma.hpp"
#include "layout/mma_sm80.hpp"  // detail::warp_mma_on_host
#include "layout/swizzle.hpp"

namespace mm {

// ---- The shared-memory matrix descriptor ----

/// Which dimension of an operand's shared tile is contiguous: K (A row-major, B column-major: the
/// "TN" order, no transpose) or M/N (A column-major, or B row-major: wgmma's transposed read).
enum class GmmaMajor : int { K = 0, MN = 1 };

/// The swizzle mode field of a descriptor (PTX ISA, "Matrix Descriptor Format", bits 62-63): how the
/// 16-byte units of each row of the pattern are XOR-permuted; a row (the "span") is 128, 64 or 32
/// bytes, and the pattern repeats every 8 rows.
enum class GmmaSwizzle : std::uint8_t { none = 0, b128 = 1, b64 = 2, b32 = 3 };

/// Bytes in one row of the swizzle pattern (16 for none: one core-matrix row).
MM_HD constexpr int gmma_swizzle_bytes(GmmaSwizzle s) {
  return s == GmmaSwizzle::b128 ? 128 : s == GmmaSwizzle::b64 ? 64 : s == GmmaSwizzle::b32 ? 32 : 16;
}

/// The 64-bit shared-memory matrix descriptor of wgmma (PTX ISA, "Matrix Descriptor Format"):
///   bits  0-13  start address, in 16-byte units (shared-memory addresses fit in 18 bits)
///   bits 16-29  leading dimension byte offset (LBO), in 16-byte units
///   bits 32-45  stride dimension byte offset (SBO), in 16-byte units
///   bits 49-51  base offset (0 when the swizzle pattern starts at a 1024-byte aligned address)
///   bits 62-63  swizzle mode (GmmaSwizzle)
/// What LBO and SBO mean depends on the operand's major-ness (make_gmma_desc says it for the
/// swizzled layouts this project uses).
struct GmmaDescriptor {
  std::uint64_t desc = 0;  ///< The word the instruction takes.

  /// Packs the fields, given in bytes; each byte value must be a multiple of 16 below 2^18.
  MM_HD static constexpr GmmaDescriptor make(std::uint32_t start_bytes, std::uint32_t lbo_bytes,
                                             std::uint32_t sbo_bytes, GmmaSwizzle swizzle) {
    auto field = [](std::uint32_t bytes) { return std::uint64_t((bytes >> 4) & 0x3FFFu); };
    return {field(start_bytes) | field(lbo_bytes) << 16 | field(sbo_bytes) << 32 |
            std::uint64_t(std::uint8_t(swizzle) & 0x3u) << 62};
  }
  /// The start address field, in bytes.
  MM_HD constexpr std::uint32_t start_bytes() const { return std::uint32_t(desc & 0x3FFFu) << 4; }
  /// The leading dimension byte offset, in bytes.
  MM_HD constexpr std::uint32_t lbo_bytes() const { return std::uint32_t((desc >> 16) & 0x3FFFu) << 4; }
  /// The stride dimension byte offset, in bytes.
  MM_HD constexpr std::uint32_t sbo_bytes() const { return std::uint32_t((desc >> 32) & 0x3FFFu) << 4; }
  /// The base offset field (bits 49-51).
  MM_HD constexpr int base_offset() const { return int((desc >> 49) & 0x7u); }
  /// The swizzle mode.
  MM_HD constexpr GmmaSwizzle swizzle() const { return GmmaSwizzle((desc >> 62) & 0x3u); }
  /// The same descriptor with its start moved by `bytes` (a multiple of 16): the next K slice of a
  /// tile whose descriptor fields are otherwise the same.
  MM_HD constexpr GmmaDescriptor advanced(std::int32_t bytes) const {
    return {desc + std::uint64_t(std::int64_t(bytes) >> 4)};
  }
};

/// The descriptor's swizzle mode for a shared layout: a plain Layout is none; a ComposedLayout whose
/// swizzle, applied to element offsets of T, is the hardware's XOR of byte-address bits [4, 4+B) with
/// bits [7, 7+B) (Swizzle<B, 4 - log2(sizeof T), 3>) is b32, b64 or b128 for B = 1, 2, 3. Any other
/// layout does not compile.
template <class T, class L>
MM_HD constexpr GmmaSwizzle gmma_swizzle_of() {
  if constexpr (!is_composed_layout_v<L>) {
    return GmmaSwizzle::none;
  } else {
    using Fn = typename L::fn_type;
    constexpr int unit_log2 = sizeof(T) == 1 ? 4 : sizeof(T) == 2 ? 3 : sizeof(T) == 4 ? 2 : -1;
    static_assert(Fn::num_base == unit_log2 && Fn::num_shft == 3 && Fn::num_bits >= 1 && Fn::num_bits <= 3,
                  "make_gmma_desc: the shared layout's swizzle is not one wgmma reads: it must XOR 16-byte "
                  "units within rows of 32, 64 or 128 bytes (Swizzle<B, 4 - log2(sizeof(T)), 3>, B = 1, 2, 3)");
    return Fn::num_bits == 3 ? GmmaSwizzle::b128 : Fn::num_bits == 2 ? GmmaSwizzle::b64 : GmmaSwizzle::b32;
  }
}

/// CuTe's GMMA::Layout_K_SW128_Atom<T>: the smallest piece of a K-major tile wgmma reads with the
/// 128-byte swizzle: 8 rows (MN) of 128 bytes of K, each 16-byte unit of row r XORed with r.
/// Tile it over a stage, `tile_to_shape(GmmaLayoutK_SW128_Atom<T>{}, make_shape(BM, BK))`.
template <class T>
using GmmaLayoutK_SW128_Atom =
    decltype(composition(Swizzle<3, 4 - (sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : 2), 3>{},
                         Layout<Shape<_8, Int<128 / int(sizeof(T))>>, Stride<Int<128 / int(sizeof(T))>, _1>>{}));
/// CuTe's GMMA::Layout_MN_SW128_Atom<T>: the MN-major counterpart: 128 bytes of MN (contiguous) for
/// each of 8 k, swizzled the same way.
template <class T>
using GmmaLayoutMN_SW128_Atom =
    decltype(composition(Swizzle<3, 4 - (sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : 2), 3>{},
                         Layout<Shape<Int<128 / int(sizeof(T))>, _8>, Stride<_1, Int<128 / int(sizeof(T))>>>{}));

namespace detail {
/// The unswizzled layout under a (possibly swizzled) shared layout.
template <class L>
MM_HD constexpr auto gmma_inner_layout(L const& l) {
  if constexpr (is_composed_layout_v<L>) return l.layout();
  else return l;
}
/// Offset, in elements, between coordinates (m1,k1) and (m0,k0) of the unswizzled layout.
template <class L>
MM_HD constexpr int gmma_delta(L const& l, int m1, int k1, int m0, int k0) {
  return int(l(make_coord(m1, k1))) - int(l(make_coord(m0, k0)));
}
}  // namespace detail

/// The descriptor of one operand tile `t`: a (MN,K) tensor in shared memory whose layout is one of the
/// canonical layouts of the PTX ISA ("Shared Memory Matrix Layout"). Its fields are read off the
/// layout, never written by hand:
///
///  K-major (A row-major, B column-major), swizzle span W bytes: each MN index is a row of W bytes
///    holding W/sizeof(T) consecutive k; 8 such rows form one swizzle pattern (an "8-row core group").
///      SBO = bytes from one 8-row group to the next along MN   = offset of (8, 0)
///      LBO = unused by swizzled K-major layouts (a wgmma's K of 32 bytes lies inside one row)
///  MN-major (B row-major: N contiguous), span W: each k is a row of W bytes holding W/sizeof(T)
///    consecutive MN indices ("a panel" W/sizeof(T) wide); 8 rows (k .. k+7) form one pattern.
///      SBO = bytes from one group of 8 k to the next          = offset of (0, 8)
///      LBO = bytes from one panel to the next along MN         = offset of (W/sizeof(T), 0)
///
/// The start address is that of element (0,0); the swizzle pattern must start at a 1024-byte aligned
/// address (base offset 0), which the kernels' shared-memory alignment guarantees. Layouts of the
/// wrong shape (a K-major row that is not exactly one span, elements not contiguous where the
/// hardware reads them contiguously) do not compile.
template <GmmaMajor Major, class T, class L>
MM_HD GmmaDescriptor make_gmma_desc(T const* smem, L const& layout) {
  constexpr GmmaSwizzle swizzle = gmma_swizzle_of<T, L>();
  constexpr int span = gmma_swizzle_bytes(swizzle) / int(sizeof(T));  // elements in one pattern row
  static_assert(swizzle != GmmaSwizzle::none, "make_gmma_desc: only swizzled layouts are described here");
  using Inner = std::remove_cvref_t<decltype(detail::gmma_inner_layout(layout))>;
  constexpr Inner inner{};  // the shared layouts are compile-time: their strides are checked at compile time
  constexpr int mn = size_v<std::remove_cvref_t<decltype(get<0>(typename Inner::shape_type{}))>>;
  std::uint32_t lbo = 16, sbo = 0;
  if constexpr (Major == GmmaMajor::K) {
    static_assert(detail::gmma_delta(inner, 0, 1, 0, 0) == 1, "make_gmma_desc<K>: K must be contiguous");
    static_assert(detail::gmma_delta(inner, 1, 0, 0, 0) == span,
                  "make_gmma_desc<K>: consecutive MN indices must be one swizzle row (span) apart");
    static_assert(mn % 8 == 0, "make_gmma_desc<K>: whole 8-row groups along MN");
    constexpr int group = detail::gmma_delta(inner, 8, 0, 0, 0);
    static_assert(mn == 8 || group * int(sizeof(T)) % 1024 == 0,
                  "make_gmma_desc<K>: 8-row groups must be whole 1024-byte swizzle patterns apart");
    sbo = std::uint32_t(group * int(sizeof(T)));
  } else {
    static_assert(detail::gmma_delta(inner, 1, 0, 0, 0) == 1, "make_gmma_desc<MN>: MN must be contiguous");
    static_assert(detail::gmma_delta(inner, 0, 1, 0, 0) == span,
                  "make_gmma_desc<MN>: consecutive k must be one swizzle row (span) apart");
    constexpr int group = detail::gmma_delta(inner, 0, 8, 0, 0);
    static_assert(group * int(sizeof(T)) % 1024 == 0 || span * int(sizeof(T)) < 128,
                  "make_gmma_desc<MN>: groups of 8 k must be whole swizzle patterns apart");
    sbo = std::uint32_t(group * int(sizeof(T)));
    if constexpr (mn > span) lbo = std::uint32_t(detail::gmma_delta(inner, span, 0, 0, 0) * int(sizeof(T)));
  }
  return GmmaDescriptor::make(detail::smem_address(smem + layout(make_coord(0, 0))), lbo, sbo, swizzle);
}

/// make_gmma_desc of a shared-memory tensor (MN,K).
template <GmmaMajor Major, class E, class L>
MM_HD GmmaDescriptor make_gmma_desc(Tensor<E, L> const& t) {
  return make_gmma_desc<Major>(t.data(), t.layout());
}

// ---- The raw instructions and the warpgroup protocol ----

namespace detail {
// wgmma exists only in the arch-specific sm_90a target: a use that reaches any other device pass must
// not compile (a template, so that it fires only where used; see mma_sm80.hpp).
template <class S>
MM_HD void require_sm90a_wgmma() {
#if defined(__CUDA_ARCH__) && !(defined(__CUDA_ARCH_SPECIFIC__) && __CUDA_ARCH_SPECIFIC__ == 900)
  static_assert(sizeof(S) == 0,
                "wgmma (SM90_64xNx16_F32BF16BF16_SS, warpgroup_*) needs the sm_90a target "
                "(-gencode=arch=compute_90a,code=sm_90a): guard the kernel body with "
                "`if constexpr (arch::compiled_for(arch::sm90a))` (layout/arch.hpp)");
#endif
}
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_SPECIFIC__) && __CUDA_ARCH_SPECIFIC__ == 900
#define MM_DEVICE_ASM __device__ __forceinline__
#include "layout/mma_sm90_ops.inc"
#undef MM_DEVICE_ASM
#define MM_HAVE_WGMMA 1
#endif
}  // namespace detail

/// `wgmma.fence.sync.aligned`: orders this warpgroup's earlier register and shared-memory accesses
/// before the wgmma that follow. Needed before the first wgmma, and before any wgmma whose
/// accumulators were touched by ordinary code since.
template <class = void>
MM_HD void warpgroup_arrive() {
  detail::require_sm90a_wgmma<int>();
#if defined(MM_HAVE_WGMMA)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

/// `wgmma.commit_group.sync.aligned`: the wgmma issued since the last commit form one group.
template <class = void>
MM_HD void warpgroup_commit() {
  detail::require_sm90a_wgmma<int>();
#if defined(MM_HAVE_WGMMA)
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

/// `wgmma.wait_group.sync.aligned N`: waits until at most N committed groups are still running.
template <int N>
MM_HD void warpgroup_wait() {
  detail::require_sm90a_wgmma<int>();
  static_assert(N >= 0 && N <= 7, "wgmma.wait_group takes 0..7");
#if defined(MM_HAVE_WGMMA)
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}

/// Keeps the compiler from moving reads or writes of accumulator `x` across a wgmma statement: an
/// empty asm that claims to read and write it.
MM_HD void warpgroup_fence_operand(float& x) {
#if defined(__CUDA_ARCH__)
  asm volatile("" : "+f"(x)::"memory");
#else
  (void)x;
#endif
}

/// warpgroup_fence_operand on every accumulator of a thread's array.
template <int N>
MM_HD void warpgroup_fence_operand(float (&acc)[N]) {
MM_UNROLL
  for (int i = 0; i < N; ++i) warpgroup_fence_operand(acc[i]);
}

/// warpgroup_fence_operand on every value of a register fragment (an owning tensor, or a view of
/// one: `accum(_, h, 0)`), in the fragment's order.
template <class Frag>
  requires(is_tensor_v<Frag>)
MM_HD void warpgroup_fence_operand(Frag&& accum) {
MM_UNROLL
  for (int i = 0; i < int(accum.size()); ++i) warpgroup_fence_operand(accum(i));
}

/// `wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16` with A and B in shared memory ("SS"):
/// D(64×N) = A(64×16)·B(16×N) + (accumulate ? D : 0), issued by one warpgroup. Each of its 128
/// threads passes the same two descriptors and its own N/2 fp32 accumulators. `MajorA`/`MajorB`:
/// how the tiles are stored (GmmaMajor::MN sets the instruction's transpose bit). sm_90a.
template <int N, GmmaMajor MajorA, GmmaMajor MajorB>
struct SM90_64xNx16_F32BF16BF16_SS {
  static_assert(N == 16 || N == 32 || N == 48 || N == 64 || N == 80 || N == 96 || N == 112 || N == 128 || N == 160 ||
                    N == 176 || N == 192 || N == 256,
                "wgmma bf16 atoms are provided for N = 16, 32, 48, 64, 80, 96, 112, 128, 160, 176, 192, 256 "
                "(tools/gen_mma_sm90_ops.py)");
  using DRegisters = float[N / 2];  ///< this thread's accumulators
  /// One instruction; `accumulate` false overwrites D with A·B.
  template <class = void>
  MM_HD static void fma(GmmaDescriptor desc_a, GmmaDescriptor desc_b, float (&d)[N / 2], bool accumulate) {
    detail::require_sm90a_wgmma<float>();
#if defined(MM_HAVE_WGMMA)
    constexpr int ta = int(MajorA), tb = int(MajorB);
    if constexpr (N == 16) detail::wgmma_m64n16k16_f32_bf16_ss<ta, tb>(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 32) detail::wgmma_m64n32k16_f32_bf16_ss<ta, tb>(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 48) detail::wgmma_m64n48k16_f32_bf16_ss<ta, tb>(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 64) detail::wgmma_m64n64k16_f32_bf16_ss<ta, tb>(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 80) detail::wgmma_m64n80k16_f32_bf16_ss<ta, tb>(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 96) detail::wgmma_m64n96k16_f32_bf16_ss<ta, tb>(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 112) detail::wgmma_m64n112k16_f32_bf16_ss<ta, tb>(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 128) detail::wgmma_m64n128k16_f32_bf16_ss<ta, tb>(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 160) detail::wgmma_m64n160k16_f32_bf16_ss<ta, tb>(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 176) detail::wgmma_m64n176k16_f32_bf16_ss<ta, tb>(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 192) detail::wgmma_m64n192k16_f32_bf16_ss<ta, tb>(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 256) detail::wgmma_m64n256k16_f32_bf16_ss<ta, tb>(d, desc_a.desc, desc_b.desc, int(accumulate));
#else
    (void)desc_a, (void)desc_b, (void)d, (void)accumulate;
#if !defined(__CUDA_ARCH__)
    detail::warp_mma_on_host("SM90_64xNx16_F32BF16BF16_SS (wgmma)");
#endif
#endif
  }
};

/// The accumulator layout of every wgmma with fp32 D (bf16, tf32, e4m3 inputs alike), 64×N:
/// (thr, val) -> m + 64·n, as the traits below explain it.
template <int N>
using GmmaAccumulatorLayout = Layout<Shape<Shape<_4, _8, _4>, Shape<_2, _2, Int<N / 8>>>,
                                     Stride<Stride<_128, _1, _16>, Stride<_64, _8, _512>>>;

/// One thread's values of a 64×N wgmma accumulator as a register fragment: the value mode of
/// GmmaAccumulatorLayout, (c, r, g) = (column in the pair, row half, 8-column group), laid out in
/// register order (d_i with i = c + 2·r + 4·g). What partition_fragment_C gives, per atom, for any
/// TiledMMA of these atoms (its mode 0); value (c, r, g) is at row 16·warp + lane/4 + 8·r, column
/// 8·g + 2·(lane % 4) + c of the atom's tile.
template <int N>
using GmmaFragmentLayout = Layout<Shape<_2, _2, Int<N / 8>>, Stride<_1, _2, _4>>;

/// A raw array of a thread's accumulators (chapters 09 and 10 write `float acc[N / 2]`) viewed as
/// its register fragment (GmmaFragmentLayout): what the helpers' array overloads forward.
template <class T, int NAcc>
MM_HD constexpr auto make_gmma_fragment_view(T (&acc)[NAcc]) {
  return make_tensor(&acc[0], GmmaFragmentLayout<2 * NAcc>{});
}

/// A warpgroup's accumulators for Rows 64×N row blocks, in registers and uninitialized: what
/// partition_fragment_C gives for one warpgroup's TiledMMA of a 64×N wgmma over a (64·Rows)×N tile,
/// ((2,2,N/8),Rows,1) (every fp32 wgmma has this C layout). For values with no main loop of their
/// own: an epilogue's reshaped tile, a test.
template <int N, int Rows = 1>
MM_HD auto make_gmma_accumulators() {
  using Atom = SM90_64xNx16_F32BF16BF16_SS<N, GmmaMajor::K, GmmaMajor::K>;
  return partition_fragment_C(make_tiled_mma(Atom{}, Layout<Shape<_1, _1, _1>>{}), make_shape(Int<64 * Rows>{}, Int<N>{}));
}

namespace detail {
/// The registers behind a compact fp32 fragment (an owning tensor or a view of one), as the array
/// the wgmma asm statements take: its values in register order.
template <class Frag>
MM_HD auto& gmma_registers(Frag&& accum) {
  using L = std::remove_cvref_t<decltype(accum.layout())>;
  static_assert(cosize_v<L> == size_v<L>, "a wgmma accumulator fragment is compact: value i in register i");
  return *reinterpret_cast<float(*)[size_v<L>]>(&*accum.data());
}
}  // namespace detail

/// The traits of the bf16 wgmma: shapes, and the accumulator's thread-value layout. From the PTX ISA's
/// figure "WGMMA .m64nNk16 register fragment layout for accumulator matrix D": thread t of the
/// warpgroup is lane t % 32 of warp t / 32, and its register d_i holds
///   row = 16·warp + lane/4 + 8·((i/2) % 2),   col = 8·(i/4) + 2·(lane % 4) + i % 2.
/// As (thr, val) -> m + 64·n: thr = (lane%4, lane/4, warp) with strides (2·64, 1, 16); val = (i%2,
/// (i/2)%2, i/4) with strides (64, 8, 8·64). A warp's 16 rows are the m16n8 C fragment of mma.sync
/// repeated N/8 times along N. A and B are read from shared memory by the whole warpgroup: every
/// thread "holds" the whole tile (thread stride 0).
template <int N, GmmaMajor MajorA, GmmaMajor MajorB>
struct MMA_Traits<SM90_64xNx16_F32BF16BF16_SS<N, MajorA, MajorB>> {
  using ValTypeD = float;          ///< Accumulator type written.
  using ValTypeA = __nv_bfloat16;  ///< A element type.
  using ValTypeB = __nv_bfloat16;  ///< B element type.
  using ValTypeC = float;          ///< Accumulator type read.
  using Shape_MNK = Shape<_64, Int<N>, _16>;  ///< The tile of one instruction.
  using ThrID = Layout<_128>;                 ///< A warpgroup.
  /// (thr, val) -> m + 64·k: the whole 64×16 tile, seen by every thread
  using ALayout = Layout<Shape<_128, Shape<_64, _16>>, Stride<_0, Stride<_1, _64>>>;
  /// (thr, val) -> n + N·k: the whole N×16 tile, seen by every thread
  using BLayout = Layout<Shape<_128, Shape<Int<N>, _16>>, Stride<_0, Stride<_1, Int<N>>>>;
  /// (thr, val) -> m + 64·n
  using CLayout = GmmaAccumulatorLayout<N>;
};

/// `wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32` with A and B in shared memory ("SS"):
/// D(64×N) = A(64×8)·B(8×N) + (accumulate ? D : 0), tf32 operands (fp32 in memory: the tensor core
/// reads each value's sign, exponent and top 10 mantissa bits). Both operands K-major: wgmma reads
/// tf32 (and fp8) only K-major from shared memory, so a row-major B must be transposed on its way
/// in. One instruction reads 8 × 4 = 32 bytes of each row of A and B: the 32 bytes of bf16's k16
/// and of fp8's k32. sm_90a.
template <int N>
struct SM90_64xNx8_F32TF32TF32_SS {
  static_assert(N == 16 || N == 32 || N == 64 || N == 128 || N == 192 || N == 256,
                "wgmma tf32 atoms are provided for N = 16, 32, 64, 128, 192, 256 (tools/gen_mma_sm90_ops.py)");
  using DRegisters = float[N / 2];  ///< this thread's accumulators
  /// One instruction; `accumulate` false overwrites D with A·B.
  template <class = void>
  MM_HD static void fma(GmmaDescriptor desc_a, GmmaDescriptor desc_b, float (&d)[N / 2], bool accumulate) {
    detail::require_sm90a_wgmma<float>();
#if defined(MM_HAVE_WGMMA)
    if constexpr (N == 16) detail::wgmma_m64n16k8_f32_tf32_ss(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 32) detail::wgmma_m64n32k8_f32_tf32_ss(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 64) detail::wgmma_m64n64k8_f32_tf32_ss(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 128) detail::wgmma_m64n128k8_f32_tf32_ss(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 192) detail::wgmma_m64n192k8_f32_tf32_ss(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 256) detail::wgmma_m64n256k8_f32_tf32_ss(d, desc_a.desc, desc_b.desc, int(accumulate));
#else
    (void)desc_a, (void)desc_b, (void)d, (void)accumulate;
#if !defined(__CUDA_ARCH__)
    detail::warp_mma_on_host("SM90_64xNx8_F32TF32TF32_SS (wgmma)");
#endif
#endif
  }
};

/// The traits of the tf32 wgmma: K = 8 per instruction; the accumulator layout is bf16's.
template <int N>
struct MMA_Traits<SM90_64xNx8_F32TF32TF32_SS<N>> {
  using ValTypeD = float;  ///< Accumulator type written.
  using ValTypeA = float;  ///< A element type (tf32 in an fp32 word).
  using ValTypeB = float;  ///< B element type (tf32 in an fp32 word).
  using ValTypeC = float;  ///< Accumulator type read.
  using Shape_MNK = Shape<_64, Int<N>, _8>;  ///< The tile of one instruction.
  using ThrID = Layout<_128>;                ///< A warpgroup.
  /// (thr, val) -> m + 64·k: the whole 64×8 tile, seen by every thread
  using ALayout = Layout<Shape<_128, Shape<_64, _8>>, Stride<_0, Stride<_1, _64>>>;
  /// (thr, val) -> n + N·k: the whole N×8 tile, seen by every thread
  using BLayout = Layout<Shape<_128, Shape<Int<N>, _8>>, Stride<_0, Stride<_1, Int<N>>>>;
  /// (thr, val) -> m + 64·n
  using CLayout = GmmaAccumulatorLayout<N>;
};

/// `wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3` with A and B in shared memory ("SS"):
/// D(64×N) = A(64×32)·B(32×N) + (accumulate ? D : 0), fp8 e4m3 operands (1 sign, 4 exponent, 3
/// mantissa bits), both K-major; 32 × 1 = 32 bytes of each row per instruction. The products are
/// added into fp32 accumulators, but the tensor core keeps fewer bits than fp32 while it adds within
/// and across instructions (chapter 12's accuracy section). sm_90a.
template <int N>
struct SM90_64xNx32_F32E4M3E4M3_SS {
  static_assert(N == 16 || N == 32 || N == 64 || N == 128 || N == 192 || N == 256,
                "wgmma e4m3 atoms are provided for N = 16, 32, 64, 128, 192, 256 (tools/gen_mma_sm90_ops.py)");
  using DRegisters = float[N / 2];  ///< this thread's accumulators
  /// One instruction; `accumulate` false overwrites D with A·B.
  template <class = void>
  MM_HD static void fma(GmmaDescriptor desc_a, GmmaDescriptor desc_b, float (&d)[N / 2], bool accumulate) {
    detail::require_sm90a_wgmma<float>();
#if defined(MM_HAVE_WGMMA)
    if constexpr (N == 16) detail::wgmma_m64n16k32_f32_e4m3_ss(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 32) detail::wgmma_m64n32k32_f32_e4m3_ss(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 64) detail::wgmma_m64n64k32_f32_e4m3_ss(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 128) detail::wgmma_m64n128k32_f32_e4m3_ss(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 192) detail::wgmma_m64n192k32_f32_e4m3_ss(d, desc_a.desc, desc_b.desc, int(accumulate));
    if constexpr (N == 256) detail::wgmma_m64n256k32_f32_e4m3_ss(d, desc_a.desc, desc_b.desc, int(accumulate));
#else
    (void)desc_a, (void)desc_b, (void)d, (void)accumulate;
#if !defined(__CUDA_ARCH__)
    detail::warp_mma_on_host("SM90_64xNx32_F32E4M3E4M3_SS (wgmma)");
#endif
#endif
  }
};

/// The traits of the e4m3 wgmma: K = 32 per instruction; the accumulator layout is bf16's.
template <int N>
struct MMA_Traits<SM90_64xNx32_F32E4M3E4M3_SS<N>> {
  using ValTypeD = float;          ///< Accumulator type written.
  using ValTypeA = __nv_fp8_e4m3;  ///< A element type.
  using ValTypeB = __nv_fp8_e4m3;  ///< B element type.
  using ValTypeC = float;          ///< Accumulator type read.
  using Shape_MNK = Shape<_64, Int<N>, _32>;  ///< The tile of one instruction.
  using ThrID = Layout<_128>;                 ///< A warpgroup.
  /// (thr, val) -> m + 64·k: the whole 64×32 tile, seen by every thread
  using ALayout = Layout<Shape<_128, Shape<_64, _32>>, Stride<_0, Stride<_1, _64>>>;
  /// (thr, val) -> n + N·k: the whole N×32 tile, seen by every thread
  using BLayout = Layout<Shape<_128, Shape<Int<N>, _32>>, Stride<_0, Stride<_1, Int<N>>>>;
  /// (thr, val) -> m + 64·n
  using CLayout = GmmaAccumulatorLayout<N>;
};

/// One K block of a stage for one warpgroup: the K/KI wgmma that multiply a (64,K) tile of A by a
/// (N,K) tile of B in shared memory into `acc`, issued as one group between warpgroup_arrive and
/// warpgroup_commit (the caller waits for it with warpgroup_wait). `Atom` is the wgmma
/// (SM90_64xNx16_F32BF16BF16_SS<N, MajorA, MajorB>, SM90_64xNx8_F32TF32TF32_SS<N>,
/// SM90_64xNx32_F32E4M3E4M3_SS<N>); KI is its K (16, 8, 32: 32 bytes of a row each), and each
/// slice's descriptors are read off the tiles' layouts. `accumulate` false (the first K block of a tile) makes the first wgmma overwrite
/// the accumulators instead of adding to them: CuTe's ScaleOut::Zero, so that no loop zeroes them
/// (the slices after the first always add).
///
/// The accumulators are fenced (warpgroup_fence_operand) before the arrive and after the commit, so
/// the compiler moves no access to them across the asynchronous wgmma; the caller fences them again
/// after the warpgroup_wait that precedes reading them (CUTLASS's order).
template <class Atom, GmmaMajor MajorA, GmmaMajor MajorB, class TA, class TB, int NAcc>
MM_HD void gmma_k_block(TA const& a_tile, TB const& b_tile, float (&acc)[NAcc], bool accumulate) {
  using Sa = std::remove_cvref_t<decltype(a_tile.layout())>;
  using Sb = std::remove_cvref_t<decltype(b_tile.layout())>;
  using MA = Int<size_v<std::remove_cvref_t<decltype(get<0>(typename Sa::shape_type{}))>>>;  // 64
  using MB = Int<size_v<std::remove_cvref_t<decltype(get<0>(typename Sb::shape_type{}))>>>;  // N
  constexpr int K = size_v<std::remove_cvref_t<decltype(get<1>(typename Sa::shape_type{}))>>;
  using KI = Int<size_v<std::remove_cvref_t<decltype(get<2>(typename MMA_Traits<Atom>::Shape_MNK{}))>>>;  // 16, 8, 32
  static_assert(K % KI::value == 0, "gmma_k_block: K in whole slices of the instruction's K");
  warpgroup_fence_operand(acc);
  warpgroup_arrive();
MM_UNROLL
  for (int kk = 0; kk < K / KI::value; ++kk) {
    auto a_k = local_tile(a_tile, make_shape(MA{}, KI{}), make_coord(0, kk));  // (64,KI)
    auto b_k = local_tile(b_tile, make_shape(MB{}, KI{}), make_coord(0, kk));  // (N,KI)
    Atom::fma(make_gmma_desc<MajorA>(a_k), make_gmma_desc<MajorB>(b_k), acc, kk > 0 || accumulate);
  }
  warpgroup_commit();
  warpgroup_fence_operand(acc);
}

/// gmma_k_block into a register fragment (partition_fragment_C's, or a view of one atom's values:
/// `accum(_, h, 0)`): the atom's N/2 values, compact, in register order.
template <class Atom, GmmaMajor MajorA, GmmaMajor MajorB, class TA, class TB, class Frag>
  requires(is_tensor_v<Frag>)
MM_HD void gmma_k_block(TA const& a_tile, TB const& b_tile, Frag&& accum, bool accumulate) {
  constexpr int kN = size_v<std::remove_cvref_t<decltype(get<1>(typename MMA_Traits<Atom>::Shape_MNK{}))>>;
  static_assert(size_v<std::remove_cvref_t<decltype(accum.layout())>> == kN / 2, "gmma_k_block: the fragment holds one atom's values");
  gmma_k_block<Atom, MajorA, MajorB>(a_tile, b_tile, detail::gmma_registers(accum), accumulate);
}

}  // namespace mm
