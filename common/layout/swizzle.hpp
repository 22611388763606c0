// Swizzles and swizzled (composed) layouts, against shared-memory bank conflicts.
//
// Swizzle<B,M,S> XORs B bits of an offset, taken S bits above, into bits [M, M+B):
//   offset ^ ((offset & yyy_mask) >> S)
// `composition(Swizzle<3,2,3>{}, layout)` is the layout followed by the swizzle: same shape,
// the indices permuted within each 2^(B+M+S) block so that a column walk hits different banks.
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

/// A layout followed by a function: index(c) = fn(offset + layout(c)). The offset keeps a
/// sliced swizzled layout exact (the swizzle is not linear, so it cannot move into a pointer).
template <class Fn, class Offset, class L>
struct ComposedLayout {
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
/// Tensor with a swizzle composed onto its layout.
template <class E, class L, int B, int M, int S>
MM_HD constexpr auto composition(Swizzle<B, M, S> const& sw, Tensor<E, L> const& t) {
  return with_layout(t, composition(sw, t.layout()));
}

}  // namespace mm
