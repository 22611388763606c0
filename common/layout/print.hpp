// Printing in CuTe's notation (host only).
//
//   (4,2):(1,4)          a run-time 4x2 column-major layout
//   (_4,_2):(_1,_4)      the same with compile-time integers
//   ((2,2),3):((1,4),2)  nested modes
//   8:1                  a single mode
#pragma once

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <ostream>
#include <sstream>
#include <string>

#include "layout/predicate.hpp"
#include "layout/swizzle.hpp"

namespace mm {

/// Prints a compile-time integer as `_N` (CuTe's notation).
template <auto v>
std::ostream& operator<<(std::ostream& os, C<v>) {
  if constexpr (std::is_same_v<decltype(v), bool>) return os << "_" << (v ? "true" : "false");
  else return os << "_" << v;
}
/// Prints the slicing wildcard as `_`.
inline std::ostream& operator<<(std::ostream& os, Underscore) { return os << "_"; }
/// Prints a tuple as `(a,b,...)`.
template <class... T>
std::ostream& operator<<(std::ostream& os, tuple<T...> const& t) {
  os << "(";
  index_apply<sizeof...(T)>([&](auto... i) {
    ((os << (i == 0 ? "" : ",") << get<i>(t)), ...);
    return 0;
  });
  return os << ")";
}
/// Prints a layout as `shape:stride`.
template <class S, class D>
std::ostream& operator<<(std::ostream& os, Layout<S, D> const& l) {
  return os << l.shape() << ":" << l.stride();
}

/// Prints a basis vector as CuTe does: `_1@0` is the unit vector of mode 0.
template <int N, class V>
std::ostream& operator<<(std::ostream& os, ScaledBasis<N, V> const& b) {
  return os << b.value() << "@" << N;
}
/// Prints a tensor as `ptr o layout` (views) or `rmem o layout` (owning fragments).
template <class E, class L>
std::ostream& operator<<(std::ostream& os, Tensor<E, L> const& t) {
  if constexpr (!requires { t.engine_.iter_; })
    return os << "rmem o " << t.layout();
  else if constexpr (std::is_pointer_v<decltype(t.data())>)
    return os << "ptr(" << static_cast<void const*>(t.data()) << ") o " << t.layout();
  else
    return os << "coord o " << t.layout();
}

/// Prints a swizzle as `Sw<B,M,S>`.
template <int B, int M, int S>
std::ostream& operator<<(std::ostream& os, Swizzle<B, M, S>) {
  return os << "Sw<" << B << "," << M << "," << S << ">";
}
/// Prints a composed layout as `fn o offset o layout`, e.g. `Sw<3,4,3> o _0 o (_8,_64):(_64,_1)`.
template <class Fn, class O, class L>
std::ostream& operator<<(std::ostream& os, ComposedLayout<Fn, O, L> const& c) {
  return os << c.fn_ << " o " << c.offset_ << " o " << c.layout_;
}

/// Anything printable, as a string: `to_string(make_layout(make_shape(4,2))) == "(4,2):(_1,4)"`.
template <class T>
std::string to_string(T const& x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

/// Prints `x` (a layout, tuple, integer...) to stdout, as CuTe's `print`.
template <class T>
void print(T const& x) {
  std::cout << x;
}

/// Prints a rank-2 layout (or rank-1, as one column) as a table of indices:
/// row m, column n holds layout(m, n).
template <class L>
void print_layout(L const& layout, std::ostream& os) {
  auto l2 = [&] {
    if constexpr (rank_v<decltype(layout.shape())> == 1 || !is_tuple_v<decltype(layout.shape())>)
      return make_layout(layout, Layout<_1, _0>{});
    else
      return layout;
  }();
  static_assert(rank_v<decltype(l2.shape())> == 2, "print_layout: needs a layout of rank 1 or 2");
  int M = int(size<0>(l2)), N = int(size<1>(l2));
  int w = 1;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) w = std::max<int>(w, int(std::to_string(int(l2(m, n))).size()));
  os << layout << "\n";
  std::string sep = "    +";
  for (int n = 0; n < N; ++n) sep += std::string(w + 2, '-') + "+";
  os << "    ";
  for (int n = 0; n < N; ++n) os << " " << std::setw(w + 2) << n;
  os << "\n" << sep << "\n";
  for (int m = 0; m < M; ++m) {
    os << std::setw(3) << m << " |";
    for (int n = 0; n < N; ++n) os << " " << std::setw(w) << int(l2(m, n)) << " |";
    os << "\n" << sep << "\n";
  }
}
/// print_layout to stdout.
template <class L>
void print_layout(L const& layout) { print_layout(layout, std::cout); }

}  // namespace mm
