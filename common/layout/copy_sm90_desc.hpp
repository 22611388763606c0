/// @file copy_sm90_desc.hpp
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
#include <cuda_runtime.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <mutex>
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

/// @brief How much more than a box row's bytes the L2 fetches on a miss (CUtensorMapL2promotion):
/// none, or up to 64, 128 or 256 bytes. 256 bytes brings a 128-byte box row's neighbour, which the
/// next K step reads: it helps small problems whose stages wait on latency, and costs a streaming
/// decode GEMM about a quarter more L2 reads (chapter 11, step 6).
enum class TmaL2Promotion { none, b64, b128, b256 };

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
inline std::string tma_2d_rejects(int elem_bytes, const void* gmem, std::int64_t inner, std::int64_t outer,
                           std::int64_t outer_stride, int box_inner, int box_outer, TmaSwizzle swizzle) {
  const auto n = [](std::int64_t v) { return std::to_string(v); };
  if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 && elem_bytes != 8)
    return "TMA moves elements of 1, 2, 4 or 8 bytes, not " + n(elem_bytes);
  if (reinterpret_cast<std::uintptr_t>(gmem) % 16 != 0)
    return "TMA needs a 16-byte aligned base address: this matrix starts " +
           n(std::int64_t(reinterpret_cast<std::uintptr_t>(gmem) % 16)) + " bytes past a 16-byte boundary";
  constexpr std::int64_t max_extent = std::int64_t(1) << 32;
  if (inner < 1 || inner > max_extent || outer < 1 || outer > max_extent)
    return "TMA needs extents from 1 to 2^32: this matrix is " + n(inner) + " × " + n(outer);
  const std::int64_t pitch = outer_stride * elem_bytes;
  if (outer > 1 && pitch % 16 != 0)
    return "TMA needs a row pitch that is a multiple of 16 bytes: " + n(outer_stride) + " elements of " +
           n(elem_bytes) + " bytes = " + n(pitch) + " bytes";
  if (outer > 1 && pitch >= (std::int64_t(1) << 40)) return "TMA needs a row pitch below 2^40 bytes: " + n(pitch);
  if (outer > 1 && outer_stride < inner)
    return "TMA needs rows that do not overlap: a row pitch of " + n(outer_stride) + " elements for rows of " +
           n(inner);
  if (box_inner < 1 || box_inner > 256 || box_outer < 1 || box_outer > 256)
    return "TMA boxes have extents from 1 to 256: this box is " + n(box_inner) + " × " + n(box_outer);
  const std::int64_t box_bytes = std::int64_t(box_inner) * elem_bytes;
  if (box_bytes % 16 != 0)
    return "TMA needs a box whose rows are a multiple of 16 bytes: " + n(box_inner) + " elements = " + n(box_bytes) +
           " bytes";
  if (const int span = tma_swizzle_bytes(swizzle); span != 0 && box_bytes > span)
    return "TMA's " + n(span) + "-byte swizzle takes box rows of at most " + n(span) + " bytes: this box's are " +
           n(box_bytes);
  return {};
}

/// @brief The CUtensorMapDataType of an element type (bf16, fp16, fp32; fp8 e4m3 as bytes, which is
/// all a copy needs to know of it).
template <class T>
constexpr CUtensorMapDataType tma_data_type() {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  else if constexpr (std::is_same_v<T, __half>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  else if constexpr (std::is_same_v<T, float>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  else if constexpr (std::is_same_v<T, __nv_fp8_e4m3>) return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  else static_assert(sizeof(T) == 0, "tma_data_type: bf16, fp16, fp32 or fp8 e4m3");
}

namespace detail {

// The driver's encoder, looked up once through the runtime (no link to libcuda); null without a driver.
inline PFN_cuTensorMapEncodeTiled_v12000 tma_encoder(std::string& why) {
  static std::once_flag once;
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  static std::string error;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found);
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || p == nullptr)
      error = std::string("no CUDA driver entry point cuTensorMapEncodeTiled: ") +
              (e != cudaSuccess ? cudaGetErrorString(e) : "symbol not found");
    else
      fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  });
  why = error;
  return fn;
}

}  // namespace detail

/// @brief Encodes a 2-D tiled tensor map: element (i, j) at gmem[i + j·outer_stride], i < inner,
/// j < outer; boxes of box_inner × box_outer elements written to shared memory with `swizzle`.
/// Elements of a box outside the matrix load as zeros and are not stored. Throws
/// std::invalid_argument with tma_2d_rejects' line when the map cannot describe the matrix,
/// std::runtime_error when there is no driver or the driver refuses (naming its CUresult).
inline CUtensorMap make_tma_map_2d(CUtensorMapDataType type, int elem_bytes, const void* gmem, std::int64_t inner,
                            std::int64_t outer, std::int64_t outer_stride, int box_inner, int box_outer,
                            TmaSwizzle swizzle, TmaL2Promotion promotion = TmaL2Promotion::b256) {
  if (std::string why = tma_2d_rejects(elem_bytes, gmem, inner, outer, outer_stride, box_inner, box_outer, swizzle);
      !why.empty())
    throw std::invalid_argument(why);
  std::string why;
  auto encode = detail::tma_encoder(why);
  if (encode == nullptr) throw std::runtime_error(why);
  const cuuint64_t dims[2] = {cuuint64_t(inner), cuuint64_t(outer)};
  const cuuint64_t strides[1] = {cuuint64_t(outer_stride * elem_bytes)};  // bytes, dimensions above the first
  const cuuint32_t box[2] = {cuuint32_t(box_inner), cuuint32_t(box_outer)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUtensorMapSwizzle sw = swizzle == TmaSwizzle::b128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                : swizzle == TmaSwizzle::b64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                : swizzle == TmaSwizzle::b32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                             : CU_TENSOR_MAP_SWIZZLE_NONE;
  const CUtensorMapL2promotion l2 = promotion == TmaL2Promotion::b256  ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                                    : promotion == TmaL2Promotion::b128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
                                    : promotion == TmaL2Promotion::b64  ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
                                                                        : CU_TENSOR_MAP_L2_PROMOTION_NONE;
  CUtensorMap map{};
  // L2 promotion, 256 bytes unless the caller says: a box row of 128 bytes brings its neighbour, which
  // the next K step's box (or the block beside) reads. Out-of-bounds elements are filled with zeros
  // (FLOAT_OOB_FILL_NONE).
  const CUresult r = encode(&map, type, 2, const_cast<void*>(gmem), dims, strides, box, element_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, sw, l2, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("cuTensorMapEncodeTiled refused the map (CUresult " + std::to_string(int(r)) + ") for " +
                             std::to_string(inner) + " × " + std::to_string(outer) + " elements, box " +
                             std::to_string(box_inner) + " × " + std::to_string(box_outer));
  return map;
}

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
