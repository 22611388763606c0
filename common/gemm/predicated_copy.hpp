/// @file predicated_copy.hpp
/// @brief Copies of a tile that may overhang its matrix, for kernels that cover the matrices with
/// whole tiles: each element is copied only where its coordinate (an identity tensor partitioned
/// like the data, layout/predicate.hpp) lies inside the matrix. Loads fill the outside with zeros,
/// which add nothing to a sum; stores (the epilogue) leave the outside alone. And when a tile may
/// take 16-byte vectors at all.
///
///     copy_or_zero(tAgA(_, _, k), tArA, tAcA(_, _, k), shape(mA));  // A's K step k; zeros outside A
///     copy_inside(tCrC, tCgC, tCcC, shape(mC));                       // the accumulators inside C
#pragma once

#include <cstdint>

#include "layout/all.hpp"

namespace mm {

/// @brief dst(i) = src(i) where the coordinate crd(i) lies inside `bound`, 0 elsewhere (fp32).
/// Zeros, not "leave it": a partial tile's shared memory is read by the FMAs, and a zero adds nothing.
template <class Src, class Dst, class Crd, class Bound>
MM_HD void copy_or_zero(Src const& src, Dst&& dst, Crd const& crd, Bound const& bound) {
#pragma unroll
  for (int i = 0; i < int(size(dst)); ++i) dst(i) = elem_less(crd(i), bound) ? src(i) : 0.0f;
}

/// @brief dst(i) = src(i) where the coordinate crd(i) lies inside `bound`; the rest of dst is not
/// touched. The epilogue of a tile of C: only the elements inside C are stored.
template <class Src, class Dst, class Crd, class Bound>
MM_HD void copy_inside(Src const& src, Dst&& dst, Crd const& crd, Bound const& bound) {
#pragma unroll
  for (int i = 0; i < int(size(src)); ++i)
    if (elem_less(crd(i), bound)) dst(i) = src(i);
}

/// @brief True when 16-byte copies of a matrix are aligned: the base pointer and every row (or
/// column) start, i.e. a leading dimension `ld` that is a multiple of 4 floats.
inline bool vector_aligned(const void* ptr, std::int64_t ld) {
  return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % 4 == 0;
}

}  // namespace mm
