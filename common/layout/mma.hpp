// MMA atoms and TiledMMA.
//
// An MMA atom is one multiply-accumulate instruction on an (M,N,K) tile: UniversalFMA is
// one scalar FMA by one thread; tensor-core atoms (mma.sync, wgmma) plug in the same way
// through MMA_Traits: their thread layout and which (m,k)/(n,k)/(m,n) element each
// (thread, value) holds. A TiledMMA repeats an atom over a grid of threads:
//
//   auto mma = make_tiled_mma(UniversalFMA<float>{}, Layout<Shape<_16, _16, _1>>{});
//   auto thr = mma.get_slice(threadIdx.x);
//   auto tCsA = thr.partition_A(sA);         // (MMA,MMA_M,MMA_K)
//   auto tCsB = thr.partition_B(sB);         // (MMA,MMA_N,MMA_K)
//   auto tCgC = thr.partition_C(gC);         // (MMA,MMA_M,MMA_N)
//   auto tCrC = thr.partition_fragment_C(gC);
//   gemm(mma, tCsA, tCsB, tCrC);             // C(m,n) += A(m,k) * B(n,k)
//
// With a warp-wide atom (mma_sm80.hpp) thread t is lane t % 32 of the atom numbered t / 32 in the
// atom layout; get_layoutA_TV() (B, C) is then the whole tile's (thread, value) -> (m,k) map, the
// layout make_tiled_copy_A/B/C (copy.hpp) give the copies that fill the fragments.
#pragma once

#include "layout/tensor.hpp"

namespace mm {

/// One scalar fused multiply-add by one thread: d = a * b + c.
template <class D, class A = D, class B = D, class Cc = D>
struct UniversalFMA {
  /// d = a * b + c.
  MM_HD static void fma(D& d, A const& a, B const& b, Cc const& c) { d = a * b + c; }
};

/// What an MMA instruction computes and which thread holds which element. Specialise it
/// for a new atom (tensor-core instructions arrive with their chapters).
template <class Op>
struct MMA_Traits;

/// Traits of UniversalFMA: a 1x1x1 tile, one thread, one value of each operand.
template <class D, class A, class B, class Cc>
struct MMA_Traits<UniversalFMA<D, A, B, Cc>> {
  using ValTypeD = D;  ///< Accumulator type written.
  using ValTypeA = A;  ///< A element type.
  using ValTypeB = B;  ///< B element type.
  using ValTypeC = Cc; ///< Accumulator type read.
  using Shape_MNK = Shape<_1, _1, _1>;           ///< The tile of one instruction.
  using ThrID = Layout<_1>;                      ///< Threads taking part.
  using ALayout = Layout<Shape<_1, _1>>;         ///< (thr, val) -> m + M*k
  using BLayout = Layout<Shape<_1, _1>>;         ///< (thr, val) -> n + N*k
  using CLayout = Layout<Shape<_1, _1>>;         ///< (thr, val) -> m + M*n
  /// D = A * B + C on this thread's value fragments (one value each).
  template <class TD, class TA, class TB, class TC>
  MM_HD static void call(TD&& d, TA const& a, TB const& b, TC const& c) {
    UniversalFMA<D, A, B, Cc>::fma(d(0), a(0), b(0), c(0));
  }
};

/// An MMA instruction with its traits.
template <class Op>
struct MMA_Atom : MMA_Traits<Op> {
  using op_type = Op;            ///< The instruction.
  using traits = MMA_Traits<Op>; ///< Shapes, layouts and value types of the instruction.
};

template <class TiledMMA, class Tid>
struct ThrMMA;

/// An MMA atom repeated over a grid of atoms (AtomLayoutMNK: (TM,TN,TK) -> thread group),
/// with an optional permutation of M, N, K (a tiler applied first; `tuple<>` for none).
template <class Atom, class AtomLayoutMNK, class PermutationMNK = tuple<>>
struct TiledMMA : Atom {
  using atom_type = Atom;                  ///< The instruction.
  using atom_layout_type = AtomLayoutMNK;  ///< (TM,TN,TK) -> atom index.
  using traits = typename Atom::traits;    ///< The instruction's traits.

  /// Number of threads.
  MM_HD static constexpr int size() { return size_v<typename traits::ThrID> * size_v<AtomLayoutMNK>; }

  /// Thread index -> (atom thread, tm, tn, tk).
  template <class Tid>
  MM_HD static constexpr auto thread_coord(Tid const& tid) {
    constexpr int AT = size_v<typename traits::ThrID>;
    auto grid = AtomLayoutMNK{}.get_hier_coord(tid / Int<AT>{});
    return make_tuple(tid % Int<AT>{}, get<0>(grid), get<1>(grid), get<2>(grid));
  }

  /// Tensor `t` (P,Q) of modes P, Q of (M,N,K) as ((atom thr, atom val), ((TP,TQ), (FP,FQ))):
  /// the tiles of the atom, spread over the threads of the atom layout (after the permutation).
  template <int P, int Q, class E, class L, class AtomTV>
  MM_HD static constexpr auto thrfrg(Tensor<E, L> const& t, AtomTV const& atom_tv) {
    return with_layout(t, thrfrg_layout<P, Q>(t.layout(), atom_tv));
  }
  /// thrfrg on a layout (a Layout or a swizzled ComposedLayout).
  template <int P, int Q, class L, class AtomTV>
  MM_HD static constexpr auto thrfrg_layout(L const& l, AtomTV const& atom_tv) {
    auto lp = [&] {
      if constexpr (rank_v<PermutationMNK> == 0) return l;
      else return logical_divide(l, make_tile(get<P>(PermutationMNK{}), get<Q>(PermutationMNK{})));
    }();
    auto atom_shape = make_shape(get<P>(typename traits::Shape_MNK{}), get<Q>(typename traits::Shape_MNK{}));
    auto grid = make_shape(shape<P>(AtomLayoutMNK{}), shape<Q>(AtomLayoutMNK{}));
    return transform_inner(lp, [&](auto const& x) {
      auto z = zipped_divide(x, atom_shape);           // ((AP,AQ), (RP,RQ))
      auto rest = zipped_divide(layout<1>(z), grid);   // ((TP,TQ), (FP,FQ))
      return make_layout(composition(layout<0>(z), atom_tv), rest);
    });
  }

  /// The extent of the TiledMMA's tile along mode I (0: M, 1: N, 2: K): the permutation's when it
  /// gives one, else the atom's times the atom layout's. partition_A/B/C repeat this tile.
  template <int I>
  MM_HD static constexpr auto tile_size_mnk() {
    if constexpr (I < rank_v<PermutationMNK>) {
      using PI = std::remove_cvref_t<decltype(get<I>(PermutationMNK{}))>;
      if constexpr (!std::is_same_v<PI, Underscore>) return Int<size_v<decltype(make_layout(PI{}))>>{};
      else return get<I>(typename traits::Shape_MNK{}) * shape<I>(AtomLayoutMNK{});
    } else {
      return get<I>(typename traits::Shape_MNK{}) * shape<I>(AtomLayoutMNK{});
    }
  }
  /// The (M,K) tile of A. Also tile_shape_B (N,K), tile_shape_C (M,N).
  MM_HD static constexpr auto tile_shape_A() { return make_shape(tile_size_mnk<0>(), tile_size_mnk<2>()); }
  /// The (N,K) tile of B.
  MM_HD static constexpr auto tile_shape_B() { return make_shape(tile_size_mnk<1>(), tile_size_mnk<2>()); }
  /// The (M,N) tile of C.
  MM_HD static constexpr auto tile_shape_C() { return make_shape(tile_size_mnk<0>(), tile_size_mnk<1>()); }

  /// A's (thread, value) -> index in the column-major (M,K) tile of the TiledMMA (CuTe's
  /// get_layoutA_TV). Threads are numbered as thread_coord and ThrMMA number them (atom thread +
  /// atom size × atom index), so thread t's values are exactly partition_A's of thread t, in the
  /// same order: (atom values, (atoms of the tile along M, along K)). Threads that differ only in
  /// their atom's position along N read the same elements (stride 0 there).
  MM_HD static constexpr auto get_layoutA_TV() { return operand_tv<0, 2>(typename traits::ALayout{}); }
  /// B's (thread, value) -> index in the (N,K) tile (threads differing only along M: stride 0).
  MM_HD static constexpr auto get_layoutB_TV() { return operand_tv<1, 2>(typename traits::BLayout{}); }
  /// C's (thread, value) -> index in the (M,N) tile (threads differing only along K: stride 0).
  MM_HD static constexpr auto get_layoutC_TV() { return operand_tv<0, 1>(typename traits::CLayout{}); }
  /// How many atoms of A one thread holds in one tile, along M and along K: the fragment's modes
  /// MMA_M and MMA_K start with them (then the tiles). For B (N,K) and C (M,N) alike.
  MM_HD static constexpr auto value_groups_A() { return value_groups<0, 2>(typename traits::ALayout{}); }
  /// How many atoms of B one thread holds in one tile, along N and along K.
  MM_HD static constexpr auto value_groups_B() { return value_groups<1, 2>(typename traits::BLayout{}); }
  /// How many atoms of C one thread holds in one tile, along M and along N.
  MM_HD static constexpr auto value_groups_C() { return value_groups<0, 1>(typename traits::CLayout{}); }
  /// This thread's view of the MMA.
  template <class Tid>
  MM_HD constexpr auto get_slice(Tid const& tid) const {
    return ThrMMA<TiledMMA, Tid>{*this, tid};
  }
  /// This thread's view of the MMA (CuTe's other name).
  template <class Tid>
  MM_HD constexpr auto get_thread_slice(Tid const& tid) const { return get_slice(tid); }

  /// A register fragment for A shaped like a partition (MMA,MMA_M,MMA_K).
  template <class E, class L>
  MM_HD static constexpr auto make_fragment_A(Tensor<E, L> const& part) { return make_fragment_like<typename traits::ValTypeA>(part); }
  /// A register fragment for B shaped like a partition (MMA,MMA_N,MMA_K).
  template <class E, class L>
  MM_HD static constexpr auto make_fragment_B(Tensor<E, L> const& part) { return make_fragment_like<typename traits::ValTypeB>(part); }
  /// A register accumulator shaped like a partition (MMA,MMA_M,MMA_N).
  template <class E, class L>
  MM_HD static constexpr auto make_fragment_C(Tensor<E, L> const& part) { return make_fragment_like<typename traits::ValTypeC>(part); }
 private:
  // thrfrg of the operand's tile (P,Q), itself column-major: ((atom thr, atom val), ((TP,TQ), (FP,FQ))).
  template <int P, int Q, class AtomTV>
  MM_HD static constexpr auto tile_thrfrg(AtomTV const& atom_tv) {
    return thrfrg_layout<P, Q>(make_layout(make_shape(tile_size_mnk<P>(), tile_size_mnk<Q>())), atom_tv);
  }
  // The TV layout of the operand on modes P, Q (see get_layoutA_TV).
  template <int P, int Q, class AtomTV>
  MM_HD static constexpr auto operand_tv(AtomTV const& atom_tv) {
    constexpr int AT = size_v<typename traits::ThrID>;
    auto f = tile_thrfrg<P, Q>(atom_tv);
    // thread index -> (atom thread, tm, tn, tk) as a 1-D coordinate: thread_coord's numbering
    // (thread = atom thread + AT · AtomLayoutMNK(tm, tn, tk)) inverted.
    auto atoms = AtomLayoutMNK{};
    auto thr_vmnk = make_layout(Layout<Int<AT>>{},
                                make_layout(atoms.shape(), transform_leaf(atoms.stride(), [](auto d) { return d * Int<AT>{}; })));
    auto tid_to_vmnk = right_inverse(thr_vmnk);
    // (atom thread, tm, tn, tk) -> (atom thread, (tp, tq)): the mode that is neither P nor Q is dropped.
    auto tp = shape<P>(atoms);
    auto stride_of = [&](auto i) {
      if constexpr (i == P) return Int<AT>{};
      else if constexpr (i == Q) return Int<AT>{} * tp;
      else return _0{};
    };
    auto vmnk_to_thr = make_layout(make_shape(Int<AT>{}, shape<0>(atoms), shape<1>(atoms), shape<2>(atoms)),
                                   make_stride(_1{}, stride_of(_0{}), stride_of(_1{}), stride_of(_2{})));
    auto thr = make_layout(layout<0, 0>(f), layout<1, 0>(f));  // (atom thr, (TP,TQ)) -> tile index
    auto val = make_layout(layout<0, 1>(f), layout<1, 1>(f));  // (atom val, (FP,FQ)) -> tile index
    return make_layout(composition(thr, composition(vmnk_to_thr, tid_to_vmnk)), val);
  }
  // (FP, FQ) of tile_thrfrg: a thread's atoms in one tile along P and Q.
  template <int P, int Q, class AtomTV>
  MM_HD static constexpr auto value_groups(AtomTV const& atom_tv) {
    using F = decltype(tile_thrfrg<P, Q>(atom_tv));
    return make_shape(Int<size_v<decltype(layout<1, 1, 0>(F{}))>>{}, Int<size_v<decltype(layout<1, 1, 1>(F{}))>>{});
  }
};

/// One thread's part of a TiledMMA.
template <class TiledMMA, class Tid>
struct ThrMMA {
  TiledMMA tiled_mma_; ///< The tiled MMA.
  Tid tid_;            ///< This thread's index.

  /// This thread's elements of a (M,K) tile of A: (MMA, MMA_M, MMA_K).
  template <class E, class L>
  MM_HD constexpr auto partition_A(Tensor<E, L> const& a) const {
    auto c = TiledMMA::thread_coord(tid_);
    auto f = TiledMMA::template thrfrg<0, 2>(a, typename TiledMMA::traits::ALayout{});
    return f(make_coord(make_coord(get<0>(c), _), make_coord(make_coord(get<1>(c), get<3>(c)), make_coord(_, _))));
  }
  /// This thread's elements of a (N,K) tile of B: (MMA, MMA_N, MMA_K).
  template <class E, class L>
  MM_HD constexpr auto partition_B(Tensor<E, L> const& b) const {
    auto c = TiledMMA::thread_coord(tid_);
    auto f = TiledMMA::template thrfrg<1, 2>(b, typename TiledMMA::traits::BLayout{});
    return f(make_coord(make_coord(get<0>(c), _), make_coord(make_coord(get<2>(c), get<3>(c)), make_coord(_, _))));
  }
  /// This thread's elements of a (M,N) tile of C: (MMA, MMA_M, MMA_N).
  template <class E, class L>
  MM_HD constexpr auto partition_C(Tensor<E, L> const& cm) const {
    auto c = TiledMMA::thread_coord(tid_);
    auto f = TiledMMA::template thrfrg<0, 1>(cm, typename TiledMMA::traits::CLayout{});
    return f(make_coord(make_coord(get<0>(c), _), make_coord(make_coord(get<1>(c), get<2>(c)), make_coord(_, _))));
  }
  /// A register fragment for this thread's part of A.
  template <class E, class L>
  MM_HD constexpr auto partition_fragment_A(Tensor<E, L> const& a) const { return TiledMMA::make_fragment_A(partition_A(a)); }
  /// A register fragment for this thread's part of B.
  template <class E, class L>
  MM_HD constexpr auto partition_fragment_B(Tensor<E, L> const& b) const { return TiledMMA::make_fragment_B(partition_B(b)); }
  /// A register accumulator for this thread's part of C.
  template <class E, class L>
  MM_HD constexpr auto partition_fragment_C(Tensor<E, L> const& cm) const { return TiledMMA::make_fragment_C(partition_C(cm)); }
  /// A register fragment shaped like a partition of A.
  template <class E, class L>
  MM_HD constexpr auto make_fragment_A(Tensor<E, L> const& part) const { return TiledMMA::make_fragment_A(part); }
  /// A register fragment shaped like a partition of B.
  template <class E, class L>
  MM_HD constexpr auto make_fragment_B(Tensor<E, L> const& part) const { return TiledMMA::make_fragment_B(part); }
  /// A register accumulator shaped like a partition of C.
  template <class E, class L>
  MM_HD constexpr auto make_fragment_C(Tensor<E, L> const& part) const { return TiledMMA::make_fragment_C(part); }
};

/// Builds a TiledMMA: `atom_layout` arranges atoms (threads, for UniversalFMA) over
/// (M,N[,K]); rank 2 means TK = 1. `permutation` (optional) is a tiler applied to M,N,K
/// first, e.g. to interleave which rows a thread owns.
template <class Op, class S, class D, class Perm = tuple<>>
MM_HD constexpr auto make_tiled_mma(Op const&, Layout<S, D> const& atom_layout, Perm const& = {}) {
  auto l3 = append<3>(atom_layout);
  using AtomT = std::conditional_t<requires { typename Op::traits; }, Op, MMA_Atom<Op>>;
  return TiledMMA<AtomT, decltype(l3), Perm>{};
}

/// A register accumulator for one thread's part of an (M,N) tile of C (CuTe's free
/// partition_fragment_C(tiled_mma, shape)): (MMA,MMA_M,MMA_N), the atom's values of C, then the
/// atoms along M and N. Its shape does not depend on the thread, so no thread index is asked for;
/// its layout is compact, in the atom's register order (value v of atom (m, n) at v + MMA·(m + MMA_M·n)).
/// Uninitialized, as CuTe's (make_uninitialized_tensor): the first MMA overwrites it, or the caller
/// clears it.
template <class A, class L, class P, class Shape>
MM_HD constexpr auto partition_fragment_C(TiledMMA<A, L, P> const& mma, Shape const& shape_mn) {
  using C = typename TiledMMA<A, L, P>::traits::ValTypeC;
  auto part = mma.get_slice(_0{}).partition_C(make_tensor(static_cast<C*>(nullptr), make_layout(shape_mn)));
  return make_uninitialized_tensor<C>(make_layout(part.shape()));
}

/// Number of threads of a TiledMMA.
template <class A, class L, class P>
MM_HD constexpr auto size(TiledMMA<A, L, P> const&) { return Int<TiledMMA<A, L, P>::size()>{}; }

/// C += A·Bᵀ with a TiledMMA on this thread's partitions: A (MMA,MMA_M,MMA_K),
/// B (MMA,MMA_N,MMA_K), C (MMA,MMA_M,MMA_N). One atom call per (m, n, k). A and B of one k-block,
/// (MMA,MMA_M) and (MMA,MMA_N), are taken as MMA_K = 1.
template <class TM, class AE, class AL, class BE, class BL, class CE, class CL>
  requires(requires { typename TM::atom_layout_type; })
MM_HD void gemm(TM const& mma, Tensor<AE, AL> const& A, Tensor<BE, BL> const& B, Tensor<CE, CL>&& Cc) {
  constexpr int RA = rank_v<typename AL::shape_type>, RB = rank_v<typename BL::shape_type>;
  static_assert(RA == RB && (RA == 2 || RA == 3) && rank_v<typename CL::shape_type> == 3,
                "gemm(mma, A, B, C): expected A(MMA,M[,K]), B(MMA,N[,K]), C(MMA,M,N)");
  if constexpr (RA == 2) {
    auto with_k = [](auto const& t) { return make_tensor(t.data(), append(t.layout(), Layout<_1, _0>{})); };
    gemm(mma, with_k(A), with_k(B), static_cast<Tensor<CE, CL>&&>(Cc));
  } else {
MM_UNROLL
  for (int k = 0; k < int(size<2>(A)); ++k)
MM_UNROLL
    for (int m = 0; m < int(size<1>(A)); ++m)
MM_UNROLL
      for (int n = 0; n < int(size<1>(B)); ++n) TM::traits::call(Cc(_, m, n), A(_, m, k), B(_, n, k), Cc(_, m, n));
  }
}
/// gemm with a TiledMMA into an lvalue accumulator.
template <class TM, class AE, class AL, class BE, class BL, class CE, class CL>
  requires(requires { typename TM::atom_layout_type; })
MM_HD void gemm(TM const& mma, Tensor<AE, AL> const& A, Tensor<BE, BL> const& B, Tensor<CE, CL>& Cc) {
  gemm(mma, A, B, static_cast<Tensor<CE, CL>&&>(Cc));
}

}  // namespace mm
