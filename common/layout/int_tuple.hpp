// Hierarchical tuples of integers: shapes, strides and coordinates.
//
// An IntTuple is an integer (`int` or `Int<N>`) or a `tuple` of IntTuples, so shapes
// nest: `((2,2),3)`. Every operation here recurses over that nesting and keeps
// compile-time integers compile-time.
#pragma once

#include <tuple>  // std::tuple_element, for the nth type of a pack only

#include "layout/integer.hpp"

namespace mm {

/// The underscore `_`: "every value of this mode" in a coordinate (slicing), as in CuTe.
struct Underscore {};
/// The slicing wildcard: `tensor(_, k)` keeps mode 0 and fixes mode 1.
MM_INLINE_CONSTANT Underscore _{};
/// In a `Step<...>` projection, `X` drops the mode (local_tile, local_partition).
using X = Underscore;

namespace detail {
// One element of a tuple. Empty elements (compile-time integers, static tuples) are not
// stored at all: get() makes a fresh one, so static shapes occupy no registers.
template <std::size_t I, class T, bool Empty = std::is_empty_v<T>>
struct tuple_leaf {
  T value_{};
  constexpr tuple_leaf() = default;
  MM_HD constexpr tuple_leaf(T const& v) : value_(v) {}
  MM_HD constexpr T& get() & { return value_; }
  MM_HD constexpr T const& get() const& { return value_; }
  MM_HD constexpr T get() && { return value_; }
};
template <std::size_t I, class T>
struct tuple_leaf<I, T, true> {
  constexpr tuple_leaf() = default;
  MM_HD constexpr tuple_leaf(T const&) {}
  MM_HD constexpr T get() const { return T{}; }
};

template <class Seq, class... T>
struct tuple_base;
template <std::size_t... I, class... T>
struct tuple_base<std::index_sequence<I...>, T...> : tuple_leaf<I, T>... {
  constexpr tuple_base() = default;
  MM_HD constexpr tuple_base(T const&... t)
    requires(sizeof...(T) > 0)
      : tuple_leaf<I, T>(t)... {}
};
}  // namespace detail

/// A fixed-size heterogeneous tuple usable in device code; empty when all elements are static.
template <class... T>
struct tuple : detail::tuple_base<std::index_sequence_for<T...>, T...> {
  using base_type = detail::tuple_base<std::index_sequence_for<T...>, T...>; ///< Storage.
  constexpr tuple() = default;
  /// Builds the tuple from its elements.
  MM_HD constexpr tuple(T const&... t)
    requires(sizeof...(T) > 0)
      : base_type(t...) {}
};
template <class... T>
tuple(T...) -> tuple<T...>;

/// A shape: an IntTuple of extents.
template <class... T>
using Shape = tuple<T...>;
/// A stride: an IntTuple of steps, congruent with a shape.
template <class... T>
using Stride = tuple<T...>;
/// A coordinate: an IntTuple (integers or `_`), weakly congruent with a shape.
template <class... T>
using Coord = tuple<T...>;
/// A projection for local_tile/local_partition: `_1` keeps a mode, `X` drops it.
template <class... T>
using Step = tuple<T...>;
/// A tiler: a tuple of shapes or layouts, one per mode.
template <class... T>
using Tile = tuple<T...>;

/// True for `tuple<...>` (and tuple-like types registered by specialising it).
template <class T>
struct is_tuple : std::false_type {};
template <class... T>
struct is_tuple<tuple<T...>> : std::true_type {};
/// True for `tuple<...>`.
template <class T>
inline constexpr bool is_tuple_v = is_tuple<std::remove_cvref_t<T>>::value;

/// Number of elements of a tuple type.
template <class T>
struct tuple_size;
template <class... T>
struct tuple_size<tuple<T...>> : std::integral_constant<std::size_t, sizeof...(T)> {};

/// Element `I` of a tuple (by reference when stored, by value when static).
template <std::size_t I, class... T>
MM_HD constexpr decltype(auto) get(tuple<T...>& t) {
  using L = detail::tuple_leaf<I, std::tuple_element_t<I, std::tuple<T...>>>;
  return static_cast<L&>(t).get();
}
/// Element `I` of a tuple.
template <std::size_t I, class... T>
MM_HD constexpr decltype(auto) get(tuple<T...> const& t) {
  using L = detail::tuple_leaf<I, std::tuple_element_t<I, std::tuple<T...>>>;
  return static_cast<L const&>(t).get();
}
/// Element `I` of a tuple (by value, from a temporary).
template <std::size_t I, class... T>
MM_HD constexpr auto get(tuple<T...>&& t) {
  using L = detail::tuple_leaf<I, std::tuple_element_t<I, std::tuple<T...>>>;
  return static_cast<L&&>(t).get();
}
/// Nested element: `get<0,1>(t)` is `get<1>(get<0>(t))`; `get<>(t)` is t itself.
template <std::size_t I0, std::size_t I1, std::size_t... Is, class T>
MM_HD constexpr decltype(auto) get(T&& t) {
  return get<I1, Is...>(get<I0>(static_cast<T&&>(t)));
}

/// Builds a tuple (elements copied).
template <class... T>
MM_HD constexpr tuple<T...> make_tuple(T const&... t) { return tuple<T...>(t...); }
/// Builds a shape: `make_shape(M, _8{})`.
template <class... T>
MM_HD constexpr Shape<T...> make_shape(T const&... t) { return {t...}; }
/// Builds a stride.
template <class... T>
MM_HD constexpr Stride<T...> make_stride(T const&... t) { return {t...}; }
/// Builds a coordinate (may contain `_`).
template <class... T>
MM_HD constexpr Coord<T...> make_coord(T const&... t) { return {t...}; }
/// Builds a projection step.
template <class... T>
MM_HD constexpr Step<T...> make_step(T const&... t) { return {t...}; }
/// Builds a tiler.
template <class... T>
MM_HD constexpr Tile<T...> make_tile(T const&... t) { return {t...}; }

// ---- Rank, depth ---------------------------------------------------------------------------

/// Number of top-level modes: 1 for an integer.
template <class T>
struct rank_of : std::integral_constant<int, 1> {};
template <class T>
  requires(is_tuple_v<T>)
struct rank_of<T> : std::integral_constant<int, int(tuple_size<T>::value)> {};
/// Number of top-level modes: 1 for an integer.
template <class T>
inline constexpr int rank_v = rank_of<std::remove_cvref_t<T>>::value;

namespace detail {
template <class F, std::size_t... I>
MM_HD constexpr auto index_apply_impl(F&& f, std::index_sequence<I...>) { return f(Int<int(I)>{}...); }
}  // namespace detail

/// Calls `f(Int<0>{}, ..., Int<N-1>{})` and returns its result: the loop over modes.
template <int N, class F>
MM_HD constexpr auto index_apply(F&& f) { return detail::index_apply_impl(f, std::make_index_sequence<N>{}); }

// ---- Structural transforms -----------------------------------------------------------------

/// `(f(t0), f(t1), ...)`; for an integer, `f(t)`.
template <class T, class F>
MM_HD constexpr auto transform(T const& t, F&& f) {
  if constexpr (is_tuple_v<T>)
    return index_apply<rank_v<T>>([&](auto... i) { return make_tuple(f(get<i>(t))...); });
  else
    return f(t);
}
/// `(f(a0,b0), f(a1,b1), ...)` over two tuples of equal rank.
template <class A, class B, class F>
MM_HD constexpr auto transform(A const& a, B const& b, F&& f) {
  if constexpr (is_tuple_v<A>) {
    static_assert(rank_v<A> == rank_v<B>, "transform: tuples of different rank");
    return index_apply<rank_v<A>>([&](auto... i) { return make_tuple(f(get<i>(a), get<i>(b))...); });
  } else {
    return f(a, b);
  }
}
/// `(f(a0,b0,c0), ...)` over three tuples of equal rank.
template <class A, class B, class Cc, class F>
MM_HD constexpr auto transform(A const& a, B const& b, Cc const& c, F&& f) {
  if constexpr (is_tuple_v<A>)
    return index_apply<rank_v<A>>([&](auto... i) { return make_tuple(f(get<i>(a), get<i>(b), get<i>(c))...); });
  else
    return f(a, b, c);
}

/// Calls `f(ti)` for each top-level element.
template <class T, class F>
MM_HD constexpr void for_each(T const& t, F&& f) {
  if constexpr (is_tuple_v<T>) index_apply<rank_v<T>>([&](auto... i) { (f(get<i>(t)), ...); return 0; });
  else f(t);
}
/// Left fold: `f(...f(f(init, t0), t1)..., tn)`.
template <class T, class V, class F>
MM_HD constexpr auto fold(T const& t, V const& init, F&& f) {
  if constexpr (is_tuple_v<T>) {
    if constexpr (rank_v<T> == 0) return init;
    else return index_apply<rank_v<T> - 1>([&](auto... i) {
        return fold(make_tuple(get<i + 1>(t)...), f(init, get<0>(t)), f);
      });
  } else {
    return f(init, t);
  }
}

/// Concatenation of tuples.
template <class... A, class... B>
MM_HD constexpr auto tuple_cat(tuple<A...> const& a, tuple<B...> const& b) {
  return index_apply<sizeof...(A)>([&](auto... i) {
    return index_apply<sizeof...(B)>([&](auto... j) { return make_tuple(get<i>(a)..., get<j>(b)...); });
  });
}
/// Concatenation of any number of tuples.
template <class A, class B, class C0, class... Rest>
MM_HD constexpr auto tuple_cat(A const& a, B const& b, C0 const& c, Rest const&... rest) {
  return tuple_cat(tuple_cat(a, b), c, rest...);
}
/// Concatenation of one tuple: itself.
template <class A>
MM_HD constexpr auto tuple_cat(A const& a) { return a; }
/// Concatenation of nothing: the empty tuple.
MM_HD constexpr tuple<> tuple_cat() { return {}; }

/// `t` as a tuple: a tuple stays, an integer becomes a 1-tuple.
template <class T>
MM_HD constexpr auto wrap(T const& t) {
  if constexpr (is_tuple_v<T>) return t;
  else return make_tuple(t);
}
/// A 1-tuple becomes its element (recursively); anything else stays.
template <class T>
MM_HD constexpr auto unwrap(T const& t) {
  if constexpr (is_tuple_v<T>) {
    if constexpr (rank_v<T> == 1) return unwrap(get<0>(t));
    else return t;
  } else {
    return t;
  }
}

/// `t` with `x` appended as a new last element.
template <class T, class V>
MM_HD constexpr auto append(T const& t, V const& x) { return tuple_cat(wrap(t), make_tuple(x)); }
/// `t` with `x` prepended as a new first element.
template <class T, class V>
MM_HD constexpr auto prepend(T const& t, V const& x) { return tuple_cat(make_tuple(x), wrap(t)); }
/// `t` padded with copies of `x` to rank N (no change if already rank N).
template <int N, class T, class V>
MM_HD constexpr auto append(T const& t, V const& x) {
  static_assert(rank_v<T> <= N, "append<N>: tuple already longer than N");
  if constexpr (rank_v<T> == N) return wrap(t);
  else return append<N>(append(t, x), x);
}
/// A tuple of N copies of `x`.
template <int N, class V>
MM_HD constexpr auto repeat(V const& x) {
  return index_apply<N>([&](auto... i) { return make_tuple(((void)i, x)...); });
}
/// `x` repeated in the shape of `t` (same nesting).
template <class T, class V>
MM_HD constexpr auto repeat_like(T const& t, V const& x) {
  if constexpr (is_tuple_v<T>) return transform(t, [&](auto const& e) { return repeat_like(e, x); });
  else return x;
}
/// Elements [B, E) of a tuple.
template <int B, int E, class T>
MM_HD constexpr auto take(T const& t) {
  static_assert(0 <= B && B <= E && E <= rank_v<T>, "take<B,E>: range out of bounds");
  return index_apply<E - B>([&](auto... i) { return make_tuple(get<B + i>(t)...); });
}
/// Elements I... of a tuple, in that order.
template <int... I, class T>
MM_HD constexpr auto select(T const& t) { return make_tuple(get<I>(t)...); }
/// All integers of a nested tuple in one flat tuple; an integer stays an integer.
template <class T>
MM_HD constexpr auto flatten(T const& t) {
  if constexpr (is_tuple_v<T>)
    return index_apply<rank_v<T>>([&](auto... i) { return tuple_cat(wrap(flatten(get<i>(t)))...); });
  else
    return t;
}
/// Like flatten but always returns a tuple.
template <class T>
MM_HD constexpr auto flatten_to_tuple(T const& t) { return wrap(flatten(t)); }

namespace detail {
template <class T>
MM_HD constexpr auto tuple_depth(T const& t) {
  if constexpr (is_tuple_v<T>)
    return fold(t, _1{}, [](auto d, auto const& e) { return max(d, tuple_depth(e) + _1{}); });
  else
    return _0{};
}
}  // namespace detail

/// Nested element `t[I0][I1]...`; with no index, `t` itself.
template <int... I, class T>
MM_HD constexpr decltype(auto) get_at(T const& t) {
  if constexpr (sizeof...(I) == 0) return t;
  else return get<std::size_t(I)...>(t);
}

/// Shape of a layout or tensor (or an IntTuple itself), optionally of mode I...:
/// `shape<1>(layout)` is the shape of mode 1.
template <int... I, class T>
MM_HD constexpr auto shape(T const& x) {
  if constexpr (requires { x.shape(); }) return get_at<I...>(x.shape());
  else return get_at<I...>(x);
}
/// Number of modes of a layout, tensor or IntTuple (of mode I... if given), compile-time.
template <int... I, class T>
MM_HD constexpr auto rank(T const& x) { return Int<rank_v<decltype(shape<I...>(x))>>{}; }
/// Nesting depth of the shape: 0 for an integer, 1 for a flat tuple, ...
template <int... I, class T>
MM_HD constexpr auto depth(T const& x) { return detail::tuple_depth(shape<I...>(x)); }

/// True when `T` holds only compile-time values (recursively).
template <class T>
inline constexpr bool is_static_v = std::is_empty_v<std::remove_cvref_t<T>>;

namespace detail {
template <class T>
struct has_underscore : std::is_same<T, Underscore> {};
template <class... T>
struct has_underscore<tuple<T...>> : std::bool_constant<(has_underscore<T>::value || ...)> {};
template <class A, class B>
struct congruent : std::bool_constant<!is_tuple_v<A> && !is_tuple_v<B>> {};
template <bool SameRank, class A, class B>
struct congruent_tuples : std::false_type {};
template <class... A, class... B>
struct congruent_tuples<true, tuple<A...>, tuple<B...>> : std::bool_constant<(congruent<A, B>::value && ...)> {};
template <class... A, class... B>
struct congruent<tuple<A...>, tuple<B...>> : congruent_tuples<sizeof...(A) == sizeof...(B), tuple<A...>, tuple<B...>> {};
}  // namespace detail

/// True when the tuple contains `_` anywhere.
template <class T>
inline constexpr bool has_underscore_v = detail::has_underscore<std::remove_cvref_t<T>>::value;

/// True when A and B have the same nesting (profile).
template <class A, class B>
inline constexpr bool congruent_v = detail::congruent<std::remove_cvref_t<A>, std::remove_cvref_t<B>>::value;

// ---- Reductions ----------------------------------------------------------------------------

/// Product of all integers (recursively); 1 for the empty tuple.
template <class T>
MM_HD constexpr auto product(T const& t) {
  if constexpr (is_tuple_v<T>) return fold(t, _1{}, [](auto const& acc, auto const& e) { return acc * product(e); });
  else return t;
}
/// Number of elements: the product of the shape (of mode I... if given).
template <int... I, class T>
MM_HD constexpr auto size(T const& x) { return product(shape<I...>(x)); }

/// `f` applied to every integer of a nested tuple, keeping the nesting.
template <class T, class F>
MM_HD constexpr auto transform_leaf(T const& t, F&& f) {
  if constexpr (is_tuple_v<T>) return transform(t, [&](auto const& e) { return transform_leaf(e, f); });
  else return f(t);
}

/// Product of each top-level mode: `((2,3),4)` -> `(6,4)`.
template <class T>
MM_HD constexpr auto product_each(T const& t) {
  return transform(wrap(t), [](auto const& e) { return product(e); });
}
/// Sum of all integers (recursively).
template <class T>
MM_HD constexpr auto sum(T const& t) {
  if constexpr (is_tuple_v<T>) return fold(t, _0{}, [](auto const& acc, auto const& e) { return acc + sum(e); });
  else return t;
}
/// Sum of `a_i * b_i` over congruent tuples.
template <class A, class B>
MM_HD constexpr auto inner_product(A const& a, B const& b) {
  if constexpr (is_tuple_v<A>) {
    static_assert(rank_v<A> == rank_v<B>, "inner_product: ranks differ");
    if constexpr (rank_v<A> == 0) return _0{};
    else return index_apply<rank_v<A>>([&](auto... i) { return (inner_product(get<i>(a), get<i>(b)) + ...); });
  } else {
    return a * b;
  }
}
/// Elementwise product of congruent tuples.
template <class A, class B>
MM_HD constexpr auto elem_scale(A const& a, B const& b) {
  if constexpr (is_tuple_v<A>) return transform(a, b, [](auto const& x, auto const& y) { return elem_scale(x, y); });
  else return a * b;
}
/// True when every coordinate is below its extent (`a_i < b_i` for all i): the bounds
/// check of predicated copies. An integer against a tuple is compared with the tuple's size.
template <class A, class B>
MM_HD constexpr auto elem_less(A const& a, B const& b) {
  if constexpr (is_tuple_v<A> && is_tuple_v<B>) {
    static_assert(rank_v<A> <= rank_v<B>, "elem_less: coordinate has more modes than the shape");
    if constexpr (rank_v<A> == 0) return true_type{};
    else return index_apply<rank_v<A>>([&](auto... i) { return (elem_less(get<i>(a), get<i>(b)) && ...); });
  } else if constexpr (is_tuple_v<B>) {
    return a < product(b);
  } else {
    return a < b;
  }
}

/// `ceil(a / b)` elementwise; an integer `b` divides a tuple `a` mode by mode, left to right.
template <class A, class B>
MM_HD constexpr auto ceil_div(A const& a, B const& b) {
  if constexpr (is_tuple_v<A> && is_tuple_v<B>) {
    static_assert(rank_v<A> >= rank_v<B>, "ceil_div: divisor has more modes");
    return index_apply<rank_v<A>>([&](auto... i) {
      return make_tuple([&](auto ii) {
        if constexpr (ii < rank_v<B>) return ceil_div(get<ii>(a), get<ii>(b));
        else return get<ii>(a);
      }(i)...);
    });
  } else if constexpr (is_tuple_v<A>) {
    // Consume b from the left: (8,4) ceil_div 16 -> (1,2).
    auto r = fold(a, make_tuple(tuple<>{}, b), [](auto const& acc, auto const& ai) {
             auto rest = get<1>(acc);
             return make_tuple(append(get<0>(acc), ceil_div(ai, rest)), ceil_div(rest, product(ai)));
           });
    return get<0>(r);
  } else if constexpr (is_tuple_v<B>) {
    return ceil_div(a, product(b));
  } else {
    return ceil_div_int(a, b);
  }
}

/// "Shape division" of IntTuples: elementwise for tuples, and an integer divisor is
/// consumed from the left mode by mode: `(4,6) / 8 = (1,3)`.
template <class A, class B>
MM_HD constexpr auto shape_div(A const& a, B const& b) {
  if constexpr (is_tuple_v<A> && is_tuple_v<B>) {
    return transform(a, b, [](auto const& x, auto const& y) { return shape_div(x, y); });
  } else if constexpr (is_tuple_v<A>) {
    auto r = fold(a, make_tuple(tuple<>{}, b), [](auto const& acc, auto const& ai) {
      auto rest = get<1>(acc);
      return make_tuple(append(get<0>(acc), shape_div(ai, rest)), shape_div(rest, product(ai)));
    });
    return get<0>(r);
  } else if constexpr (is_tuple_v<B>) {
    return shape_div(a, product(b));
  } else {
    return shape_div_int(a, b);
  }
}

// ---- Compact strides, coordinates and indices ----------------------------------------------

/// Strides of the compact column-major (left-most mode fastest) layout of `shape`,
/// starting at `current`: `(4,(2,3))` -> `(_1,(4,8))`.
template <class Shape, class Cur = _1>
MM_HD constexpr auto compact_col_major(Shape const& shape, Cur const& current = {}) {
  if constexpr (is_tuple_v<Shape>) {
    auto r = fold(shape, make_tuple(tuple<>{}, current), [](auto const& acc, auto const& s) {
      return make_tuple(append(get<0>(acc), compact_col_major(s, get<1>(acc))), get<1>(acc) * product(s));
    });
    return get<0>(r);
  } else {
    return current;
  }
}

namespace detail {
template <class T>
MM_HD constexpr auto reverse(T const& t) {
  if constexpr (is_tuple_v<T>)
    return index_apply<rank_v<T>>([&](auto... i) { return make_tuple(get<rank_v<T> - 1 - i>(t)...); });
  else
    return t;
}
template <class T>
MM_HD constexpr auto reverse_deep(T const& t) {
  if constexpr (is_tuple_v<T>)
    return index_apply<rank_v<T>>([&](auto... i) { return make_tuple(reverse_deep(get<rank_v<T> - 1 - i>(t))...); });
  else
    return t;
}
}  // namespace detail

/// Strides of the compact row-major (right-most mode fastest) layout of `shape`.
template <class Shape, class Cur = _1>
MM_HD constexpr auto compact_row_major(Shape const& shape, Cur const& current = {}) {
  return detail::reverse_deep(compact_col_major(detail::reverse_deep(shape), current));
}

/// Index of coordinate `crd` in a layout (shape, stride). The coordinate may be
/// hierarchical (congruent with the shape), N-D, or a single integer: an integer on a
/// tuple mode is first split colexicographically (left-most sub-mode fastest).
template <class Crd, class Shape, class Stride>
MM_HD constexpr auto crd2idx(Crd const& crd, Shape const& shape, Stride const& stride) {
  if constexpr (is_tuple_v<Crd>) {
    static_assert(is_tuple_v<Shape> && rank_v<Crd> == rank_v<Shape>, "crd2idx: coordinate and shape ranks differ");
    static_assert(rank_v<Crd> > 0, "crd2idx: empty coordinate");
    return index_apply<rank_v<Crd>>(
        [&](auto... i) { return (crd2idx(get<i>(crd), get<i>(shape), get<i>(stride)) + ...); });
  } else if constexpr (is_tuple_v<Shape>) {
    static_assert(rank_v<Shape> > 0, "crd2idx: empty shape");
    // Split the integer over the modes; the last mode takes the remainder unreduced.
    constexpr int R = rank_v<Shape>;
    if constexpr (R == 1) {
      return crd2idx(crd, get<0>(shape), get<0>(stride));
    } else {
      auto s0 = product(get<0>(shape));
      return crd2idx(crd % s0, get<0>(shape), get<0>(stride)) +
             crd2idx(crd / s0, take<1, R>(shape), take<1, R>(stride));
    }
  } else {
    return crd * stride;
  }
}
/// Index of `crd` in the compact column-major layout of `shape`.
template <class Crd, class Shape>
MM_HD constexpr auto crd2idx(Crd const& crd, Shape const& shape) {
  return crd2idx(crd, shape, compact_col_major(shape));
}

/// Natural (hierarchical) coordinate of index `idx` in `shape`, colexicographic: the
/// inverse of crd2idx(crd, shape). Out-of-range indices wrap into the last mode.
template <class Idx, class Shape>
MM_HD constexpr auto idx2crd(Idx const& idx, Shape const& shape) {
  if constexpr (is_tuple_v<Idx>) {
    return transform(idx, shape, [](auto const& i, auto const& s) { return idx2crd(i, s); });
  } else if constexpr (is_tuple_v<Shape>) {
    constexpr int R = rank_v<Shape>;
    if constexpr (R == 0) return tuple<>{};
    else if constexpr (R == 1) return make_tuple(idx2crd(idx, get<0>(shape)));
    else {
      auto s0 = product(get<0>(shape));
      return prepend(idx2crd(idx / s0, take<1, R>(shape)), idx2crd(idx % s0, get<0>(shape)));
    }
  } else {
    return idx;
  }
}

/// Coordinate of index `idx` in a layout (shape, stride): mode by mode `(idx / d) % s`.
/// For a compact layout this inverts it: the coordinate whose index is `idx`.
template <class Idx, class Shape, class Stride>
MM_HD constexpr auto idx2crd(Idx const& idx, Shape const& shape, Stride const& stride) {
  if constexpr (is_tuple_v<Idx>) {
    return transform(idx, shape, stride, [](auto const& i, auto const& s, auto const& d) { return idx2crd(i, s, d); });
  } else if constexpr (is_tuple_v<Shape>) {
    return transform(shape, stride, [&](auto const& s, auto const& d) { return idx2crd(idx, s, d); });
  } else {
    if constexpr (is_constant_value_v<1, Shape>) return _0{};
    else return (idx / stride) % shape;
  }
}

/// Elementwise equality of two IntTuples (compile-time when possible).
template <class A, class B>
MM_HD constexpr auto tuple_equal(A const& a, B const& b) {
  if constexpr (is_tuple_v<A> && is_tuple_v<B>) {
    if constexpr (rank_v<A> != rank_v<B>) return false_type{};
    else if constexpr (rank_v<A> == 0) return true_type{};
    else return index_apply<rank_v<A>>([&](auto... i) { return (tuple_equal(get<i>(a), get<i>(b)) && ...); });
  } else if constexpr (is_tuple_v<A> || is_tuple_v<B>) {
    return false_type{};
  } else {
    return a == b;
  }
}

/// Keeps the elements of `t` whose projection entry in `step` is not `X`: the "dice"
/// of CuTe's projections. `dice(Step<_1,X,_1>{}, (BM,BN,BK)) = (BM,BK)`.
template <class Step, class T>
MM_HD constexpr auto dice(Step const& step, T const& t) {
  if constexpr (is_tuple_v<Step>) {
    static_assert(rank_v<Step> == rank_v<T>, "dice: projection and tuple ranks differ");
    return index_apply<rank_v<Step>>([&](auto... i) {
      return tuple_cat(tuple<>{}, [&](auto ii) {
        using S = std::remove_cvref_t<decltype(get<ii>(step))>;
        if constexpr (std::is_same_v<S, Underscore>) return tuple<>{};
        else if constexpr (is_tuple_v<S>) return make_tuple(dice(get<ii>(step), get<ii>(t)));
        else return make_tuple(get<ii>(t));
      }(i)...);
    });
  } else if constexpr (std::is_same_v<Step, Underscore>) {
    return tuple<>{};
  } else {
    return t;
  }
}

}  // namespace mm

/// Structured bindings for mm::tuple: `auto [m, n] = shape;`.
template <class... T>
struct std::tuple_size<mm::tuple<T...>> : std::integral_constant<std::size_t, sizeof...(T)> {};
template <std::size_t I, class... T>
struct std::tuple_element<I, mm::tuple<T...>> : std::tuple_element<I, std::tuple<T...>> {};
