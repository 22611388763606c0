// Copy atoms and TiledCopy.
//
// A copy atom moves one "vector" of values with one instruction: a plain element copy,
// a 32/64/128-bit load/store, or an asynchronous global->shared `cp.async` (sm80+).
// A TiledCopy arranges threads (thr_layout) and the values each moves (val_layout) over a
// tile, and partitions any tensor of that tile shape per thread:
//
//   auto copyA = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, float>{},
//                                Layout<Shape<_32, _8>>{},   // threads
//                                Layout<Shape<_4, _1>>{});   // values per thread (4 floats = 128 bit)
//   auto thr   = copyA.get_slice(threadIdx.x);
//   auto tAgA  = thr.partition_S(gA);   // (CPY,CPY_M,CPY_K,k)
//   auto tAsA  = thr.partition_D(sA);   // (CPY,CPY_M,CPY_K)
//   copy(copyA, tAgA(_, _, _, k), tAsA);
#pragma once

#include <cstring>

#include "layout/swizzle.hpp"  // ComposedLayout: vectors into swizzled tiles are checked below
#include "layout/tensor.hpp"

namespace mm {

/// A 128-bit value: the unit of the widest vectorized copy (4 floats).
struct alignas(16) uint128_t {
  std::uint64_t lo; ///< Low 64 bits.
  std::uint64_t hi; ///< High 64 bits.
};

/// Copy by assignment of one S (S = float: element copy; uint32_t/uint64_t/uint128_t:
/// 32/64/128-bit vectorized load and store). Works in any memory, host or device.
template <class S, class D = S>
struct UniversalCopy {
  using SRegisters = S; ///< What one instruction reads.
  using DRegisters = D; ///< What one instruction writes.
  /// dst = src.
  MM_HD static void copy(S const& src, D& dst) { dst = src; }
};

namespace detail {
// cp.async only exists from sm_80: a use that reaches an older target's pass must not compile. A
// kernel that uses cp.async guards its body with arch::compiled_for(arch::sm80) (layout/arch.hpp),
// so that the older passes discard it and this assertion never sees them.
template <class S>
MM_HD void require_sm80() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 800)
  static_assert(sizeof(S) == 0,
                "cp.async (SM80_CP_ASYNC_* atoms, cp_async_fence, cp_async_wait) needs sm_80 or newer: "
                "guard the kernel body with `if constexpr (arch::compiled_for(arch::sm80))` "
                "(layout/arch.hpp) or use UniversalCopy");
#endif
}
}  // namespace detail

// Every cp.async asm below has a "memory" clobber: the copy writes shared memory behind the
// compiler's back, so without it nvcc may keep a shared-memory value in a register across
// cp_async_wait or move a shared-memory load above it (and read the tile before it lands).

namespace detail {
/// The cache operator of a cp.async: `.ca` caches the line in L1 and L2, `.cg` in L2 only.
enum class CpAsyncCache { always, global };

/// One cp.async of sizeof(S) bytes, global -> shared, with cache operator `Cache` and, with
/// `L2Prefetch`, the `.L2::128B` hint (the L2 fetches the whole 128-byte line around the source,
/// so neighbouring copies of later K steps find it there): the whole of the SM80_CP_ASYNC_* atoms
/// but their size rules. On the host (CPU tests) it is a plain copy.
template <CpAsyncCache Cache, bool L2Prefetch, class S, class D>
struct Sm80CpAsync {
  static_assert(sizeof(S) == sizeof(D), "cp.async: source and destination sizes differ");
  using SRegisters = S; ///< What one instruction reads (global memory).
  using DRegisters = D; ///< What one instruction writes (shared memory).
  /// Starts the copy gmem_src -> smem_dst.
  MM_HD static void copy(S const& gmem_src, D& smem_dst) {
    require_sm80<S>();
#if defined(__CUDA_ARCH__)
#if __CUDA_ARCH__ >= 800
    unsigned smem = static_cast<unsigned>(__cvta_generic_to_shared(&smem_dst));
    // The cache operator and the hint are part of the opcode, which must be a string literal:
    // one asm per combination.
    if constexpr (Cache == CpAsyncCache::always && !L2Prefetch)
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(smem), "l"(&gmem_src), "n"(int(sizeof(S)))
                   : "memory");
    else if constexpr (Cache == CpAsyncCache::always)
      asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], %2;\n" ::"r"(smem), "l"(&gmem_src),
                   "n"(int(sizeof(S)))
                   : "memory");
    else if constexpr (!L2Prefetch)
      asm volatile("cp.async.cg.shared.global [%0], [%1], %2;\n" ::"r"(smem), "l"(&gmem_src), "n"(int(sizeof(S)))
                   : "memory");
    else
      asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], %2;\n" ::"r"(smem), "l"(&gmem_src),
                   "n"(int(sizeof(S)))
                   : "memory");
#endif
#else
    smem_dst = reinterpret_cast<D const&>(gmem_src);
#endif
  }
  /// Starts the copy, or writes zeros to smem_dst when `pred` is false (source not read).
  MM_HD static void copy(S const& gmem_src, D& smem_dst, bool pred) {
    require_sm80<S>();
#if defined(__CUDA_ARCH__)
#if __CUDA_ARCH__ >= 800
    unsigned smem = static_cast<unsigned>(__cvta_generic_to_shared(&smem_dst));
    int src_bytes = pred ? int(sizeof(S)) : 0;  // cp.async's src-size: the bytes past it are zero-filled
    if constexpr (Cache == CpAsyncCache::always && !L2Prefetch)
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem), "l"(&gmem_src),
                   "n"(int(sizeof(S))), "r"(src_bytes)
                   : "memory");
    else if constexpr (Cache == CpAsyncCache::always)
      asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], %2, %3;\n" ::"r"(smem), "l"(&gmem_src),
                   "n"(int(sizeof(S))), "r"(src_bytes)
                   : "memory");
    else if constexpr (!L2Prefetch)
      asm volatile("cp.async.cg.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem), "l"(&gmem_src),
                   "n"(int(sizeof(S))), "r"(src_bytes)
                   : "memory");
    else
      asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], %2, %3;\n" ::"r"(smem), "l"(&gmem_src),
                   "n"(int(sizeof(S))), "r"(src_bytes)
                   : "memory");
#endif
#else
    if (pred) smem_dst = reinterpret_cast<D const&>(gmem_src);
    else smem_dst = D{};
#endif
  }
};
}  // namespace detail

/// Asynchronous global -> shared copy of 4, 8 or 16 bytes, cached in L1 and L2
/// (`cp.async.ca`). Complete it with cp_async_fence() + cp_async_wait<N>(). sm80+.
/// On the host (CPU tests) it is a plain copy.
template <class S, class D = S>
struct SM80_CP_ASYNC_CACHEALWAYS : detail::Sm80CpAsync<detail::CpAsyncCache::always, false, S, D> {
  static_assert(sizeof(S) == 4 || sizeof(S) == 8 || sizeof(S) == 16, "cp.async copies 4, 8 or 16 bytes");
};

/// SM80_CP_ASYNC_CACHEALWAYS with the `.L2::128B` prefetch hint: the L2 fetches the whole 128-byte
/// line of the source (`cp.async.ca.shared.global.L2::128B`). sm80+.
template <class S, class D = S>
struct SM80_CP_ASYNC_CACHEALWAYS_L2_128B : detail::Sm80CpAsync<detail::CpAsyncCache::always, true, S, D> {
  static_assert(sizeof(S) == 4 || sizeof(S) == 8 || sizeof(S) == 16, "cp.async copies 4, 8 or 16 bytes");
};

/// Asynchronous global -> shared copy of 16 bytes that bypasses L1 (`cp.async.cg`): the
/// usual choice for streaming GEMM tiles. sm80+. On the host it is a plain copy.
template <class S, class D = S>
struct SM80_CP_ASYNC_CACHEGLOBAL : detail::Sm80CpAsync<detail::CpAsyncCache::global, false, S, D> {
  static_assert(sizeof(S) == 16, "cp.async.cg copies exactly 16 bytes");
};

/// SM80_CP_ASYNC_CACHEGLOBAL with the `.L2::128B` prefetch hint (`cp.async.cg.shared.global.L2::128B`).
/// sm80+.
template <class S, class D = S>
struct SM80_CP_ASYNC_CACHEGLOBAL_L2_128B : detail::Sm80CpAsync<detail::CpAsyncCache::global, true, S, D> {
  static_assert(sizeof(S) == 16, "cp.async.cg copies exactly 16 bytes");
};

/// Closes the group of cp.async copies issued so far by this thread (`cp.async.commit_group`).
template <class = void>
MM_HD void cp_async_fence() {
  detail::require_sm80<int>();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
/// Waits until at most N groups of this thread's cp.async copies are still in flight
/// (`cp.async.wait_group N`; N = 0 waits for all). Follow with __syncthreads() to see
/// other threads' copies.
template <int N>
MM_HD void cp_async_wait() {
  detail::require_sm80<int>();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (N == 0) asm volatile("cp.async.wait_all;\n" ::: "memory");
  else asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/// A copy instruction `Op` applied to values of type T: it moves NumVal values of T at once
/// (`Copy_Atom<UniversalCopy<uint128_t>, float>` moves 4 floats).
template <class Op, class T>
struct Copy_Atom {
  using op_type = Op;    ///< The instruction.
  using value_type = T;  ///< The element type.
  /// Values moved by one instruction.
  static constexpr int NumVal = int(sizeof(typename Op::SRegisters) / sizeof(T));
  static_assert(NumVal >= 1 && sizeof(typename Op::SRegisters) % sizeof(T) == 0,
                "Copy_Atom: the instruction's width must be a multiple of the element size");

  /// Copies one vector: `src` and `dst` hold exactly NumVal elements, contiguous (see
  /// check_vector for what that means in a swizzled tile).
  template <class SE, class SL, class DE, class DL>
  MM_HD void call(Tensor<SE, SL> const& src, Tensor<DE, DL>&& dst) const {
    check_vector(src);
    check_vector(dst);
#if defined(__CUDA_ARCH__)
    Op::copy(*reinterpret_cast<typename Op::SRegisters const*>(&src(0)),
             *reinterpret_cast<typename Op::DRegisters*>(&dst(0)));
#else
    host_call(src, dst, true);
#endif
  }
  /// Copies one vector if `pred`; a zero-filling instruction (cp.async) writes zeros instead.
  template <class SE, class SL, class DE, class DL>
  MM_HD void call(Tensor<SE, SL> const& src, Tensor<DE, DL>&& dst, bool pred) const {
    check_vector(src);
    check_vector(dst);
#if defined(__CUDA_ARCH__)
    auto const& s = *reinterpret_cast<typename Op::SRegisters const*>(&src(0));
    auto& d = *reinterpret_cast<typename Op::DRegisters*>(&dst(0));
    if constexpr (requires { Op::copy(s, d, true); }) Op::copy(s, d, pred);
    else if (pred) Op::copy(s, d);
#else
    host_call(src, dst, pred);
#endif
  }

  /// The host side of call(): the vector goes through registers of the instruction's types by
  /// memcpy. Reading NumVal floats as one uint128_t through a cast pointer, as the device does,
  /// breaks C++'s aliasing rule, and an optimizing host compiler then reorders or drops the
  /// accesses (g++ -O3 did: the CPU emulation of a kernel read stale values).
  template <class SE, class SL, class DE, class DL>
  static void host_call(Tensor<SE, SL> const& src, Tensor<DE, DL>& dst, bool pred) {
    typename Op::SRegisters s;
    typename Op::DRegisters d;
    std::memcpy(&s, &src(0), sizeof s);
    std::memcpy(&d, &dst(0), sizeof d);
    if constexpr (requires { Op::copy(s, d, true); }) Op::copy(s, d, pred);
    else if (pred) Op::copy(s, d);
    std::memcpy(&dst(0), &d, sizeof d);
  }

  /// The rule for one vector (NumVal values, one instruction) to be contiguous in memory.
  ///  - Plain layout: it coalesces to NumVal:1 (checked at compile time when static).
  ///  - Swizzled layout Swizzle<B,M,S> ∘ offset ∘ L: the swizzle XORs bits at and above M, so
  ///    it moves whole units of 2^M elements and keeps the order inside a unit. The vector is
  ///    contiguous after the swizzle when (1) L's vector is contiguous (NumVal:1),
  ///    (2) NumVal <= 2^M (NumVal * sizeof(T) bytes fit in a unit) and (3) it starts at a
  ///    multiple of NumVal in L's index space (offset + L(0)), so it never straddles two units.
  ///    (1) and (2) are compile-time checks. (3) is one when the start is a compile-time value;
  ///    a run-time start (a stage sliced at run time, a thread's offset) is checked on the host
  ///    (layout_check) and is a precondition on the device, where copy() has already checked
  ///    at compile time that every vector of a partition starts at a multiple of NumVal from
  ///    the partition's start (the static strides): what remains is the alignment of the
  ///    partition's start, and a misaligned 16-byte access faults there anyway.
  template <class Tn>
  MM_HD static constexpr void check_vector(Tn const& t) {
    using L = std::remove_cvref_t<decltype(t.layout())>;
    if constexpr (is_composed_layout_v<L>) {
      check_contiguous<typename L::layout_type>();
      if constexpr (NumVal > 1) {
        using Fn = typename L::fn_type;
        if constexpr (requires { Fn::num_base; }) {
          static_assert(NumVal <= (1 << Fn::num_base),
                        "Copy_Atom: a vector must fit in the swizzle's unit of 2^M elements (Swizzle<B,M,S> moves "
                        "whole units: NumVal * sizeof(T) must be at most 2^M * sizeof(T))");
        } else {
          static_assert(NumVal == 1, "Copy_Atom: a vector into a layout composed with a function other than a "
                                     "Swizzle cannot be shown to be contiguous");
        }
        auto start = t.layout().offset_ + t.layout().layout_(_0{});
        if constexpr (is_constant_v<decltype(start)>) {
          static_assert(decltype(start)::value % NumVal == 0,
                        "Copy_Atom: a vector into a swizzled layout must start at a multiple of NumVal (else it "
                        "straddles two swizzle units)");
        } else {
#if !defined(__CUDA_ARCH__)
          layout_check(start % NumVal == 0,
                       "Copy_Atom: a vector into a swizzled layout must start at a multiple of NumVal (else it "
                       "straddles two swizzle units)");
#endif
        }
      }
    } else {
      check_contiguous<L>();
    }
  }

  /// Compile-time part of the rule for a whole (CPY, REST) partition, the vectors of one copy:
  /// in a swizzled layout with a compile-time inner layout, every vector starts at a multiple
  /// of NumVal from the first when every stride of the partition divided into
  /// ((NumVal), (CPY/NumVal, REST)) is, in its rest modes of extent > 1, a multiple of NumVal.
  /// copy() and copy_if() call it once per partition; it is a type computation only.
  template <class L>
  MM_HD static constexpr void check_vector_starts() {
    if constexpr (is_composed_layout_v<L> && NumVal > 1) {
      if constexpr (is_static_v<typename L::layout_type>) check_vector_starts_static<typename L::layout_type>();
    }
  }

 private:
  template <class Inner>
  MM_HD static constexpr void check_vector_starts_static() {
    using In = decltype(zipped_divide(Inner{}, make_shape(Int<NumVal>{})));  // ((NumVal), (CPY/NumVal, REST))
    using RS = decltype(flatten_to_tuple(In{}.template shape<1>()));
    using RD = decltype(flatten_to_tuple(In{}.template stride<1>()));
    constexpr bool aligned = index_apply<rank_v<RS>>([](auto... i) {
      return ([](auto ii) {
        using Si = std::remove_cvref_t<decltype(get<ii>(RS{}))>;
        using Di = std::remove_cvref_t<decltype(get<ii>(RD{}))>;
        if constexpr (is_constant_value_v<1, Si> || !is_constant_v<Di>) return true;
        else return Di::value % NumVal == 0;
      }(i) && ...);
    });
    static_assert(aligned, "Copy_Atom: in a swizzled layout the vectors of a copy must start at multiples of NumVal "
                           "(a rest stride is not a multiple of NumVal, so some vector straddles two swizzle units)");
  }

  // Plain layouts: a vector must be contiguous, checked at compile time when the layout is static.
  template <class L>
  MM_HD static constexpr void check_contiguous() {
    if constexpr (is_static_v<L>) {
      static_assert(size_v<L> == NumVal, "Copy_Atom: a vector must have NumVal elements");
      if constexpr (NumVal > 1)
        static_assert(std::is_same_v<decltype(coalesce(L{})), Layout<Int<NumVal>, _1>>,
                      "Copy_Atom: the values of a vectorized copy must be contiguous (stride 1) in both tensors");
    }
  }
};

namespace detail {
// (V, rest...) -> (V, R): all modes after the first grouped into one.
// Takes the tensor by forwarding reference so that an owning destination stays writable.
template <class T>
MM_HD constexpr auto group_rest(T&& t) {
  using L = std::remove_cvref_t<decltype(t.layout())>;
  constexpr int R = rank_v<typename L::shape_type>;  // Layout and ComposedLayout alike
  // transform_inner: a swizzled (composed) layout is regrouped inside, its swizzle kept.
  if constexpr (R == 1)
    return with_layout(t, transform_inner(t.layout(), [](auto const& l) { return make_layout(l, Layout<_1, _0>{}); }));
  else
    return with_layout(t, transform_inner(t.layout(), [](auto const& l) { return group<1, R>(l); }));
}
}  // namespace detail

/// Copies a partitioned tensor with a copy atom: `src`, `dst` are (CPY, ...) where CPY is a
/// multiple of the atom's vector; every vector is one instruction.
template <class Op, class T, class SE, class SL, class DE, class DL>
MM_HD void copy(Copy_Atom<Op, T> const& atom, Tensor<SE, SL> const& src, Tensor<DE, DL>&& dst) {
  constexpr int V = Copy_Atom<Op, T>::NumVal;
  auto s = detail::group_rest(src);  // (CPY, REST)
  auto d = detail::group_rest(dst);
  Copy_Atom<Op, T>::template check_vector_starts<std::remove_cvref_t<decltype(s.layout())>>();
  Copy_Atom<Op, T>::template check_vector_starts<std::remove_cvref_t<decltype(d.layout())>>();
MM_UNROLL
  for (int r = 0; r < int(size<1>(d)); ++r) {
    auto sv = zipped_divide(s(_, r), make_shape(Int<V>{}));  // ((V), (CPY/V))
    auto dv = zipped_divide(d(_, r), make_shape(Int<V>{}));
MM_UNROLL
    for (int j = 0; j < int(size<1>(dv)); ++j) atom.call(sv(_, j), dv(_, j));
  }
}
/// Copy into an lvalue tensor.
template <class Op, class T, class SE, class SL, class DE, class DL>
MM_HD void copy(Copy_Atom<Op, T> const& atom, Tensor<SE, SL> const& src, Tensor<DE, DL>& dst) {
  copy(atom, src, static_cast<Tensor<DE, DL>&&>(dst));
}
/// Predicated atom copy: `pred` (same shape as src, one bool per element) guards each vector
/// by its first element. Zero-filling atoms (cp.async) write zeros where pred is false.
template <class Op, class T, class P, class SE, class SL, class DE, class DL>
MM_HD void copy_if(Copy_Atom<Op, T> const& atom, P const& pred, Tensor<SE, SL> const& src, Tensor<DE, DL>&& dst) {
  constexpr int V = Copy_Atom<Op, T>::NumVal;
  auto s = detail::group_rest(src);
  auto d = detail::group_rest(dst);
  auto p = detail::group_rest(pred);
  Copy_Atom<Op, T>::template check_vector_starts<std::remove_cvref_t<decltype(s.layout())>>();
  Copy_Atom<Op, T>::template check_vector_starts<std::remove_cvref_t<decltype(d.layout())>>();
MM_UNROLL
  for (int r = 0; r < int(size<1>(d)); ++r) {
    auto sv = zipped_divide(s(_, r), make_shape(Int<V>{}));
    auto dv = zipped_divide(d(_, r), make_shape(Int<V>{}));
    auto pv = zipped_divide(p(_, r), make_shape(Int<V>{}));
MM_UNROLL
    for (int j = 0; j < int(size<1>(dv)); ++j) atom.call(sv(_, j), dv(_, j), bool(pv(0, j)));
  }
}
/// Predicated atom copy into an lvalue tensor.
template <class Op, class T, class P, class SE, class SL, class DE, class DL>
MM_HD void copy_if(Copy_Atom<Op, T> const& atom, P const& pred, Tensor<SE, SL> const& src, Tensor<DE, DL>& dst) {
  copy_if(atom, pred, src, static_cast<Tensor<DE, DL>&&>(dst));
}

template <class TiledCopy, class Tid>
struct ThrCopy;

/// A copy atom tiled over threads and values. LayoutTV maps (thread, value) to the
/// column-major index in the TilerMN tile; both are compile-time.
template <class Atom, class LayoutTV, class TilerMN>
struct TiledCopy : Atom {
  using atom_type = Atom;        ///< The copy instruction and element type.
  using layout_tv_type = LayoutTV; ///< (thr, val) -> tile index.
  using tiler_type = TilerMN;    ///< The tile shape (M, N).

  /// Number of threads.
  MM_HD static constexpr int size() { return size_v<decltype(layout<0>(LayoutTV{}))>; }
  /// (thread, value) -> index in the tile (column-major).
  MM_HD static constexpr auto layout_tv() { return LayoutTV{}; }
  /// The tile one pass of all threads covers.
  MM_HD static constexpr auto tiler() { return TilerMN{}; }

  /// `t` (a tile or a stack of tiles) as ((thr, (V, restV)), rest...): every thread's
  /// values of every tile. Partitions slice the thread.
  template <class E, class L>
  MM_HD static constexpr auto tidfrg(Tensor<E, L> const& t) {
    constexpr int V = Atom::NumVal;
    auto tv = make_layout(layout<0>(LayoutTV{}), logical_divide(layout<1>(LayoutTV{}), Int<V>{}));
    return with_layout(t, transform_inner(t.layout(), [&](auto const& l) {
                         auto z = zipped_divide(l, TilerMN{});  // ((TM,TN), (RM,RN,...))
                         return make_layout(composition(layout<0>(z), tv), layout<1>(z));
                       }));
  }
  /// This thread's view of the copy.
  template <class Tid>
  MM_HD constexpr auto get_slice(Tid const& tid) const {
    return ThrCopy<TiledCopy, Tid>{*this, tid};
  }
  /// This thread's view of the copy (CuTe's other name).
  template <class Tid>
  MM_HD constexpr auto get_thread_slice(Tid const& tid) const { return get_slice(tid); }
};

/// One thread's part of a TiledCopy.
template <class TiledCopy, class Tid>
struct ThrCopy {
  TiledCopy tiled_copy_; ///< The tiled copy.
  Tid tid_;              ///< This thread's index.

  /// The source elements this thread copies: (CPY, CPY_M, CPY_N, ...).
  template <class E, class L>
  MM_HD constexpr auto partition_S(Tensor<E, L> const& t) const { return partition(t); }
  /// The destination elements this thread writes: (CPY, CPY_M, CPY_N, ...).
  template <class E, class L>
  MM_HD constexpr auto partition_D(Tensor<E, L> const& t) const { return partition(t); }
  /// A register fragment of this thread seen as a copy source (CPY, CPY_M, CPY_N). Our
  /// partitions and make_fragment_like already produce that shape: returns a view.
  template <class E, class L>
  MM_HD constexpr auto retile_S(Tensor<E, L>& t) const { return with_layout(t, t.layout()); }
  /// A register fragment of this thread seen as a copy destination (see retile_S).
  template <class E, class L>
  MM_HD constexpr auto retile_D(Tensor<E, L>& t) const { return with_layout(t, t.layout()); }

 private:
  template <class E, class L>
  MM_HD constexpr auto partition(Tensor<E, L> const& t) const {
    auto f = TiledCopy::tidfrg(t);  // ((thr, vals), (rest...))
    constexpr int R1 = rank_v<decltype(f.layout().template shape<1>())>;
    return f(make_coord(make_coord(tid_, _), repeat<R1>(_)));
  }
};

/// Builds a TiledCopy: `thr_layout` arranges the threads over the tile ((32,8) column-major:
/// thread t at row t%32, column t/32), `val_layout` the values of one thread (4,1): 4
/// consecutive rows. Tile = thr * val per mode. The atom's vector must fit in val_layout.
template <class Op, class T, class TS, class TD, class VS, class VD>
MM_HD constexpr auto make_tiled_copy(Copy_Atom<Op, T> const&, Layout<TS, TD> const& thr_layout, Layout<VS, VD> const& val_layout = {}) {
  static_assert(is_static_v<Layout<TS, TD>> && is_static_v<Layout<VS, VD>>, "make_tiled_copy: layouts must be compile-time");
  static_assert(size_v<Layout<VS, VD>> % Copy_Atom<Op, T>::NumVal == 0,
                "make_tiled_copy: values per thread must be a multiple of the atom's vector");
  auto layout_mn = raked_product(thr_layout, val_layout);  // (m, n) -> thr + size(thr) * val
  auto layout_tv = composition(right_inverse(layout_mn), make_layout(make_shape(size(thr_layout), size(val_layout))));
  auto tiler = product_each(layout_mn.shape());
  static_assert(size_v<decltype(layout_tv)> == size_v<decltype(layout_mn)>, "make_tiled_copy: thr and val layouts must be compact");
  return TiledCopy<Copy_Atom<Op, T>, decltype(layout_tv), decltype(tiler)>{};
}

/// Number of threads of a TiledCopy.
template <class A, class LTV, class TMN>
MM_HD constexpr auto size(TiledCopy<A, LTV, TMN> const&) { return Int<TiledCopy<A, LTV, TMN>::size()>{}; }

/// Copies with a TiledCopy: `src`/`dst` are this thread's partitions (CPY, CPY_M, ...).
template <class A, class LTV, class TMN, class SE, class SL, class DE, class DL>
MM_HD void copy(TiledCopy<A, LTV, TMN> const& tc, Tensor<SE, SL> const& src, Tensor<DE, DL>&& dst) {
  copy(static_cast<A const&>(tc), src, static_cast<Tensor<DE, DL>&&>(dst));
}
/// Copies with a TiledCopy into an lvalue tensor.
template <class A, class LTV, class TMN, class SE, class SL, class DE, class DL>
MM_HD void copy(TiledCopy<A, LTV, TMN> const& tc, Tensor<SE, SL> const& src, Tensor<DE, DL>& dst) {
  copy(static_cast<A const&>(tc), src, static_cast<Tensor<DE, DL>&&>(dst));
}
/// Predicated copy with a TiledCopy.
template <class A, class LTV, class TMN, class P, class SE, class SL, class DE, class DL>
MM_HD void copy_if(TiledCopy<A, LTV, TMN> const& tc, P const& pred, Tensor<SE, SL> const& src, Tensor<DE, DL>&& dst) {
  copy_if(static_cast<A const&>(tc), pred, src, static_cast<Tensor<DE, DL>&&>(dst));
}
/// Predicated copy with a TiledCopy into an lvalue tensor.
template <class A, class LTV, class TMN, class P, class SE, class SL, class DE, class DL>
MM_HD void copy_if(TiledCopy<A, LTV, TMN> const& tc, P const& pred, Tensor<SE, SL> const& src, Tensor<DE, DL>& dst) {
  copy_if(static_cast<A const&>(tc), pred, src, static_cast<Tensor<DE, DL>&&>(dst));
}

}  // namespace mm
