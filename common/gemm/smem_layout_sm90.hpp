// The shared-memory rings of a wgmma main loop: an operand's tiles for every stage, (MN, BK, Stages),
// in the 128-byte-swizzled GMMA layouts wgmma reads (layout/mma_sm90.hpp's atoms), as CUTLASS's sm90
// collective builders choose them (cutlass/gemm/collective/builders/sm90_common.inl,
// ss_smem_selector, then tile_to_shape over the stages).
//
//   K-major (A; B of C = A·Bᵀ): each MN index is one 128-byte row of 64 k (bf16); 8 rows form one
//       1024-byte swizzle pattern; the stages follow each other.
//   MN-major (B of C = A·B, stored K×N): each k is one 128-byte row of 64 consecutive n; a "panel"
//       of 64 n holds all BK rows of the stage (64 × 64 bf16 = 8 KB), panels follow along N: what
//       one TMA box of 64 n × 64 k writes.
#pragma once

#include <type_traits>

#include "layout/algebra.hpp"
#include "layout/mma_sm90.hpp"

namespace mm {

namespace detail {
// The two rings as separate specializations, so that only the operand's own major-ness is built (a
// K-major ring of 16 rows has no MN-major counterpart: 16 is less than the MN atom's 64).
template <class T, GmmaMajor Major, class MN, class BK, int Stages>
struct GmmaRingOf {
  using type = decltype(tile_to_shape(GmmaLayoutK_SW128_Atom<T>{}, make_shape(MN{}, BK{}, Int<Stages>{})));
};
template <class T, class MN, class BK, int Stages>
struct GmmaRingOf<T, GmmaMajor::MN, MN, BK, Stages> {
  using type = decltype(tile_to_shape(tile_to_shape(GmmaLayoutMN_SW128_Atom<T>{}, make_shape(Int<128 / int(sizeof(T))>{}, BK{})),
                                      make_shape(MN{}, BK{}, Int<Stages>{})));
};
}  // namespace detail

/// The ring of one operand, (MN, BK, Stages), of element type T (CuTe's tile_to_shape of the GMMA
/// layout atom of the operand's major-ness).
template <class T, GmmaMajor Major, class MN, class BK, int Stages>
using GmmaRing = typename detail::GmmaRingOf<T, Major, MN, BK, Stages>::type;

/// One stage of a ring (its slice at stage 0): the layout a TMA copy of the operand fills.
template <class Ring>
using GmmaStage = decltype(Ring{}(_, _, 0));

}  // namespace mm
