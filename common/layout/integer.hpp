// Compile-time and run-time integers, mixed freely.
//
// A layout's shape and stride entries are either plain run-time integers (`int`) or
// compile-time integers `C<v>` (spelled `Int<N>` or `_N`). Arithmetic between two
// compile-time integers yields a compile-time integer, so a layout built only from
// `_N` values folds to constants and costs nothing at run time; mixing in an `int`
// yields an `int`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <utility>

/// Marks a function callable from host and device code (and always inlined on the device).
#if defined(__CUDACC__)
#define MM_HD __host__ __device__ __forceinline__
#else
#define MM_HD inline
#endif

/// Asks nvcc to unroll the next loop (the loops over static fragment sizes); nothing for g++.
#if defined(__CUDACC__)
#define MM_UNROLL _Pragma("unroll")
#else
#define MM_UNROLL
#endif

/// Declares a namespace-scope constant usable from host and device code (`mm::_`).
#if defined(__CUDA_ARCH__)
#define MM_INLINE_CONSTANT static const __device__
#else
#define MM_INLINE_CONSTANT static constexpr
#endif

namespace mm {

/// A compile-time integer (or bool) `v`; converts implicitly to its value.
template <auto v>
struct C {
  using type = C;                        ///< Itself, as in std::integral_constant.
  using value_type = decltype(v);        ///< The type of the value (int, bool, ...).
  static constexpr value_type value = v; ///< The value.
  /// The value, as a run-time integer.
  MM_HD constexpr operator value_type() const noexcept { return v; }
  /// The value, as a run-time integer.
  MM_HD constexpr value_type operator()() const noexcept { return v; }
};

/// A compile-time `int`: `Int<8>{}` prints as `_8`.
template <int N>
using Int = C<N>;
/// A compile-time bool.
template <bool B>
using bool_constant = C<B>;
using true_type = C<true>;   ///< Compile-time true.
using false_type = C<false>; ///< Compile-time false.

using _m1 = Int<-1>;   ///< Compile-time -1.
using _0 = Int<0>;     ///< Compile-time 0.
using _1 = Int<1>;     ///< Compile-time 1.
using _2 = Int<2>;     ///< Compile-time 2.
using _3 = Int<3>;     ///< Compile-time 3.
using _4 = Int<4>;     ///< Compile-time 4.
using _5 = Int<5>;     ///< Compile-time 5.
using _6 = Int<6>;     ///< Compile-time 6.
using _7 = Int<7>;     ///< Compile-time 7.
using _8 = Int<8>;     ///< Compile-time 8.
using _9 = Int<9>;     ///< Compile-time 9.
using _10 = Int<10>;   ///< Compile-time 10.
using _11 = Int<11>;   ///< Compile-time 11.
using _12 = Int<12>;   ///< Compile-time 12.
using _13 = Int<13>;   ///< Compile-time 13.
using _14 = Int<14>;   ///< Compile-time 14.
using _15 = Int<15>;   ///< Compile-time 15.
using _16 = Int<16>;   ///< Compile-time 16.
using _20 = Int<20>;   ///< Compile-time 20.
using _24 = Int<24>;   ///< Compile-time 24.
using _32 = Int<32>;   ///< Compile-time 32.
using _33 = Int<33>;   ///< Compile-time 33.
using _48 = Int<48>;   ///< Compile-time 48.
using _64 = Int<64>;   ///< Compile-time 64.
using _96 = Int<96>;   ///< Compile-time 96.
using _128 = Int<128>; ///< Compile-time 128.
using _129 = Int<129>; ///< Compile-time 129.
using _192 = Int<192>; ///< Compile-time 192.
using _256 = Int<256>; ///< Compile-time 256.
using _512 = Int<512>; ///< Compile-time 512.
using _1024 = Int<1024>; ///< Compile-time 1024.

/// True for compile-time integers `C<v>`.
template <class T>
struct is_constant : std::false_type {};
template <auto v>
struct is_constant<C<v>> : std::true_type {};
/// True for compile-time integers `C<v>`.
template <class T>
inline constexpr bool is_constant_v = is_constant<std::remove_cvref_t<T>>::value;

/// True for compile-time integers whose value is `n`.
template <auto n, class T>
struct is_constant_value : std::false_type {};
template <auto n, auto v>
struct is_constant_value<n, C<v>> : std::bool_constant<v == n> {};
/// True for compile-time integers whose value is `n`.
template <auto n, class T>
inline constexpr bool is_constant_value_v = is_constant_value<n, std::remove_cvref_t<T>>::value;

/// The value of a compile-time integer type (references and cv ignored).
template <class T>
inline constexpr auto value_v = std::remove_cvref_t<T>::value;

/// True for integers: built-in integral types and `C<v>`.
template <class T>
inline constexpr bool is_integral_v = std::is_integral_v<std::remove_cvref_t<T>> || is_constant_v<T>;

// ---- Arithmetic on two compile-time integers stays compile-time. --------------------------
#define MM_BINARY_OP(OP)                                        \
  template <auto a, auto b>                                     \
  MM_HD constexpr C<(a OP b)> operator OP(C<a>, C<b>) { return {}; }
MM_BINARY_OP(+)
MM_BINARY_OP(-)
MM_BINARY_OP(*)
MM_BINARY_OP(/)
MM_BINARY_OP(%)
MM_BINARY_OP(&)
MM_BINARY_OP(|)
MM_BINARY_OP(^)
MM_BINARY_OP(<<)
MM_BINARY_OP(>>)
MM_BINARY_OP(==)
MM_BINARY_OP(!=)
MM_BINARY_OP(<)
MM_BINARY_OP(<=)
MM_BINARY_OP(>)
MM_BINARY_OP(>=)
MM_BINARY_OP(&&)
MM_BINARY_OP(||)
#undef MM_BINARY_OP

/// Negation of a compile-time integer.
template <auto a>
MM_HD constexpr C<-a> operator-(C<a>) { return {}; }
/// Logical not of a compile-time integer.
template <auto a>
MM_HD constexpr C<!a> operator!(C<a>) { return {}; }

/// The run-time value of an integer (a `C<v>` becomes its value_type).
template <class T>
MM_HD constexpr auto dynamic_value(T const& t) {
  if constexpr (is_constant_v<T>) return T::value;
  else return t;
}

/// Smaller of two integers (compile-time if both are).
template <class A, class B>
MM_HD constexpr auto min(A const& a, B const& b) {
  if constexpr (is_constant_v<A> && is_constant_v<B>) return C<(A::value < B::value ? A::value : B::value)>{};
  else return dynamic_value(a) < dynamic_value(b) ? dynamic_value(a) : dynamic_value(b);
}
/// Larger of two integers (compile-time if both are).
template <class A, class B>
MM_HD constexpr auto max(A const& a, B const& b) {
  if constexpr (is_constant_v<A> && is_constant_v<B>) return C<(A::value < B::value ? B::value : A::value)>{};
  else return dynamic_value(a) < dynamic_value(b) ? dynamic_value(b) : dynamic_value(a);
}
/// Absolute value (compile-time if the argument is).
template <class A>
MM_HD constexpr auto abs(A const& a) {
  if constexpr (is_constant_v<A>) return C<(A::value < 0 ? -A::value : A::value)>{};
  else return a < 0 ? -a : a;
}

namespace detail {
constexpr long long gcd_value(long long a, long long b) {
  a = a < 0 ? -a : a;
  b = b < 0 ? -b : b;
  while (b != 0) { long long t = a % b; a = b; b = t; }
  return a;
}
}  // namespace detail

/// Greatest common divisor (compile-time if both are).
template <class A, class B>
MM_HD constexpr auto gcd(A const& a, B const& b) {
  if constexpr (is_constant_v<A> && is_constant_v<B>) return Int<int(detail::gcd_value(A::value, B::value))>{};
  else return int(detail::gcd_value(dynamic_value(a), dynamic_value(b)));
}
/// Least common multiple (compile-time if both are).
template <class A, class B>
MM_HD constexpr auto lcm(A const& a, B const& b) {
  if constexpr (is_constant_v<A> && is_constant_v<B>) {
    if constexpr (A::value == 0 || B::value == 0) return _0{};
    else return Int<int(A::value / detail::gcd_value(A::value, B::value) * B::value)>{};
  } else {
    return a == 0 || b == 0 ? 0 : int(dynamic_value(a) / detail::gcd_value(dynamic_value(a), dynamic_value(b)) * dynamic_value(b));
  }
}

/// Reports a broken precondition on run-time values: prints `msg` and stops (abort on the
/// host, trap on the device). Independent of NDEBUG, so a release build still refuses to
/// produce a silently wrong layout.
MM_HD void layout_check(bool ok, char const* msg) {
  if (!ok) {
#if defined(__CUDA_ARCH__)
    printf("mm layout error: %s\n", msg);
    __trap();
#else
    std::fprintf(stderr, "mm layout error: %s\n", msg);
    std::abort();
#endif
  }
}

/// Integer division rounding up (compile-time if both are).
template <class A, class B>
MM_HD constexpr auto ceil_div_int(A const& a, B const& b) {
  if constexpr (is_constant_v<A> && is_constant_v<B>) return C<(A::value + B::value - 1) / B::value>{};
  else return (a + b - 1) / b;
}

/// "Shape division" a / b as the layout algebra uses it: a / b when b divides a, 1 when a
/// divides b (the divisor swallows the whole mode). Neither dividing the other is an
/// inadmissible layout operation: a compile error for compile-time values.
template <class A, class B>
MM_HD constexpr auto shape_div_int(A const& a, B const& b) {
  if constexpr (is_constant_v<A> && is_constant_v<B>) {
    static_assert(A::value % B::value == 0 || B::value % A::value == 0,
                  "shape_div: neither value divides the other (inadmissible layout operation)");
    return C<(A::value / B::value != 0 ? A::value / B::value : 1)>{};
  } else if constexpr (is_constant_value_v<1, B>) {
    return a;
  } else {
    return a / b != 0 ? a / b : decltype(a / b)(1);
  }
}

}  // namespace mm
