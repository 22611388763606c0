// Chapter 13: grouped GEMM for mixture-of-experts layers. For each model's expert shapes, token count
// and routing (made on the device from a seed), one projection of every expert is timed three ways in
// the same process, on the same A, B and C:
//
//   cublas_loop         one cublasGemmEx per expert that got tokens (the loop a framework runs)
//   cublas_grouped      one cublasGemmGroupedBatchedEx over those experts
//   grouped_contiguous  this chapter's kernel: every expert's tiles in one persistent launch
//   grouped_masked      the same kernel reading each expert's rows from a fixed-capacity buffer (decode)
//   *_64                both with 64-row tiles (step 2, decode: 256 tokens or fewer, as grouped_masked)
//   grouped_decode, grouped_masked_decode  both with the weights on wgmma's M, 16 token rows a tile (step 6, decode)
//   grouped_skip_padding grouped_contiguous whose consumer warpgroups skip 64 rows of padding (the appendix's)
//
// With --swiglu, the gate+up projection followed by SiLU(gate)·up, every way: cuBLAS's two and
// grouped_contiguous (grouped_contiguous_64 at decode) each followed by an elementwise kernel
// (rows named "+silu"), against step 3's grouped_swiglu (_64), whose epilogue does it.
//
// With --fp8, step 5 (grouped_fp8.hpp): the grouped kernel on e4m3 experts with DeepSeek-V3's block
// scales, against its roofline (chapter 12's dense fp8_block_scaled and cudaMemcpy).
//
// With --moe, the whole MoE feed-forward pass (step 4, moe_layer.hpp): routing from the router's logits,
// permute, gate+up with SiLU(gate)·up, down, combine; this chapter's kernels (moe_layer) against the same
// layer from cuBLAS calls in four ways (cublas_layer_<gate_up>_<down>, loop or grouped each), each step
// of the layers also timed alone (rows <layer>/<step>).
//
// and against a roofline per shape: the useful flops at the dense GEMM's speed (cuBLAS, 8192 rows of
// the same N and K, measured here) or the bytes that must move (the active experts' weights, A and C)
// at cudaMemcpy's speed (measured here), whichever takes longer. C = A·Bᵀ per expert, bf16, RCR.
//
// Build: cmake --build build --target ch13_grouped_moe
// Run:   build/bin/ch13_grouped_moe [--model qwen3] [--tokens 4096,64] [--csv results.csv]   (--help for all flags)
#include <CLI/CLI.hpp>
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "13_grouped_moe/grouped_fp8.hpp"
#include "13_grouped_moe/moe_layer.hpp"
#include "13_grouped_moe/steps.hpp"
#include "harness/arch_check.hpp"
#include "harness/chapter_run.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "harness/fp8_scales.hpp"
#include "harness/gemm_runner.hpp"  // gemm_tolerance
#include "harness/random.hpp"
#include "harness/reference.hpp"
#include "harness/results.hpp"  // utc_timestamp, csv_unwritable
#include "harness/timing.hpp"

namespace {

using namespace mm;
using namespace mm::ch13;

/// The most tokens a batch may have (--tokens): DeepSeek-V3's routed A is then 524,288 rows of 7168 bf16.
constexpr std::int64_t kMaxTokens = 65536;

/// A model's mixture-of-experts layer: E experts, top-k, and the two projections' N and K.
struct Model {
  std::string name;
  int experts, topk, hidden, width;
};
const std::vector<Model> kModels = {
    {"deepseek-v3", 256, 8, 7168, 2048},
    {"mixtral-8x7b", 8, 2, 4096, 14336},
    {"qwen3-30b-a3b", 128, 8, 2048, 768},
};

/// A projection of the layer: gate and up fused (N = 2·width, K = hidden), or down (N = hidden, K = width).
struct Projection {
  std::string name;
  int n, k;
};
std::vector<Projection> projections(const Model& m) { return {{"gate_up", 2 * m.width, m.hidden}, {"down", m.hidden, m.width}}; }

/// One measured row of the chapter's CSV (a schema of its own: see kHeader).
struct Row {
  std::string kernel, model, projection, routing, path, dtype = "bf16";
  int tokens = 0, topk = 0, experts = 0, active = 0, n = 0, k = 0;
  std::int64_t rows = 0, max_rows = 0, buffer_rows = 0;
  double median_ms = 0, min_ms = 0, tflops = 0, weight_gbps = 0, roof_ms = 0, pct_of_roof = 0, pct_of_loop = 0,
         pct_of_grouped = 0, pct_of_best_cublas = 0, rel_error = not_measured;
};
const char* kHeader =
    "chapter,kernel,dtype,layout,model,projection,tokens,experts,topk,routing,active_experts,rows,max_rows,buffer_rows,N,K,"
    "median_ms,min_ms,tflops,weight_gbps,roof_ms,pct_of_roof,pct_of_loop,pct_of_grouped,pct_of_best_cublas,rel_error,gpu,"
    "cuda_version,timestamp,path";

std::string num(double v) {
  if (std::isnan(v)) return "";
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

void write_rows(const std::string& path, const std::vector<Row>& rows) {
  std::ofstream f(path);
  f << kHeader << '\n';
  const DeviceInfo& dev = device_info();
  const std::string when = utc_timestamp(), cuda = cuda_version_string();
  for (const Row& r : rows)
    f << "13_grouped_moe," << r.kernel << ',' << r.dtype << ",RCR," << r.model << ',' << r.projection << ',' << r.tokens << ',' << r.experts
      << ',' << r.topk << ',' << r.routing << ',' << r.active << ',' << r.rows << ',' << r.max_rows << ',' << r.buffer_rows << ','
      << r.n << ',' << r.k << ',' << num(r.median_ms) << ',' << num(r.min_ms) << ',' << num(r.tflops) << ','
      << num(r.weight_gbps) << ',' << num(r.roof_ms) << ',' << num(r.pct_of_roof) << ',' << num(r.pct_of_loop) << ','
      << num(r.pct_of_grouped) << ',' << num(r.pct_of_best_cublas) << ',' << num(r.rel_error) << ',' << dev.name << ','
      << cuda << ',' << when << ',' << r.path << '\n';
  if (!f) {
    std::cerr << "ch13_grouped_moe: error: --csv: cannot write '" << path << "'\n";
    std::exit(2);
  }
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');) out.push_back(x);
  return out;
}

[[noreturn]] void bad(const std::string& flag, const std::string& why) {
  std::cerr << "ch13_grouped_moe: error: " << flag << ": " << why << '\n';
  std::exit(2);
}

/// cuBLAS's two ways over the same operands: one GEMM per active expert, or one grouped call.
struct CublasWays {
  cublasHandle_t handle = nullptr;
  std::vector<int> active;  // experts with rows
  std::vector<int> m_arr, n_arr, k_arr, ld_k, ld_n;
  std::vector<float> alpha, beta;
  std::vector<cublasOperation_t> ta, tb;
  DeviceBuffer<const void*> a_ptrs, b_ptrs;
  DeviceBuffer<void*> c_ptrs;
  std::vector<int> group_size;
  const bf16 *A = nullptr, *B = nullptr;
  bf16* C = nullptr;
  std::vector<std::int64_t> first, rows;
  int n = 0, k = 0;

  CublasWays(cublasHandle_t h, const bf16* A_, const bf16* B_, bf16* C_, const std::vector<std::int64_t>& first_,
             const std::vector<std::int64_t>& rows_, int n_, int k_)
      : handle(h), A(A_), B(B_), C(C_), first(first_), rows(rows_), n(n_), k(k_) {
    std::vector<const void*> pa, pb;
    std::vector<void*> pc;
    for (int g = 0; g < int(rows.size()); ++g) {
      if (rows[g] == 0) continue;
      active.push_back(g);
      // Column-major cuBLAS: Cᵀ (N × M_g) = B_g (N×K row-major = K×N col-major, op T) · A_gᵀ.
      ta.push_back(CUBLAS_OP_T), tb.push_back(CUBLAS_OP_N);
      m_arr.push_back(n), n_arr.push_back(int(rows[g])), k_arr.push_back(k);
      ld_k.push_back(k), ld_n.push_back(n);
      alpha.push_back(1.0f), beta.push_back(0.0f), group_size.push_back(1);
      pa.push_back(B + std::int64_t(g) * n * k);
      pb.push_back(A + first[g] * k);
      pc.push_back(C + first[g] * n);
    }
    a_ptrs = DeviceBuffer<const void*>(pa);
    b_ptrs = DeviceBuffer<const void*>(pb);
    c_ptrs = DeviceBuffer<void*>(pc);
  }
  void loop(cudaStream_t s) const {
    MM_CUBLAS_CHECK(cublasSetStream(handle, s));
    const float one = 1.0f, zero = 0.0f;
    for (int g : active)
      MM_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, int(rows[g]), k, &one, B + std::int64_t(g) * n * k,
                                   CUDA_R_16BF, k, A + first[g] * k, CUDA_R_16BF, k, &zero, C + first[g] * n, CUDA_R_16BF, n,
                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
  void grouped(cudaStream_t s) const {
    if (active.empty()) return;
    MM_CUBLAS_CHECK(cublasSetStream(handle, s));
    MM_CUBLAS_CHECK(cublasGemmGroupedBatchedEx(handle, ta.data(), tb.data(), m_arr.data(), n_arr.data(), k_arr.data(),
                                               alpha.data(), a_ptrs.data(), CUDA_R_16BF, ld_k.data(), b_ptrs.data(),
                                               CUDA_R_16BF, ld_k.data(), beta.data(), c_ptrs.data(), CUDA_R_16BF,
                                               ld_n.data(), int(active.size()), group_size.data(), CUBLAS_COMPUTE_32F));
  }
};

/// Our C against the fp64 reference on some rows of some experts: the first rows and the last rows
/// (its partial last tile) of the first active expert and of the busiest one. C was poisoned first.
/// `swiglu`: C holds SiLU(gate)·up of the gate+up GEMM (N / 2 columns; step 3).
CheckResult check_some_experts(const bf16* A, const bf16* B, const bf16* C, const std::vector<std::int64_t>& first,
                               const std::vector<std::int64_t>& rows, int n, int k, bool swiglu) {
  const int c_cols = swiglu ? n / 2 : n;
  std::vector<int> experts;
  for (int g = 0; g < int(rows.size()); ++g)
    if (rows[g] > 0) {
      experts.push_back(g);
      break;
    }
  experts.push_back(int(std::max_element(rows.begin(), rows.end()) - rows.begin()));
  CheckResult worst;  // the largest error, or the first failure
  worst.ok = true;
  for (int g : experts) {
    if (rows[g] == 0) continue;
    for (std::int64_t r0 : {std::int64_t(0), std::max<std::int64_t>(0, rows[g] - 160)}) {
      const std::int64_t m = std::min<std::int64_t>(rows[g] - r0, 160);
      GemmProblem p;
      p.m = m, p.n = n, p.k = k, p.a = Order::row, p.b = Order::col, p.c = Order::row;
      const Reference gemm_ref = reference_gemm_device(p, A + (first[g] + r0) * k, B + std::int64_t(g) * n * k);
      const Reference ref = swiglu ? swiglu_reference(gemm_ref) : gemm_ref;
      std::vector<bf16> out(std::size_t(m) * c_cols);
      MM_CUDA_CHECK(cudaMemcpy(out.data(), C + (first[g] + r0) * c_cols, out.size() * sizeof(bf16), cudaMemcpyDeviceToHost));
      const CheckResult c = check_gemm(ref, out, Order::row, gemm_tolerance<bf16>(DType::bf16));
      if (!worst.ok) continue;
      if (!c.ok) {
        worst = c;
        worst.summary = "expert " + std::to_string(g) + " rows " + std::to_string(r0) + "..: " + c.summary;
      } else if (c.rel_frobenius >= worst.rel_frobenius) {
        worst = c;
      }
    }
  }
  return worst;
}

/// cuBLAS's dense TFLOP/s at 8192 rows of this N and K (the flop roof), with `b` (N × K) as its weight.
double dense_tflops_of(cublasHandle_t handle, const bf16* b, int n, int k, const TimingOptions& timing, std::uint64_t seed) {
  const int m = 8192;
  DeviceBuffer<bf16> a(std::size_t(m) * k), c(std::size_t(m) * n);
  fill_random(a, seed + 2);
  const float one = 1.0f, zero = 0.0f;
  const Timing t = time_on_gpu(
      [&](cudaStream_t s) {
        MM_CUBLAS_CHECK(cublasSetStream(handle, s));
        MM_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_16BF, k, a.data(), CUDA_R_16BF, k,
                                     &zero, c.data(), CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      },
      timing);
  return 2.0 * m * n * double(k) / (t.median_ms * 1e-3) / 1e12;
}

/// The tokens whose output the whole pass's check compares (the first, the last, some between).
std::vector<int> tokens_to_check(int tokens) {
  std::set<int> t;
  for (int i : {0, 1, tokens / 4, tokens / 2, 3 * tokens / 4, tokens - 2, tokens - 1})
    if (i >= 0 && i < tokens) t.insert(i);
  return {t.begin(), t.end()};
}

/// Step 5's C against chapter 12's fp64 reference on some rows of some experts (as check_some_experts:
/// the first rows of the first expert with rows, the last rows of the busiest), each from its own copy
/// of the expert's rows, weight and scales.
CheckResult check_some_experts_fp8(const __nv_fp8_e4m3* A, const __nv_fp8_e4m3* B, const std::vector<float>& sa,
                                   const std::vector<float>& sb, const bf16* C, std::int64_t buffer_rows,
                                   const std::vector<std::int64_t>& first, const std::vector<std::int64_t>& rows, int n, int k) {
  const std::int64_t kb = scale_blocks_k(k), kb4 = scale_blocks_k_padded(k), nb = n / 128;
  std::vector<std::pair<int, std::int64_t>> pieces;  // (expert, first row of the piece in the expert)
  for (int g = 0; g < int(rows.size()); ++g)
    if (rows[g] > 0) {
      pieces.push_back({g, 0});
      break;
    }
  const int busiest = int(std::max_element(rows.begin(), rows.end()) - rows.begin());
  pieces.push_back({busiest, std::max<std::int64_t>(0, rows[busiest] - 160)});
  CheckResult worst;
  worst.ok = true;
  for (const auto& [g, r0] : pieces) {
    if (rows[g] == 0) continue;
    const std::int64_t m = std::min<std::int64_t>(rows[g] - r0, 160), row = first[g] + r0;
    GemmProblem p;
    p.m = m, p.n = n, p.k = k, p.a = Order::row, p.b = Order::col, p.c = Order::row;
    DeviceBuffer<__nv_fp8_e4m3> a(std::size_t(m) * k), b(std::size_t(n) * k);
    MM_CUDA_CHECK(cudaMemcpy(a.data(), A + row * k, a.size(), cudaMemcpyDeviceToDevice));
    MM_CUDA_CHECK(cudaMemcpy(b.data(), B + std::int64_t(g) * n * k, b.size(), cudaMemcpyDeviceToDevice));
    BlockScales bs;
    bs.a.resize(std::size_t(m) * kb);
    for (std::int64_t q = 0; q < kb; ++q)
      for (std::int64_t i = 0; i < m; ++i) bs.a[q * m + i] = sa[q * buffer_rows + row + i];
    bs.b.assign(sb.begin() + std::int64_t(g) * nb * kb4, sb.begin() + std::int64_t(g + 1) * nb * kb4);
    DeviceScales ds;
    ds.set(p, bs);
    const Reference ref = fp8_reference(p, a, b, DType::e4m3_block, {});
    std::vector<bf16> out(std::size_t(m) * n);
    MM_CUDA_CHECK(cudaMemcpy(out.data(), C + row * n, out.size() * sizeof(bf16), cudaMemcpyDeviceToHost));
    const CheckResult c = check_gemm(ref, out, Order::row, gemm_tolerance<bf16>(DType::e4m3_block));
    if (!c.ok) {
      worst = c;
      worst.summary = "expert " + std::to_string(g) + " rows " + std::to_string(r0) + "..: " + c.summary;
      break;
    }
    if (c.rel_frobenius >= worst.rel_frobenius) worst = c;
  }
  return worst;
}

/// --fp8: step 5, the grouped kernel on e4m3 experts with DeepSeek-V3's block scales, per model,
/// projection, token count and routing (128-row tiles; at decode also 64-row, grouped_fp8_64), and with DeepSeek-V3 DeepGEMM's
/// anchor shape (4 experts of 8192 rows, N = 4096, K = 7168). Its roofline: the useful flops at chapter 12's dense
/// fp8_block_scaled speed (8192 rows of the same N and K, measured here), or the bytes (the active
/// experts' e4m3 weights, A in e4m3 and C in bf16) at cudaMemcpy's. Returns the failed checks.
int run_fp8_grouped(const std::vector<Model>& models, const std::vector<std::string>& proj_names,
                    const std::vector<int>& token_counts, const std::vector<Routing>& routings, const TimingOptions& timing,
                    std::uint64_t seed, bool no_check, bool no_roof, double copy_gbps, std::vector<Row>& out) {
  using e4m3 = __nv_fp8_e4m3;
  int failures = 0;
  std::map<std::pair<int, int>, double> dense;  // (N, K) -> chapter 12's dense TFLOP/s at 8192 rows
  // One shape: `rows` per expert (E = rows.size()) of the stacked weights B (E·N × K) and their scales.
  auto run_shape = [&](Row base, const std::vector<std::int64_t>& rows, const DeviceBuffer<e4m3>& B, int n, int k) {
    const int E = int(rows.size());
    const std::int64_t total = std::accumulate(rows.begin(), rows.end(), std::int64_t(0));
    const int active = int(std::count_if(rows.begin(), rows.end(), [](std::int64_t r) { return r > 0; }));
    const ContiguousLayout layout = contiguous_layout(rows);
    // The scales of one GEMM of all rows by all experts' stacked weights: A's (rows, Kb), B's (E·N/128, Kb4).
    GemmProblem all;
    all.m = layout.rows, all.n = std::int64_t(E) * n, all.k = k, all.a = Order::row, all.b = Order::col, all.c = Order::row;
    const BlockScales scales = random_block_scales(all, seed + 6);
    const std::vector<float>&sa = scales.a, &sb = scales.b;
    DeviceBuffer<float> d_sa(sa), d_sb(sb);
    if (!no_roof && !dense.count({n, k})) {
      GemmProblem p;
      p.m = 8192, p.n = n, p.k = k, p.a = Order::row, p.b = Order::col, p.c = Order::row;
      DeviceBuffer<e4m3> a(std::size_t(p.m) * k);
      DeviceBuffer<bf16> c(std::size_t(p.m) * n);
      fill_random(a, seed + 2);
      DeviceBuffer<float> d_sa_dense(random_block_scales(p, seed + 5).a);
      p.scale_a = d_sa_dense.data(), p.scale_b = d_sb.data();  // the first expert's weight scales
      const PreparedGemm g = prepare_dense_fp8_block_scaled(p, a.data(), B.data(), c.data());
      dense[{n, k}] = 2.0 * p.m * n * double(k) / (time_on_gpu(g.run, timing).median_ms * 1e-3) / 1e12;
    }
    DeviceBuffer<e4m3> A(std::size_t(layout.rows) * k);
    DeviceBuffer<bf16> C(std::size_t(layout.rows) * n);
    fill_random(A, seed + 3);
    DeviceBuffer<std::int64_t> offsets(layout.offsets);
    GroupedProblem g;
    g.groups = E, g.n = n, g.k = k, g.rows = layout.rows, g.offsets = offsets.data();
    // 128-row tiles always; at decode (256 tokens or fewer) also 64-row tiles, as step 2 for bf16.
    for (int tile_rows : base.tokens <= 256 ? std::vector<int>{128, 64} : std::vector<int>{128}) {
      const PreparedGemm gemm = prepare_grouped_fp8(g, A.data(), B.data(), d_sa.data(), d_sb.data(), C.data(), 0, tile_rows);
      Row r = base;
      r.kernel = tile_rows == 128 ? "grouped_fp8" : "grouped_fp8_64", r.dtype = "e4m3_block", r.path = gemm.path;
      r.n = n, r.k = k, r.experts = E, r.active = active;
      r.rows = total, r.max_rows = *std::max_element(rows.begin(), rows.end()), r.buffer_rows = layout.rows;
      if (!no_check) {
        MM_CUDA_CHECK(cudaMemset(C.data(), 0xff, C.size() * sizeof(bf16)));
        gemm.run(nullptr);
        MM_CUDA_CHECK(cudaDeviceSynchronize());
        const CheckResult c = check_some_experts_fp8(A.data(), B.data(), sa, sb, C.data(), layout.rows, layout.first, rows, n, k);
        r.rel_error = c.rel_frobenius;
        if (!c.ok) {
          ++failures;
          std::cout << "  " << r.kernel << " " << r.model << " " << r.projection << " " << r.tokens << " " << r.routing << ": " << c.summary << '\n';
        }
      }
      const Timing t = time_on_gpu(gemm.run, timing);
      const double flops = 2.0 * double(total) * n * double(k), weight_bytes = double(active) * n * double(k);
      const double bytes = weight_bytes + double(total) * (double(k) + 2.0 * n);
      r.median_ms = t.median_ms, r.min_ms = t.min_ms;
      r.tflops = flops / (t.median_ms * 1e-3) / 1e12;
      r.weight_gbps = weight_bytes / (t.median_ms * 1e-3) / 1e9;
      r.roof_ms = no_roof ? not_measured : std::max(flops / (dense[{n, k}] * 1e12), bytes / (copy_gbps * 1e9)) * 1e3;
      r.pct_of_roof = 100.0 * r.roof_ms / t.median_ms;
      r.pct_of_loop = r.pct_of_grouped = r.pct_of_best_cublas = not_measured;
      std::printf("%-14s %-15s %-8s %6d %-8s rows %7lld max %6lld  %8.3f ms %7.1f TFLOP/s %7.0f GB/s  roof %5.1f%% (dense %.0f TFLOP/s)\n",
                  r.kernel.c_str(), r.model.c_str(), r.projection.c_str(), r.tokens, r.routing.c_str(), (long long)r.rows,
                  (long long)r.max_rows, r.median_ms, r.tflops, r.weight_gbps, r.pct_of_roof, no_roof ? 0.0 : dense[{n, k}]);
      std::fflush(stdout);
      out.push_back(r);
    }
  };
  auto weights = [&](int E, int n, int k) {  // the experts' stacked e4m3 weights
    DeviceBuffer<e4m3> B(std::size_t(E) * n * k);
    fill_random(B, seed + 1);
    return B;
  };
  for (const Model& model : models)
    for (const Projection& proj : projections(model)) {
      if (std::find(proj_names.begin(), proj_names.end(), proj.name) == proj_names.end()) continue;
      const DeviceBuffer<e4m3> B = weights(model.experts, proj.n, proj.k);
      for (int tokens : token_counts)
        for (Routing routing : routings) {
          Row base;
          base.model = model.name, base.projection = proj.name, base.routing = routing_name(routing), base.tokens = tokens;
          base.topk = model.topk;
          run_shape(base, route(tokens, model.experts, model.topk, routing, seed + 7).rows, B, proj.n, proj.k);
        }
    }
  const bool deepseek = std::any_of(models.begin(), models.end(), [](const Model& m) { return m.name == "deepseek-v3"; });
  if (deepseek) {  // DeepGEMM's anchor (with DeepSeek-V3): 4 experts × 8192 rows, N = 4096, K = 7168 (1,346 TFLOP/s on an H800, its README)
    const DeviceBuffer<e4m3> B = weights(4, 4096, 7168);
    Row base;
    base.model = "deepgemm-anchor", base.projection = "gate_up", base.routing = "fixed", base.tokens = 4 * 8192, base.topk = 1;
    run_shape(base, std::vector<std::int64_t>(4, 8192), B, 4096, 7168);
  }
  return failures;
}

/// --moe: the whole MoE feed-forward pass (step 4) per model, token count and routing, on this chapter's
/// kernels (moe_layer) and from cuBLAS calls in each of the four ways of running its two projections
/// (cublas_layer_<gate_up way>_<down way>). Returns the failed checks.
int run_moe_passes(cublasHandle_t handle, const std::vector<Model>& models, const std::vector<int>& token_counts,
                   const std::vector<Routing>& routings, const TimingOptions& timing, std::uint64_t seed, bool no_check,
                   bool no_roof, double copy_gbps, std::vector<Row>& out) {
  int failures = 0;
  for (const Model& model : models) {
    const MoeShape shape{model.experts, model.topk, model.hidden, model.width};
    const int E = shape.experts, H = shape.hidden, I = shape.width;
    DeviceBuffer<bf16> w_gate_up(std::size_t(E) * 2 * I * H), w_down(std::size_t(E) * H * I);
    fill_random(w_gate_up, seed + 1);
    fill_random(w_down, seed + 4);
    const MoeWeights w{w_gate_up.data(), w_down.data()};
    const double dense_gu = no_roof ? not_measured : dense_tflops_of(handle, w.gate_up, 2 * I, H, timing, seed);
    const double dense_down = no_roof ? not_measured : dense_tflops_of(handle, w.down, H, I, timing, seed);
    for (int tokens : token_counts) {
      if (std::string why = moe_rejects(shape, tokens); !why.empty()) bad("--moe", model.name + ": " + why);
      for (Routing routing : routings) {
        DeviceBuffer<bf16> x(std::size_t(tokens) * H), y(std::size_t(tokens) * H);
        DeviceBuffer<float> logits(std::size_t(tokens) * E);
        fill_random(x, seed + 3);
        make_router_logits(logits.data(), tokens, E, routing, seed + 7, nullptr);
        const bool decode = tokens <= 256;
        Row base;
        base.model = model.name, base.projection = "layer", base.routing = routing_name(routing), base.tokens = tokens;
        base.topk = model.topk, base.experts = E, base.n = H, base.k = I;
        double flops = 0, weight_bytes = 0, roof_ms = not_measured;
        // Runs one way of the layer: checked at some tokens (output poisoned first), then timed.
        auto measure = [&](const std::string& name, const std::string& path, const MoeScratch& scratch,
                           const std::function<void(cudaStream_t)>& run) {
          Row r = base;
          r.kernel = name, r.path = path, r.buffer_rows = scratch.rows;
          if (!no_check) {
            MM_CUDA_CHECK(cudaMemset(y.data(), 0xff, y.size() * sizeof(bf16)));  // NaN: an unwritten element fails
            run(nullptr);
            MM_CUDA_CHECK(cudaDeviceSynchronize());
            const std::vector<int> checked = tokens_to_check(tokens), ids = scratch.ids.download();
            const std::vector<float> weights = scratch.weights.download();
            std::string why = routing_mismatch(shape, logits.download(), ids, weights, checked);
            if (why.empty()) {
              const Reference ref = moe_reference(shape, x.data(), w, ids, weights, checked);
              std::vector<bf16> got(checked.size() * std::size_t(H));
              for (std::size_t i = 0; i < checked.size(); ++i)
                MM_CUDA_CHECK(cudaMemcpy(got.data() + i * H, y.data() + std::size_t(checked[i]) * H, H * sizeof(bf16),
                                         cudaMemcpyDeviceToHost));
              const CheckResult c = check_gemm(ref, got, Order::row, gemm_tolerance<bf16>(DType::bf16));
              r.rel_error = c.rel_frobenius;
              if (!c.ok) why = c.summary;
            }
            if (!why.empty()) {
              ++failures;
              std::cout << "  " << name << " " << model.name << " " << tokens << " " << routing_name(routing) << ": " << why << '\n';
            }
          }
          if (flops == 0) {  // the routing's sizes, from the first way's run (every way routes alike)
            const std::vector<int> counts = scratch.counts.download();
            for (int e = 0; e < E; ++e) {
              base.rows += counts[e], base.max_rows = std::max<std::int64_t>(base.max_rows, counts[e]);
              base.active += counts[e] > 0;
            }
            r.rows = base.rows, r.max_rows = base.max_rows, r.active = base.active;
            flops = 2.0 * double(base.rows) * 3.0 * H * double(I);
            weight_bytes = 2.0 * double(base.active) * 3.0 * H * double(I);
            // Each projection's roof (step 3's for gate+up: x in, h out; down: h in, y out), added.
            const double act_bytes = 2.0 * double(base.rows) * (H + I);
            if (!no_roof)
              roof_ms = 1e3 * (std::max(2.0 * base.rows * 2.0 * I * H / (dense_gu * 1e12),
                                        (2.0 * base.active * 2.0 * I * H + act_bytes) / (copy_gbps * 1e9)) +
                               std::max(2.0 * base.rows * double(H) * I / (dense_down * 1e12),
                                        (2.0 * base.active * double(H) * I + act_bytes) / (copy_gbps * 1e9)));
          }
          const Timing t = time_on_gpu(run, timing);
          r.median_ms = t.median_ms, r.min_ms = t.min_ms, r.roof_ms = roof_ms;
          r.tflops = flops / (t.median_ms * 1e-3) / 1e12;
          r.weight_gbps = weight_bytes / (t.median_ms * 1e-3) / 1e9;
          r.pct_of_roof = 100.0 * roof_ms / t.median_ms;
          return r;
        };
        std::vector<Row> here, parts;
        // Each step of a layer timed alone (rows "<layer>/<step>", times only), after its whole runs.
        auto time_parts = [&](const std::string& layer_name, const std::vector<MoePart>& steps) {
          for (const MoePart& p : steps) {
            Row r = base;
            r.kernel = layer_name + "/" + p.name;
            const Timing t = time_on_gpu(p.run, timing);
            r.median_ms = t.median_ms, r.min_ms = t.min_ms;
            r.tflops = r.weight_gbps = r.roof_ms = r.pct_of_roof = r.pct_of_loop = r.pct_of_grouped = r.pct_of_best_cublas = not_measured;
            parts.push_back(r);
          }
        };
        {
          MoeLayer layer(shape, tokens, w, decode ? 64 : 128);
          here.push_back(measure("moe_layer", layer.path(), layer.scratch(),
                                 [&](cudaStream_t s) { layer.run(logits.data(), x.data(), y.data(), s); }));
          time_parts("moe_layer", layer.parts(logits.data(), x.data(), y.data()));
        }
        double best_cublas = 0;
        for (CublasWay gu : {CublasWay::loop, CublasWay::grouped})
          for (CublasWay dn : {CublasWay::loop, CublasWay::grouped}) {
            CublasMoeLayer layer(handle, shape, tokens, w, gu, dn);
            const std::string name = "cublas_layer_" + cublas_way_name(gu) + "_" + cublas_way_name(dn);
            here.push_back(measure(name, "cuBLAS " + cublas_way_name(gu) + " + silu_mul_grouped + cuBLAS " + cublas_way_name(dn),
                                   layer.scratch(), [&](cudaStream_t s) { layer.run(logits.data(), x.data(), y.data(), s); }));
            best_cublas = best_cublas == 0 ? here.back().median_ms : std::min(best_cublas, here.back().median_ms);
            if (gu == dn) time_parts(name, layer.parts(logits.data(), x.data(), y.data()));
          }
        const double loop_ms = here[1].median_ms, grouped_ms = here[4].median_ms;  // all-loop and all-grouped
        for (Row& r : here) {
          r.rows = base.rows, r.max_rows = base.max_rows, r.active = base.active;
          r.pct_of_loop = 100.0 * loop_ms / r.median_ms;
          r.pct_of_grouped = 100.0 * grouped_ms / r.median_ms;
          r.pct_of_best_cublas = 100.0 * best_cublas / r.median_ms;
          std::printf("%-28s %-13s %6d %-8s rows %7lld max %6lld  %8.3f ms %7.1f TFLOP/s %7.0f GB/s  roof %5.1f%%  best cuBLAS %6.1f%%\n",
                      r.kernel.c_str(), r.model.c_str(), r.tokens, r.routing.c_str(), (long long)r.rows, (long long)r.max_rows,
                      r.median_ms, r.tflops, r.weight_gbps, r.pct_of_roof, r.pct_of_best_cublas);
          out.push_back(r);
        }
        for (Row& r : parts) {
          r.rows = base.rows, r.max_rows = base.max_rows, r.active = base.active;
          std::printf("  %-36s %8.3f ms\n", r.kernel.c_str(), r.median_ms);
          out.push_back(r);
        }
        std::fflush(stdout);
      }
    }
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_arg = "all", tokens_arg = "16384,4096,256,64", routing_arg = "balanced,skewed",
              projection_arg = "gate_up,down", kernel_arg = "all", csv, reps_arg = "10", warmup_arg = "3", seed_arg = "42";
  bool no_check = false, no_roof = false, swiglu = false, moe = false, fp8 = false;
  CLI::App app{"Chapter 13: grouped GEMM for mixture-of-experts layers (bf16, RCR), next to a loop of cuBLAS GEMMs and "
               "cuBLAS's grouped GEMM, and a roofline per shape",
               "ch13_grouped_moe"};
  app.add_option("--model", model_arg, "comma-separated: deepseek-v3, mixtral-8x7b, qwen3-30b-a3b or all (default all)")
      ->type_name("NAMES");
  app.add_option("--tokens", tokens_arg, "comma-separated tokens per batch (default 16384,4096,256,64)")->type_name("INTS");
  app.add_option("--routing", routing_arg, "comma-separated: balanced, skewed (default both)")->type_name("NAMES");
  app.add_option("--projection", projection_arg, "comma-separated: gate_up, down (default both)")->type_name("NAMES");
  app.add_option("--kernel", kernel_arg,
                 "comma-separated: grouped_contiguous, grouped_masked, grouped_contiguous_64, grouped_masked_64, "
                 "grouped_skip_padding, grouped_swiglu, grouped_swiglu_64, grouped_decode, grouped_masked_decode (default all: every one but the appendix's "
                 "grouped_skip_padding; the masked, 64-row and decode ones at 256 tokens or fewer, grouped_skip_padding above; "
                 "grouped_swiglu* with --swiglu only; the cuBLAS ways always run)")
      ->type_name("NAMES");
  app.add_option("--reps", reps_arg, "timed repetitions (default 10)")->type_name("INT");
  app.add_option("--warmup", warmup_arg, "untimed warm-up runs (default 3)")->type_name("INT");
  app.add_option("--csv", csv, "write the results to this CSV file (checked before the run)")->type_name("FILE");
  app.add_flag("--no-check", no_check, "skip the comparison with the fp64 reference");
  app.add_flag("--no-roof", no_roof,
               "skip measuring the roofline (cuBLAS dense and cudaMemcpy; for the sanitizers): roof_ms and pct_of_roof left empty");
  app.add_flag("--swiglu", swiglu,
               "the gate+up projection with SiLU(gate)·up after it: cuBLAS's ways and grouped_contiguous (_64 at decode) "
               "followed by an elementwise kernel, against grouped_swiglu (_64), which does it in its epilogue (step 3)");
  app.add_flag("--moe", moe,
               "the whole MoE feed-forward pass (step 4): routing from the router's logits, permute, gate+up with "
               "SiLU(gate)·up, down, combine; this chapter's kernels (moe_layer) against the same layer from cuBLAS calls "
               "(cublas_layer_<gate_up way>_<down way>, loop or grouped each)");
  app.add_flag("--fp8", fp8,
               "step 5: the grouped kernel on e4m3 experts with DeepSeek-V3's block scales (grouped_fp8), per model, "
               "projection, token count and routing, and DeepGEMM's anchor shape (4 experts × 8192 rows, N 4096, K 7168), "
               "against its roofline (chapter 12's dense fp8_block_scaled, cudaMemcpy)");
  app.add_option("--seed", seed_arg, "seed of the routing and the inputs (default 42)")->type_name("INT");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::cerr << "ch13_grouped_moe: error: " << what << '\n';
    return 2;
  }
  // Everything the command line says is checked here, before any work: one line naming the flag, exit 2.
  std::vector<Model> models;
  std::vector<int> token_counts;
  TimingOptions timing;
  std::uint64_t seed = 0;
  try {
    for (const std::string& t : split(tokens_arg)) {
      const std::int64_t n = parse_int(t, "--tokens", 1);
      if (n > kMaxTokens)
        bad("--tokens", std::to_string(n) + " is more than " + std::to_string(kMaxTokens) +
                            " (DeepSeek-V3's A at that many tokens is over 7 GB)");
      token_counts.push_back(int(n));
    }
    timing.reps = int(std::min<std::int64_t>(parse_int(reps_arg, "--reps", 1), 1 << 20));
    timing.warmup = int(std::min<std::int64_t>(parse_int(warmup_arg, "--warmup", 0), 1 << 20));
    seed = std::uint64_t(parse_int(seed_arg, "--seed", 0));
  } catch (const CliError& e) {
    std::cerr << "ch13_grouped_moe: " << e.what() << '\n';
    return e.exit_code;
  }
  if (token_counts.empty()) bad("--tokens", "give at least one token count");
  for (const std::string& name : split(model_arg)) {
    bool found = false;
    for (const Model& m : kModels)
      if (name == "all" || name == m.name) models.push_back(m), found = true;
    if (!found) bad("--model", "'" + name + "' is not one of deepseek-v3, mixtral-8x7b, qwen3-30b-a3b, all");
  }
  std::vector<Routing> routings;
  for (const std::string& r : split(routing_arg)) {
    if (r == "balanced") routings.push_back(Routing::balanced);
    else if (r == "skewed") routings.push_back(Routing::skewed);
    else bad("--routing", "'" + r + "' is not balanced or skewed");
  }
  if (moe && (swiglu || fp8 || app.count("--projection") || app.count("--kernel")))
    bad("--moe", "runs the whole layer: it takes no --swiglu, --fp8, --projection or --kernel");
  if (fp8 && (swiglu || app.count("--kernel"))) bad("--fp8", "runs grouped_fp8 only: it takes no --swiglu or --kernel");
  std::vector<std::string> proj_names = split(projection_arg);
  for (const std::string& p : proj_names)
    if (p != "gate_up" && p != "down") bad("--projection", "'" + p + "' is not gate_up or down");
  if (swiglu) {
    if (app.count("--projection") && proj_names != std::vector<std::string>{"gate_up"})
      bad("--swiglu", "takes the gate_up projection only (SiLU(gate)·up needs the gate and up columns)");
    proj_names = {"gate_up"};
  }
  const std::vector<std::string> kernel_names = {"grouped_contiguous", "grouped_masked", "grouped_contiguous_64", "grouped_masked_64",
                                                 "grouped_skip_padding", "grouped_swiglu", "grouped_swiglu_64",
                                                 "grouped_decode", "grouped_masked_decode"};
  std::set<std::string> selected;
  for (const std::string& kname : split(kernel_arg)) {
    if (kname == "all") {  // the chapter's steps; the appendix's dead end only when named
      for (const std::string& k : kernel_names)
        if (k != "grouped_skip_padding") selected.insert(k);
    } else if (std::find(kernel_names.begin(), kernel_names.end(), kname) != kernel_names.end()) {
      selected.insert(kname);
    } else {
      bad("--kernel", "'" + kname + "' is not grouped_contiguous, grouped_masked, grouped_contiguous_64, grouped_masked_64, " +
                             "grouped_skip_padding, grouped_swiglu, grouped_swiglu_64, grouped_decode, grouped_masked_decode or all");
    }
  }
  if (!csv.empty())
    if (std::string why = csv_unwritable(csv); !why.empty()) bad("--csv", "cannot write '" + csv + "': " + why);
  if (skipped_on_this_gpu("ch13_grouped_moe", arch::sm90a)) return 0;
  const DeviceInfo& dev = device_info();
  std::cout << "13_grouped_moe on " << dev.name << " (" << dev.sm_count << " SMs), " << cuda_version_string() << "\n";

  cublasHandle_t handle;
  MM_CUBLAS_CHECK(cublasCreate(&handle));
  // The bandwidth roof: cudaMemcpy of 2 GiB device to device, bytes read and written per second.
  double copy_gbps = not_measured;
  if (!no_roof) {
    const std::size_t bytes = std::size_t(2) << 30;
    DeviceBuffer<char> src(bytes), dst(bytes);
    MM_CUDA_CHECK(cudaMemset(src.data(), 1, bytes));
    const Timing t = time_on_gpu([&](cudaStream_t s) { MM_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, s)); },
                                 timing);
    copy_gbps = 2.0 * double(bytes) / (t.median_ms * 1e-3) / 1e9;
    std::cout << "cudaMemcpy roof: " << copy_gbps << " GB/s\n";
  }

  std::vector<Row> out;
  int failures = 0;
  auto finish = [&] {  // every mode ends here: the CSV, the failed checks, the exit status
    MM_CUBLAS_CHECK(cublasDestroy(handle));
    if (!csv.empty()) write_rows(csv, out);
    if (failures > 0) std::cout << failures << " check(s) failed\n";
    return failures > 0 ? 1 : 0;
  };
  if (fp8) {
    failures = run_fp8_grouped(models, proj_names, token_counts, routings, timing, seed, no_check, no_roof, copy_gbps, out);
    return finish();
  }
  if (moe) {
    failures = run_moe_passes(handle, models, token_counts, routings, timing, seed, no_check, no_roof, copy_gbps, out);
    return finish();
  }
  std::map<std::pair<int, int>, double> dense_tflops;  // (N, K) -> cuBLAS dense TFLOP/s at 8192 rows
  for (const Model& model : models) {
    for (const Projection& proj : projections(model)) {
      if (std::find(proj_names.begin(), proj_names.end(), proj.name) == proj_names.end()) continue;
      const int n = proj.n, k = proj.k, E = model.experts;
      DeviceBuffer<bf16> B(std::size_t(E) * n * k);
      fill_random(B, seed + 1);
      if (no_roof) {
        dense_tflops[{n, k}] = not_measured;
      } else if (!dense_tflops.count({n, k})) {  // the flop roof: cuBLAS dense, 8192 rows of this N and K
        dense_tflops[{n, k}] = dense_tflops_of(handle, B.data(), n, k, timing, seed);
      }
      const double dense = dense_tflops[{n, k}];
      for (int tokens : token_counts) {
        for (Routing routing : routings) {
          const Routed routed = route(tokens, E, model.topk, routing, seed + 7);
          const std::vector<std::int64_t>& rows = routed.rows;
          const std::int64_t total = std::accumulate(rows.begin(), rows.end(), std::int64_t(0));
          const std::int64_t max_rows = *std::max_element(rows.begin(), rows.end());
          const int active = int(std::count_if(rows.begin(), rows.end(), [](std::int64_t r) { return r > 0; }));
          const ContiguousLayout layout = contiguous_layout(rows);
          DeviceBuffer<bf16> A(std::size_t(layout.rows) * k), C(std::size_t(layout.rows) * n);
          fill_random(A, seed + 3);
          DeviceBuffer<std::int64_t> offsets(layout.offsets);
          const double flops = 2.0 * double(total) * n * double(k);
          const double weight_bytes = 2.0 * double(active) * n * double(k);
          const int c_cols = swiglu ? n / 2 : n;  // C's columns: SiLU(gate)·up is half the gate+up GEMM's
          const double bytes = weight_bytes + 2.0 * double(total) * (c_cols + double(k));
          const double roof_ms = no_roof ? not_measured : std::max(flops / (dense * 1e12), bytes / (copy_gbps * 1e9)) * 1e3;
          Row base;
          base.model = model.name, base.projection = proj.name, base.routing = routing_name(routing);
          base.tokens = tokens, base.topk = model.topk, base.experts = E, base.active = active, base.n = n, base.k = k;
          base.rows = total, base.max_rows = max_rows, base.buffer_rows = layout.rows, base.roof_ms = roof_ms;
          auto finish = [&](Row r, const Timing& t) {
            r.median_ms = t.median_ms, r.min_ms = t.min_ms;
            r.tflops = flops / (t.median_ms * 1e-3) / 1e12;
            r.weight_gbps = weight_bytes / (t.median_ms * 1e-3) / 1e9;
            r.pct_of_roof = 100.0 * roof_ms / t.median_ms;
            return r;
          };
          const CublasWays cublas(handle, A.data(), B.data(), C.data(), layout.first, rows, n, k);
          // --swiglu: H = SiLU(gate)·up of C, by the elementwise kernel after every unfused way.
          DeviceBuffer<bf16> H(swiglu ? std::size_t(layout.rows) * c_cols : 0);
          DeviceBuffer<std::int64_t> d_first(layout.first), d_rows(rows);
          auto silu = [&](cudaStream_t s) {
            if (swiglu) silu_mul_grouped(C.data(), H.data(), n, d_first.data(), d_rows.data(), E, s);
          };
          const std::string then = swiglu ? "+silu" : "";
          Row loop = finish(base, time_on_gpu([&](cudaStream_t s) { cublas.loop(s), silu(s); }, timing));
          loop.kernel = "cublas_loop" + then;
          Row grouped = finish(base, time_on_gpu([&](cudaStream_t s) { cublas.grouped(s), silu(s); }, timing));
          grouped.kernel = "cublas_grouped" + then;
          const double best_ms = std::min(loop.median_ms, grouped.median_ms);
          std::vector<Row> rows_here = {loop, grouped};
          // One of ours: `variant` into `c`, then (--swiglu, unless the kernel does it) the elementwise kernel into H.
          auto run_ours = [&](const std::string& name, int tile_rows, const GroupedProblem& g, bf16* a, bf16* c,
                              const std::vector<std::int64_t>& first, GroupedVariant variant = GroupedVariant::gemm) {
            if (!selected.count(name)) return;
            const bool fused = variant == GroupedVariant::swiglu, unfused = swiglu && !fused;
            const PreparedGemm gemm = prepare_grouped_gemm(g, a, B.data(), c, 0, tile_rows, variant);
            auto run = [&](cudaStream_t s) {
              gemm.run(s);
              if (unfused) silu(s);
            };
            bf16* checked = unfused ? H.data() : c;  // where the result is
            Row r = base;
            r.kernel = name + (unfused ? then : "");
            r.path = gemm.path + (unfused ? " + silu_mul_grouped" : "");
            r.buffer_rows = g.rows;
            if (!no_check) {
              MM_CUDA_CHECK(cudaMemset(checked, 0xff, std::size_t(g.rows) * c_cols * sizeof(bf16)));  // NaN: an unwritten element fails
              run(nullptr);
              MM_CUDA_CHECK(cudaDeviceSynchronize());
              const CheckResult check = check_some_experts(a, B.data(), checked, first, rows, n, k, swiglu);
              r.rel_error = check.rel_frobenius;
              if (!check.ok) {
                ++failures;
                std::cout << "  " << name << " " << model.name << " " << proj.name << " " << tokens << " "
                          << routing_name(routing) << ": " << check.summary << '\n';
              }
            }
            r = finish(r, time_on_gpu(run, timing));
            rows_here.push_back(r);
          };
          const bool decode = tokens <= 256;
          if (swiglu) {  // the contiguous layout only: step 3 against steps 1-2's best tile at each phase
            GroupedProblem g;
            g.groups = E, g.n = n, g.k = k, g.rows = layout.rows, g.offsets = offsets.data();
            const int tile = decode ? 64 : 128;
            const std::string suffix = decode ? "_64" : "";
            run_ours("grouped_contiguous" + suffix, tile, g, A.data(), C.data(), layout.first);
            run_ours("grouped_swiglu" + suffix, tile, g, A.data(), H.data(), layout.first, GroupedVariant::swiglu);
          } else {
            GroupedProblem g;
            g.groups = E, g.n = n, g.k = k, g.rows = layout.rows, g.offsets = offsets.data();
            run_ours("grouped_contiguous", 128, g, A.data(), C.data(), layout.first);
            if (!decode) run_ours("grouped_skip_padding", 128, g, A.data(), C.data(), layout.first, GroupedVariant::skip_padding);
            if (decode) run_ours("grouped_contiguous_64", 64, g, A.data(), C.data(), layout.first);
            if (decode) run_ours("grouped_decode", kDecodeTileRows, g, A.data(), C.data(), layout.first);  // step 6
          }
          if (!swiglu && decode && (selected.count("grouped_masked") || selected.count("grouped_masked_64") || selected.count("grouped_masked_decode"))) {
            // Decode: a buffer of `capacity` rows per expert (every token could pick it), a count each.
            const std::int64_t capacity = (std::int64_t(tokens) + kGroupAlignment - 1) / kGroupAlignment * kGroupAlignment;
            DeviceBuffer<bf16> Am(std::size_t(E) * capacity * k), Cm(std::size_t(E) * capacity * n);
            fill_random(Am, seed + 3);
            std::vector<int> counts(rows.begin(), rows.end());
            DeviceBuffer<int> d_counts(counts);
            std::vector<std::int64_t> first(E);
            for (int e = 0; e < E; ++e) first[e] = std::int64_t(e) * capacity;
            GroupedProblem g;
            g.groups = E, g.n = n, g.k = k, g.rows = std::int64_t(E) * capacity, g.counts = d_counts.data(), g.capacity = capacity;
            run_ours("grouped_masked", 128, g, Am.data(), Cm.data(), first);
            run_ours("grouped_masked_64", 64, g, Am.data(), Cm.data(), first);
            run_ours("grouped_masked_decode", kDecodeTileRows, g, Am.data(), Cm.data(), first);
          }
          for (Row& r : rows_here) {
            r.pct_of_loop = 100.0 * loop.median_ms / r.median_ms;
            r.pct_of_grouped = 100.0 * grouped.median_ms / r.median_ms;
            r.pct_of_best_cublas = 100.0 * best_ms / r.median_ms;
            std::printf("%-18s %-13s %-7s %6d %-8s rows %7lld max %6lld  %8.3f ms %7.1f TFLOP/s %7.0f GB/s  roof %5.1f%%  best cuBLAS %6.1f%%\n",
                        r.kernel.c_str(), r.model.c_str(), r.projection.c_str(), r.tokens, r.routing.c_str(),
                        (long long)r.rows, (long long)r.max_rows, r.median_ms, r.tflops, r.weight_gbps, r.pct_of_roof,
                        r.pct_of_best_cublas);
            out.push_back(r);
          }
          std::fflush(stdout);
        }
      }
    }
  }
  return finish();
}
