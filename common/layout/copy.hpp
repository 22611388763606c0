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
//
// A warp-wide atom (ldmatrix, ldmatrix.hpp) reads and writes differently: each lane points at a
// row of 8 b16 (its source) and receives values of other lanes' rows (its registers). Its
// Copy_Traits give both sides as TV layouts; the TiledCopy is made from the MMA it feeds, so that
// the registers a thread receives are its MMA fragment, and retile_D regroups that fragment into
// instructions:
//
//   auto s2r   = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, bf16>{}, tiled_mma);
//   auto thr   = s2r.get_slice(threadIdx.x);
//   copy(s2r, thr.partition_S(sA), thr.retile_D(tCrA));  // (CPY,CPY_M,CPY_K): one ldmatrix per CPY
#pragma once

#include <cstdio>
#include <cstdlib>
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
/// The 32-bit shared-window address of a pointer into shared memory, as PTX instructions take it
/// (ldmatrix, mbarrier, TMA, wgmma descriptors). On the host (CPU tests): the pointer's low 32 bits.
MM_HD std::uint32_t smem_address(void const* p) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
#else
  return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(p));
#endif
}

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

// ---- Copy traits: which thread reads and writes which element ----

/// Which threads take part in a copy instruction and which element of the instruction's tile each
/// (thread, value) reads and writes, as TV layouts (CuTe's Copy_Traits). Specialised for the
/// warp-wide instructions (ldmatrix.hpp) with:
///   - `ValBits`: the unit of the layouts below, in bits (`_16` for ldmatrix's b16 elements);
///   - `ThrID`: the threads (`Layout<_32>`: a warp);
///   - `SrcLayout`: (thread, value) -> the element of the tile that this value of the thread reads;
///   - `DstLayout`: (thread, value) -> the element that this value of the thread receives;
///   - `RefLayout`: the side a TiledCopy's TV layout describes (for a load into registers, the
///     destination: make_tiled_copy_A(atom, mma) then hands each thread the MMA's fragment).
/// An instruction without a specialisation (UniversalCopy, cp.async) is one thread moving one vector,
/// and Copy_Atom gives it Src = Dst = Ref = (1 thread, NumVal values) in units of its element type.
template <class Op>
struct Copy_Traits {};

namespace detail {
// A TV layout given in units of `Bits` seen in units of T: strides scaled by upcast/downcast, so a
// layout of ldmatrix's b16 elements becomes one of 32-bit elements (two b16 each) for T = float.
template <int Bits, class T, class L>
MM_HD constexpr auto tv_in_units_of(L const& l) {
  constexpr int TB = int(sizeof(T)) * 8;
  if constexpr (TB == Bits) {
    return l;
  } else if constexpr (TB > Bits) {
    static_assert(TB % Bits == 0, "Copy_Atom: the element size must be a multiple of the instruction's unit");
    return upcast<TB / Bits>(l);
  } else {
    static_assert(Bits % TB == 0, "Copy_Atom: the instruction's unit must be a multiple of the element size");
    return downcast<Bits / TB>(l);
  }
}
// True when Copy_Traits<Op> is specialised (a named constant: nvcc cannot mangle a requires
// expression in a template's default argument).
template <class Op>
inline constexpr bool has_copy_traits_v = requires { typename Copy_Traits<Op>::ThrID; };
// The thread and value layouts of Copy_Atom<Op, T> in units of T: the one-thread default.
template <class Op, class T, bool Specialised = has_copy_traits_v<Op>>
struct copy_atom_layouts {
  static constexpr int num_val = int(sizeof(typename Op::SRegisters) / sizeof(T));
  static_assert(num_val >= 1 && sizeof(typename Op::SRegisters) % sizeof(T) == 0,
                "Copy_Atom: the instruction's width must be a multiple of the element size");
  using ThrID = Layout<_1, _0>;
  using Src = Layout<Shape<_1, Int<num_val>>, Stride<_0, _1>>;
  using Dst = Src;
  using Ref = Src;
};
// A specialised Copy_Traits, converted to units of T.
template <class Op, class T>
struct copy_atom_layouts<Op, T, true> {
  using Traits = Copy_Traits<Op>;
  using ThrID = typename Traits::ThrID;
  using Src = decltype(tv_in_units_of<Traits::ValBits::value, T>(typename Traits::SrcLayout{}));
  using Dst = decltype(tv_in_units_of<Traits::ValBits::value, T>(typename Traits::DstLayout{}));
  using Ref = decltype(tv_in_units_of<Traits::ValBits::value, T>(typename Traits::RefLayout{}));
  static_assert(size_v<decltype(layout<0>(Src{}))> == size_v<ThrID> && size_v<decltype(layout<0>(Dst{}))> == size_v<ThrID>,
                "Copy_Atom: the element type splits the instruction's unit (a transposing ldmatrix moves 16-bit "
                "elements: T must be 16-bit)");
};
}  // namespace detail

/// A copy instruction `Op` applied to values of type T. A one-thread instruction moves NumVal values
/// of T at once (`Copy_Atom<UniversalCopy<uint128_t>, float>` moves 4 floats). A warp-wide one
/// (ldmatrix) has NumThr threads, each reading NumValSrc values (its source vector) and receiving
/// NumValDst values (its registers), placed by the TV layouts ValLayoutSrc/Dst/Ref (Copy_Traits, in
/// units of T).
template <class Op, class T>
struct Copy_Atom {
  using op_type = Op;    ///< The instruction.
  using value_type = T;  ///< The element type.
  using ThrID = typename detail::copy_atom_layouts<Op, T>::ThrID;         ///< The threads of one instruction.
  using ValLayoutSrc = typename detail::copy_atom_layouts<Op, T>::Src;   ///< (thr, val) -> element read.
  using ValLayoutDst = typename detail::copy_atom_layouts<Op, T>::Dst;   ///< (thr, val) -> element written.
  using ValLayoutRef = typename detail::copy_atom_layouts<Op, T>::Ref;   ///< The side a TiledCopy's TV layout describes.
  /// Threads taking part in one instruction (1, or 32 for a warp-wide instruction).
  static constexpr int NumThr = size_v<ThrID>;
  /// Values one thread reads with one instruction: its source vector.
  static constexpr int NumValSrc = size_v<decltype(layout<1>(ValLayoutSrc{}))>;
  /// Values one thread receives with one instruction.
  static constexpr int NumValDst = size_v<decltype(layout<1>(ValLayoutDst{}))>;
  /// Values one thread moves with one instruction: its source vector (for a one-thread atom the
  /// source and the destination are the same vector).
  static constexpr int NumVal = NumValSrc;

  /// Copies one vector: `src` and `dst` hold exactly NumVal elements, contiguous (see
  /// check_vector for what that means in a swizzled tile). A warp-wide atom (NumThr > 1): `src` is
  /// this thread's source vector (NumValSrc contiguous values) and `dst` the NumValDst values it
  /// receives, in any layout (each register's values are written one by one); on the host it stops
  /// (the CPU tests emulate the whole warp instead: ldmatrix.hpp's copy_warp_on_host).
  template <class SE, class SL, class DE, class DL>
  MM_HD void call(Tensor<SE, SL> const& src, Tensor<DE, DL>&& dst) const {
    if constexpr (NumThr > 1) {
      call_warp(src, dst);
    } else {
      check_vector(src);
      check_vector(dst);
#if defined(__CUDA_ARCH__)
      Op::copy(*reinterpret_cast<typename Op::SRegisters const*>(&src(0)),
               *reinterpret_cast<typename Op::DRegisters*>(&dst(0)));
#else
      host_call(src, dst, true);
#endif
    }
  }
  /// Copies one vector if `pred`; a zero-filling instruction (cp.async) writes zeros instead.
  /// One-thread atoms only (a warp-wide instruction cannot leave out some threads' values).
  template <class SE, class SL, class DE, class DL>
  MM_HD void call(Tensor<SE, SL> const& src, Tensor<DE, DL>&& dst, bool pred) const {
    static_assert(NumThr == 1, "Copy_Atom: a predicated copy needs a one-thread atom");
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
  // One warp-wide instruction from this thread's side: its source vector's address in, its registers
  // out, then each register's values written to their places in `dst` (two b16 of a 32-bit
  // register go to two values that need not be neighbours).
  template <class SE, class SL, class DE, class DL>
  MM_HD void call_warp(Tensor<SE, SL> const& src, Tensor<DE, DL>& dst) const {
    check_vector(src);  // the source vector: NumVal == NumValSrc
    using DRegisters = typename Op::DRegisters;  // an array of 32-bit registers
    static_assert(std::is_array_v<DRegisters> && sizeof(DRegisters) == NumValDst * sizeof(T),
                  "Copy_Atom: a warp-wide instruction's registers must hold exactly its NumValDst values");
    static_assert(size_v<DL> == NumValDst, "Copy_Atom: a warp-wide destination has NumValDst values");
#if defined(__CUDA_ARCH__)
    constexpr int R = int(std::extent_v<DRegisters>);
    std::remove_extent_t<DRegisters> regs[R];
    index_apply<R>([&](auto... i) {
      Op::copy(*reinterpret_cast<typename Op::SRegisters const*>(&src(0)), regs[i]...);
      return 0;
    });
MM_UNROLL
    for (int v = 0; v < NumValDst; ++v) std::memcpy(&dst(v), reinterpret_cast<char const*>(regs) + v * sizeof(T), sizeof(T));
#else
    (void)dst;
    std::fprintf(stderr, "mm: a warp-wide copy atom (ldmatrix) cannot run on one host thread; emulate the warp "
                         "(copy_warp_on_host in layout/ldmatrix.hpp)\n");
    std::abort();
#endif
  }

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
/// multiple of the atom's vector; every vector is one instruction. For a warp-wide atom (ldmatrix)
/// the source's CPY is a multiple of NumValSrc (each group: one thread's source vector) and the
/// destination's of NumValDst (what that instruction gives the thread), the same number of groups:
/// retile_D turns an MMA's register fragment into that shape.
template <class Op, class T, class SE, class SL, class DE, class DL>
MM_HD void copy(Copy_Atom<Op, T> const& atom, Tensor<SE, SL> const& src, Tensor<DE, DL>&& dst) {
  using Atom = Copy_Atom<Op, T>;
  constexpr int VS = Atom::NumValSrc;  // for a one-thread atom VS == VD == NumVal, the vector
  constexpr int VD = Atom::NumValDst;
  auto s = detail::group_rest(src);  // (CPY, REST)
  auto d = detail::group_rest(dst);
  Atom::template check_vector_starts<std::remove_cvref_t<decltype(s.layout())>>();
  if constexpr (Atom::NumThr == 1) Atom::template check_vector_starts<std::remove_cvref_t<decltype(d.layout())>>();
MM_UNROLL
  for (int r = 0; r < int(size<1>(d)); ++r) {
    auto sv = zipped_divide(s(_, r), make_shape(Int<VS>{}));  // ((VS), (CPY/VS))
    auto dv = zipped_divide(d(_, r), make_shape(Int<VD>{}));  // ((VD), (CPY/VD))
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
/// column-major index in the TilerMN tile; both are compile-time. For a warp-wide atom LayoutTV
/// describes the atom's reference side (ValLayoutRef: the registers of a load), the first NumThr
/// threads and NumValRef values being one instruction; the source side is derived from it
/// (tidfrg_S). ValGroups, for a TiledCopy built from a TiledMMA (make_tiled_copy_A/B/C), says how a
/// thread's values of one tile are grouped in the MMA's register fragments: (G0, G1) = G0 × G1
/// groups of V values (one MMA atom's), G0 along the tile's mode 0 and G1 along mode 1, the
/// fragment's modes 1 and 2 starting with them. `tuple<>` (the default): a thread's values of one
/// tile are one group, as make_tiled_copy's partitions hold them.
template <class Atom, class LayoutTV, class TilerMN, class ValGroups = tuple<>>
struct TiledCopy : Atom {
  using atom_type = Atom;        ///< The copy instruction and element type.
  using layout_tv_type = LayoutTV; ///< (thr, val) -> tile index.
  using tiler_type = TilerMN;    ///< The tile shape (M, N).
  using val_groups_type = ValGroups; ///< How the MMA's fragments group a thread's values (see above).

  /// Number of threads.
  MM_HD static constexpr int size() { return size_v<decltype(layout<0>(LayoutTV{}))>; }
  /// (thread, value) -> index in the tile (column-major).
  MM_HD static constexpr auto layout_tv() { return LayoutTV{}; }
  /// The tile one pass of all threads covers.
  MM_HD static constexpr auto tiler() { return TilerMN{}; }

  /// `t` (a tile or a stack of tiles) as ((thr, (V, restV)), rest...): every thread's source values
  /// of every tile, V = NumValSrc of them per instruction. Partitions slice the thread.
  template <class E, class L>
  MM_HD static constexpr auto tidfrg_S(Tensor<E, L> const& t) {
    return tidfrg_with(t, thrval_to_tile<typename Atom::ValLayoutSrc>());
  }
  /// `t` as ((thr, (V, restV)), rest...) for the destination side, V = NumValDst per instruction.
  template <class E, class L>
  MM_HD static constexpr auto tidfrg_D(Tensor<E, L> const& t) {
    return tidfrg_with(t, thrval_to_tile<typename Atom::ValLayoutDst>());
  }
  /// tidfrg_S (a one-thread atom's source and destination vectors are the same).
  template <class E, class L>
  MM_HD static constexpr auto tidfrg(Tensor<E, L> const& t) { return tidfrg_S(t); }

  /// (thread, (V, restV)) -> tile index for one side X of the atom (its source or destination
  /// layout), V = that side's values per instruction. A one-thread atom moves a vector of V values
  /// on both sides: the values of LayoutTV are split into vectors. A warp-wide atom: LayoutTV,
  /// divided into instructions ((NumThr, NumValRef), (rest threads, rest values)), tells where each
  /// reference (thread, value) of an instruction lies; right_inverse(Ref) ∘ X turns side X's
  /// (thread, value) into the reference (thread, value) of the same element of the instruction's
  /// tile (CuTe's tidfrg_S). Threads are numbered lane + NumThr · instruction's thread group.
  template <class X>
  MM_HD static constexpr auto thrval_to_tile() {
    if constexpr (Atom::NumThr == 1) {
      constexpr int V = size_v<decltype(layout<1>(X{}))>;
      return make_layout(layout<0>(LayoutTV{}), logical_divide(layout<1>(LayoutTV{}), Int<V>{}));
    } else {
      constexpr int AT = Atom::NumThr;
      constexpr int AV = size_v<decltype(layout<1>(typename Atom::ValLayoutRef{}))>;
      static_assert(size() % AT == 0, "TiledCopy: the threads are not a whole number of the atom's threads");
      static_assert(size_v<decltype(layout<1>(LayoutTV{}))> % AV == 0,
                    "TiledCopy: a thread's values are not a whole number of the atom's values");
      auto atom_tv = zipped_divide(LayoutTV{}, make_shape(Int<AT>{}, Int<AV>{}));  // ((at,av),(rt,rv)) -> tile
      auto x_to_ref = composition(right_inverse(typename Atom::ValLayoutRef{}), X{});  // (xt,xv) -> at + AT*av
      auto x_tv = composition(layout<0>(atom_tv), x_to_ref);                           // (xt,xv) -> tile
      return make_layout(make_layout(layout<0>(x_tv), layout<1, 0>(atom_tv)),         // thr (xt, rt)
                         make_layout(layout<1>(x_tv), layout<1, 1>(atom_tv)));        // val (xv, rv)
    }
  }

  /// A thread's register fragment as this copy's (CPY, CPY_M, CPY_N, ...) with CPY = (V, restV), V
  /// = NumVal values per instruction (NumValSrc for retile_S, NumValDst for retile_D). A fragment
  /// whose first mode holds all of a thread's values of one tile (make_fragment_like of a partition)
  /// is already in that shape. A fragment of an MMA (MMA, MMA_M, MMA_K) holds one atom's values in
  /// its first mode: with ValGroups (G0, G1) its modes 1 and 2 are split into (G0, MMA_M/G0) and
  /// (G1, MMA_K/G1), and (MMA, G0, G1), a thread's values of one tile in the order of LayoutTV, is
  /// divided into instructions of V values: ldmatrix.x4 for B of m16n8k16 takes 8 values, two
  /// atoms along N, so (4, MMA_N, MMA_K) becomes ((8, 1), MMA_N/2, MMA_K).
  template <int V, class E, class L>
  MM_HD static constexpr auto retile(Tensor<E, L>& t) {
    constexpr int VT = size_v<decltype(layout<1>(LayoutTV{}))>;  // a thread's values of one tile
    constexpr int F = size_v<decltype(layout<0>(L{}))>;          // the fragment's first mode
    if constexpr (rank_v<ValGroups> == 0 || F == VT) {
      return with_layout(t, t.layout());
    } else {
      constexpr int G = size_v<decltype(make_layout(ValGroups{}))>;
      static_assert(F * G == VT, "retile: the fragment's first mode times the tiled copy's value groups must be a "
                                 "thread's values of one tile (is it a fragment of the TiledMMA the copy was made from?)");
      static_assert(VT % V == 0, "retile: a thread's values of one tile are not a whole number of instructions");
      constexpr int R = rank_v<typename L::shape_type>;
      static_assert(R >= 1 + rank_v<ValGroups>, "retile: the fragment has fewer modes than the tile");
      // Mode i >= 1 of the fragment split into (its groups in one tile, the tiles).
      auto split = [&](auto i) {
        auto mode = layout<i>(t.layout());
        if constexpr (i >= 1 && i <= rank_v<ValGroups>) {
          constexpr int g = value_v<decltype(get<i - 1>(ValGroups{}))>;
          constexpr int n = size_v<decltype(mode)>;
          static_assert(n % g == 0, "retile: a fragment mode is not a whole number of the tile's value groups");
          return with_shape(mode, make_shape(Int<g>{}, Int<n / g>{}));
        } else {
          return mode;
        }
      };
      auto modes = index_apply<R>([&](auto... i) { return make_tuple(split(i)...); });
      // (MMA, G0, G1, ...): a thread's values of one tile, divided into (V, VT/V).
      auto vals = index_apply<rank_v<ValGroups>>([&](auto... i) { return make_layout(get<0>(modes), layout<0>(get<i + 1>(modes))...); });
      auto cpy = composition(vals, make_layout(make_shape(Int<V>{}, Int<VT / V>{})));
      auto rest = index_apply<R - 1>([&](auto... i) {
        return make_tuple([&](auto ii) {
          if constexpr (ii < rank_v<ValGroups>) return layout<1>(get<ii + 1>(modes));
          else return get<ii + 1>(modes);
        }(i)...);
      });
      return with_layout(t, index_apply<R - 1>([&](auto... i) { return make_layout(cpy, get<i>(rest)...); }));
    }
  }

  /// This thread's view of the copy.
  template <class Tid>
  MM_HD constexpr auto get_slice(Tid const& tid) const {
    return ThrCopy<TiledCopy, Tid>{*this, tid};
  }
  /// This thread's view of the copy (CuTe's other name).
  template <class Tid>
  MM_HD constexpr auto get_thread_slice(Tid const& tid) const { return get_slice(tid); }

 private:
  // t tiled by TilerMN, each tile's elements seen through thrval2mn: ((thr, val), (rest...)).
  template <class E, class L, class TV>
  MM_HD static constexpr auto tidfrg_with(Tensor<E, L> const& t, TV const& thrval2mn) {
    return with_layout(t, transform_inner(t.layout(), [&](auto const& l) {
                         auto z = zipped_divide(l, TilerMN{});  // ((TM,TN), (RM,RN,...))
                         return make_layout(composition(layout<0>(z), thrval2mn), layout<1>(z));
                       }));
  }
};

/// One thread's part of a TiledCopy.
template <class TiledCopy, class Tid>
struct ThrCopy {
  TiledCopy tiled_copy_; ///< The tiled copy.
  Tid tid_;              ///< This thread's index.

  /// The source elements this thread copies: (CPY, CPY_M, CPY_N, ...), CPY = (NumValSrc, rest): for
  /// ldmatrix, the rows whose addresses this thread gives (8 contiguous b16 each).
  template <class E, class L>
  MM_HD constexpr auto partition_S(Tensor<E, L> const& t) const { return slice_thread(TiledCopy::tidfrg_S(t)); }
  /// The destination elements this thread writes: (CPY, CPY_M, CPY_N, ...), CPY = (NumValDst, rest).
  template <class E, class L>
  MM_HD constexpr auto partition_D(Tensor<E, L> const& t) const { return slice_thread(TiledCopy::tidfrg_D(t)); }
  /// A register fragment of this thread seen as a copy source (CPY, CPY_M, CPY_N): a partition's
  /// fragment as it is, an MMA's fragment regrouped into instructions (TiledCopy::retile).
  template <class E, class L>
  MM_HD constexpr auto retile_S(Tensor<E, L>& t) const {
    return TiledCopy::template retile<TiledCopy::atom_type::NumValSrc>(t);
  }
  /// A register fragment of this thread seen as a copy destination (CPY, CPY_M, CPY_N): for
  /// ldmatrix into an MMA's fragment, `retile_D(thr_mma.partition_fragment_A(sA))`.
  template <class E, class L>
  MM_HD constexpr auto retile_D(Tensor<E, L>& t) const {
    return TiledCopy::template retile<TiledCopy::atom_type::NumValDst>(t);
  }

 private:
  template <class F>
  MM_HD constexpr auto slice_thread(F const& f) const {  // f: ((thr, vals), (rest...))
    constexpr int R1 = rank_v<decltype(f.layout().template shape<1>())>;
    return f(make_coord(make_coord(tid_, _), repeat<R1>(_)));
  }
};

/// Builds a TiledCopy: `thr_layout` arranges the threads over the tile ((32,8) column-major:
/// thread t at row t%32, column t/32), `val_layout` the values of one thread (4,1): 4
/// consecutive rows. Tile = thr * val per mode. The atom's vector must fit in val_layout.
/// One-thread atoms; a warp-wide atom (ldmatrix) is tiled by the MMA it feeds: make_tiled_copy_A/B/C.
template <class Op, class T, class TS, class TD, class VS, class VD>
MM_HD constexpr auto make_tiled_copy(Copy_Atom<Op, T> const&, Layout<TS, TD> const& thr_layout, Layout<VS, VD> const& val_layout = {}) {
  static_assert(Copy_Atom<Op, T>::NumThr == 1, "make_tiled_copy: for a warp-wide atom use make_tiled_copy_A/B/C(atom, mma)");
  static_assert(is_static_v<Layout<TS, TD>> && is_static_v<Layout<VS, VD>>, "make_tiled_copy: layouts must be compile-time");
  static_assert(size_v<Layout<VS, VD>> % Copy_Atom<Op, T>::NumVal == 0,
                "make_tiled_copy: values per thread must be a multiple of the atom's vector");
  auto layout_mn = raked_product(thr_layout, val_layout);  // (m, n) -> thr + size(thr) * val
  auto layout_tv = composition(right_inverse(layout_mn), make_layout(make_shape(size(thr_layout), size(val_layout))));
  auto tiler = product_each(layout_mn.shape());
  static_assert(size_v<decltype(layout_tv)> == size_v<decltype(layout_mn)>, "make_tiled_copy: thr and val layouts must be compact");
  return TiledCopy<Copy_Atom<Op, T>, decltype(layout_tv), decltype(tiler)>{};
}

namespace detail {
// The TiledCopy whose (thread, value) layout is an MMA operand's: LayoutTV over a tile `Tiler`, with
// the MMA's value groups. The atom must fit: its threads divide the MMA's, its values a thread's.
template <class Atom, class LayoutTV, class Tiler, class Groups>
MM_HD constexpr auto make_tiled_copy_tv() {
  static_assert(size_v<decltype(layout<0>(LayoutTV{}))> % Atom::NumThr == 0,
                "make_tiled_copy_A/B/C: the MMA's threads are not a whole number of the copy atom's");
  static_assert(size_v<decltype(layout<1>(LayoutTV{}))> % size_v<decltype(layout<1>(typename Atom::ValLayoutRef{}))> == 0,
                "make_tiled_copy_A/B/C: a thread's values of the MMA's tile are not a whole number of the copy atom's");
  return TiledCopy<Atom, LayoutTV, Tiler, Groups>{};
}
}  // namespace detail

/// The TiledCopy that loads A for `mma`: its (thread, value) layout is the TiledMMA's A layout over
/// its (M,K) tile (TiledMMA::get_layoutA_TV), so what thread t receives is what partition_A gives
/// thread t, in the same order. With ldmatrix (SM75_U32x4_LDSM_N, K-major A; SM75_U16x8_LDSM_T,
/// M-major A) the copy's partition_S(sA) gives each thread the rows whose addresses it supplies, and
/// retile_D(partition_fragment_A) the fragment regrouped into instructions:
///
///   auto s2r_a  = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, bf16>{}, mma);
///   auto thr    = s2r_a.get_slice(threadIdx.x);
///   auto tXsA   = thr.partition_S(sA);             // (CPY,CPY_M,CPY_K)
///   auto tCrA   = thr_mma.partition_fragment_A(sA); // (MMA,MMA_M,MMA_K)
///   auto tXrA   = thr.retile_D(tCrA);              // (CPY,CPY_M,CPY_K)
///   copy(s2r_a, tXsA, tXrA);                       // one ldmatrix.x4 per CPY
template <class Op, class T, class TiledMma>
MM_HD constexpr auto make_tiled_copy_A(Copy_Atom<Op, T> const&, TiledMma const&) {
  return detail::make_tiled_copy_tv<Copy_Atom<Op, T>, decltype(TiledMma::get_layoutA_TV()),
                                    decltype(TiledMma::tile_shape_A()), decltype(TiledMma::value_groups_A())>();
}
/// The TiledCopy that loads B (N,K) for `mma` (see make_tiled_copy_A).
template <class Op, class T, class TiledMma>
MM_HD constexpr auto make_tiled_copy_B(Copy_Atom<Op, T> const&, TiledMma const&) {
  return detail::make_tiled_copy_tv<Copy_Atom<Op, T>, decltype(TiledMma::get_layoutB_TV()),
                                    decltype(TiledMma::tile_shape_B()), decltype(TiledMma::value_groups_B())>();
}
/// The TiledCopy that moves C (M,N) for `mma`, e.g. the accumulators to shared memory
/// (see make_tiled_copy_A).
template <class Op, class T, class TiledMma>
MM_HD constexpr auto make_tiled_copy_C(Copy_Atom<Op, T> const&, TiledMma const&) {
  return detail::make_tiled_copy_tv<Copy_Atom<Op, T>, decltype(TiledMma::get_layoutC_TV()),
                                    decltype(TiledMma::tile_shape_C()), decltype(TiledMma::value_groups_C())>();
}

/// Number of threads of a TiledCopy.
template <class A, class LTV, class TMN, class G>
MM_HD constexpr auto size(TiledCopy<A, LTV, TMN, G> const&) { return Int<TiledCopy<A, LTV, TMN, G>::size()>{}; }

/// Copies with a TiledCopy: `src`/`dst` are this thread's partitions (CPY, CPY_M, ...).
template <class A, class LTV, class TMN, class G, class SE, class SL, class DE, class DL>
MM_HD void copy(TiledCopy<A, LTV, TMN, G> const& tc, Tensor<SE, SL> const& src, Tensor<DE, DL>&& dst) {
  copy(static_cast<A const&>(tc), src, static_cast<Tensor<DE, DL>&&>(dst));
}
/// Copies with a TiledCopy into an lvalue tensor.
template <class A, class LTV, class TMN, class G, class SE, class SL, class DE, class DL>
MM_HD void copy(TiledCopy<A, LTV, TMN, G> const& tc, Tensor<SE, SL> const& src, Tensor<DE, DL>& dst) {
  copy(static_cast<A const&>(tc), src, static_cast<Tensor<DE, DL>&&>(dst));
}
/// Predicated copy with a TiledCopy.
template <class A, class LTV, class TMN, class G, class P, class SE, class SL, class DE, class DL>
MM_HD void copy_if(TiledCopy<A, LTV, TMN, G> const& tc, P const& pred, Tensor<SE, SL> const& src, Tensor<DE, DL>&& dst) {
  copy_if(static_cast<A const&>(tc), pred, src, static_cast<Tensor<DE, DL>&&>(dst));
}
/// Predicated copy with a TiledCopy into an lvalue tensor.
template <class A, class LTV, class TMN, class G, class P, class SE, class SL, class DE, class DL>
MM_HD void copy_if(TiledCopy<A, LTV, TMN, G> const& tc, P const& pred, Tensor<SE, SL> const& src, Tensor<DE, DL>& dst) {
  copy_if(static_cast<A const&>(tc), pred, src, static_cast<Tensor<DE, DL>&&>(dst));
}

}  // namespace mm
