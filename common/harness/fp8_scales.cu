#include "harness/fp8_scales.hpp"

#include <algorithm>

#include "gemm/launch.hpp"
#include "harness/cuda_check.hpp"

namespace mm {

namespace {

// out[r·k + c] = code · scale of its block, for a row-major rows × k matrix of codes whose scale of
// (r, c) is scales[(r / row_block)·row_stride + (c / 128)·kb_stride].
__global__ void dequantize_kernel(const __nv_fp8_e4m3* codes, std::int64_t rows, std::int64_t k, const float* scales,
                                  int row_block, std::int64_t row_stride, std::int64_t kb_stride, double* out) {
  const std::int64_t n = rows * k;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / k, c = i % k;
    out[i] = double(float(codes[i])) * double(scales[(r / row_block) * row_stride + (c / kScaleBlock) * kb_stride]);
  }
}

DeviceBuffer<double> dequantize(const __nv_fp8_e4m3* codes, std::int64_t rows, std::int64_t k, const float* scales,
                                int row_block, std::int64_t row_stride, std::int64_t kb_stride) {
  DeviceBuffer<double> out(std::size_t(rows * k));
  if (rows * k == 0) return out;
  const unsigned blocks = unsigned(launch::capped_blocks(rows * k, 256, 65535));
  dequantize_kernel<<<blocks, 256>>>(codes, rows, k, scales, row_block, row_stride, kb_stride, out.data());
  MM_CHECK_LAUNCH();
  return out;
}

}  // namespace

BlockScales random_block_scales(const GemmProblem& p, std::uint64_t seed) {
  const std::int64_t kb = scale_blocks_k(p.k), kb4 = scale_blocks_k_padded(p.k), nb = (p.n + kScaleBlock - 1) / kScaleBlock;
  auto scale = [](float u) { return (1.25f + 0.75f * u) * kRandomE4m3Scale; };  // u in [-1, 1): [0.5, 2)/448
  BlockScales s{std::vector<float>(std::size_t(p.m * kb)), std::vector<float>(std::size_t(nb * kb4), 0.0f)};
  for (std::size_t i = 0; i < s.a.size(); ++i) s.a[i] = scale(random_uniform(seed, i));
  for (std::int64_t n = 0; n < nb; ++n)
    for (std::int64_t k = 0; k < kb; ++k) s.b[std::size_t(n * kb4 + k)] = scale(random_uniform(seed + 1, std::uint64_t(n * kb + k)));
  return s;
}

void DeviceScales::set(GemmProblem& p, const OperandScales& s) {
  a = DeviceBuffer<float>(std::vector<float>{s.a});
  b = DeviceBuffer<float>(std::vector<float>{s.b});
  p.scale_a = a.data();
  p.scale_b = b.data();
}

void DeviceScales::set(GemmProblem& p, const BlockScales& s) {
  a = DeviceBuffer<float>(s.a);
  b = DeviceBuffer<float>(s.b);
  p.scale_a = a.data();
  p.scale_b = b.data();
}

Reference fp8_reference(const GemmProblem& p, const DeviceBuffer<__nv_fp8_e4m3>& a, const DeviceBuffer<__nv_fp8_e4m3>& b,
                        DType dtype, const OperandScales& scales) {
  if (dtype != DType::e4m3_block) {
    Reference ref = reference_gemm(p, a, b);
    scale_reference(ref, double(scales.a) * double(scales.b));
    return ref;
  }
  // A is M×K row-major and B N×K (RCR, the only order fp8 takes): both rows of K.
  const DeviceBuffer<double> a64 = dequantize(a.data(), p.m, p.k, p.scale_a, 1, 1, p.m);
  const DeviceBuffer<double> b64 = dequantize(b.data(), p.n, p.k, p.scale_b, kScaleBlock, scale_blocks_k_padded(p.k), 1);
  return reference_gemm(p, a64, b64);
}

}  // namespace mm
