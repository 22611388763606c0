// Chapter 13, step 4: the whole mixture-of-experts feed-forward pass. From the router's logits to the
// layer's output, on the device, with no copy to the host between its steps:
//
//   logits (T × E, fp32) ── top-k ──▶ ids, weights (T × k), rows per expert
//                          offsets ──▶ each expert's first row, on a multiple of 128 (step 1's layout)
//   x (T × H, bf16) ── permute ──▶ A: each token's row copied to its k experts' rows
//   A ── grouped_swiglu (step 3) ──▶ h = SiLU(x·W_gateᵀ)·(x·W_upᵀ)   (rows × I)
//   h ── grouped_contiguous (step 1) ──▶ y = h·W_downᵀ              (rows × H)
//   y ── combine ──▶ out(t) = Σ_j weight(t, j) · y(row of t's j-th expert)   (T × H, bf16)
//
// The same layer built from cuBLAS (CublasMoeLayer) runs the same top-k, permute, SiLU·up and combine
// kernels around one cuBLAS call per expert or cuBLAS's grouped call per projection; it must copy the
// rows per expert to the host first (a loop of calls, and the grouped call's sizes, are host values).
//
// The weights are an nn.Linear's, stacked per expert: W_gate and W_up interleaved by 128 rows into one
// (E·2I) × H matrix (grouped_swiglu.cuh says why), W_down (E·H) × I.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "13_grouped_moe/routing.hpp"
#include "gemm/prepared_gemm.hpp"
#include "harness/device_buffer.hpp"
#include "harness/reference.hpp"

namespace mm::ch13 {

/// The most experts a layer may have: the top-k keeps a token's logits in a warp's registers, 8 each.
inline constexpr int kMaxExperts = 256;

/// A SwiGLU mixture-of-experts layer: E experts, top-k, hidden size H, expert width I.
struct MoeShape {
  int experts = 0;  ///< E
  int topk = 0;     ///< k: experts per token
  int hidden = 0;   ///< H: the model's width (x and out are T × H)
  int width = 0;    ///< I: an expert's width (W_gate, W_up: I × H; W_down: H × I)
};

/// Empty when the layer takes `s` at `tokens` tokens; otherwise the rule it breaks, in one line.
std::string moe_rejects(const MoeShape& s, int tokens);

/// An expert's weights, stacked over the experts in device memory (bf16, row-major, K-contiguous).
struct MoeWeights {
  const __nv_bfloat16* gate_up = nullptr;  ///< (E·2I) × H: W_gate and W_up rows interleaved by 128 (grouped_swiglu.cuh)
  const __nv_bfloat16* down = nullptr;     ///< (E·H) × I
};

/// Router logits (T × E, fp32) as a model's router would give them, made on the device from a seed:
/// bias(e) + Gumbel noise (routing.cuh), so that top-k of them is chapter 13's balanced or skewed routing.
void make_router_logits(float* logits, int tokens, int experts, Routing routing, std::uint64_t seed, cudaStream_t stream);

/// What the pass keeps between its steps, for `tokens` tokens: the routing, the layout, the routed rows.
struct MoeScratch {
  /// Buffers for `tokens` tokens of a layer of shape `s` (the padding rows of A and h zeroed).
  MoeScratch(const MoeShape& s, int tokens);
  MoeShape shape;                      ///< the layer's shape
  int tokens = 0;                      ///< T
  std::int64_t rows = 0;               ///< rows of A, h and y: T·k, each expert's padding to 128, at least 128
  DeviceBuffer<int> ids;               ///< T·k: each token's experts, best first
  DeviceBuffer<float> weights;         ///< T·k: their weights (softmax over the k chosen logits)
  DeviceBuffer<int> counts;            ///< 2E: rows per expert, then each expert's rows placed so far (the permute's cursors)
  DeviceBuffer<std::int64_t> offsets;  ///< E + 1: step 1's layout (offsets[e + 1] = expert e's end)
  DeviceBuffer<std::int64_t> first;    ///< E: expert e's first row (a multiple of 128)
  DeviceBuffer<std::int64_t> rows_of;  ///< E: rows per expert, as int64 (silu_mul_grouped's)
  DeviceBuffer<std::int64_t> pos;      ///< T·k: the row of A (and y) that holds token t's j-th expert
  DeviceBuffer<__nv_bfloat16> a;       ///< rows × H: the routed tokens, sorted by expert
  DeviceBuffer<__nv_bfloat16> h;       ///< rows × I: SiLU(gate)·up
  DeviceBuffer<__nv_bfloat16> y;       ///< rows × H: the down projection

  /// The steps before the GEMMs: top-k of `logits`, the offsets, and the permute of x into `a`.
  void route_and_permute(const float* logits, const __nv_bfloat16* x, cudaStream_t stream);
  /// The step after them: out = the routing weights' sum of each token's k rows of `y`.
  void combine(__nv_bfloat16* out, cudaStream_t stream) const;
};

/// One step of a layer's pass, by name, to be timed alone.
struct MoePart {
  std::string name;                        ///< route_permute, gate_up, silu, down or combine
  std::function<void(cudaStream_t)> run;   ///< launches the step on a stream
};

/// The layer on this chapter's kernels: steps 1 and 3 between the routing and the combine. Six
/// launches, no host synchronization (a CUDA graph can capture it).
class MoeLayer {
 public:
  /// `tile_rows`: 128 (prefill) or 64 (decode: step 2's tile). Throws std::invalid_argument for a
  /// shape moe_rejects refuses.
  MoeLayer(const MoeShape& s, int tokens, MoeWeights w, int tile_rows = 128);
  /// out (T × H) = the layer applied to x (T × H) routed by `logits` (T × E), on `stream`.
  void run(const float* logits, const __nv_bfloat16* x, __nv_bfloat16* out, cudaStream_t stream);
  /// The pass's intermediate state (the routing the check reads).
  const MoeScratch& scratch() const { return *scratch_; }
  /// The two grouped GEMMs' path names.
  std::string path() const;
  /// run's steps one by one, to time each (after one whole run has left their inputs in place):
  /// route_permute, gate_up, down, combine.
  std::vector<MoePart> parts(const float* logits, const __nv_bfloat16* x, __nv_bfloat16* out);

 private:
  std::unique_ptr<MoeScratch> scratch_;
  PreparedGemm gate_up_, down_;
};

/// How the cuBLAS layer runs a projection: one cublasGemmEx per expert with rows, or one
/// cublasGemmGroupedBatchedEx over them.
enum class CublasWay { loop, grouped };

/// "loop" or "grouped".
inline std::string cublas_way_name(CublasWay w) { return w == CublasWay::loop ? "loop" : "grouped"; }

/// The same layer from cuBLAS calls and the simple kernels: routing, permute, gate+up by cuBLAS (N = 2I),
/// silu_mul_grouped, down by cuBLAS, combine. It copies the rows per expert to the host after the
/// routing and waits for them (a host synchronization per pass).
class CublasMoeLayer {
 public:
  /// The layer for `tokens` tokens, its projections run `gate_up` and `down` ways, on `handle`. Throws
  /// std::invalid_argument for a shape moe_rejects refuses.
  CublasMoeLayer(cublasHandle_t handle, const MoeShape& s, int tokens, MoeWeights w, CublasWay gate_up, CublasWay down);
  ~CublasMoeLayer();  ///< frees the pinned host buffers
  CublasMoeLayer(const CublasMoeLayer&) = delete;
  CublasMoeLayer& operator=(const CublasMoeLayer&) = delete;
  /// As MoeLayer::run.
  void run(const float* logits, const __nv_bfloat16* x, __nv_bfloat16* out, cudaStream_t stream);
  /// The pass's intermediate state.
  const MoeScratch& scratch() const { return *scratch_; }
  /// As MoeLayer::parts: route_permute (with the copy of the counts and the wait), gate_up, silu, down, combine.
  std::vector<MoePart> parts(const float* logits, const __nv_bfloat16* x, __nv_bfloat16* out);

 private:
  /// One projection, in(rows × k) · W_eᵀ into out (rows × n) per expert, the `way` given; `slot` (0, 1):
  /// which of the pinned and device pointer arrays it fills.
  void projection(CublasWay way, const __nv_bfloat16* w, const __nv_bfloat16* in, __nv_bfloat16* out, int n, int k,
                  int slot, cudaStream_t stream);
  cublasHandle_t handle_;
  std::unique_ptr<MoeScratch> scratch_;
  MoeWeights w_;
  CublasWay gate_up_way_, down_way_;
  DeviceBuffer<__nv_bfloat16> c2_;     ///< rows × 2I: the gate+up GEMM's output
  DeviceBuffer<void*> ptrs_;           ///< the grouped call's pointer arrays: 2 projections × (A, B, C) × E
  int* host_counts_ = nullptr;         ///< pinned: E counts
  void** host_ptrs_ = nullptr;         ///< pinned: the pointer arrays before their copy
};

/// The fp64 reference of the layer at some tokens: out(t, ·) for each t in `tokens_checked`, from the
/// layer's own routing (`ids`, `weights` on the host, T·k each) and the bf16 x and weights on the device.
/// The error scale of each output is Σ_j weight_j Σ_i |W_down(c, i)|·scale(h_i), with scale(h_i) that of
/// step 3's reference (swiglu_reference): it covers h's and y's roundings to bf16 as the layer makes them.
Reference moe_reference(const MoeShape& s, const __nv_bfloat16* x, MoeWeights w, const std::vector<int>& ids,
                        const std::vector<float>& weights, const std::vector<int>& tokens_checked);

/// Empty when each of `tokens_checked`'s k experts and weights are the top k of its logits (`logits`:
/// the host copy, T × E) and their softmax; otherwise the first token that differs, in one line.
std::string routing_mismatch(const MoeShape& s, const std::vector<float>& logits, const std::vector<int>& ids,
                             const std::vector<float>& weights, const std::vector<int>& tokens_checked);

}  // namespace mm::ch13
