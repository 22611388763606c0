// Tensor = an iterator (pointer) with a layout.
//
//   auto mA = make_tensor(A, make_shape(M, K), make_stride(K, _1{}));   // (M,K) row-major view
//   auto gA = local_tile(mA, make_shape(_128{}, _8{}), make_coord(bx, _)); // (BM,BK,k)
//   auto tAgA = local_partition(gA, thr_layout, threadIdx.x);            // (THR_M,THR_K,k)
//   auto rC = make_tensor<float>(Shape<_8, _8>{});                       // owning, in registers
//
// A view never owns memory (global or shared); `make_tensor<T>(layout)` owns a static-size
// array (a register fragment in a kernel).
#pragma once

#include <cstring>

#include "layout/algebra.hpp"

namespace mm {

/// Storage of a view: the iterator and an element offset from it.
///
/// Slicing a view adds to `off_` (an `int` when the strides are `int`) instead of moving the
/// pointer, and an element is `iter_[off_ + index]`: the whole index is summed in the
/// offsets' own integer type and widened once, as a hand-written `p[(row * ld) + col]`
/// does. Moving a 64-bit pointer by each slice's offset instead costs a sign extension and
/// a 64-bit add per slice (local_tile, then local_partition, then the loop's slice).
/// `Off` is `_0` (no storage) until a run-time offset is added. Iterators that are not
/// pointers (an identity tensor's coordinate counter) are moved at once and keep `_0`.
template <class Iter, class Off = _0>
struct ViewEngine {
  Iter iter_;                     ///< Where offset 0 lives.
  [[no_unique_address]] Off off_; ///< Offset of element 0 from iter_, in elements.
  /// The iterator of element 0.
  MM_HD constexpr auto begin() const {
    if constexpr (is_constant_value_v<0, Off>) return iter_;
    else return iter_ + off_;
  }
  /// Element `i` past element 0 (a reference for pointers, a value for coordinate counters).
  template <class I>
  MM_HD constexpr decltype(auto) at(I const& i) const {
    if constexpr (is_constant_value_v<0, Off>) return iter_[i];
    else return iter_[off_ + i];
  }
  /// The engine of a view whose element 0 is element `o` of this one.
  template <class O>
  MM_HD constexpr auto shifted(O const& o) const {
    if constexpr (is_constant_value_v<0, O>) {
      return *this;
    } else if constexpr (std::is_pointer_v<Iter>) {
      auto n = off_ + o;
      return ViewEngine<Iter, decltype(n)>{iter_, n};
    } else {
      auto it = begin() + o;
      return ViewEngine<decltype(it)>{it, {}};
    }
  }
};

/// True for the engine of a view (ViewEngine).
template <class E>
inline constexpr bool is_view_engine_v = false;
template <class Iter, class Off>
inline constexpr bool is_view_engine_v<ViewEngine<Iter, Off>> = true;

/// Storage of an owning tensor: a static array (registers when it lives in a kernel).
template <class T, int N>
struct ArrayEngine {
  alignas(16) T data_[N]; ///< The elements (16-byte aligned so vector copies may use it).
  /// Pointer to element 0.
  MM_HD constexpr T* begin() { return data_; }
  /// Pointer to element 0.
  MM_HD constexpr T const* begin() const { return data_; }
};

/// Storage of an owning tensor whose elements start uninitialized (make_uninitialized_tensor):
/// ArrayEngine with a constructor that writes nothing, so that a tensor of it declared without an
/// initializer holds its values as they are, and counts as initialized.
template <class T, int N>
struct UninitializedArrayEngine : ArrayEngine<T, N> {
  /// Writes nothing.
  MM_HD constexpr UninitializedArrayEngine() {}
};

namespace detail {
// The element type behind what a tensor's operator() returns: the type itself, or for the proxy
// reference of a host-side recast view (RecastPtr), the type it stands for.
template <class R>
struct element_of {
  using type = std::remove_cvref_t<R>;
};
template <class R>
  requires(requires { typename std::remove_cvref_t<R>::recast_value_type; })
struct element_of<R> {
  using type = typename std::remove_cvref_t<R>::recast_value_type;
};
template <class R>
using element_t = typename element_of<R>::type;
}  // namespace detail

template <class Iter, class L>
  requires(requires(L const& l) { l.shape(); l.stride(); })
MM_HD constexpr auto make_tensor(Iter const& iter, L const& layout);

/// A tensor: `engine` says where the elements are, `layout` maps coordinates to offsets.
template <class Engine, class Layout>
struct Tensor {
  Engine engine_; ///< The storage (a view's iterator, or an owned array).
  [[no_unique_address]] Layout layout_; ///< Coordinate -> offset (no storage when static).

  /// The iterator of element 0 (a pointer for memory tensors).
  MM_HD constexpr auto data() { return engine_.begin(); }
  /// The iterator of element 0.
  MM_HD constexpr auto data() const { return engine_.begin(); }
  /// The layout.
  MM_HD constexpr Layout const& layout() const { return layout_; }
  /// The shape (of mode I... if given).
  template <int... I>
  MM_HD constexpr auto shape() const { return mm::shape<I...>(layout_); }
  /// The stride (of mode I... if given).
  template <int... I>
  MM_HD constexpr auto stride() const { return get_at<I...>(layout_.stride()); }
  /// Number of elements.
  MM_HD constexpr auto size() const { return mm::size(layout_); }

  /// Element at a coordinate (1-D, N-D or hierarchical); a coordinate with `_` returns
  /// the sliced sub-tensor (a view).
  template <class Crd>
  MM_HD constexpr decltype(auto) operator()(Crd const& crd) {
    if constexpr (has_underscore_v<Crd>) {
      auto so = slice_and_offset(crd, layout_);
      return slice_at(get<1>(so), get<0>(so));
    } else {
      return at(layout_(crd));
    }
  }
  /// Element at a coordinate, or a sliced view.
  template <class Crd>
  MM_HD constexpr decltype(auto) operator()(Crd const& crd) const {
    if constexpr (has_underscore_v<Crd>) {
      auto so = slice_and_offset(crd, layout_);
      return slice_at(get<1>(so), get<0>(so));
    } else {
      return at(layout_(crd));
    }
  }
  /// Element at the N-D coordinate (c0, c1, ...), or a sliced view if any is `_`.
  template <class C0, class C1, class... Cs>
  MM_HD constexpr decltype(auto) operator()(C0 const& c0, C1 const& c1, Cs const&... cs) {
    return (*this)(make_coord(c0, c1, cs...));
  }
  /// Element at the N-D coordinate (c0, c1, ...), or a sliced view if any is `_`.
  template <class C0, class C1, class... Cs>
  MM_HD constexpr decltype(auto) operator()(C0 const& c0, C1 const& c1, Cs const&... cs) const {
    return (*this)(make_coord(c0, c1, cs...));
  }
  /// Element at 1-D coordinate i (colexicographic order of the shape).
  template <class I>
  MM_HD constexpr decltype(auto) operator[](I const& i) { return at(layout_(i)); }
  /// Element at 1-D coordinate i.
  template <class I>
  MM_HD constexpr decltype(auto) operator[](I const& i) const { return at(layout_(i)); }

 private:
  // The element at offset `o` (summed with a view's offset before the pointer moves).
  template <class O>
  MM_HD constexpr decltype(auto) at(O const& o) {
    if constexpr (is_view_engine_v<Engine>) return engine_.at(o);
    else return data()[o];
  }
  template <class O>
  MM_HD constexpr decltype(auto) at(O const& o) const {
    if constexpr (is_view_engine_v<Engine>) return engine_.at(o);
    else return data()[o];
  }
  // The view at offset `o` with layout `l` (a slice). Slicing an owning tensor gives a view.
  template <class O, class L2>
  MM_HD constexpr auto slice_at(O const& o, L2 const& l) const {
    if constexpr (is_view_engine_v<Engine>) {
      auto e = engine_.shifted(o);
      return Tensor<decltype(e), L2>{e, l};
    } else {
      return make_tensor(data() + o, l);
    }
  }
  template <class O, class L2>
  MM_HD constexpr auto slice_at(O const& o, L2 const& l) {
    if constexpr (is_view_engine_v<Engine>) {
      auto e = engine_.shifted(o);
      return Tensor<decltype(e), L2>{e, l};
    } else {
      return make_tensor(data() + o, l);
    }
  }
};

/// True for `Tensor<...>`.
template <class T>
struct is_tensor : std::false_type {};
template <class E, class L>
struct is_tensor<Tensor<E, L>> : std::true_type {};
/// True for `Tensor<...>`.
template <class T>
inline constexpr bool is_tensor_v = is_tensor<std::remove_cvref_t<T>>::value;

/// True for types with a shape that map coordinates: Layout, ComposedLayout.
template <class T>
inline constexpr bool is_layout_like_v = requires(T const& t) {
  t.shape();
  t.stride();
} && !is_tensor_v<T>;

/// Marks a pointer as global memory (CuTe's spelling; the pointer itself is returned).
template <class T>
MM_HD constexpr T* make_gmem_ptr(T* p) { return p; }
/// Marks a pointer as shared memory (CuTe's spelling; the pointer itself is returned).
template <class T>
MM_HD constexpr T* make_smem_ptr(T* p) { return p; }

/// A view: `iter` with `layout` (global, shared or any memory; nothing is owned).
template <class Iter, class L>
  requires(requires(L const& l) { l.shape(); l.stride(); })
MM_HD constexpr auto make_tensor(Iter const& iter, L const& layout) {
  return Tensor<ViewEngine<Iter>, L>{{iter, {}}, layout};
}
/// A view with the compact column-major layout of `shape`.
template <class Iter, class Shape>
  requires(!is_layout_like_v<Shape>)
MM_HD constexpr auto make_tensor(Iter const& iter, Shape const& shape) {
  return make_tensor(iter, make_layout(shape));
}
/// A view with layout (shape, stride).
template <class Iter, class Shape, class Stride>
MM_HD constexpr auto make_tensor(Iter const& iter, Shape const& shape, Stride const& stride) {
  return make_tensor(iter, make_layout(shape, stride));
}
/// An owning tensor of T with a static layout (or the column-major layout of a static
/// shape): a register fragment when declared in a kernel. Storage is cosize(layout).
template <class T, class L>
MM_HD constexpr auto make_tensor(L const& l) {
  if constexpr (is_layout_like_v<L>) {
    static_assert(is_static_v<L>, "make_tensor<T>(layout): an owning tensor needs a compile-time layout");
    return Tensor<ArrayEngine<T, cosize_v<L>>, L>{};
  } else {
    return make_tensor<T>(make_layout(l));
  }
}
/// An owning tensor of T with a static layout whose values are left uninitialized, as CuTe's
/// make_tensor<T>(layout) leaves them (ours zeroes): registers that the first write defines, such as
/// wgmma accumulators whose first instruction overwrites them. Zeroing them costs an instruction per
/// two values when they live across a loop (the compiler cannot drop it: the wgmma asm reads them).
template <class T, class L>
MM_HD constexpr auto make_uninitialized_tensor(L const& l) {
  if constexpr (is_layout_like_v<L>) {
    static_assert(is_static_v<L>, "make_uninitialized_tensor<T>(layout): an owning tensor needs a compile-time layout");
    Tensor<UninitializedArrayEngine<T, cosize_v<L>>, L> t;  // default-initialized (`{}` would zero it all)
    return t;
  } else {
    return make_uninitialized_tensor<T>(make_layout(l));
  }
}
/// An owning tensor shaped like `x` (a tensor or a layout), compact column-major: the
/// register copy of a partition. Element type: that of the tensor, or T.
template <class T = void, class X>
MM_HD constexpr auto make_fragment_like(X const& x) {
  if constexpr (is_tensor_v<X>) {
    using V = std::conditional_t<std::is_void_v<T>, detail::element_t<decltype(x(0))>, T>;
    return make_tensor<V>(make_layout(x.shape()));
  } else {
    static_assert(!std::is_void_v<T>, "make_fragment_like(layout) needs the element type: make_fragment_like<T>(layout)");
    return make_tensor<T>(make_layout(x.shape()));
  }
}
/// An owning tensor with the same shape and element type as `x` (CuTe's make_tensor_like).
template <class T = void, class X>
MM_HD constexpr auto make_tensor_like(X const& x) { return make_fragment_like<T>(x); }

/// The same elements seen through layout `l`: a view keeps its engine (pointer and offset),
/// an owning tensor gives a view of its array. The tensor-level layout operations use it.
template <class T, class L2>
  requires(is_tensor_v<T>)
MM_HD constexpr auto with_layout(T&& t, L2 const& l) {
  using E = std::remove_cvref_t<decltype(t.engine_)>;
  if constexpr (is_view_engine_v<E>) return Tensor<E, L2>{t.engine_, l};
  else return make_tensor(t.data(), l);
}

/// `f(layout)`; for a composed (swizzled) layout, `f` is applied to the inner layout and the
/// swizzle and offset are kept. Lets partitioning code treat both kinds alike.
template <class L, class F>
MM_HD constexpr auto transform_inner(L const& l, F&& f) {
  if constexpr (requires { l.fn_; l.offset_; l.layout_; }) return make_composed_layout(l.fn_, l.offset_, f(l.layout_));
  else return f(l);
}

// ---- recast: the same bytes seen as another element type ----------------------------------

/// A pointer to elements of type T over memory that holds another type (the iterator of a recast
/// tensor). On the device element i is `reinterpret_cast<T*>(p)[i]`, as CUDA code reads registers
/// and shared memory in other widths. On the host it is a proxy read and written by memcpy: g++
/// optimises by C++'s aliasing rule, under which a bf16 array read through a uint32_t pointer may
/// see stale values (copy.hpp's host copies had that bug), so the CPU tests stay exact.
template <class T>
struct RecastPtr {
  using byte_type = std::conditional_t<std::is_const_v<T>, unsigned char const, unsigned char>; ///< The raw bytes.
  byte_type* p_; ///< Where element 0 starts.

#if !defined(__CUDA_ARCH__)
  /// Host: element i as a proxy that converts to T and assigns from T through memcpy.
  struct reference {
    using recast_value_type = std::remove_const_t<T>; ///< What the proxy stands for.
    byte_type* p_;                                    ///< The element's bytes.
    /// The element's value.
    operator recast_value_type() const {
      recast_value_type v;
      std::memcpy(static_cast<void*>(&v), p_, sizeof v);
      return v;
    }
    /// Writes the element.
    reference const& operator=(recast_value_type const& v) const {
      std::memcpy(p_, static_cast<void const*>(&v), sizeof v);
      return *this;
    }
    /// Writes the element from another element (a value copy, as for a reference).
    reference const& operator=(reference const& o) const { return *this = recast_value_type(o); }
  };
  /// Element i.
  template <class I>
  reference operator[](I const& i) const { return {p_ + std::ptrdiff_t(i) * std::ptrdiff_t(sizeof(T))}; }
#else
  /// Device: element i.
  template <class I>
  __device__ __forceinline__ T& operator[](I const& i) const { return reinterpret_cast<T*>(p_)[i]; }
#endif
  /// The pointer moved by i elements.
  template <class I>
  MM_HD constexpr RecastPtr operator+(I const& i) const { return {p_ + std::ptrdiff_t(i) * std::ptrdiff_t(sizeof(T))}; }
};

namespace detail {
// A tensor's element 0 as (its element type, its first byte): a pointer, or a recast view's RecastPtr.
template <class P>
struct recast_source {
  static_assert(std::is_pointer_v<P>, "recast: the tensor must be a pointer view, an owning (register) tensor or a recast view");
  using element_type = std::remove_pointer_t<P>;
  MM_HD static constexpr auto bytes(P p) {
    using B = std::conditional_t<std::is_const_v<element_type>, unsigned char const, unsigned char>;
    return reinterpret_cast<B*>(p);
  }
};
template <class U>
struct recast_source<RecastPtr<U>> {
  using element_type = U;
  MM_HD static constexpr auto bytes(RecastPtr<U> p) { return p.p_; }
};
}  // namespace detail

/// `t` seen with element type NewT: a view of the same bytes (a register fragment or memory; an
/// owning tensor must outlive it) whose layout is in units of NewT: upcast by sizeof(NewT)/sizeof(T)
/// when NewT is larger, which scales the stride-1 mode down (8 bf16 `(8,M,K):(1,8,8M)` are 4 uint32
/// `(4,M,K):(1,4,4M)`: an mma.sync's a0..a3 registers), downcast when smaller, the same layout when
/// both have one size (float <-> uint32_t). A swizzled layout is recast with its swizzle (upcast's
/// rules: the swizzle's unit must hold whole NewT). Values are re-read, never converted.
template <class NewT, class Tn>
  requires(is_tensor_v<Tn>)
MM_HD constexpr auto recast(Tn&& t) {
  auto p = t.data();
  using Source = detail::recast_source<decltype(p)>;
  using Old = typename Source::element_type;
  using New = std::conditional_t<std::is_const_v<Old>, NewT const, NewT>;
  constexpr int so = int(sizeof(Old)), sn = int(sizeof(New));
  auto l = [&] {
    if constexpr (sn == so) {
      return t.layout();
    } else if constexpr (sn > so) {
      static_assert(sn % so == 0, "recast: the new element size must be a multiple of the old one");
      return upcast<sn / so>(t.layout());
    } else {
      static_assert(so % sn == 0, "recast: the old element size must be a multiple of the new one");
      return downcast<so / sn>(t.layout());
    }
  }();
  return make_tensor(RecastPtr<New>{Source::bytes(p)}, l);
}

/// The layout of a tensor (of mode I... if given).
template <int... I, class E, class L>
MM_HD constexpr auto layout(Tensor<E, L> const& t) { return layout<I...>(t.layout()); }

// ---- Layout operations on tensors: the same data, a new layout -----------------------------

/// Tensor with its layout composed with `b` (a layout or tiler).
template <class E, class L, class B>
MM_HD constexpr auto composition(Tensor<E, L> const& t, B const& b) { return with_layout(t, composition(t.layout(), b)); }
/// Tensor with its layout coalesced.
template <class E, class L>
MM_HD constexpr auto coalesce(Tensor<E, L> const& t) { return with_layout(t, coalesce(t.layout())); }
/// Tensor with its layout divided by `tiler`.
template <class E, class L, class T>
MM_HD constexpr auto logical_divide(Tensor<E, L> const& t, T const& tiler) { return with_layout(t, logical_divide(t.layout(), tiler)); }
/// Tensor divided by `tiler`: ((tile), (rest)).
template <class E, class L, class T>
MM_HD constexpr auto zipped_divide(Tensor<E, L> const& t, T const& tiler) { return with_layout(t, zipped_divide(t.layout(), tiler)); }
/// Tensor divided by `tiler`: ((tile), rest0, rest1, ...).
template <class E, class L, class T>
MM_HD constexpr auto tiled_divide(Tensor<E, L> const& t, T const& tiler) { return with_layout(t, tiled_divide(t.layout(), tiler)); }
/// Tensor divided by `tiler`: (tile0, tile1, ..., rest0, rest1, ...).
template <class E, class L, class T>
MM_HD constexpr auto flat_divide(Tensor<E, L> const& t, T const& tiler) { return with_layout(t, flat_divide(t.layout(), tiler)); }
/// Tensor with modes [B, E) grouped into one.
template <int B, int E2, class E, class L>
MM_HD constexpr auto group_modes(Tensor<E, L> const& t) { return with_layout(t, group<B, E2>(t.layout())); }
/// Tensor with modes I... selected (`select<1,0>` is the transpose).
template <int... I, class E, class L>
MM_HD constexpr auto select(Tensor<E, L> const& t) { return with_layout(t, select<I...>(t.layout())); }
/// Tensor with a flat layout.
template <class E, class L>
MM_HD constexpr auto flatten(Tensor<E, L> const& t) { return with_layout(t, flatten(t.layout())); }

// ---- Tiling and partitioning ---------------------------------------------------------------

/// The tile of `t` at `coord` for a `tiler` (one extent or layout per mode):
/// `local_tile(mA, (BM,BK), (bx, _))` is `(BM,BK,k)`: tile row bx, every tile along K.
/// A `_` in the coordinate keeps that tile mode as a trailing mode.
template <class E, class L, class Tiler, class Crd>
MM_HD constexpr auto local_tile(Tensor<E, L> const& t, Tiler const& tiler, Crd const& coord) {
  auto z = zipped_divide(t, tiler);  // ((tile...), (rest...))
  constexpr int R0 = rank_v<decltype(z.layout().template shape<0>())>;
  constexpr int R1 = rank_v<decltype(z.layout().template shape<1>())>;
  return z(make_coord(repeat<R0>(_), append<R1>(wrap(coord), _)));
}
/// local_tile with a projection: modes whose step is `X` are dropped from the tiler and
/// the coordinate. `local_tile(mA, (BM,BN,BK), (bx,by,_), Step<_1,X,_1>{})` tiles A by (BM,BK).
template <class E, class L, class Tiler, class Crd, class Proj>
MM_HD constexpr auto local_tile(Tensor<E, L> const& t, Tiler const& tiler, Crd const& coord, Proj const& proj) {
  return local_tile(t, dice(proj, tiler), dice(proj, coord));
}

namespace detail {
// The 1-D coordinate of thread `idx` inside each mode of the thread layout.
// A thread index as a signed int: threadIdx.x is unsigned, and unsigned offsets (which may
// wrap) keep the compiler from folding them into 64-bit address arithmetic.
template <class Idx>
MM_HD constexpr auto signed_index(Idx const& idx) {
  if constexpr (std::is_integral_v<Idx> && std::is_unsigned_v<Idx>) return int(idx);
  else return idx;
}
// Tells nvcc that thread `idx` lies inside a static thread layout (local_partition's
// precondition). Then the outermost mode's `% extent` of (idx / stride) % extent folds away
// (threadIdx.x / 32 % 8 becomes threadIdx.x / 32 for 256 threads), as in hand-written code.
template <class TL, class Idx>
MM_HD constexpr void assume_thread_in(TL const&, Idx const& idx) {
#if defined(__CUDA_ARCH__)
  if constexpr (is_static_v<TL> && std::is_integral_v<Idx>) {
    if constexpr (std::is_unsigned_v<Idx>) __builtin_assume(idx < unsigned(size_v<TL>));
    else __builtin_assume(0 <= idx && idx < Idx(size_v<TL>));
  }
#else
  (void)idx;
#endif
}
template <class TL, class Idx>
MM_HD constexpr auto thread_coord(TL const& thr, Idx const& idx) {
  assume_thread_in(thr, idx);
  // Divide as unsigned (no sign fix-ups), then continue with signed coordinates.
  auto hier = transform_leaf(thr.get_hier_coord(idx), [](auto const& c) { return signed_index(c); });
  return transform(wrap(hier), wrap(thr.shape()), [](auto const& c, auto const& s) { return crd2idx(c, s); });
}
}  // namespace detail

/// The elements of `t` that thread `idx` of `thr_layout` owns: `t` is tiled by the
/// thread layout's shape and each thread takes its element of every tile.
/// `local_partition(sA (128,8), Layout<(32,8)>, tid)` is `(4,1)`: rows tid%32 + 32*i.
template <class E, class L, class TS, class TD, class Idx>
MM_HD constexpr auto local_partition(Tensor<E, L> const& t, Layout<TS, TD> const& thr_layout, Idx const& idx) {
  auto tiler = product_each(thr_layout.shape());
  auto z = zipped_divide(t, tiler);  // ((thr...), (rest...))
  constexpr int R1 = rank_v<decltype(z.layout().template shape<1>())>;
  return z(make_coord(detail::thread_coord(thr_layout, idx), repeat<R1>(_)));
}
/// local_partition with a projection: modes whose step is `X` are ignored, so threads that
/// differ only there share elements. `local_partition(sA (BM,BK), tC (16,16), tid, Step<_1,X>{})`
/// gives each thread the rows of A for its row of C (all of K).
template <class E, class L, class TS, class TD, class Idx, class Proj>
MM_HD constexpr auto local_partition(Tensor<E, L> const& t, Layout<TS, TD> const& thr_layout, Idx const& idx, Proj const& proj) {
  auto tiler = dice(proj, product_each(thr_layout.shape()));
  auto crd = dice(proj, detail::thread_coord(thr_layout, idx));
  auto z = zipped_divide(t, tiler);
  constexpr int R1 = rank_v<decltype(z.layout().template shape<1>())>;
  return z(make_coord(crd, repeat<R1>(_)));
}

/// MoYe's `@tile`: the teaching name of local_tile.
template <class Tn, class Tiler, class Crd>
MM_HD constexpr auto tile(Tn const& t, Tiler const& tiler, Crd const& coord) { return local_tile(t, tiler, coord); }
/// MoYe's `@tile` with a projection (MoYe writes `(1, :)`; we write `Step<_1, X>{}`).
template <class Tn, class Tiler, class Crd, class Proj>
MM_HD constexpr auto tile(Tn const& t, Tiler const& tiler, Crd const& coord, Proj const& proj) {
  return local_tile(t, tiler, coord, proj);
}
/// MoYe's `@parallelize`: the teaching name of local_partition.
template <class Tn, class TL, class Idx>
MM_HD constexpr auto parallelize(Tn const& t, TL const& thr_layout, Idx const& idx) { return local_partition(t, thr_layout, idx); }
/// MoYe's `@parallelize` with a projection.
template <class Tn, class TL, class Idx, class Proj>
MM_HD constexpr auto parallelize(Tn const& t, TL const& thr_layout, Idx const& idx, Proj const& proj) {
  return local_partition(t, thr_layout, idx, proj);
}

// ---- Element-wise algorithms ---------------------------------------------------------------

/// dst(i) = src(i) for every i (same size; any layouts).
template <class SE, class SL, class DE, class DL>
MM_HD constexpr void copy(Tensor<SE, SL> const& src, Tensor<DE, DL>&& dst) {
  using V = detail::element_t<decltype(dst(0))>;
  constexpr bool both_static = is_static_v<decltype(src.shape())> && is_static_v<decltype(dst.shape())>;
  if constexpr (both_static) static_assert(size_v<SL> == size_v<DL>, "copy: source and destination sizes differ");
MM_UNROLL
  for (int i = 0; i < int(size(dst)); ++i) dst(i) = static_cast<V>(src(i));
}
/// dst(i) = src(i) for every i.
template <class SE, class SL, class DE, class DL>
MM_HD constexpr void copy(Tensor<SE, SL> const& src, Tensor<DE, DL>& dst) { copy(src, static_cast<Tensor<DE, DL>&&>(dst)); }

/// dst(i) = src(i) where pred(i) is true: predication for tiles that overhang the matrix.
/// `pred` is a tensor of bools or any callable taking the 1-D index.
template <class P, class SE, class SL, class DE, class DL>
MM_HD constexpr void copy_if(P const& pred, Tensor<SE, SL> const& src, Tensor<DE, DL>&& dst) {
  using V = detail::element_t<decltype(dst(0))>;
MM_UNROLL
  for (int i = 0; i < int(size(dst)); ++i)
    if (pred(i)) dst(i) = static_cast<V>(src(i));
}
/// copy_if into an lvalue tensor.
template <class P, class SE, class SL, class DE, class DL>
MM_HD constexpr void copy_if(P const& pred, Tensor<SE, SL> const& src, Tensor<DE, DL>& dst) {
  copy_if(pred, src, static_cast<Tensor<DE, DL>&&>(dst));
}

/// Sets every element to `v`.
template <class E, class L, class V>
MM_HD constexpr void fill(Tensor<E, L>&& t, V const& v) {
MM_UNROLL
  for (int i = 0; i < int(size(t)); ++i) t(i) = v;
}
/// Sets every element to `v`.
template <class E, class L, class V>
MM_HD constexpr void fill(Tensor<E, L>& t, V const& v) { fill(static_cast<Tensor<E, L>&&>(t), v); }
/// Sets every element to zero (value-initialised).
template <class E, class L>
MM_HD constexpr void clear(Tensor<E, L>&& t) {
  using V = detail::element_t<decltype(t(0))>;
  fill(t, V{});
}
/// Sets every element to zero (value-initialised).
template <class E, class L>
MM_HD constexpr void clear(Tensor<E, L>& t) { clear(static_cast<Tensor<E, L>&&>(t)); }

/// C += A·Bᵀ on tensors, CuTe's convention: C(M,N) += A(M,K) * B(N,K).
/// Also (M),(N),(M,N) (outer product) and value-moded (1,M,K),(1,N,K),(1,M,N).
template <class AE, class AL, class BE, class BL, class CE, class CL>
MM_HD constexpr void gemm(Tensor<AE, AL> const& A, Tensor<BE, BL> const& B, Tensor<CE, CL>&& Cc) {
  constexpr int RA = rank_v<decltype(A.shape())>;
  constexpr int RC = rank_v<decltype(Cc.shape())>;
  if constexpr (RA == 1 && RC == 2) {
MM_UNROLL
    for (int m = 0; m < int(size<0>(A)); ++m)
MM_UNROLL
      for (int n = 0; n < int(size<0>(B)); ++n) Cc(m, n) += A(m) * B(n);
  } else if constexpr (RA == 2) {
    static_assert(RC == 2 && rank_v<decltype(B.shape())> == 2, "gemm: expected A(M,K), B(N,K), C(M,N)");
MM_UNROLL
    for (int k = 0; k < int(size<1>(A)); ++k)
MM_UNROLL
      for (int m = 0; m < int(size<0>(A)); ++m)
MM_UNROLL
        for (int n = 0; n < int(size<0>(B)); ++n) Cc(m, n) += A(m, k) * B(n, k);
  } else {
    static_assert(RA == 3 && RC == 3, "gemm: expected A(V,M,K), B(V,N,K), C(V,M,N)");
MM_UNROLL
    for (int k = 0; k < int(size<2>(A)); ++k)
MM_UNROLL
      for (int m = 0; m < int(size<1>(A)); ++m)
MM_UNROLL
        for (int n = 0; n < int(size<1>(B)); ++n)
MM_UNROLL
          for (int v = 0; v < int(size<0>(Cc)); ++v) Cc(v, m, n) += A(v, m, k) * B(v, n, k);
  }
}
/// gemm into an lvalue accumulator.
template <class AE, class AL, class BE, class BL, class CE, class CL>
MM_HD constexpr void gemm(Tensor<AE, AL> const& A, Tensor<BE, BL> const& B, Tensor<CE, CL>& Cc) {
  gemm(A, B, static_cast<Tensor<CE, CL>&&>(Cc));
}

}  // namespace mm
