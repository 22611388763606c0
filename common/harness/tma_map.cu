// Tensor maps for TMA: the checks, and the driver's encoder reached through the runtime.
#include "harness/tma_map.hpp"

#include <cuda_runtime.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <mutex>

namespace mm {

std::string tma_2d_rejects(int elem_bytes, const void* gmem, std::int64_t inner, std::int64_t outer,
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

namespace {

// The driver's encoder, looked up once through the runtime (no link to libcuda); null without a driver.
PFN_cuTensorMapEncodeTiled_v12000 encoder(std::string& why) {
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

}  // namespace

CUtensorMap make_tma_map_2d(CUtensorMapDataType type, int elem_bytes, const void* gmem, std::int64_t inner,
                            std::int64_t outer, std::int64_t outer_stride, int box_inner, int box_outer,
                            TmaSwizzle swizzle) {
  if (std::string why = tma_2d_rejects(elem_bytes, gmem, inner, outer, outer_stride, box_inner, box_outer, swizzle);
      !why.empty())
    throw std::invalid_argument(why);
  std::string why;
  auto encode = encoder(why);
  if (encode == nullptr) throw std::runtime_error(why);
  const cuuint64_t dims[2] = {cuuint64_t(inner), cuuint64_t(outer)};
  const cuuint64_t strides[1] = {cuuint64_t(outer_stride * elem_bytes)};  // bytes, dimensions above the first
  const cuuint32_t box[2] = {cuuint32_t(box_inner), cuuint32_t(box_outer)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUtensorMapSwizzle sw = swizzle == TmaSwizzle::b128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                : swizzle == TmaSwizzle::b64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                : swizzle == TmaSwizzle::b32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                             : CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMap map{};
  // L2 promotion of 256 bytes: a box row of 128 bytes brings its neighbour, which the next K step's
  // box (or the block beside) reads. Out-of-bounds elements are filled with zeros (FLOAT_OOB_FILL_NONE).
  const CUresult r = encode(&map, type, 2, const_cast<void*>(gmem), dims, strides, box, element_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("cuTensorMapEncodeTiled refused the map (CUresult " + std::to_string(int(r)) + ") for " +
                             std::to_string(inner) + " × " + std::to_string(outer) + " elements, box " +
                             std::to_string(box_inner) + " × " + std::to_string(box_outer));
  return map;
}

}  // namespace mm
