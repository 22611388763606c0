// Layout = (Shape, Stride): a function from coordinates to indices.
//
// `make_layout(make_shape(4, 2))` is the column-major 4x2 layout `(4,2):(1,4)`: the
// element at coordinate (m, n) lives at index m*1 + n*4. Shapes and strides nest, and
// coordinates may be hierarchical, N-D or a single integer (colexicographic order).
#pragma once

#include "layout/int_tuple.hpp"

namespace mm {

/// Tag: compact column-major strides (left-most mode fastest), the default.
struct LayoutLeft {};
/// Tag: compact row-major strides (right-most mode fastest).
struct LayoutRight {};

/// A layout: maps a coordinate within `Shape` to the index `sum(coord_i * stride_i)`.
/// Empty (zero bytes, zero registers) when shape and stride are compile-time.
template <class Shape, class Stride = decltype(compact_col_major(Shape{}))>
struct Layout : tuple<Shape, Stride> {
  static_assert(congruent_v<Shape, Stride>, "Layout: shape and stride must have the same nesting");
  using shape_type = Shape;   ///< The shape's type.
  using stride_type = Stride; ///< The stride's type.

  constexpr Layout() = default;
  /// A layout from its shape and stride.
  MM_HD constexpr Layout(Shape const& s, Stride const& d) : tuple<Shape, Stride>(s, d) {}

  /// The shape (of mode I... if given).
  template <int... I>
  MM_HD constexpr auto shape() const { return get_at<I...>(get<0>(static_cast<tuple<Shape, Stride> const&>(*this))); }
  /// The stride (of mode I... if given).
  template <int... I>
  MM_HD constexpr auto stride() const { return get_at<I...>(get<1>(static_cast<tuple<Shape, Stride> const&>(*this))); }

  /// Index of a coordinate; a coordinate containing `_` returns the sliced sub-layout.
  template <class Crd>
  MM_HD constexpr auto operator()(Crd const& crd) const {
    if constexpr (has_underscore_v<Crd>) return slice(crd, *this);
    else return crd2idx(crd, shape(), stride());
  }
  /// Index of the N-D coordinate (c0, c1, ...).
  template <class C0, class C1, class... Cs>
  MM_HD constexpr auto operator()(C0 const& c0, C1 const& c1, Cs const&... cs) const {
    return (*this)(make_coord(c0, c1, cs...));
  }

  /// The coordinate that this layout maps to `idx` (inverse for compact layouts):
  /// mode by mode `(idx / stride) % shape`.
  template <class Idx>
  MM_HD constexpr auto get_hier_coord(Idx const& idx) const { return idx2crd(idx, shape(), stride()); }
  /// get_hier_coord, flattened.
  template <class Idx>
  MM_HD constexpr auto get_flat_coord(Idx const& idx) const { return flatten_to_tuple(get_hier_coord(idx)); }
};

/// True for `Layout<...>`.
template <class T>
struct is_layout : std::false_type {};
template <class S, class D>
struct is_layout<Layout<S, D>> : std::true_type {};
/// True for `Layout<...>`.
template <class T>
inline constexpr bool is_layout_v = is_layout<std::remove_cvref_t<T>>::value;

/// A layout from a shape and a stride.
template <class Shape, class Stride>
  requires(!is_layout_v<Shape> && !std::is_same_v<Stride, LayoutLeft> && !std::is_same_v<Stride, LayoutRight>)
MM_HD constexpr auto make_layout(Shape const& shape, Stride const& stride) {
  return Layout<Shape, Stride>(shape, stride);
}
/// The compact column-major layout of `shape`: `make_layout((4,2)) = (4,2):(_1,4)`.
template <class Shape>
  requires(!is_layout_v<Shape>)
MM_HD constexpr auto make_layout(Shape const& shape, LayoutLeft = {}) {
  return make_layout(shape, compact_col_major(shape));
}
/// The compact row-major layout of `shape`: `make_layout((4,2), LayoutRight{}) = (4,2):(2,_1)`.
template <class Shape>
  requires(!is_layout_v<Shape>)
MM_HD constexpr auto make_layout(Shape const& shape, LayoutRight) {
  return make_layout(shape, compact_row_major(shape));
}
/// The compact row-major layout of `shape` (right-most mode fastest).
template <class Shape>
MM_HD constexpr auto make_row_major(Shape const& shape) { return make_layout(shape, LayoutRight{}); }
/// The compact column-major layout of `shape` (left-most mode fastest).
template <class Shape>
MM_HD constexpr auto make_col_major(Shape const& shape) { return make_layout(shape, LayoutLeft{}); }
/// Concatenates layouts into the modes of one layout: `make_layout(4:1, 2:4) = (4,2):(1,4)`.
template <class... S, class... D>
MM_HD constexpr auto make_layout(Layout<S, D> const&... layouts) {
  return make_layout(make_shape(layouts.shape()...), make_stride(layouts.stride()...));
}

/// The stride of a layout (of mode I... if given).
template <int... I, class T>
MM_HD constexpr auto stride(T const& x) { return get_at<I...>(x.stride()); }

/// Mode I... of a layout as a layout: `layout<1>((4,(2,3)):(1,(4,8))) = (2,3):(4,8)`.
template <int... I, class S, class D>
MM_HD constexpr auto layout(Layout<S, D> const& l) {
  if constexpr (sizeof...(I) == 0) return l;
  else return make_layout(l.template shape<I...>(), l.template stride<I...>());
}
/// Mode I of a layout (as `get<I>` on a tuple).
template <std::size_t I, class S, class D>
MM_HD constexpr auto get(Layout<S, D> const& l) { return layout<int(I)>(l); }

/// Size of the codomain: one past the largest index (for non-negative strides).
template <int... I, class S, class D>
MM_HD constexpr auto cosize(Layout<S, D> const& l) {
  auto m = layout<I...>(l);
  auto last = transform_leaf(m.shape(), [](auto const& s) { return s - _1{}; });
  return crd2idx(last, m.shape(), m.stride()) + _1{};
}
/// Cosize of a static layout type, as a constant: the storage a shared-memory tile needs.
template <class L>
inline constexpr int cosize_v = decltype(cosize(L{}))::value;
/// Size of a static layout type, as a constant.
template <class L>
inline constexpr int size_v = decltype(size(L{}))::value;

// ---- Slicing --------------------------------------------------------------------------------

namespace detail {
template <class Crd, class T>
MM_HD constexpr auto lift_slice(Crd const& c, T const& t);
}

/// The part of IntTuple `t` selected by the `_` entries of `crd`, flattened into one tuple:
/// `slice((_,(2,_)), (4,(3,5))) = (4,5)`.
template <class Crd, class T>
MM_HD constexpr auto slice(Crd const& crd, T const& t) {
  if constexpr (is_tuple_v<Crd>) {
    static_assert(rank_v<Crd> == rank_v<T>, "slice: coordinate and shape ranks differ");
    return index_apply<rank_v<Crd>>([&](auto... i) { return tuple_cat(tuple<>{}, detail::lift_slice(get<i>(crd), get<i>(t))...); });
  } else if constexpr (std::is_same_v<Crd, Underscore>) {
    return t;
  } else {
    return tuple<>{};
  }
}

namespace detail {
template <class Crd, class T>
MM_HD constexpr auto lift_slice(Crd const& c, T const& t) {
  if constexpr (is_tuple_v<Crd>) return slice(c, t);
  else if constexpr (std::is_same_v<Crd, Underscore>) return make_tuple(t);
  else return tuple<>{};
}
// The coordinate with every `_` replaced by 0: where a slice starts.
template <class Crd>
MM_HD constexpr auto underscore_to_zero(Crd const& crd) {
  if constexpr (is_tuple_v<Crd>) return transform(crd, [](auto const& c) { return underscore_to_zero(c); });
  else if constexpr (std::is_same_v<Crd, Underscore>) return _0{};
  else return crd;
}
}  // namespace detail

/// The sub-layout of the modes selected by `_`: `slice((_,2), (4,3):(1,4)) = (4):(1)`.
template <class Crd, class S, class D>
MM_HD constexpr auto slice(Crd const& crd, Layout<S, D> const& l) {
  return make_layout(slice(crd, l.shape()), slice(crd, l.stride()));
}
/// The sub-layout selected by `crd` and the index where it starts (a tensor adds it to its pointer).
template <class Crd, class S, class D>
MM_HD constexpr auto slice_and_offset(Crd const& crd, Layout<S, D> const& l) {
  return make_tuple(slice(crd, l), l(detail::underscore_to_zero(crd)));
}

// ---- Mode manipulation ----------------------------------------------------------------------

/// Modes I... of a layout, in that order: `select<1,0>` transposes a 2-D layout.
template <int... I, class S, class D>
MM_HD constexpr auto select(Layout<S, D> const& l) {
  return make_layout(select<I...>(l.shape()), select<I...>(l.stride()));
}
/// Modes [B, E) of a layout.
template <int B, int E, class S, class D>
MM_HD constexpr auto take(Layout<S, D> const& l) {
  return make_layout(take<B, E>(wrap(l.shape())), take<B, E>(wrap(l.stride())));
}
/// The layout with its nesting removed: `((2,2),3):((1,4),2)` -> `(2,2,3):(1,4,2)`.
template <class S, class D>
MM_HD constexpr auto flatten(Layout<S, D> const& l) {
  return make_layout(flatten(l.shape()), flatten(l.stride()));
}
/// The layout with layout `x` appended as a new last mode.
template <class S, class D, class S2, class D2>
MM_HD constexpr auto append(Layout<S, D> const& l, Layout<S2, D2> const& x) {
  return make_layout(append(l.shape(), x.shape()), append(l.stride(), x.stride()));
}
/// The layout padded to rank N with `x` (default `1:0`, a mode that changes nothing).
template <int N, class S, class D, class X0 = Layout<_1, _0>>
MM_HD constexpr auto append(Layout<S, D> const& l, X0 const& x = {}) {
  return make_layout(append<N>(l.shape(), x.shape()), append<N>(l.stride(), x.stride()));
}
/// The layout with layout `x` prepended as a new first mode.
template <class S, class D, class S2, class D2>
MM_HD constexpr auto prepend(Layout<S, D> const& l, Layout<S2, D2> const& x) {
  return make_layout(prepend(l.shape(), x.shape()), prepend(l.stride(), x.stride()));
}
/// Modes [B, E) grouped into one mode: `group<1,3>((4,2,3):(1,4,8)) = (4,(2,3)):(1,(4,8))`.
template <int B, int E, class S, class D>
MM_HD constexpr auto group(Layout<S, D> const& l) {
  constexpr int R = rank_v<S>;
  static_assert(0 <= B && B <= E && E <= R, "group<B,E>: range out of bounds");
  auto gs = tuple_cat(take<0, B>(l.shape()), make_tuple(take<B, E>(l.shape())), take<E, R>(l.shape()));
  auto gd = tuple_cat(take<0, B>(l.stride()), make_tuple(take<B, E>(l.stride())), take<E, R>(l.stride()));
  return make_layout(gs, gd);
}
/// CuTe's name for group: modes [B, E) become one mode.
template <int B, int E, class S, class D>
MM_HD constexpr auto group_modes(Layout<S, D> const& l) { return group<B, E>(l); }

/// Two layouts are equal when shapes and strides are equal (compile-time when static).
template <class S1, class D1, class S2, class D2>
MM_HD constexpr auto operator==(Layout<S1, D1> const& a, Layout<S2, D2> const& b) {
  return tuple_equal(a.shape(), b.shape()) && tuple_equal(a.stride(), b.stride());
}

}  // namespace mm
