// Chapter 13, step 4: the whole MoE feed-forward pass (moe_layer.hpp), its cuBLAS twin and its fp64
// reference.
#include "13_grouped_moe/moe_layer.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>

#include "13_grouped_moe/routing.hpp"
#include "13_grouped_moe/steps.hpp"
#include "harness/cuda_check.hpp"

namespace mm::ch13 {

using bf16 = __nv_bfloat16;

namespace {

constexpr int kLogitsPerLane = kMaxExperts / 32;  // a warp holds a token's logits, 8 per lane

/// Rows of A, h and y for `tokens` tokens: every routed row, each expert's padding to the tile's 128
/// rows (at most 127 each), and at least one tile.
std::int64_t routed_rows(const MoeShape& s, int tokens) {
  const std::int64_t rows = std::int64_t(tokens) * s.topk + std::int64_t(s.experts) * (kGroupAlignment - 1);
  return std::max<std::int64_t>((rows + kGroupAlignment - 1) / kGroupAlignment * kGroupAlignment, kGroupAlignment);
}

__global__ void router_logits_kernel(int tokens, int experts, Routing routing, std::uint64_t seed, float* logits) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= std::int64_t(tokens) * experts) return;
  logits[i] = router_score(routing, seed, std::uint64_t(i), int(i % experts), experts);  // route_kernel's scores
}

/// One warp per token: its logits in registers (lane l holds experts l, l + 32, ...), k rounds of a
/// warp-wide arg-max (ties to the lower expert; NaN counts as -inf), the weights as a softmax over the
/// k chosen logits (Mixtral's and Qwen3's normalized top-k), one count per choice.
__global__ void topk_kernel(const float* logits, int tokens, int experts, int topk, int* ids, float* weights, int* counts) {
  const int token = int((std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32), lane = int(threadIdx.x % 32);
  if (token >= tokens) return;
  float v[kLogitsPerLane];
  unsigned taken = 0;  // bit i: expert lane + 32·i chosen already, or past E
  for (int i = 0; i < kLogitsPerLane; ++i) {
    const int e = lane + 32 * i;
    v[i] = e < experts ? logits[std::int64_t(token) * experts + e] : -INFINITY;
    if (isnan(v[i])) v[i] = -INFINITY;
    if (e >= experts) taken |= 1u << i;
  }
  float chosen[kMaxTopK];
  int chosen_id[kMaxTopK];
  for (int j = 0; j < topk; ++j) {
    float best = -INFINITY;
    int best_e = INT_MAX;  // none yet
    for (int i = 0; i < kLogitsPerLane; ++i) {
      const int e = lane + 32 * i;
      if (!(taken >> i & 1u) && (best_e == INT_MAX || v[i] > best)) best = v[i], best_e = e;
    }
    for (int off = 16; off > 0; off /= 2) {
      const float ob = __shfl_xor_sync(0xffffffffu, best, off);
      const int oe = __shfl_xor_sync(0xffffffffu, best_e, off);
      if (oe != INT_MAX && (best_e == INT_MAX || ob > best || (ob == best && oe < best_e))) best = ob, best_e = oe;
    }
    chosen[j] = best, chosen_id[j] = best_e;
    if (best_e % 32 == lane) taken |= 1u << (best_e / 32);
  }
  if (lane != 0) return;
  float sum = 0.0f;
  const bool finite = chosen[0] > -INFINITY;  // all -inf: equal weights
  for (int j = 0; j < topk; ++j) sum += finite ? expf(chosen[j] - chosen[0]) : 1.0f;
  for (int j = 0; j < topk; ++j) {
    ids[std::int64_t(token) * topk + j] = chosen_id[j];
    weights[std::int64_t(token) * topk + j] = (finite ? expf(chosen[j] - chosen[0]) : 1.0f) / sum;
    atomicAdd(&counts[chosen_id[j]], 1);
  }
}

/// One warp: step 1's layout from the counts. Lane l takes experts 8l .. 8l + 7; each expert's rows
/// rounded up to 128, a scan across the lanes, then each expert's first row and end.
__global__ void expert_offsets_kernel(const int* counts, int experts, std::int64_t* offsets, std::int64_t* first,
                                      std::int64_t* rows) {
  const int lane = int(threadIdx.x), e0 = lane * kLogitsPerLane;
  auto padded = [](std::int64_t c) { return (c + kGroupAlignment - 1) / kGroupAlignment * kGroupAlignment; };
  std::int64_t mine = 0;
  for (int e = e0; e < e0 + kLogitsPerLane && e < experts; ++e) mine += padded(counts[e]);
  std::int64_t scan = mine;  // inclusive scan over the lanes
  for (int off = 1; off < 32; off *= 2) {
    const std::int64_t o = __shfl_up_sync(0xffffffffu, scan, off);
    if (lane >= off) scan += o;
  }
  std::int64_t start = scan - mine;
  if (lane == 0) offsets[0] = 0;
  for (int e = e0; e < e0 + kLogitsPerLane && e < experts; ++e) {
    first[e] = start, rows[e] = counts[e], offsets[e + 1] = start + counts[e];
    start += padded(counts[e]);
  }
}

/// One block per token: a row of A for each of its k experts (the next free row of the expert's, by
/// an atomic cursor), then x's row copied to each, 16 bytes a thread at a time.
__global__ void permute_kernel(const bf16* x, int hidden, int topk, const int* ids, const std::int64_t* first, int* cursor,
                               std::int64_t* pos, bf16* a) {
  __shared__ std::int64_t dst[kMaxTopK];
  const std::int64_t t = blockIdx.x;
  if (int(threadIdx.x) < topk) {
    const int e = ids[t * topk + threadIdx.x];
    const std::int64_t p = first[e] + atomicAdd(&cursor[e], 1);
    pos[t * topk + threadIdx.x] = p, dst[threadIdx.x] = p;
  }
  __syncthreads();
  const uint4* src = reinterpret_cast<const uint4*>(x + t * hidden);
  for (int v = int(threadIdx.x); v < hidden / 8; v += int(blockDim.x)) {
    const uint4 value = src[v];
    for (int j = 0; j < topk; ++j) reinterpret_cast<uint4*>(a + dst[j] * hidden)[v] = value;
  }
}

/// One block per token: out(t) = Σ_j weight(t, j)·y(pos(t, j)), in fp32, the k rows in a fixed order.
__global__ void combine_kernel(const bf16* y, int hidden, int topk, const std::int64_t* pos, const float* weights, bf16* out) {
  __shared__ std::int64_t src[kMaxTopK];
  __shared__ float w[kMaxTopK];
  const std::int64_t t = blockIdx.x;
  if (int(threadIdx.x) < topk) src[threadIdx.x] = pos[t * topk + threadIdx.x], w[threadIdx.x] = weights[t * topk + threadIdx.x];
  __syncthreads();
  for (int v = int(threadIdx.x); v < hidden / 8; v += int(blockDim.x)) {
    float acc[8] = {};
    for (int j = 0; j < topk; ++j) {
      const uint4 value = reinterpret_cast<const uint4*>(y + src[j] * hidden)[v];
      const auto* y2 = reinterpret_cast<const __nv_bfloat162*>(&value);
      for (int q = 0; q < 4; ++q) acc[2 * q] += w[j] * __low2float(y2[q]), acc[2 * q + 1] += w[j] * __high2float(y2[q]);
    }
    uint4 o;
    auto* o2 = reinterpret_cast<__nv_bfloat162*>(&o);
    for (int q = 0; q < 4; ++q) o2[q] = __floats2bfloat162_rn(acc[2 * q], acc[2 * q + 1]);
    reinterpret_cast<uint4*>(out + t * hidden)[v] = o;
  }
}

/// The reference's gate+up: one warp per (checked pair, output column) of x(t)·W_gate_up(e)ᵀ in fp64,
/// with the sum of the products' magnitudes (the error scale).
__global__ void reference_gate_up_kernel(const bf16* x, const bf16* w, const int* pair_token, const int* pair_expert,
                                         int hidden, int n2, double* value, double* scale) {
  const int pair = int(blockIdx.x), c = int(blockIdx.y) * 8 + int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  if (c >= n2) return;
  const bf16* xr = x + std::int64_t(pair_token[pair]) * hidden;
  const bf16* wr = w + (std::int64_t(pair_expert[pair]) * n2 + c) * hidden;
  double s = 0, a = 0;
  for (int i = lane; i < hidden; i += 32) {
    const double p = double(__bfloat162float(xr[i])) * double(__bfloat162float(wr[i]));
    s += p, a += fabs(p);
  }
  for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off), a += __shfl_xor_sync(0xffffffffu, a, off);
  if (lane == 0) value[std::int64_t(pair) * n2 + c] = s, scale[std::int64_t(pair) * n2 + c] = a;
}

/// The reference's rest: one warp per (checked token, output column): h from the pair's gate and up
/// (interleaved by 128), its down projection, the weighted sum over the token's k pairs; the error
/// scale likewise from swiglu_reference's scale of h.
__global__ void reference_down_kernel(const double* gu, const double* gu_scale, const bf16* w_down, const int* pair_expert,
                                      const float* pair_weight, int topk, int hidden, int width, double* out, double* scale) {
  const int token = int(blockIdx.x), c = int(blockIdx.y) * 8 + int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  if (c >= hidden) return;
  double o = 0, oa = 0;
  for (int j = 0; j < topk; ++j) {
    const int pair = token * topk + j;
    const double* g = gu + std::int64_t(pair) * 2 * width;
    const double* ga = gu_scale + std::int64_t(pair) * 2 * width;
    const bf16* wr = w_down + (std::int64_t(pair_expert[pair]) * hidden + c) * width;
    double s = 0, a = 0;
    for (int i = lane; i < width; i += 32) {
      const int gi = (i / 128) * 256 + i % 128, ui = gi + 128;
      const double silu = g[gi] / (1.0 + exp(-g[gi])), h = silu * g[ui];
      const double h_scale = 1.1 * fabs(g[ui]) * ga[gi] + fabs(silu) * ga[ui] + fabs(h);
      const double wd = double(__bfloat162float(wr[i]));
      s += h * wd, a += h_scale * fabs(wd);
    }
    for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off), a += __shfl_xor_sync(0xffffffffu, a, off);
    o += double(pair_weight[pair]) * s, oa += double(pair_weight[pair]) * a;
  }
  if (lane == 0) out[std::int64_t(token) * hidden + c] = o, scale[std::int64_t(token) * hidden + c] = oa;
}

}  // namespace

std::string moe_rejects(const MoeShape& s, int tokens) {
  if (s.experts < 1 || s.experts > kMaxExperts)
    return "needs 1 to " + std::to_string(kMaxExperts) + " experts (the top-k holds a token's logits in a warp's registers)";
  if (s.topk < 1 || s.topk > kMaxTopK || s.topk > s.experts)
    return "needs 1 <= top-k <= " + std::to_string(kMaxTopK) + " and top-k <= the experts";
  if (s.hidden < 1 || s.hidden % 256 != 0)
    return "needs the hidden size H % 256 == 0 (the down projection's 256-column tiles stay in one expert's weight)";
  if (s.width < 1 || s.width % 128 != 0)
    return "needs the expert width I % 128 == 0 (the gate and up weights interleave by 128 rows)";
  if (tokens < 1) return "needs at least one token";
  if (std::int64_t(tokens) * s.topk + std::int64_t(s.experts) * kGroupAlignment > INT32_MAX ||
      std::int64_t(s.experts) * 2 * s.width > INT32_MAX || std::int64_t(s.experts) * s.hidden > INT32_MAX)
    return "needs the routed rows and E·2I, E·H below 2^31 (TMA's int coordinates)";
  return {};
}

void make_router_logits(float* logits, int tokens, int experts, Routing routing, std::uint64_t seed, cudaStream_t stream) {
  const std::int64_t n = std::int64_t(tokens) * experts;
  if (n == 0) return;
  router_logits_kernel<<<unsigned((n + 255) / 256), 256, 0, stream>>>(tokens, experts, routing, seed, logits);
  MM_CUDA_CHECK(cudaGetLastError());
}

MoeScratch::MoeScratch(const MoeShape& s, int tokens_)
    : shape(s),
      tokens(tokens_),
      rows(routed_rows(s, tokens_)),
      ids(std::size_t(tokens_) * s.topk),
      weights(std::size_t(tokens_) * s.topk),
      counts(2 * std::size_t(s.experts)),
      offsets(std::size_t(s.experts) + 1),
      first(std::size_t(s.experts)),
      rows_of(std::size_t(s.experts)),
      pos(std::size_t(tokens_) * s.topk),
      a(std::size_t(rows) * s.hidden),
      h(std::size_t(rows) * s.width),
      y(std::size_t(rows) * s.hidden) {
  // The padding rows (each expert's last tile past its rows) are multiplied but never read: zeros there
  // rather than whatever the allocation held (NaN or not), once; the permute writes only routed rows.
  MM_CUDA_CHECK(cudaMemset(a.data(), 0, a.size() * sizeof(bf16)));
  MM_CUDA_CHECK(cudaMemset(h.data(), 0, h.size() * sizeof(bf16)));
}

void MoeScratch::route_and_permute(const float* logits, const bf16* x, cudaStream_t stream) {
  const MoeShape& s = shape;
  MM_CUDA_CHECK(cudaMemsetAsync(counts.data(), 0, counts.size() * sizeof(int), stream));
  topk_kernel<<<unsigned((std::int64_t(tokens) * 32 + 255) / 256), 256, 0, stream>>>(logits, tokens, s.experts, s.topk, ids.data(),
                                                                                     weights.data(), counts.data());
  expert_offsets_kernel<<<1, 32, 0, stream>>>(counts.data(), s.experts, offsets.data(), first.data(), rows_of.data());
  permute_kernel<<<unsigned(tokens), 128, 0, stream>>>(x, s.hidden, s.topk, ids.data(), first.data(), counts.data() + s.experts,
                                                       pos.data(), a.data());
  MM_CUDA_CHECK(cudaGetLastError());
}

void MoeScratch::combine(bf16* out, cudaStream_t stream) const {
  combine_kernel<<<unsigned(tokens), 128, 0, stream>>>(y.data(), shape.hidden, shape.topk, pos.data(), weights.data(), out);
  MM_CUDA_CHECK(cudaGetLastError());
}

MoeLayer::MoeLayer(const MoeShape& s, int tokens, MoeWeights w, int tile_rows) {
  if (std::string why = moe_rejects(s, tokens); !why.empty()) throw std::invalid_argument("moe_layer: " + why);
  scratch_ = std::make_unique<MoeScratch>(s, tokens);
  MoeScratch& m = *scratch_;
  GroupedProblem gu;  // A (rows × H) · W_gate_upᵀ, SiLU(gate)·up into h (rows × I)
  gu.groups = s.experts, gu.n = 2 * s.width, gu.k = s.hidden, gu.rows = m.rows, gu.offsets = m.offsets.data();
  gate_up_ = prepare_grouped_gemm(gu, m.a.data(), w.gate_up, m.h.data(), 0, tile_rows, GroupedVariant::swiglu);
  GroupedProblem dn;  // h (rows × I) · W_downᵀ into y (rows × H)
  dn.groups = s.experts, dn.n = s.hidden, dn.k = s.width, dn.rows = m.rows, dn.offsets = m.offsets.data();
  down_ = prepare_grouped_gemm(dn, m.h.data(), w.down, m.y.data(), 0, tile_rows, GroupedVariant::gemm);
}

void MoeLayer::run(const float* logits, const bf16* x, bf16* out, cudaStream_t stream) {
  scratch_->route_and_permute(logits, x, stream);
  gate_up_.run(stream);
  down_.run(stream);
  scratch_->combine(out, stream);
}

std::vector<MoePart> MoeLayer::parts(const float* logits, const bf16* x, bf16* out) {
  return {{"route_permute", [=, this](cudaStream_t s) { scratch_->route_and_permute(logits, x, s); }},
          {"gate_up", gate_up_.run},
          {"down", down_.run},
          {"combine", [=, this](cudaStream_t s) { scratch_->combine(out, s); }}};
}

std::string MoeLayer::path() const { return gate_up_.path + " + " + down_.path; }

CublasMoeLayer::CublasMoeLayer(cublasHandle_t handle, const MoeShape& s, int tokens, MoeWeights w, CublasWay gate_up,
                               CublasWay down)
    : handle_(handle), w_(w), gate_up_way_(gate_up), down_way_(down) {
  if (std::string why = moe_rejects(s, tokens); !why.empty()) throw std::invalid_argument("cublas moe layer: " + why);
  scratch_ = std::make_unique<MoeScratch>(s, tokens);
  c2_ = DeviceBuffer<bf16>(std::size_t(scratch_->rows) * 2 * s.width);
  ptrs_ = DeviceBuffer<void*>(6 * std::size_t(s.experts));
  MM_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_counts_), sizeof(int) * s.experts));
  MM_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_ptrs_), sizeof(void*) * 6 * s.experts));
}

CublasMoeLayer::~CublasMoeLayer() {
  cudaFreeHost(host_counts_);
  cudaFreeHost(host_ptrs_);
}

void CublasMoeLayer::projection(CublasWay way, const bf16* w, const bf16* in, bf16* out, int n, int k, int slot,
                                cudaStream_t stream) {
  const MoeShape& s = scratch_->shape;
  MM_CUBLAS_CHECK(cublasSetStream(handle_, stream));
  const float one = 1.0f, zero = 0.0f;
  std::int64_t first = 0;
  std::vector<int> m_arr, n_arr, k_arr, group_size;
  std::vector<float> alpha, beta;
  std::vector<cublasOperation_t> ta, tb;
  void** pa = host_ptrs_ + std::size_t(slot) * 3 * s.experts;  // this projection's A, B, C arrays
  void** pb = pa + s.experts;
  void** pc = pb + s.experts;
  int active = 0;
  for (int e = 0; e < s.experts; ++e) {
    const int rows = host_counts_[e];
    if (rows > 0) {
      // Column-major cuBLAS: outᵀ (N × rows) = W_e (N×K row-major = K×N column-major, op T) · inᵀ.
      if (way == CublasWay::loop) {
        MM_CUBLAS_CHECK(cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, n, rows, k, &one, w + std::int64_t(e) * n * k, CUDA_R_16BF,
                                     k, in + first * k, CUDA_R_16BF, k, &zero, out + first * n, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT));
      } else {
        pa[active] = const_cast<bf16*>(w + std::int64_t(e) * n * k), pb[active] = const_cast<bf16*>(in + first * k),
        pc[active] = out + first * n;  // cuBLAS takes every array as void*; it writes C only
        ta.push_back(CUBLAS_OP_T), tb.push_back(CUBLAS_OP_N), m_arr.push_back(n), n_arr.push_back(rows), k_arr.push_back(k);
        alpha.push_back(1.0f), beta.push_back(0.0f), group_size.push_back(1);
      }
      ++active;
    }
    first += (rows + kGroupAlignment - 1) / kGroupAlignment * kGroupAlignment;
  }
  if (way == CublasWay::loop || active == 0) return;
  void** d = ptrs_.data() + std::size_t(slot) * 3 * s.experts;
  // The three arrays side by side (E apart): the used part of each, in one copy of the slot.
  MM_CUDA_CHECK(cudaMemcpyAsync(d, pa, sizeof(void*) * 3 * s.experts, cudaMemcpyHostToDevice, stream));
  std::vector<int> ldk(active, k), ldn(active, n);
  MM_CUBLAS_CHECK(cublasGemmGroupedBatchedEx(handle_, ta.data(), tb.data(), m_arr.data(), n_arr.data(), k_arr.data(), alpha.data(),
                                             d, CUDA_R_16BF, ldk.data(), d + s.experts, CUDA_R_16BF, ldk.data(), beta.data(),
                                             d + 2 * s.experts, CUDA_R_16BF, ldn.data(), active,
                                             group_size.data(), CUBLAS_COMPUTE_32F));
}

void CublasMoeLayer::run(const float* logits, const bf16* x, bf16* out, cudaStream_t stream) {
  for (const MoePart& p : parts(logits, x, out)) p.run(stream);
}

std::vector<MoePart> CublasMoeLayer::parts(const float* logits, const bf16* x, bf16* out) {
  MoeScratch& m = *scratch_;
  const MoeShape s = m.shape;
  return {{"route_permute",
           [=, this, &m](cudaStream_t stream) {
             m.route_and_permute(logits, x, stream);
             MM_CUDA_CHECK(cudaMemcpyAsync(host_counts_, m.counts.data(), sizeof(int) * s.experts, cudaMemcpyDeviceToHost, stream));
             MM_CUDA_CHECK(cudaStreamSynchronize(stream));  // the calls' sizes are host values
           }},
          {"gate_up",
           [=, this, &m](cudaStream_t stream) {
             projection(gate_up_way_, w_.gate_up, m.a.data(), c2_.data(), 2 * s.width, s.hidden, 0, stream);
           }},
          {"silu",
           [=, this, &m](cudaStream_t stream) {
             silu_mul_grouped(c2_.data(), m.h.data(), 2 * s.width, m.first.data(), m.rows_of.data(), s.experts, stream);
           }},
          {"down",
           [=, this, &m](cudaStream_t stream) { projection(down_way_, w_.down, m.h.data(), m.y.data(), s.hidden, s.width, 1, stream); }},
          {"combine", [=, &m](cudaStream_t stream) { m.combine(out, stream); }}};
}

Reference moe_reference(const MoeShape& s, const bf16* x, MoeWeights w, const std::vector<int>& ids,
                        const std::vector<float>& weights, const std::vector<int>& tokens_checked) {
  const int checked = int(tokens_checked.size()), pairs = checked * s.topk, n2 = 2 * s.width;
  std::vector<int> pair_token(pairs), pair_expert(pairs);
  std::vector<float> pair_weight(pairs);
  for (int i = 0; i < checked; ++i)
    for (int j = 0; j < s.topk; ++j) {
      const std::size_t src = std::size_t(tokens_checked[i]) * s.topk + j;
      pair_token[i * s.topk + j] = tokens_checked[i], pair_expert[i * s.topk + j] = ids[src];
      pair_weight[i * s.topk + j] = weights[src];
    }
  Reference ref;
  ref.m = checked, ref.n = s.hidden;
  if (checked == 0) return ref;
  DeviceBuffer<int> d_token(pair_token), d_expert(pair_expert);
  DeviceBuffer<float> d_weight(pair_weight);
  DeviceBuffer<double> gu(std::size_t(pairs) * n2), gu_scale(std::size_t(pairs) * n2), out(std::size_t(checked) * s.hidden),
      out_scale(std::size_t(checked) * s.hidden);
  reference_gate_up_kernel<<<dim3(unsigned(pairs), unsigned((n2 + 7) / 8)), 256>>>(x, w.gate_up, d_token.data(), d_expert.data(),
                                                                                 s.hidden, n2, gu.data(), gu_scale.data());
  reference_down_kernel<<<dim3(unsigned(checked), unsigned((s.hidden + 7) / 8)), 256>>>(
      gu.data(), gu_scale.data(), w.down, d_expert.data(), d_weight.data(), s.topk, s.hidden, s.width, out.data(), out_scale.data());
  MM_CUDA_CHECK(cudaGetLastError());
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  ref.value = out.download();
  ref.abs_sum = out_scale.download();
  return ref;
}

std::string routing_mismatch(const MoeShape& s, const std::vector<float>& logits, const std::vector<int>& ids,
                             const std::vector<float>& weights, const std::vector<int>& tokens_checked) {
  for (int t : tokens_checked) {
    std::vector<int> order(s.experts);
    for (int e = 0; e < s.experts; ++e) order[e] = e;
    auto logit = [&](int e) {
      const float v = logits[std::size_t(t) * s.experts + e];
      return std::isnan(v) ? -INFINITY : v;
    };
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logit(a) > logit(b); });
    double sum = 0;
    const bool finite = logit(order[0]) > -INFINITY;
    for (int j = 0; j < s.topk; ++j) sum += finite ? std::exp(double(logit(order[j])) - logit(order[0])) : 1.0;
    for (int j = 0; j < s.topk; ++j) {
      const std::size_t i = std::size_t(t) * s.topk + j;
      const double want = (finite ? std::exp(double(logit(order[j])) - logit(order[0])) : 1.0) / sum;
      if (ids[i] != order[j] || std::fabs(weights[i] - want) > 1e-5)
        return "token " + std::to_string(t) + " choice " + std::to_string(j) + ": expert " + std::to_string(ids[i]) + " weight " +
               std::to_string(weights[i]) + ", the top-k says expert " + std::to_string(order[j]) + " weight " + std::to_string(want);
    }
  }
  return {};
}

}  // namespace mm::ch13
