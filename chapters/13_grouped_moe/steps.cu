// Chapter 13's kernels and router, compiled once.
#include "13_grouped_moe/steps.hpp"

#include "13_grouped_moe/routing.cuh"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"

namespace mm::ch13 {

PreparedGemm prepare_grouped_gemm(const GroupedProblem& g, const bf16* A, const bf16* B, bf16* C, int max_blocks,
                                  int tile_rows, GroupedVariant variant) {
  if (tile_rows != 128 && tile_rows != 64 && tile_rows != kDecodeTileRows)
    throw std::invalid_argument("grouped_contiguous: tiles of 128, 64 or 16 (grouped_decode) rows, not " + std::to_string(tile_rows));
  if (tile_rows == kDecodeTileRows) {
    if (variant != GroupedVariant::gemm)
      throw std::invalid_argument("grouped_decode: C_g = A_g·B_gᵀ only (no SiLU(gate)·up epilogue, no skipping)");
    return prepare_grouped_decode(g, A, B, C, max_blocks);
  }
  switch (variant) {
    case GroupedVariant::skip_padding:
      if (tile_rows != 128)
        throw std::invalid_argument("grouped_skip_padding: its tiles are 128 rows (two consumer warpgroups), not " +
                                    std::to_string(tile_rows));
      return prepare_grouped<GroupedSkipCfg>(g, A, B, C, max_blocks);
    case GroupedVariant::swiglu:
      return tile_rows == 128 ? prepare_grouped<GroupedCfg, CollectiveEpilogueSwiGlu<GroupedCfg>>(g, A, B, C, max_blocks)
                              : prepare_grouped<GroupedCfg64, CollectiveEpilogueSwiGlu<GroupedCfg64>>(g, A, B, C, max_blocks);
    case GroupedVariant::gemm:
      break;
  }
  return tile_rows == 128 ? prepare_grouped<GroupedCfg>(g, A, B, C, max_blocks)
                          : prepare_grouped<GroupedCfg64>(g, A, B, C, max_blocks);
}

namespace {

/// blockIdx.y: the expert; blockIdx.x and the threads: its rows' outputs, 8 at a time (16-byte loads
/// of 8 gate and 8 up values, a 16-byte store).
__global__ void silu_mul_grouped_kernel(const bf16* c, bf16* h, int n, const std::int64_t* first,
                                        const std::int64_t* rows) {
  const int e = int(blockIdx.y), half = n / 2, groups = half / 8;
  const std::int64_t row0 = first[e], count = rows[e] * groups;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count; i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t r = row0 + i / groups;
    const int j = int(i % groups) * 8;           // first output column
    const int gate = (j / 128) * 256 + j % 128;  // its gate column in C; the up column 128 after
    const uint4 gv = *reinterpret_cast<const uint4*>(c + r * n + gate);
    const uint4 uv = *reinterpret_cast<const uint4*>(c + r * n + gate + 128);
    const auto* g2 = reinterpret_cast<const __nv_bfloat162*>(&gv);
    const auto* u2 = reinterpret_cast<const __nv_bfloat162*>(&uv);
    uint4 out;
    auto* o2 = reinterpret_cast<__nv_bfloat162*>(&out);
    for (int q = 0; q < 4; ++q) {
      const float g0 = __low2float(g2[q]), g1 = __high2float(g2[q]);
      o2[q] = __floats2bfloat162_rn(g0 / (1.0f + expf(-g0)) * __low2float(u2[q]), g1 / (1.0f + expf(-g1)) * __high2float(u2[q]));
    }
    *reinterpret_cast<uint4*>(h + r * half + j) = out;
  }
}

/// One block: each thread some experts' rows, the first broken rule's code into *error.
__global__ void check_grouped_layout_kernel(int groups, const std::int64_t* offsets, const int* counts, std::int64_t capacity,
                                            std::int64_t rows, int* error) {
  for (int g = int(threadIdx.x); g < groups; g += int(blockDim.x)) {
    GroupedLayoutError code = GroupedLayoutError::none;
    if (offsets) {
      const std::int64_t start = (offsets[g] + kGroupAlignment - 1) / kGroupAlignment * kGroupAlignment, end = offsets[g + 1];
      if (g == 0 && offsets[0] != 0) code = GroupedLayoutError::first_offset_not_zero;
      else if (end < start) code = GroupedLayoutError::end_before_start;
      else if (end > rows) code = GroupedLayoutError::past_the_buffer;
    } else {
      if (counts[g] < 0) code = GroupedLayoutError::negative_count;
      else if (counts[g] > capacity) code = GroupedLayoutError::count_above_capacity;
    }
    if (code != GroupedLayoutError::none) atomicCAS(error, 0, int(code));
  }
}

}  // namespace

std::string grouped_layout_error_name(int code) {
  switch (GroupedLayoutError(code)) {
    case GroupedLayoutError::none: return "";
    case GroupedLayoutError::first_offset_not_zero: return "the first offset is not 0";
    case GroupedLayoutError::end_before_start: return "an expert ends before its first row (its start rounded up to 128)";
    case GroupedLayoutError::past_the_buffer: return "the experts' rows end past A and C's rows";
    case GroupedLayoutError::negative_count: return "a negative count";
    case GroupedLayoutError::count_above_capacity: return "a count above the capacity";
  }
  return "unknown error code " + std::to_string(code);
}

void check_grouped_layout(const GroupedProblem& g, int* error, cudaStream_t stream) {
  if (std::string why = grouped_rejects(g); !why.empty()) throw std::invalid_argument("check_grouped_layout: " + why);
  check_grouped_layout_kernel<<<1, 256, 0, stream>>>(g.groups, g.offsets, g.counts, g.capacity, g.rows, error);
  MM_CUDA_CHECK(cudaGetLastError());
}

Reference swiglu_reference(const Reference& gate_up) {
  if (gate_up.n % 256 != 0) throw std::invalid_argument("swiglu_reference: needs N % 256 == 0");
  Reference h;
  h.m = gate_up.m, h.n = gate_up.n / 2;
  h.value.resize(std::size_t(h.m * h.n));
  h.abs_sum.resize(h.value.size());
  for (std::int64_t r = 0; r < h.m; ++r)
    for (std::int64_t j = 0; j < h.n; ++j) {
      const std::int64_t gi = r * gate_up.n + (j / 128) * 256 + j % 128, ui = gi + 128;
      const double g = gate_up.value[gi], u = gate_up.value[ui], silu = g / (1.0 + std::exp(-g));
      h.value[r * h.n + j] = silu * u;
      h.abs_sum[r * h.n + j] = 1.1 * std::fabs(u) * gate_up.abs_sum[gi] + std::fabs(silu) * gate_up.abs_sum[ui] + std::fabs(silu * u);
    }
  return h;
}

void silu_mul_grouped(const bf16* c, bf16* h, int n, const std::int64_t* first, const std::int64_t* rows, int experts,
                      cudaStream_t stream) {
  if (n % 256 != 0 || experts < 1) throw std::invalid_argument("silu_mul_grouped: needs N % 256 == 0 and an expert");
  const unsigned blocks = unsigned(std::max(8, 1024 / experts));  // about 1024 blocks in all: every SM busy
  silu_mul_grouped_kernel<<<dim3(blocks, unsigned(experts)), 256, 0, stream>>>(c, h, n, first, rows);
  MM_CUDA_CHECK(cudaGetLastError());
}

Routed route(int tokens, int experts, int topk, Routing routing, std::uint64_t seed) {
  const int active = experts - (routing == Routing::skewed ? experts / 8 : 0);
  if (tokens < 0 || experts < 1 || topk < 1 || topk > kMaxTopK || topk > active)
    throw std::invalid_argument("route: needs tokens >= 0, 1 <= topk <= " + std::to_string(kMaxTopK) +
                                " and topk <= the experts the routing leaves active (" + std::to_string(active) + ")");
  Routed r;
  r.rows.assign(experts, 0);
  if (tokens == 0) return r;
  DeviceBuffer<int> ids(std::size_t(tokens) * topk), counts(experts);
  DeviceBuffer<float> weights(std::size_t(tokens) * topk);
  MM_CUDA_CHECK(cudaMemset(counts.data(), 0, sizeof(int) * experts));
  route_kernel<<<(tokens + 127) / 128, 128>>>(tokens, experts, topk, routing, seed, ids.data(), weights.data(), counts.data());
  MM_CUDA_CHECK(cudaGetLastError());
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<int> c = counts.download();
  for (int e = 0; e < experts; ++e) r.rows[e] = c[e];
  r.ids = ids.download();
  r.weights = weights.download();
  return r;
}

}  // namespace mm::ch13
