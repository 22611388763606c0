/// @file fp8_scales.hpp
/// @brief The scales of fp8 GEMM operands in the drivers: per tensor or per block (DeepSeek-V3's
/// 1×128 and 128×128, in cuBLASLt's layouts: GemmProblem::scale_a, scale_b), their device copies,
/// and the fp64 reference of the values the codes and scales stand for.
#pragma once

#include <cuda_fp8.h>

#include <cstdint>
#include <vector>

#include "gemm/problem.hpp"
#include "harness/device_buffer.hpp"
#include "harness/dtype.hpp"
#include "harness/random.hpp"  // kRandomE4m3Scale
#include "harness/reference.hpp"

namespace mm {

/// @brief The per-tensor scales of fp8 operands, as host values.
struct OperandScales {
  float a = kRandomE4m3Scale;  ///< A's scale (by default, random_element's codes back to [-1, 1])
  float b = kRandomE4m3Scale;  ///< B's scale
};

/// @brief Block scales as host values, in the layouts GemmProblem::scale_a and scale_b describe.
struct BlockScales {
  std::vector<float> a;  ///< (m, kb) at kb·M + m
  std::vector<float> b;  ///< (nb, kb) at nb·Kb4 + kb
};

/// @brief ceil(K/128): the blocks of 128 along K.
inline std::int64_t scale_blocks_k(std::int64_t k) { return (k + kScaleBlock - 1) / kScaleBlock; }
/// @brief ceil(K/128) rounded up to a multiple of 4: the pitch of B's block scales (cuBLASLt's).
inline std::int64_t scale_blocks_k_padded(std::int64_t k) { return (scale_blocks_k(k) + 3) / 4 * 4; }

/// @brief Random block scales for `p`, from `seed`: each (0.5 to 2)/448, so that the blocks differ
/// (a kernel that applies the wrong block's scale fails) and the codes of random_element still stand
/// for values of about [-1, 1]. The padding of B's pitch is 0.
BlockScales random_block_scales(const GemmProblem& p, std::uint64_t seed);

/// @brief Device copies of fp8 scales, each at the start of its own allocation: cuBLASLt refuses a
/// scale pointer that is only 4-byte aligned (its fp8 GEMM returned CUBLAS_STATUS_NOT_SUPPORTED for a
/// scale at offset 4 of an allocation, and ran with each scale at the start of its own: measured on
/// the H200).
struct DeviceScales {
  DeviceBuffer<float> a;  ///< A's scale(s); allocated by set: nothing for problems without scales
  DeviceBuffer<float> b;  ///< B's scale(s)
  /// @brief Per-tensor: copies `s` to the device and points `p`'s scale_a and scale_b at the copies.
  void set(GemmProblem& p, const OperandScales& s);
  /// @brief Block scales: the same for tensors of scales.
  void set(GemmProblem& p, const BlockScales& s);
};

/// @brief The fp64 reference of an fp8 problem: the product of the values the codes stand for. Per
/// tensor (e4m3, e4m3_promoted): the product of the codes times scales.a·scales.b. Blocks
/// (e4m3_block): A and B dequantized in fp64 on the device with the scales `p` points at, then
/// multiplied.
Reference fp8_reference(const GemmProblem& p, const DeviceBuffer<__nv_fp8_e4m3>& a, const DeviceBuffer<__nv_fp8_e4m3>& b,
                        DType dtype, const OperandScales& scales);

}  // namespace mm
