// Predication for tiles that overhang the matrix: coordinate (identity) tensors.
//
//   auto cA   = make_identity_tensor(make_shape(M, K));   // cA(m,k) == (m,k)
//   auto tAcA = local_partition(local_tile(cA, tile, coord), thr, tid);  // tiled like the data
//   if (elem_less(tAcA(i), make_shape(M, K))) ...          // element i is inside A
//
// The identity tensor's strides are basis vectors E<0>, E<1>, ...: an index is then a
// coordinate, so tiling and partitioning it needs no division.
#pragma once

#include "layout/tensor.hpp"

namespace mm {

/// `value` times the unit vector of mode N: the stride of an identity tensor.
template <int N, class V = _1>
struct ScaledBasis {
  V value_{}; ///< The scale.
  constexpr ScaledBasis() = default;
  /// The basis vector of mode N scaled by v.
  MM_HD constexpr ScaledBasis(V const& v) : value_(v) {}
  /// The scale.
  MM_HD constexpr V value() const { return value_; }
};
/// The unit vector of mode N: `E<0>{}`, `E<1>{}`.
template <int N>
using E = ScaledBasis<N, _1>;

/// True for ScaledBasis.
template <class T>
inline constexpr bool is_scaled_basis_v = false;
template <int N, class V>
inline constexpr bool is_scaled_basis_v<ScaledBasis<N, V>> = true;

/// A coordinate that supports `+`: what an identity tensor's element is.
template <class... T>
struct ArithTuple : tuple<T...> {
  constexpr ArithTuple() = default;
  /// From the elements.
  MM_HD constexpr ArithTuple(T const&... t)
    requires(sizeof...(T) > 0)
      : tuple<T...>(t...) {}
  /// From a tuple.
  MM_HD constexpr ArithTuple(tuple<T...> const& t) : tuple<T...>(t) {}
};
template <class... T>
struct is_tuple<ArithTuple<T...>> : std::true_type {};
template <class... T>
struct tuple_size<ArithTuple<T...>> : std::integral_constant<std::size_t, sizeof...(T)> {};

namespace detail {
template <class>
struct zero_of {
  using type = _0;
};
template <class... T>
MM_HD constexpr auto as_arith(tuple<T...> const& t) { return ArithTuple<T...>(t); }
// The basis vector as an ArithTuple of rank N+1 (zeros elsewhere).
template <int N, class V>
MM_HD constexpr auto basis_to_tuple(ScaledBasis<N, V> const& b) {
  return as_arith(index_apply<N + 1>([&](auto... i) {
    return make_tuple([&](auto ii) {
      if constexpr (ii == N) return b.value();
      else return _0{};
    }(i)...);
  }));
}
template <class A, class B>
MM_HD constexpr auto arith_add(A const& a, B const& b) {
  constexpr int R = rank_v<A> > rank_v<B> ? rank_v<A> : rank_v<B>;
  return as_arith(index_apply<R>([&](auto... i) {
    return make_tuple([&](auto ii) {
      if constexpr (ii < rank_v<A> && ii < rank_v<B>) return get<ii>(a) + get<ii>(b);
      else if constexpr (ii < rank_v<A>) return get<ii>(a);
      else return get<ii>(b);
    }(i)...);
  }));
}
}  // namespace detail

/// Integer times basis vector.
template <class T, int N, class V>
  requires(is_integral_v<T>)
MM_HD constexpr auto operator*(T const& a, ScaledBasis<N, V> const& b) {
  return ScaledBasis<N, decltype(a * b.value())>(a * b.value());
}
/// Basis vector times integer.
template <class T, int N, class V>
  requires(is_integral_v<T>)
MM_HD constexpr auto operator*(ScaledBasis<N, V> const& b, T const& a) {
  return ScaledBasis<N, decltype(b.value() * a)>(b.value() * a);
}
/// Sum of basis vectors: same mode adds the scales, different modes make a coordinate.
template <int N, class V, int M, class W>
MM_HD constexpr auto operator+(ScaledBasis<N, V> const& a, ScaledBasis<M, W> const& b) {
  if constexpr (N == M) return ScaledBasis<N, decltype(a.value() + b.value())>(a.value() + b.value());
  else return detail::arith_add(detail::basis_to_tuple(a), detail::basis_to_tuple(b));
}
/// Coordinate plus basis vector.
template <class... T, int N, class V>
MM_HD constexpr auto operator+(ArithTuple<T...> const& a, ScaledBasis<N, V> const& b) {
  return detail::arith_add(a, detail::basis_to_tuple(b));
}
/// Basis vector plus coordinate.
template <class... T, int N, class V>
MM_HD constexpr auto operator+(ScaledBasis<N, V> const& b, ArithTuple<T...> const& a) {
  return detail::arith_add(detail::basis_to_tuple(b), a);
}
/// Coordinate plus coordinate.
template <class... T, class... U>
MM_HD constexpr auto operator+(ArithTuple<T...> const& a, ArithTuple<U...> const& b) { return detail::arith_add(a, b); }
// ---- A coordinate plus an integer: only zero has a meaning ----
//
// A layout's offset is a sum over its modes of coordinate × stride. For an identity tensor the
// strides are basis vectors, so the sum is a coordinate, except for a mode of stride 0 (a
// broadcast, or a size-1 mode), whose term is the integer coordinate × 0 and joins the sum as
// a plain integer. Such a term is always zero, and adding zero changes no coordinate. A non-zero
// integer has no meaning here: which mode would it move along? (CuTe, whose ArithmeticTuple and
// ScaledBasis these mirror, defines the sum with the compile-time zero `_0` only; its integer
// algebra makes `x * _0` the compile-time `_0`. Ours keeps `int * _0` a run-time int, so a
// run-time zero arrives here as well.)
//
// So: a compile-time zero is accepted for free; a compile-time non-zero does not compile (no
// operator+ matches); a run-time integer is checked to be zero (mm::layout_check: abort on the
// host, trap on the device) instead of being dropped in silence. In the kernels the run-time
// integer is a product `x * 0`, which the compiler folds to the constant 0, so the check folds
// away with it (chapters 04-06 compile to the same SASS with and without it).

namespace detail {
/// True for an integer that may be added to a coordinate: any run-time integer (checked to be
/// zero when added) and the compile-time zero; false for a compile-time non-zero.
template <class I>
inline constexpr bool zero_offset_candidate_v = is_integral_v<I> && (!is_constant_v<I> || is_constant_value_v<0, I>);

/// Checks that a run-time offset added to a coordinate is zero (a compile-time one is `_0`).
template <class I>
MM_HD constexpr void check_zero_offset(I const& i) {
  if constexpr (!is_constant_v<I>) {
    // Only the failing path calls the (not constexpr) check: a zero stays a constant expression.
    if (i != 0) layout_check(false, "a non-zero integer added to a coordinate (ArithTuple or ScaledBasis): no mode to add it to");
  }
}
}  // namespace detail

/// Coordinate plus a zero offset: the coordinate. A run-time integer is checked to be zero.
template <class... T, class I>
  requires(detail::zero_offset_candidate_v<I>)
MM_HD constexpr auto operator+(ArithTuple<T...> const& a, I const& i) {
  detail::check_zero_offset(i);
  return a;
}
/// Basis vector plus a zero offset: the basis vector. A run-time integer is checked to be zero.
template <int N, class V, class I>
  requires(detail::zero_offset_candidate_v<I>)
MM_HD constexpr auto operator+(ScaledBasis<N, V> const& b, I const& i) {
  detail::check_zero_offset(i);
  return b;
}
/// Zero offset plus basis vector: the basis vector. A run-time integer is checked to be zero.
template <int N, class V, class I>
  requires(detail::zero_offset_candidate_v<I>)
MM_HD constexpr auto operator+(I const& i, ScaledBasis<N, V> const& b) {
  detail::check_zero_offset(i);
  return b;
}
/// Zero offset plus coordinate: the coordinate. A run-time integer is checked to be zero.
template <class... T, class I>
  requires(detail::zero_offset_candidate_v<I>)
MM_HD constexpr auto operator+(I const& i, ArithTuple<T...> const& a) {
  detail::check_zero_offset(i);
  return a;
}
/// Equality of basis vectors: different modes are never equal (a compile-time false).
template <int N, class V, int M, class W>
MM_HD constexpr auto operator==(ScaledBasis<N, V> const& a, ScaledBasis<M, W> const& b) {
  if constexpr (N == M) return a.value() == b.value();
  else return false_type{};
}

/// Iterator of an identity tensor: "dereferencing" offset o gives the coordinate base + o.
template <class Coord>
struct CoordIterator {
  Coord base_; ///< The coordinate of element 0.
  /// The coordinate at offset `o`.
  template <class O>
  MM_HD constexpr auto operator[](O const& o) const { return base_ + o; }
  /// The iterator moved by offset `o`.
  template <class O>
  MM_HD constexpr auto operator+(O const& o) const {
    auto nb = base_ + o;
    return CoordIterator<decltype(nb)>{nb};
  }
};

/// A tensor whose element at (m, n, ...) is the coordinate (m, n, ...) itself: tile and
/// partition it like the data, then compare its elements with the matrix shape.
template <class Shape>
MM_HD constexpr auto make_identity_tensor(Shape const& shape) {
  constexpr int R = rank_v<Shape>;
  auto strides = index_apply<R>([](auto... i) { return make_stride(E<i>{}...); });
  auto base = index_apply<R>([](auto... i) { return ArithTuple<typename detail::zero_of<decltype(i)>::type...>{}; });
  return make_tensor(CoordIterator<decltype(base)>{base}, make_layout(wrap(shape), strides));
}

/// CuTe's domain_offset: `t` seen from coordinate `coord` on, t'(x) = t(coord + x) (the same layout,
/// the iterator moved by the layout's offset of `coord`). For an identity tensor the coordinates it
/// holds move by `coord`: a tile whose origin is not a multiple of the tile's shape (a grouped GEMM's
/// rows of one expert, the row block of one consumer warpgroup) is `local_tile` of it at (0, ...).
template <class Coord, class E2, class L>
MM_HD constexpr auto domain_offset(Coord const& coord, Tensor<E2, L> const& t) {
  return make_tensor(t.data() + t.layout()(coord), t.layout());
}

/// A register tensor of bools shaped like `t`: pred(i) = elem_less(t(i), bound).
/// Build it once before the main loop, use it with copy_if.
template <class E2, class L, class Bound>
MM_HD constexpr auto make_predicate(Tensor<E2, L> const& coords, Bound const& bound) {
  auto p = make_tensor<bool>(make_layout(coords.shape()));
MM_UNROLL
  for (int i = 0; i < int(size(p)); ++i) p(i) = bool(elem_less(coords(i), bound));
  return p;
}

}  // namespace mm
