// Swizzles and swizzled (composed) layouts, against shared-memory bank conflicts.
//
// Swizzle<B,M,S> XORs B bits of an offset, taken S bits above, into bits [M, M+B):
//   offset ^ ((offset & yyy_mask) >> S)
// `composition(Swizzle<3,2,3>{}, layout)` is the layout followed by the swizzle: same shape,
// the indices permuted within each 2^(B+M+S) block so that a column walk hits different banks.
//
// A swizzled shared-memory tile of fp32, (MN, BK, stage) = (128, 8, 3), column-major inside:
//
//   auto sA_layout = composition(Swizzle<3,2,5>{}, make_layout(make_shape(_128{}, _8{}, _3{})));
//   // index (m,k,s) = m + 128 k + 1024 s; the swizzle XORs bits [7,10) (k) into bits [2,5):
//   // the 16-byte unit (4 floats, 2^M with M = 2) of m is permuted by k, units stay whole.
//   auto sA  = make_tensor(make_smem_ptr(smem), sA_layout);
//   auto sAs = sA(_, _, stage);   // a stage: the offset 1024 * stage stays before the swizzle
//
// A ComposedLayout has the interface of a Layout (shape_type, shape(), operator(), slicing,
// the divides and products of its inner layout), so tensors, TiledCopy and TiledMMA take it
// as they take a Layout; copy.hpp checks that a vector never straddles a swizzle unit.
#pragma once

#include "layout/tensor.hpp"

namespace mm {

/// The swizzle functor: XOR the B bits at [M+S, M+S+B) into the bits at [M, M+B).
template <int B, int M, int S>
struct Swizzle {
  static_assert(B >= 0 && M >= 0, "Swizzle: B and M must be non-negative");
  static_assert(S >= B || S <= -B, "Swizzle: |S| must be at least B (the two bit ranges must not overlap)");
  static constexpr int num_bits = B;   ///< Bits swapped.
  static constexpr int num_base = M;   ///< Bits kept (the unit: 2^M elements stay together).
  static constexpr int num_shft = S;   ///< Distance between the bit ranges.
  static constexpr int yyy_mask = ((1 << B) - 1) << (M + (S > 0 ? S : 0)); ///< Source bits.
  static constexpr int zzz_mask = ((1 << B) - 1) << (M - (S < 0 ? S : 0)); ///< Target bits.

  /// The swizzled offset (compile-time in, compile-time out).
  template <class Off>
  MM_HD constexpr auto operator()(Off const& offset) const {
    if constexpr (is_constant_v<Off>) {
      constexpr auto o = Off::value;
      return Int<int(o ^ (S >= 0 ? ((o & yyy_mask) >> S) : ((o & yyy_mask) << -S)))>{};
    } else {
      if constexpr (S >= 0) return offset ^ ((offset & yyy_mask) >> S);
      else return offset ^ ((offset & yyy_mask) << -S);
    }
  }
  /// Size of the block the swizzle permutes within.
  MM_HD static constexpr int block_size() { return 1 << (B + M + (S > 0 ? S : -S)); }
};

namespace detail {
// log2 of a power of two, at compile time.
constexpr int log2_pow2(int n) { return n <= 1 ? 0 : 1 + log2_pow2(n / 2); }
}  // namespace detail

/// The swizzle seen in units N times larger (float -> float4): the unit of 2^M elements
/// becomes 2^M / N of the larger ones, `upcast<4>(Swizzle<3,2,5>) = Swizzle<3,0,5>`. N must
/// be a power of two no larger than 2^M: a larger unit would be split by the swizzle (CuTe
/// then drops swizzle bits; we refuse).
template <int N, int B, int M, int S>
MM_HD constexpr auto upcast(Swizzle<B, M, S> const&) {
  static_assert(N > 0 && (N & (N - 1)) == 0, "upcast<N>(Swizzle): N must be a power of two");
  constexpr int log2n = detail::log2_pow2(N);
  static_assert(log2n <= M, "upcast<N>(Swizzle<B,M,S>): N is larger than the swizzle's unit of 2^M elements, which "
                            "would split a unit across the XOR");
  return Swizzle<B, M - log2n, S>{};
}
/// The swizzle seen in units N times smaller (float4 -> float): `downcast<4>(Swizzle<3,0,5>) =
/// Swizzle<3,2,5>`, N a power of two.
template <int N, int B, int M, int S>
MM_HD constexpr auto downcast(Swizzle<B, M, S> const&) {
  static_assert(N > 0 && (N & (N - 1)) == 0, "downcast<N>(Swizzle): N must be a power of two");
  return Swizzle<B, M + detail::log2_pow2(N), S>{};
}

/// A layout followed by a function: index(c) = fn(offset + layout(c)). The offset keeps a
/// sliced swizzled layout exact (the swizzle is not linear, so it cannot move into a pointer).
/// It has a Layout's member types and accessors (shape_type, shape(), stride() of the inner
/// layout), so code written for layouts (partitioning, copies, MMAs) takes it unchanged.
template <class Fn, class Offset, class L>
struct ComposedLayout {
  using fn_type = Fn;                                 ///< The function applied last.
  using offset_type = Offset;                         ///< The offset's type (`_0` until sliced).
  using layout_type = L;                              ///< The inner layout's type.
  using shape_type = typename L::shape_type;          ///< The shape's type (that of the inner layout).
  using stride_type = typename L::stride_type;        ///< The inner layout's stride type.

  Fn fn_;                                 ///< Applied last (a Swizzle).
  Offset offset_;                         ///< Added before fn.
  [[no_unique_address]] L layout_;        ///< The inner layout.

  /// The shape (that of the inner layout).
  template <int... I>
  MM_HD constexpr auto shape() const { return get_at<I...>(layout_.shape()); }
  /// The inner layout's stride (the composed function is not strided).
  template <int... I>
  MM_HD constexpr auto stride() const { return get_at<I...>(layout_.stride()); }
  /// The inner layout.
  MM_HD constexpr L const& layout() const { return layout_; }
  /// Index of a coordinate, or the sliced composed layout for a coordinate with `_`.
  template <class Crd>
  MM_HD constexpr auto operator()(Crd const& crd) const {
    if constexpr (has_underscore_v<Crd>) return get<0>(slice_and_offset(crd, *this));
    else return fn_(offset_ + layout_(crd));
  }
  /// Index of the N-D coordinate (c0, c1, ...).
  template <class C0, class C1, class... Cs>
  MM_HD constexpr auto operator()(C0 const& c0, C1 const& c1, Cs const&... cs) const {
    return (*this)(make_coord(c0, c1, cs...));
  }
};

/// True for ComposedLayout.
template <class T>
inline constexpr bool is_composed_layout_v = false;
template <class Fn, class O, class L>
inline constexpr bool is_composed_layout_v<ComposedLayout<Fn, O, L>> = true;

/// `fn ∘ layout` (with offset 0): `composition(Swizzle<3,3,3>{}, Layout<Shape<_8,_64>, Stride<_64,_1>>{})`.
template <int B, int M, int S, class Sh, class St>
MM_HD constexpr auto composition(Swizzle<B, M, S> const& sw, Layout<Sh, St> const& l) {
  return ComposedLayout<Swizzle<B, M, S>, _0, Layout<Sh, St>>{sw, {}, l};
}
/// `fn ∘ offset ∘ layout`.
template <class Fn, class Offset, class Sh, class St>
MM_HD constexpr auto make_composed_layout(Fn const& fn, Offset const& offset, Layout<Sh, St> const& l) {
  return ComposedLayout<Fn, Offset, Layout<Sh, St>>{fn, offset, l};
}

/// Slicing a composed layout: the slice's offset stays inside (before the swizzle) and the
/// pointer offset is 0.
template <class Crd, class Fn, class O, class L>
MM_HD constexpr auto slice_and_offset(Crd const& crd, ComposedLayout<Fn, O, L> const& c) {
  auto so = slice_and_offset(crd, c.layout_);
  auto off = c.offset_ + get<1>(so);
  return make_tuple(make_composed_layout(c.fn_, off, get<0>(so)), _0{});
}

/// Layout operations on a composed layout act on its inner layout.
template <class Fn, class O, class L, class T>
MM_HD constexpr auto composition(ComposedLayout<Fn, O, L> const& c, T const& t) {
  return make_composed_layout(c.fn_, c.offset_, composition(c.layout_, t));
}
/// logical_divide of the inner layout.
template <class Fn, class O, class L, class T>
MM_HD constexpr auto logical_divide(ComposedLayout<Fn, O, L> const& c, T const& t) {
  return make_composed_layout(c.fn_, c.offset_, logical_divide(c.layout_, t));
}
/// zipped_divide of the inner layout.
template <class Fn, class O, class L, class T>
MM_HD constexpr auto zipped_divide(ComposedLayout<Fn, O, L> const& c, T const& t) {
  return make_composed_layout(c.fn_, c.offset_, zipped_divide(c.layout_, t));
}
/// tiled_divide of the inner layout.
template <class Fn, class O, class L, class T>
MM_HD constexpr auto tiled_divide(ComposedLayout<Fn, O, L> const& c, T const& t) {
  return make_composed_layout(c.fn_, c.offset_, tiled_divide(c.layout_, t));
}
/// flat_divide of the inner layout.
template <class Fn, class O, class L, class T>
MM_HD constexpr auto flat_divide(ComposedLayout<Fn, O, L> const& c, T const& t) {
  return make_composed_layout(c.fn_, c.offset_, flat_divide(c.layout_, t));
}
/// Modes I... of the inner layout.
template <int... I, class Fn, class O, class L>
MM_HD constexpr auto select(ComposedLayout<Fn, O, L> const& c) {
  return make_composed_layout(c.fn_, c.offset_, select<I...>(c.layout_));
}
/// Modes [B, E) of the inner layout grouped.
template <int B, int E, class Fn, class O, class L>
MM_HD constexpr auto group(ComposedLayout<Fn, O, L> const& c) {
  return make_composed_layout(c.fn_, c.offset_, group<B, E>(c.layout_));
}
/// Mode I... of the composed layout.
template <int... I, class Fn, class O, class L>
MM_HD constexpr auto layout(ComposedLayout<Fn, O, L> const& c) {
  return make_composed_layout(c.fn_, c.offset_, layout<I...>(c.layout_));
}
/// Mode I of the composed layout (as `get<I>` on a tuple).
template <std::size_t I, class Fn, class O, class L>
MM_HD constexpr auto get(ComposedLayout<Fn, O, L> const& c) { return layout<int(I)>(c); }
/// Modes [B, E) of the inner layout.
template <int B, int E, class Fn, class O, class L>
MM_HD constexpr auto take(ComposedLayout<Fn, O, L> const& c) {
  return make_composed_layout(c.fn_, c.offset_, take<B, E>(c.layout_));
}
/// The inner layout flattened.
template <class Fn, class O, class L>
MM_HD constexpr auto flatten(ComposedLayout<Fn, O, L> const& c) {
  return make_composed_layout(c.fn_, c.offset_, flatten(c.layout_));
}
/// The inner layout coalesced: the same function (the inner layout's 1-D function does not
/// change), fewest modes.
template <class Fn, class O, class L>
MM_HD constexpr auto coalesce(ComposedLayout<Fn, O, L> const& c) {
  return make_composed_layout(c.fn_, c.offset_, coalesce(c.layout_));
}
/// The inner layout coalesced mode by mode (`profile` as for a Layout).
template <class Fn, class O, class L, class Profile>
MM_HD constexpr auto coalesce(ComposedLayout<Fn, O, L> const& c, Profile const& profile) {
  return make_composed_layout(c.fn_, c.offset_, coalesce(c.layout_, profile));
}
/// logical_product of the inner layout: the swizzled block repeated by `t`.
template <class Fn, class O, class L, class T>
MM_HD constexpr auto logical_product(ComposedLayout<Fn, O, L> const& c, T const& t) {
  return make_composed_layout(c.fn_, c.offset_, logical_product(c.layout_, t));
}
/// zipped_product of the inner layout.
template <class Fn, class O, class L, class T>
MM_HD constexpr auto zipped_product(ComposedLayout<Fn, O, L> const& c, T const& t) {
  return make_composed_layout(c.fn_, c.offset_, zipped_product(c.layout_, t));
}
/// tiled_product of the inner layout.
template <class Fn, class O, class L, class T>
MM_HD constexpr auto tiled_product(ComposedLayout<Fn, O, L> const& c, T const& t) {
  return make_composed_layout(c.fn_, c.offset_, tiled_product(c.layout_, t));
}
/// flat_product of the inner layout.
template <class Fn, class O, class L, class T>
MM_HD constexpr auto flat_product(ComposedLayout<Fn, O, L> const& c, T const& t) {
  return make_composed_layout(c.fn_, c.offset_, flat_product(c.layout_, t));
}
/// blocked_product of the inner layout with the layout `b`.
template <class Fn, class O, class L, class SB, class DB>
MM_HD constexpr auto blocked_product(ComposedLayout<Fn, O, L> const& c, Layout<SB, DB> const& b) {
  return make_composed_layout(c.fn_, c.offset_, blocked_product(c.layout_, b));
}
/// raked_product of the inner layout with the layout `b`.
template <class Fn, class O, class L, class SB, class DB>
MM_HD constexpr auto raked_product(ComposedLayout<Fn, O, L> const& c, Layout<SB, DB> const& b) {
  return make_composed_layout(c.fn_, c.offset_, raked_product(c.layout_, b));
}
/// A swizzled block (a "swizzle atom") repeated to cover `target_shape`: the swizzle is kept,
/// the inner layout is tile_to_shape'd. `tile_to_shape(Sw<3,3,3> o (8,64):(64,1), (128,64))`
/// = `Sw<3,3,3> o (128,64):(64,1)`. The swizzle, a function of the index, applies to the whole
/// tile; it repeats every 2^(B+M+S) indices, so every copy of the block is swizzled alike when
/// the block's cosize is a multiple of that period (as for the usual atoms, 512 here). Otherwise
/// the result is still a bijection, but the copies are permuted differently (not an error, as in CuTe).
template <class Fn, class O, class L, class TShape, class Order = LayoutLeft>
MM_HD constexpr auto tile_to_shape(ComposedLayout<Fn, O, L> const& c, TShape const& target_shape, Order order = {}) {
  return make_composed_layout(c.fn_, c.offset_, tile_to_shape(c.layout_, target_shape, order));
}

namespace detail {
// The offset seen in units N times larger; it must be a whole number of units.
template <int N, class O>
MM_HD constexpr auto upcast_offset(O const& o) {
  if constexpr (is_constant_v<O>) {
    static_assert(O::value % N == 0, "upcast<N>(ComposedLayout): the offset is not a multiple of N");
    return C<O::value / N>{};
  } else {
    layout_check(o % N == 0, "upcast<N>(ComposedLayout): the offset is not a multiple of N");
    return o / N;
  }
}
}  // namespace detail

/// The swizzled layout seen in units N times larger (float -> float4, for 128-bit accesses):
/// swizzle, offset and inner layout each upcast, as CuTe does. The swizzle's unit shrinks:
/// `upcast<4>(Sw<3,2,5> o (128,8):(1,128)) = Sw<3,0,5> o (32,8):(1,32)`. N larger than the
/// unit (2^M elements) is refused (a unit would be split), as is an offset that is not a
/// multiple of N (compile-time offsets at compile time; run-time ones by layout_check).
template <int N, int B, int M, int S, class O, class L>
MM_HD constexpr auto upcast(ComposedLayout<Swizzle<B, M, S>, O, L> const& c) {
  return make_composed_layout(upcast<N>(c.fn_), detail::upcast_offset<N>(c.offset_), upcast<N>(c.layout_));
}
/// The swizzled layout seen in units N times smaller (float4 -> float): the swizzle's unit
/// grows, `downcast<4>(Sw<3,0,5> o (32,8):(1,32)) = Sw<3,2,5> o (128,8):(1,128)`.
template <int N, int B, int M, int S, class O, class L>
MM_HD constexpr auto downcast(ComposedLayout<Swizzle<B, M, S>, O, L> const& c) {
  return make_composed_layout(downcast<N>(c.fn_), c.offset_ * Int<N>{}, downcast<N>(c.layout_));
}

/// Codomain size: the inner layout's, rounded up to whole swizzle blocks.
template <class Fn, class O, class L>
MM_HD constexpr auto cosize(ComposedLayout<Fn, O, L> const& c) {
  if constexpr (requires { Fn::block_size(); }) {
    constexpr int blk = Fn::block_size();
    auto n = cosize(c.layout_);
    if constexpr (is_constant_v<decltype(n)>) return Int<(decltype(n)::value + blk - 1) / blk * blk>{};
    else return (n + blk - 1) / blk * blk;
  } else {
    return cosize(c.layout_);
  }
}
// ---- Swizzling once per thread ----
//
// A thread's partition of a swizzled tile is ptr + Sw(t + L(v)): t is the thread's run-time offset,
// L(v) the compile-time offset of its value v, and every access computes Sw anew from a run-time sum.
// The swizzle is linear over XOR (Sw(x ^ y) = Sw(x) ^ Sw(y)), and where t and L(v) share no bit
// their sum is their XOR, so
//     Sw(t + L(v)) = Sw(t) ^ Sw(L(v)):
// Sw(t) once per thread, Sw(L(v)) a constant. Only the swizzle's target bits (zzz) of Sw(L(v)) can
// meet bits of Sw(t); the rest is added, which a load folds into its immediate offset:
//     Sw(t + L(v)) = (Sw(t) ^ (Sw(L(v)) & zzz)) + (Sw(L(v)) & ~zzz).
// For ldmatrix from a 128-byte-row tile, a value's k-block picks one of four XOR constants and its
// m repetition is an immediate offset.

/// The pointer of a hoisted swizzled partition (hoist_swizzle): the tile's start and `base_` = Sw(t),
/// the thread's run-time offset t swizzled once. The layout beside it, Sw ∘ L, gives a value's offset
/// Sw(v); element v is ptr_[(base_ ^ (Sw(v) & zzz)) + (Sw(v) & ~zzz)], which is Sw(t + v) when t and v
/// share no bit. It moves by nothing: a swizzled layout keeps a slice's offset inside (before Sw).
/// (The state is in the pointer, a tensor's plain member. Kept in the layout's function instead, inside
/// Tensor's [[no_unique_address]] layout, nvcc 13.0's device code lost it once the tensor was returned
/// from a function: every ldmatrix of chapter 08's kernel read one address, as its PTX shows.)
template <class T, int B, int M, int S>
struct HoistedSwizzlePtr {
  T* ptr_;    ///< The tile's start.
  int base_;  ///< Sw(t): the thread's run-time offset, swizzled once.
  /// The element at swizzled offset `sv` = Sw(v) of a value v.
  MM_HD T& operator[](int sv) const {
    constexpr int zzz = Swizzle<B, M, S>::zzz_mask;
    return ptr_[(base_ ^ (sv & zzz)) + (sv & ~zzz)];
  }
  /// The same lane's pointer `n` elements further, for n a multiple of the swizzle's period
  /// (2^(B+M+S) elements: another stage of a ring), where Sw(x + n) = Sw(x) + n. The caller checks it.
  MM_HD constexpr HoistedSwizzlePtr shifted(int n) const { return {ptr_ + n, base_}; }
  /// Moving it otherwise is refused: an offset would have to go through the swizzle (slices of a
  /// swizzled layout add nothing to the pointer, `_0`).
  template <class O>
  MM_HD constexpr HoistedSwizzlePtr operator+(O const&) const {
    static_assert(is_constant_value_v<0, O>, "HoistedSwizzlePtr: only a zero offset can be added");
    return *this;
  }
};

/// Every bit any offset of the static layout L sets: the OR of L(i) over its domain.
template <class L>
MM_HD constexpr int offset_bits() {
  static_assert(is_static_v<L>, "offset_bits: needs a compile-time layout");
  int bits = 0;
  for (int i = 0; i < size_v<L>; ++i) bits |= int(L{}(i));
  return bits;
}

/// A thread's partition of a swizzled tile, Sw ∘ (t + L) with a run-time offset t and a static L, as
/// the same tensor with the swizzle of t computed once (HoistedSwizzlePtr, layout Sw ∘ L): each access
/// then costs at most an XOR with a constant and an immediate offset. Needs t and every offset of L to share no bit (so
/// that t + L(v) = t ^ L(v)), which holds when a partition's thread modes and value modes step through
/// different bits of the tile, as TV layouts of power-of-two strides do; checked here (layout_check:
/// a trap on the device; the compiler keeps the check out of a loop) rather than assumed.
///   auto tXsA = hoist_swizzle(s2r.get_slice(tid).partition_S(sA));   // (CPY,CPY_M,CPY_K)
template <class E, int B, int M, int S, class O, class L>
MM_HD constexpr auto hoist_swizzle(Tensor<E, ComposedLayout<Swizzle<B, M, S>, O, L>> const& t) {
  constexpr int bits = offset_bits<L>();
  const int o = int(t.layout().offset_);
  layout_check((o & bits) == 0,
               "hoist_swizzle: the thread's offset and the values' offsets share bits (t + L(v) is not t ^ L(v))");
  using T = std::remove_reference_t<decltype(*t.data())>;
  return make_tensor(HoistedSwizzlePtr<T, B, M, S>{t.data(), int(Swizzle<B, M, S>{}(o))},
                     make_composed_layout(Swizzle<B, M, S>{}, _0{}, t.layout().layout_));
}

/// Tensor with a swizzle composed onto its layout.
template <class E, class L, int B, int M, int S>
MM_HD constexpr auto composition(Swizzle<B, M, S> const& sw, Tensor<E, L> const& t) {
  return with_layout(t, composition(sw, t.layout()));
}

}  // namespace mm
