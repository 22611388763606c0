// The layout algebra: coalesce, composition, complement, divides, products, inverses.
//
// Same semantics as CuTe's layout algebra (see docs/layouts.md):
//   coalesce(L)        same function, fewest modes
//   composition(A, B)  R(c) = A(B(c)): B picks which of A's elements, in which order
//   complement(A, M)   the layout that "fills the holes" of A up to M
//   logical_divide     A split into (tile, rest) by a tiler
//   logical_product    A repeated in the arrangement of B
// Compile-time layouts stay compile-time through every operation.
#pragma once

#include "layout/layout.hpp"

namespace mm {

// ---- coalesce ------------------------------------------------------------------------------

namespace detail {
// True only when `x` is a compile-time true (a run-time condition cannot change types).
template <class T>
inline constexpr bool static_true_v = is_constant_value_v<true, T>;

template <int I, class FS, class FD, class RS, class RD>
MM_HD constexpr auto coalesce_impl(FS const& fs, FD const& fd, RS const& rs, RD const& rd) {
  if constexpr (I == rank_v<FS>) {
    if constexpr (rank_v<RS> == 0) return Layout<_1, _0>{};
    else if constexpr (rank_v<RS> == 1) return make_layout(get<0>(rs), get<0>(rd));
    else return make_layout(rs, rd);
  } else {
    auto s = get<I>(fs);
    auto d = get<I>(fd);
    if constexpr (is_constant_value_v<1, decltype(s)>) {
      return coalesce_impl<I + 1>(fs, fd, rs, rd);  // a size-1 mode changes nothing
    } else if constexpr (rank_v<RS> == 0) {
      return coalesce_impl<I + 1>(fs, fd, make_tuple(s), make_tuple(d));
    } else {
      constexpr int L = rank_v<RS> - 1;
      auto ps = get<L>(rs);
      auto pd = get<L>(rd);
      if constexpr (static_true_v<decltype(ps * pd == d)>) {
        // The new mode continues the previous one: merge (s0,s1):(d0,s0*d0) -> s0*s1:d0.
        return coalesce_impl<I + 1>(fs, fd, append(take<0, L>(rs), ps * s), rd);
      } else {
        return coalesce_impl<I + 1>(fs, fd, append(rs, s), append(rd, d));
      }
    }
  }
}
}  // namespace detail

/// The same function with the fewest modes: `coalesce((2,(1,6)):(1,(7,2))) = 12:1`.
/// Merges are decided at compile time, so only compile-time shapes/strides merge.
template <class S, class D>
MM_HD constexpr auto coalesce(Layout<S, D> const& l) {
  return detail::coalesce_impl<0>(flatten_to_tuple(l.shape()), flatten_to_tuple(l.stride()), tuple<>{}, tuple<>{});
}
/// Coalesce by mode: with a tuple profile each top-level mode is coalesced separately
/// (the rank is kept); with an integer profile, the whole layout.
template <class S, class D, class Profile>
MM_HD constexpr auto coalesce(Layout<S, D> const& l, Profile const& profile) {
  if constexpr (is_tuple_v<Profile>) {
    static_assert(rank_v<Profile> <= rank_v<S>, "coalesce: profile has more modes than the layout");
    return index_apply<rank_v<S>>([&](auto... i) {
      return make_layout([&](auto ii) {
        if constexpr (ii < rank_v<Profile>) return coalesce(layout<ii>(l), get<ii>(profile));
        else return layout<ii>(l);
      }(i)...);
    });
  } else {
    return coalesce(l);
  }
}

// ---- composition ---------------------------------------------------------------------------

namespace detail {
// Step 1 of A ∘ s:d for one mode of A (extent `si`, stride `di`) that the stride walk reaches
// with `rest` of the stride d still to skip. Returns (extent, stride, rest of d for the next mode).
// CuTe's stride divisibility condition: the rest of the stride swallows the mode (rest % si == 0)
// or is shorter than it (rest < si). Three cases:
//   rest % si == 0: every step jumps over the whole mode        -> (1, -, rest / si)
//   si % rest == 0: the mode holds si / rest steps              -> (si / rest, di * rest, 1)
//   otherwise (rest < si, rest does not divide si): the mode is "cut": only a walk of
//   s <= ceil(si / rest) steps is a layout, since the next step would carry into the next mode
//   with a remainder left in this one ((8,8):(8,1) ∘ 2:3 = 2:24, but ∘ 4:3 hits 0,24,48,9).
// CuTe checks the cut case only by s % ceil(si/rest) == 0, which lets (8,8):(8,1) ∘ 6:3 through
// as the wrong (3,2):(24,1) (index 3 is A(9) = 9, not 1): we require the walk to end in the mode.
// A compile error for compile-time values, a run-time check (layout_check) otherwise.
template <class SI, class DI, class Rest, class S>
MM_HD constexpr auto divide_mode(SI const& si, DI const& di, Rest const& rest, S const& s) {
  if constexpr (is_constant_v<SI> && is_constant_v<Rest>) {
    constexpr int m = SI::value, r = Rest::value;
    static_assert(r % m == 0 || r < m,
                  "inadmissible composition: stride divisibility condition violated (CuTe's rule: the right-hand "
                  "stride d, divided by the left-hand modes it skips, must be a multiple of the next mode's extent M "
                  "or smaller than M)");
    if constexpr (r % m == 0) {
      return make_tuple(_1{}, di * si, C<r / m>{});
    } else if constexpr (m % r == 0) {
      return make_tuple(C<m / r>{}, di * rest, _1{});
    } else {
      constexpr int steps = (m + r - 1) / r;  // the steps of stride r that fit in the mode
      if constexpr (is_constant_v<S>) {
        static_assert(S::value <= steps,
                      "inadmissible composition: the right-hand stride does not divide the left-hand mode it "
                      "lands in, and the walk leaves that mode (only s <= ceil(M/d) steps of stride d form a "
                      "layout)");
      } else {
        layout_check(s <= steps, "inadmissible composition: a stride that does not divide a mode walks out of it");
      }
      return make_tuple(C<steps>{}, di * rest, _1{});
    }
  } else if constexpr (is_constant_value_v<1, SI> || is_constant_value_v<1, Rest>) {
    // 1 divides everything: no check, and the dividing case's arithmetic.
    auto ns = shape_div_int(si, rest);
    return make_tuple(ns, di * shape_div_int(si, ns), shape_div_int(rest, si));
  } else {
    layout_check(rest % si == 0 || rest < si, "inadmissible composition: stride divisibility condition violated");
    bool cut = rest % si != 0 && si % rest != 0;
    layout_check(!cut || s <= (si + rest - 1) / rest,
                 "inadmissible composition: a stride that does not divide a mode walks out of it");
    // Dividing cases as in the static branch; a cut mode ends the walk, so its extent only
    // needs to be >= s (step 2 keeps min(extent, s) = s): ceil(si / rest).
    auto ns = cut ? (si + rest - 1) / rest : shape_div_int(si, rest);
    auto nd = di * (cut ? rest : shape_div_int(si, ns));
    return make_tuple(ns, nd, cut ? decltype(shape_div_int(rest, si))(1) : shape_div_int(rest, si));
  }
}

// A (coalesced, flat, rank >= 2) composed with the single mode s:d, d != 0.
template <class AS, class AD, class S, class D>
MM_HD constexpr auto compose_mode(AS const& as, AD const& ad, S const& s, D const& d) {
  constexpr int R = rank_v<AS>;
  // Step 1: skip d elements of A: every mode but the last is divided by what remains of d.
  auto step1 = fold(take<0, R - 1>(as), make_tuple(tuple<>{}, tuple<>{}, d, _0{}), [&](auto const& acc, auto const& si) {
    constexpr int i = value_v<decltype(get<3>(acc))>;
    auto m = divide_mode(si, get<i>(ad), get<2>(acc), s);
    return make_tuple(append(get<0>(acc), get<0>(m)), append(get<1>(acc), get<1>(m)), get<2>(m), Int<i + 1>{});
  });
  auto s1 = append(get<0>(step1), get<R - 1>(as));
  auto d1 = append(get<1>(step1), get<R - 1>(ad) * get<2>(step1));
  // Step 2: keep the first s elements: modes fill up in order, the last takes the remainder.
  auto step2 = fold(take<0, R - 1>(s1), make_tuple(tuple<>{}, s), [&](auto const& acc, auto const& si) {
    auto rest = get<1>(acc);
    auto ns = min(si, rest);
    auto nrest = [&] {
      if constexpr (is_constant_v<decltype(si)> && is_constant_v<decltype(rest)>) {
        static_assert(value_v<decltype(rest)> <= value_v<decltype(si)> || value_v<decltype(rest)> % value_v<decltype(si)> == 0,
                      "inadmissible composition: shape divisibility condition violated");
        return C<(value_v<decltype(rest)> <= value_v<decltype(si)> ? 1 : value_v<decltype(rest)> / value_v<decltype(si)>)>{};
      } else if constexpr (is_constant_value_v<1, decltype(si)>) {
        return rest;
      } else {
        layout_check(rest <= si || rest % si == 0, "inadmissible composition: shape divisibility condition violated");
        return dynamic_value(rest) <= dynamic_value(si) ? decltype(dynamic_value(rest) / dynamic_value(si))(1)
                                                        : dynamic_value(rest) / dynamic_value(si);
      }
    }();
    return make_tuple(append(get<0>(acc), ns), nrest);
  });
  auto s2 = append(get<0>(step2), get<1>(step2));
  // Drop the modes that ended up with (compile-time) extent 1.
  auto kept = index_apply<R>([&](auto... i) {
    return tuple_cat(tuple<>{}, [&](auto ii) {
      if constexpr (is_constant_value_v<1, decltype(get<ii>(s2))>) return tuple<>{};
      else return make_tuple(make_tuple(get<ii>(s2), get<ii>(d1)));
    }(i)...);
  });
  constexpr int K = rank_v<decltype(kept)>;
  if constexpr (K == 0) return Layout<_1, _0>{};
  else if constexpr (K == 1) return make_layout(get<0, 0>(kept), get<0, 1>(kept));
  else return index_apply<K>([&](auto... i) { return make_layout(make_shape(get<i, 0>(kept)...), make_stride(get<i, 1>(kept)...)); });
}
}  // namespace detail

/// Functional composition R = A ∘ B: R(c) = A(B(c)), with R's shape compatible with B's.
/// `composition((6,2):(8,2), (4,3):(3,1)) = ((2,2),3):((24,2),8)`.
/// B must be admissible for A, CuTe's rule walking B's stride d and shape s through A's
/// modes M0, M1, ... (A coalesced; the last mode is unbounded):
///  - stride divisibility: what is left of d at mode Mi is a multiple of Mi (it skips the
///    mode) or smaller than Mi (it walks in it): `(8,8):(8,1) ∘ 2:3 = 2:24`;
///  - shape divisibility: where the walk continues past a mode holding n steps, s is a
///    multiple of n: `(4,3):(3,1) ∘ 6:2 = (2,3):(6,1)`;
///  - and (stricter than CuTe, which computes a wrong layout there) a d that does not divide
///    Mi must end the walk inside Mi: `(8,8):(8,1) ∘ 4:3` (0,24,48,9) is refused.
/// A violation is a compile error for compile-time values, a run-time check otherwise.
template <class SA, class DA, class SB, class DB>
MM_HD constexpr auto composition(Layout<SA, DA> const& a, Layout<SB, DB> const& b) {
  if constexpr (is_tuple_v<SB>) {
    // B distributes over its modes: R = (A ∘ B0, A ∘ B1, ...).
    return index_apply<rank_v<SB>>([&](auto... i) { return make_layout(composition(a, layout<i>(b))...); });
  } else if constexpr (is_constant_value_v<0, DB>) {
    return make_layout(b.shape(), _0{});
  } else {
    auto ca = coalesce(a);
    if constexpr (is_tuple_v<decltype(ca.shape())>) {
      if constexpr (is_constant_v<DB>) {
        return detail::compose_mode(ca.shape(), ca.stride(), b.shape(), b.stride());
      } else {
        // A run-time stride may be 0 (a broadcast): compose with 1, then zero the strides.
        bool zero = b.stride() == 0;
        auto r = detail::compose_mode(ca.shape(), ca.stride(), b.shape(), zero ? decltype(b.stride())(1) : b.stride());
        return make_layout(r.shape(), transform_leaf(r.stride(), [&](auto const& d) { return d * int(!zero); }));
      }
    } else {
      return make_layout(b.shape(), ca.stride() * b.stride());
    }
  }
}

/// Composition with a tiler: a tuple applies by mode (`(A0 ∘ T0, A1 ∘ T1, ...)`, modes of A
/// beyond the tiler unchanged; an integer `n` in the tiler means `n:1`, `_` keeps the mode);
/// an integer `n` means `n:1`.
template <class SA, class DA, class T>
  requires(!is_layout_v<T>)
MM_HD constexpr auto composition(Layout<SA, DA> const& a, T const& tiler);

namespace detail {
// One tiler entry as a layout (or `_`).
template <class T>
MM_HD constexpr auto tiler_mode(T const& t) {
  if constexpr (is_layout_v<T> || std::is_same_v<T, Underscore>) return t;
  else return make_layout(t);
}
// Applies `f(mode_i_of_a, tiler_i)` for each tiler mode; modes of `a` past the tiler stay.
template <class SA, class DA, class T, class F>
MM_HD constexpr auto by_mode(Layout<SA, DA> const& a, T const& tiler, F&& f) {
  constexpr int RA = rank_v<SA>;
  constexpr int RT = rank_v<T>;
  static_assert(RT <= RA, "tiler has more modes than the layout");
  return index_apply<RA>([&](auto... i) {
    return make_layout([&](auto ii) {
      if constexpr (ii < RT) {
        auto t = tiler_mode(get<ii>(tiler));
        if constexpr (std::is_same_v<decltype(t), Underscore>) return layout<ii>(a);
        else return f(layout<ii>(a), t);
      } else {
        return layout<ii>(a);
      }
    }(i)...);
  });
}
}  // namespace detail

template <class SA, class DA, class T>
  requires(!is_layout_v<T>)
MM_HD constexpr auto composition(Layout<SA, DA> const& a, T const& tiler) {
  if constexpr (is_tuple_v<T>)
    return detail::by_mode(a, tiler, [](auto const& m, auto const& t) { return composition(m, t); });
  else
    return composition(a, make_layout(tiler));
}

/// `layout` reshaped: `composition(layout, make_layout(shape))`.
template <class S, class D, class Shape>
MM_HD constexpr auto with_shape(Layout<S, D> const& l, Shape const& shape) {
  return composition(l, make_layout(shape));
}

// ---- complement ----------------------------------------------------------------------------

namespace detail {
template <int N>
struct int_array {
  int v[N > 0 ? N : 1];
};
// The order that sorts compile-time strides ascending (stable).
template <class D>
constexpr auto sort_order() {
  constexpr int N = rank_v<D>;
  int_array<N> val{}, idx{};
  index_apply<N>([&](auto... i) {
    ((val.v[i] = int(std::remove_cvref_t<decltype(get<i>(D{}))>::value), idx.v[i] = i), ...);
    return 0;
  });
  for (int a = 1; a < N; ++a)
    for (int b = a; b > 0 && val.v[b - 1] > val.v[b]; --b) {
      int t = val.v[b]; val.v[b] = val.v[b - 1]; val.v[b - 1] = t;
      t = idx.v[b]; idx.v[b] = idx.v[b - 1]; idx.v[b - 1] = t;
    }
  return idx;
}
template <class D>
inline constexpr auto sort_order_v = sort_order<D>();

template <class T0, class T1>
MM_HD constexpr auto pair_cat(T0 const& a, T1 const& b) {
  return make_tuple(tuple_cat(get<0>(a), get<0>(b)), tuple_cat(get<1>(a), get<1>(b)));
}
template <class A, class B, class Cc>
MM_HD constexpr auto pair_cat(A const& a, B const& b, Cc const& c) { return pair_cat(pair_cat(a, b), c); }
// Flattened (shapes, strides) of a layout with trivial modes removed.
template <class S, class D>
MM_HD constexpr auto nontrivial_modes(Layout<S, D> const& l) {
  auto fs = flatten_to_tuple(l.shape());
  auto fd = flatten_to_tuple(l.stride());
  return index_apply<rank_v<decltype(fs)>>([&](auto... i) {
    auto one = [&](auto ii) {
      using Si = std::remove_cvref_t<decltype(get<ii>(fs))>;
      using Di = std::remove_cvref_t<decltype(get<ii>(fd))>;
      if constexpr (is_constant_value_v<1, Si> || is_constant_value_v<0, Di>) return make_tuple(tuple<>{}, tuple<>{});
      else return make_tuple(make_tuple(get<ii>(fs)), make_tuple(get<ii>(fd)));
    };
    return fold(make_tuple(one(i)...), make_tuple(tuple<>{}, tuple<>{}),
                [](auto const& acc, auto const& p) { return pair_cat(acc, p); });
  });
}
}  // namespace detail

namespace detail {
// The complement's extent below the next stride `d` of `a`, in steps of `cur` (what the smaller
// strides of `a` and the complement cover so far): d / cur, rounded down as CuTe does. The
// strides need not divide one another: complement((4,6):(1,6), 24) is 1:0, the holes {4,5}
// cannot be reached by a layout that repeats `a` and are left out. Only a quotient of 0 is an
// error (CuTe's "Non-injective Layout"): d < cur, the mode of stride d falls inside the extent
// of the smaller ones, so `a` is not injective ((2,2):(2,1)) or its modes interleave
// ((2,2):(2,3), image 0,2,3,5): no layout then fills the holes.
template <class D, class Cur>
MM_HD constexpr auto complement_gap(D const& d, Cur const& cur) {
  if constexpr (is_constant_value_v<1, Cur>) {
    return d;
  } else if constexpr (is_constant_v<D> && is_constant_v<Cur>) {
    static_assert(D::value / Cur::value != 0,
                  "complement: a stride is smaller than the extent covered by the smaller strides (the layout is "
                  "not injective, or its modes interleave)");
    return C<D::value / Cur::value>{};
  } else {
    layout_check(d / cur != 0, "complement: a stride is smaller than the extent covered by the smaller strides");
    return d / cur;
  }
}
}  // namespace detail

/// The complement of `a` with respect to `cotarget`: a layout B, ordered and disjoint from
/// `a`, such that (a, B) covers [0, cotarget) (rounded up). `complement(4:2, 24) = (2,3):(1,8)`.
/// Strides need not divide one another (CuTe's rule): `complement((4,2):(1,10), 80) = (2,4):(4,20)`.
/// The strides of `a` must be compile-time (they are sorted), or `a` must have one mode.
template <class S, class D, class CoTarget>
MM_HD constexpr auto complement(Layout<S, D> const& a, CoTarget const& cotarget) {
  auto modes = detail::nontrivial_modes(a);
  auto fs = get<0>(modes);
  auto fd = get<1>(modes);
  constexpr int R = rank_v<decltype(fs)>;
  if constexpr (R == 0) {
    return coalesce(make_layout(cotarget, _1{}));
  } else {
    static_assert(R == 1 || is_static_v<decltype(fd)>, "complement: needs compile-time strides to sort them");
    auto sorted = index_apply<R>([&](auto... i) {
      constexpr auto o = [] {
        if constexpr (R == 1) return detail::int_array<1>{{0}};
        else return detail::sort_order_v<decltype(fd)>;
      }();
      return make_tuple(make_tuple(get<o.v[i]>(fs)...), make_tuple(get<o.v[i]>(fd)...));
    });
    auto ss = get<0>(sorted);
    auto sd = get<1>(sorted);
    // Walk the modes by increasing stride; each gap between "what is covered so far" and
    // the next stride becomes a mode of the complement.
    auto acc = fold(index_apply<R>([](auto... i) { return make_tuple(i...); }), make_tuple(tuple<>{}, tuple<>{}, _1{}),
                    [&](auto const& st, auto i) {
                      auto cur = get<2>(st);
                      auto di = get<i>(sd);
                      return make_tuple(append(get<0>(st), detail::complement_gap(di, cur)), append(get<1>(st), cur),
                                        get<i>(ss) * di);
                    });
    auto cur = get<2>(acc);
    auto rs = append(get<0>(acc), ceil_div_int(cotarget, cur));
    auto rd = append(get<1>(acc), cur);
    return coalesce(make_layout(rs, rd));
  }
}
/// The complement of `a` with respect to its own cosize.
template <class S, class D>
MM_HD constexpr auto complement(Layout<S, D> const& a) { return complement(a, cosize(a)); }

// ---- divides -------------------------------------------------------------------------------

/// `a` split by `tiler` into (tile, rest) per mode: `logical_divide((4,2,3):(2,1,8), 4:2)`
/// = `((2,2),(2,3)):((4,1),(2,8))`. A tuple tiler divides mode by mode.
template <class S, class D, class T>
MM_HD constexpr auto logical_divide(Layout<S, D> const& a, T const& tiler) {
  if constexpr (is_layout_v<T>) {
    return composition(a, make_layout(tiler, complement(tiler, size(a))));
  } else if constexpr (is_tuple_v<T>) {
    return detail::by_mode(a, tiler, [](auto const& m, auto const& t) { return logical_divide(m, t); });
  } else {
    return logical_divide(a, make_layout(tiler));
  }
}

namespace detail {
// Mode I of a layout as a tuple of layouts: one per sub-mode if it is a tuple, itself if it is
// an integer. What CuTe gets by slicing with `_` per sub-mode (its `repeat<1>(_)` is `_`):
// the unpacking of tiled/flat divides and products, which must accept a rank-1 tile or rest.
template <int I, class L>
MM_HD constexpr auto sub_layouts(L const& z) {
  using SI = decltype(z.template shape<I>());
  if constexpr (is_tuple_v<SI>) return index_apply<rank_v<SI>>([&](auto... i) { return make_tuple(layout<I, i>(z)...); });
  else return make_tuple(layout<I>(z));
}
// The layout whose modes are the layouts of tuple `t`.
template <class T>
MM_HD constexpr auto layout_of_modes(T const& t) {
  return index_apply<rank_v<T>>([&](auto... i) { return make_layout(get<i>(t)...); });
}
// ((tile modes...), (rest modes..., untouched modes...)) from a by-mode logical divide.
template <int RT, class L>
MM_HD constexpr auto zip_divided(L const& r) {
  constexpr int RA = rank_v<typename L::shape_type>;
  auto tile = index_apply<RT>([&](auto... i) { return make_layout(layout<i, 0>(r)...); });
  auto rest = index_apply<RA>([&](auto... i) {
    return make_layout([&](auto ii) {
      if constexpr (ii < RT) return layout<ii, 1>(r);
      else return layout<ii>(r);
    }(i)...);
  });
  return make_tuple(tile, rest);
}
}  // namespace detail

/// `a` divided by `tiler`, with all tile modes gathered in mode 0 and all rest modes in
/// mode 1: `((TileM,TileN), (RestM,RestN))`. Slicing mode 1 picks one tile.
template <class S, class D, class T>
MM_HD constexpr auto zipped_divide(Layout<S, D> const& a, T const& tiler) {
  if constexpr (is_tuple_v<T>) {
    auto z = detail::zip_divided<rank_v<T>>(logical_divide(a, tiler));
    return make_layout(get<0>(z), get<1>(z));
  } else {
    return logical_divide(a, tiler);
  }
}
/// Like zipped_divide, but the rest modes are unpacked: `((TileM,TileN), RestM, RestN)`.
template <class S, class D, class T>
MM_HD constexpr auto tiled_divide(Layout<S, D> const& a, T const& tiler) {
  auto z = zipped_divide(a, tiler);
  return detail::layout_of_modes(tuple_cat(make_tuple(layout<0>(z)), detail::sub_layouts<1>(z)));
}
/// Like zipped_divide, with every mode unpacked: `(TileM, TileN, RestM, RestN)`.
template <class S, class D, class T>
MM_HD constexpr auto flat_divide(Layout<S, D> const& a, T const& tiler) {
  auto z = zipped_divide(a, tiler);
  return detail::layout_of_modes(tuple_cat(detail::sub_layouts<0>(z), detail::sub_layouts<1>(z)));
}

// ---- products ------------------------------------------------------------------------------

/// `a` repeated in the arrangement of `b`: `(a, complement(a, size(a)*cosize(b)) ∘ b)`.
/// `logical_product((2,2):(4,1), 6:1) = ((2,2),(2,3)):((4,1),(2,8))`. A tuple `b` applies by mode.
template <class S, class D, class T>
MM_HD constexpr auto logical_product(Layout<S, D> const& a, T const& b) {
  if constexpr (is_layout_v<T>) {
    return make_layout(a, composition(complement(a, size(a) * cosize(b)), b));
  } else if constexpr (is_tuple_v<T>) {
    return detail::by_mode(a, b, [](auto const& m, auto const& t) { return logical_product(m, t); });
  } else {
    return logical_product(a, make_layout(b));
  }
}
/// logical_product with the block modes in mode 0 and the repetition modes in mode 1.
template <class S, class D, class T>
MM_HD constexpr auto zipped_product(Layout<S, D> const& a, T const& b) {
  if constexpr (is_tuple_v<T>) {
    auto z = detail::zip_divided<rank_v<T>>(logical_product(a, b));
    return make_layout(get<0>(z), get<1>(z));
  } else {
    return logical_product(a, b);
  }
}
/// zipped_product with the repetition modes unpacked: `((BlockM,BlockN), RepM, RepN)`.
template <class S, class D, class T>
MM_HD constexpr auto tiled_product(Layout<S, D> const& a, T const& b) {
  auto z = zipped_product(a, b);
  return detail::layout_of_modes(tuple_cat(make_tuple(layout<0>(z)), detail::sub_layouts<1>(z)));
}
/// zipped_product with every mode unpacked: `(BlockM, BlockN, RepM, RepN)`.
template <class S, class D, class T>
MM_HD constexpr auto flat_product(Layout<S, D> const& a, T const& b) {
  auto z = zipped_product(a, b);
  return detail::layout_of_modes(tuple_cat(detail::sub_layouts<0>(z), detail::sub_layouts<1>(z)));
}

namespace detail {
template <bool Blocked, class SA, class DA, class SB, class DB>
MM_HD constexpr auto block_rake(Layout<SA, DA> const& a, Layout<SB, DB> const& b) {
  constexpr int R = rank_v<SA> > rank_v<SB> ? rank_v<SA> : rank_v<SB>;
  auto a2 = append<R>(a);
  auto b2 = append<R>(b);
  auto reps = composition(complement(a2, size(a2) * cosize(b2)), b2);  // R modes, like b2
  auto by_mode_pairs = index_apply<R>([&](auto... i) {
    if constexpr (Blocked) return make_layout(make_layout(layout<i>(a2), layout<i>(reps))...);
    else return make_layout(make_layout(layout<i>(reps), layout<i>(a2))...);
  });
  return by_mode_pairs;  // CuTe's mode structure: no coalescing inside a mode
}
}  // namespace detail

/// Blocks of `a` arranged by `b`, mode by mode: mode i is (a_i, b_i). The result's
/// mode i is a_i-sized blocks, repeated size(b_i) times.
/// `blocked_product((2,5):(5,1), (3,4):(1,3)) = ((2,3),(5,4)):((5,10),(1,30))`.
template <class SA, class DA, class SB, class DB>
MM_HD constexpr auto blocked_product(Layout<SA, DA> const& a, Layout<SB, DB> const& b) {
  return detail::block_rake<true>(a, b);
}
/// `a` interleaved ("raked") across the arrangement `b`: mode i is (b_i, a_i), so
/// neighbouring elements belong to different copies of `a`. Used to build thread-value maps.
template <class SA, class DA, class SB, class DB>
MM_HD constexpr auto raked_product(Layout<SA, DA> const& a, Layout<SB, DB> const& b) {
  return detail::block_rake<false>(a, b);
}

// ---- inverses ------------------------------------------------------------------------------

/// The right inverse R of `l`: l(R(i)) == i for i < size(R). R covers the contiguous
/// prefix [0, size(R)) of l's image. Needs compile-time strides.
template <class S, class D>
MM_HD constexpr auto right_inverse(Layout<S, D> const& l) {
  auto c = coalesce(l);
  auto fs = flatten_to_tuple(c.shape());
  auto fd = flatten_to_tuple(c.stride());
  auto cs = compact_col_major(fs);  // where each mode's coordinate lands in the 1-D domain
  constexpr int R = rank_v<decltype(fs)>;
  static_assert(is_static_v<decltype(fd)>, "right_inverse: needs compile-time strides");
  constexpr auto o = detail::sort_order_v<decltype(fd)>;
  // Walk modes by increasing stride while they tile [0, N) contiguously.
  auto walk = [&](auto self, auto k, auto cur, auto rs, auto rd) {
    if constexpr (k == R) {
      return make_tuple(rs, rd);
    } else {
      constexpr int m = o.v[value_v<decltype(k)>];
      if constexpr (detail::static_true_v<decltype(get<m>(fd) == cur)>)
        return self(self, Int<k + 1>{}, cur * get<m>(fs), append(rs, get<m>(fs)), append(rd, get<m>(cs)));
      else
        return make_tuple(rs, rd);
    }
  };
  auto r = walk(walk, _0{}, _1{}, tuple<>{}, tuple<>{});
  if constexpr (rank_v<decltype(get<0>(r))> == 0) return Layout<_1, _0>{};
  else return coalesce(make_layout(get<0>(r), get<1>(r)));
}
/// The left inverse L of `l`: L(l(i)) == i for every i < size(l) (l injective), built as
/// CuTe builds it: the indices below l's smallest stride form a stride-0 mode, so
/// `left_inverse(4:2) = (_2,_4):(_0,_1)` (L(5) = L(4) = 2); other indices that l never
/// produces map to unspecified values. Needs compile-time strides.
template <class S, class D>
MM_HD constexpr auto left_inverse(Layout<S, D> const& l) {
  auto c = coalesce(l);
  auto fs = flatten_to_tuple(c.shape());
  auto fd = flatten_to_tuple(c.stride());
  auto cs = compact_col_major(fs);  // where each mode's coordinate lands in the 1-D domain
  constexpr int R = rank_v<decltype(fs)>;
  static_assert(is_static_v<decltype(fd)>, "left_inverse: needs compile-time strides");
  constexpr auto o = detail::sort_order_v<decltype(fd)>;
  // By increasing stride d_m: a mode of extent d_m / (size so far) whose stride is the domain
  // position of the previous mode (0 before the first: the gap below the smallest stride).
  // The last mode then adds its own extent.
  auto walk = [&](auto self, auto k, auto rs, auto rd, auto last) {
    if constexpr (k == R) {
      return make_layout(append(rs, get<value_v<decltype(last)>>(fs)), rd);
    } else {
      constexpr int m = o.v[value_v<decltype(k)>];
      if constexpr (is_constant_value_v<0, decltype(get<m>(fd))>) {
        return self(self, Int<k + 1>{}, rs, rd, Int<m>{});
      } else {
        auto sz = product(rs);
        static_assert(decltype(get<m>(fd) % sz)::value == 0,
                      "left_inverse: a stride is not a multiple of the extent below it (not injective)");
        return self(self, Int<k + 1>{}, append(rs, get<m>(fd) / sz), append(rd, get<m>(cs)), Int<m>{});
      }
    }
  };
  return coalesce(walk(walk, _0{}, tuple<>{}, make_tuple(_0{}), _0{}));
}

// ---- tile_to_shape, upcast, downcast --------------------------------------------------------

/// Repeats `block` (blocked_product) until it covers `target_shape`, column-major by
/// default (LayoutRight: the repetitions go row-major); each mode is coalesced.
/// `tile_to_shape((2,2):(1,2), (4,6)) = ((2,2),(2,3)):((1,4),(2,8))`. As in CuTe, a
/// compile-time block must divide a compile-time target mode by mode (a partial block would
/// make the result larger than the target).
template <class S, class D, class TShape, class Order = LayoutLeft>
MM_HD constexpr auto tile_to_shape(Layout<S, D> const& block, TShape const& target_shape, Order order = {}) {
  constexpr int R = rank_v<TShape>;
  static_assert(rank_v<S> <= R, "tile_to_shape: block has more modes than the target shape");
  auto target = product_each(target_shape);
  auto blk = product_each(append<R>(block.shape(), _1{}));
  if constexpr (is_static_v<decltype(target)> && is_static_v<decltype(blk)>) {
    constexpr bool divides = index_apply<R>([](auto... i) {
      return ((value_v<decltype(get<i>(decltype(target){}))> % value_v<decltype(get<i>(decltype(blk){}))> == 0) && ...);
    });
    static_assert(divides, "tile_to_shape: the block's shape does not divide the target shape");
  }
  auto reps = transform(target, blk, [](auto const& t, auto const& b) {
    return ceil_div_int(t, b);
  });
  return coalesce(blocked_product(block, make_layout(reps, order)), target);
}

namespace detail {
// f(shape, stride) -> layout applied to every leaf mode, keeping the nesting.
template <class S, class D, class F>
MM_HD constexpr auto map_leaves(Layout<S, D> const& l, F const& f) {
  if constexpr (is_tuple_v<S>)
    return index_apply<rank_v<S>>([&](auto... i) { return make_layout(map_leaves(layout<i>(l), f)...); });
  else
    return f(l.shape(), l.stride());
}
}  // namespace detail

/// The layout seen in units N times larger (e.g. float -> float4): the stride-1 mode
/// shrinks by N, other strides are divided by N. `upcast<2>((4,3):(1,4)) = (2,3):(1,2)`.
/// As in CuTe, a compile-time stride d < N divides N and its mode shrinks by N / d (the
/// mode's d-spaced elements share units): `upcast<4>((8,3):(2,16)) = (4,3):(1,4)`.
/// Run-time strides are assumed to be multiples of N.
template <int N, class S, class D>
MM_HD constexpr auto upcast(Layout<S, D> const& l) {
  auto leaf = [](auto const& s, auto const& d) {
    if constexpr (is_constant_value_v<0, decltype(d)>) return make_layout(s, d);
    else if constexpr (is_constant_v<decltype(d)>)
      return make_layout(shape_div_int(s, shape_div_int(Int<N>{}, d)), shape_div_int(d, Int<N>{}));
    else return make_layout(s, shape_div_int(d, Int<N>{}));
  };
  return detail::map_leaves(l, leaf);
}
/// The layout seen in units N times smaller (e.g. float4 -> float): the stride-1 mode
/// grows by N, other strides are multiplied by N. `downcast<2>((2,3):(1,2)) = (4,3):(1,4)`.
/// As in CuTe, the layout needs a compile-time stride-1 mode: that is where the N smaller
/// elements of a unit go. A mode of extent 1 stays (it holds no element; upcast leaves one where
/// a stride-1 mode shrank away: `downcast<2>(upcast<2>((2,2):(1,2)))` is `(_1,_4):(_1,_1)`).
template <int N, class S, class D>
MM_HD constexpr auto downcast(Layout<S, D> const& l) {
  constexpr bool has_unit_stride = index_apply<rank_v<decltype(flatten_to_tuple(l.stride()))>>([](auto... i) {
    return (is_constant_value_v<1, decltype(get<i>(flatten_to_tuple(D{})))> || ...);
  });
  static_assert(has_unit_stride, "downcast: the layout has no stride-1 mode to hold the smaller elements");
  auto leaf = [](auto const& s, auto const& d) {
    if constexpr (is_constant_value_v<1, decltype(s)>) return make_layout(s, d);  // holds nothing (upcast leaves such modes)
    else if constexpr (is_constant_value_v<1, decltype(d)>) return make_layout(s * Int<N>{}, d);
    else return make_layout(s, d * Int<N>{});
  };
  return detail::map_leaves(l, leaf);
}

}  // namespace mm
