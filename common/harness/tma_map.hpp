/// @file tma_map.hpp
/// @brief Tensor maps for Hopper's TMA (the copy engine): built on the host from a layout of the
/// layout library and a box, checked against the rules the hardware imposes, passed to a kernel as a
/// `const __grid_constant__ CUtensorMap` parameter (layout/copy_sm90_tma.hpp issues the copies).
///
/// @code
///   // A: M×K row-major bf16; the kernel loads boxes of 128 rows × 64 k into 128-byte-swizzled tiles.
///   CUtensorMap map_a = mm::make_tma_map(a, make_layout(make_shape(m, k), make_stride(k, _1{})),
///                                        make_shape(_128{}, _64{}), mm::TmaSwizzle::b128);
/// @endcode
///
/// The driver's encoder (cuTensorMapEncodeTiled) is reached through the runtime
/// (cudaGetDriverEntryPointByVersion), so nothing here links libcuda: programs that include this still
/// start, and skip, on a machine without a GPU driver.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "layout/layout.hpp"
#include "layout/mma_sm90.hpp"

namespace mm {

/// @brief The shared-memory swizzle a TMA load writes and a TMA store reads (CU_TENSOR_MAP_SWIZZLE_*):
/// the 16-byte units of each row of 32, 64 or 128 bytes XOR-permuted by the row's index within a
/// group of 8 rows, the pattern wgmma's descriptors read (layout/mma_sm90.hpp).
enum class TmaSwizzle { none, b32, b64, b128 };

/// @brief Bytes in one row of the swizzle pattern (the largest inner box extent it allows);
/// 0 for none (no limit from the swizzle).
constexpr int tma_swizzle_bytes(TmaSwizzle s) {
  return s == TmaSwizzle::b128 ? 128 : s == TmaSwizzle::b64 ? 64 : s == TmaSwizzle::b32 ? 32 : 0;
}

/// @brief The TMA swizzle that writes what a wgmma descriptor with swizzle `s` reads (the same XOR
/// of 16-byte units within rows of 32, 64 or 128 bytes): a kernel derives its maps' swizzle from its
/// shared layouts, `tma_swizzle_for(gmma_swizzle_of<T, SmemLayout>())`, so the two cannot disagree.
constexpr TmaSwizzle tma_swizzle_for(GmmaSwizzle s) {
  return s == GmmaSwizzle::b128  ? TmaSwizzle::b128
         : s == GmmaSwizzle::b64 ? TmaSwizzle::b64
         : s == GmmaSwizzle::b32 ? TmaSwizzle::b32
                                 : TmaSwizzle::none;
}

/// @brief Why a 2-D tiled tensor map cannot describe this matrix and box; empty when it can.
///
/// The matrix has `inner` contiguous elements per row and `outer` rows, `outer_stride` elements
/// apart; a box is `box_inner` × `box_outer` elements. The rules (driver API, cuTensorMapEncodeTiled;
/// PTX ISA, "Tensor Access Modes"): the base address 16-byte aligned; the row pitch a multiple of 16
/// bytes below 2^40; each extent from 1 to 2^32; each box extent from 1 to 256; the box's inner extent
/// a multiple of 16 bytes and, with a swizzle, at most one swizzle row. Each message is one line that
/// names the rule and the numbers.
std::string tma_2d_rejects(int elem_bytes, const void* gmem, std::int64_t inner, std::int64_t outer,
                           std::int64_t outer_stride, int box_inner, int box_outer, TmaSwizzle swizzle);

/// @brief The CUtensorMapDataType of an element type (bf16, fp16, fp32).
template <class T>
constexpr CUtensorMapDataType tma_data_type() {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  else if constexpr (std::is_same_v<T, __half>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  else if constexpr (std::is_same_v<T, float>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  else static_assert(sizeof(T) == 0, "tma_data_type: bf16, fp16 or fp32");
}

/// @brief Encodes a 2-D tiled tensor map: element (i, j) at gmem[i + j·outer_stride], i < inner,
/// j < outer; boxes of box_inner × box_outer elements written to shared memory with `swizzle`.
/// Elements of a box outside the matrix load as zeros and are not stored. Throws
/// std::invalid_argument with tma_2d_rejects' line when the map cannot describe the matrix,
/// std::runtime_error when there is no driver or the driver refuses (naming its CUresult).
CUtensorMap make_tma_map_2d(CUtensorMapDataType type, int elem_bytes, const void* gmem, std::int64_t inner,
                            std::int64_t outer, std::int64_t outer_stride, int box_inner, int box_outer,
                            TmaSwizzle swizzle);

/// @brief The tensor map of a matrix given as a rank-2 layout (M,N) of the layout library, one of
/// whose modes has stride 1 (it becomes TMA's inner dimension), and a box given in the layout's mode
/// order (`make_shape(_128{}, _64{})` for 128 rows × 64 columns of an (M,K) row-major A). Throws
/// std::invalid_argument for a layout with no unit-stride mode, or one TMA cannot describe.
template <class T, class Shape, class Stride, class BoxShape>
CUtensorMap make_tma_map(const T* gmem, Layout<Shape, Stride> const& layout, BoxShape const& box, TmaSwizzle swizzle) {
  static_assert(rank_v<Shape> == 2, "make_tma_map: a rank-2 (matrix) layout");
  const std::int64_t e0 = std::int64_t(size<0>(layout)), e1 = std::int64_t(size<1>(layout));
  const std::int64_t s0 = std::int64_t(stride<0>(layout)), s1 = std::int64_t(stride<1>(layout));
  const int b0 = int(get<0>(box)), b1 = int(get<1>(box));
  constexpr auto type = tma_data_type<T>();
  if (s1 == 1) return make_tma_map_2d(type, int(sizeof(T)), gmem, e1, e0, s0, b1, b0, swizzle);  // mode 1 contiguous
  if (s0 == 1) return make_tma_map_2d(type, int(sizeof(T)), gmem, e0, e1, s1, b0, b1, swizzle);  // mode 0 contiguous
  throw std::invalid_argument("make_tma_map: the layout has no mode of stride 1 (TMA's inner dimension is contiguous)");
}

}  // namespace mm
