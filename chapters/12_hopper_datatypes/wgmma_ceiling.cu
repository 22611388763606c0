// Chapter 12's ceilings: how fast can wgmma multiply each datatype on this GPU when nothing else is
// in the way? Chapter 08's probe (mma_ceiling.cu) for the Hopper instruction.
//
// Every warpgroup of a block multiplies the same shared-memory tiles over and over: a 64×K tile of A
// by a 256×K tile of B (K = one 128-byte swizzle row: 64 bf16, 32 tf32, 128 e4m3), four wgmma per
// group, with one group in flight while the next is issued (warpgroup_wait<1>, as the chapters' main
// loops do); no global memory is touched but the final store. One block per SM, two warpgroups per
// block (the template takes any number). The result is the most a GEMM built on wgmma with 64×256
// warpgroup tiles can reach here: the number chapter 12's kernels are measured against besides cuBLAS
// (README, "The ceilings").
//
// Build: cmake --build build --target ch12_wgmma_ceiling
// Run:   build/bin/ch12_wgmma_ceiling [--csv results.csv]
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "harness/arch_check.hpp"
#include "harness/chapter_run.hpp"
#include "harness/cli.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "harness/results.hpp"
#include "harness/timing.hpp"
#include "layout/all.hpp"
#include "layout/mbarrier.hpp"  // fence_proxy_async_shared
#include "layout/mma_sm90.hpp"

namespace {

using bf16 = __nv_bfloat16;
using e4m3 = __nv_fp8_e4m3;

/// The wgmma of each element type with N = 256, and its name in the table.
template <class T> struct Wgmma;
template <> struct Wgmma<bf16> {
  using Atom = mm::SM90_64xNx16_F32BF16BF16_SS<256, mm::GmmaMajor::K, mm::GmmaMajor::K>;
  static constexpr const char* dtype = "bf16";
};
template <> struct Wgmma<float> {
  using Atom = mm::SM90_64xNx8_F32TF32TF32_SS<256>;
  static constexpr const char* dtype = "tf32";
};
template <> struct Wgmma<e4m3> {
  using Atom = mm::SM90_64xNx32_F32E4M3E4M3_SS<256>;
  static constexpr const char* dtype = "e4m3";
};

/// `iters` groups of four wgmma (64×256×K each, K one 128-byte row) per warpgroup, on tiles filled
/// once with small values (not zeros: a tensor core may spend less on them); the accumulators are
/// stored so that the compiler cannot drop the work.
template <class T, int Warpgroups>
__global__ void __launch_bounds__(128 * Warpgroups, 1) wgmma_loop_kernel(float* out, int iters) {
  if constexpr (!mm::arch::compiled_for(mm::arch::sm90a)) {
    mm::arch::no_code_for_this_target();
  } else {
    using namespace mm;
    constexpr int K = 128 / int(sizeof(T));
    __shared__ __align__(1024) T a_smem[64 * K];  // one A tile all warpgroups read: 8 + 32 KB of static shared memory
    __shared__ __align__(1024) T b_smem[256 * K];
    for (int i = int(threadIdx.x); i < 256 * K; i += blockDim.x) b_smem[i] = T(float((i * 7) % 13 - 6) / 64.0f);
    for (int i = int(threadIdx.x); i < 64 * K; i += blockDim.x) a_smem[i] = T(float((i * 5) % 11 - 5) / 64.0f);
    fence_proxy_async_shared();  // the ordinary stores, visible to wgmma's operand reads
    __syncthreads();
    auto sA = make_tensor(make_smem_ptr(a_smem), tile_to_shape(GmmaLayoutK_SW128_Atom<T>{}, make_shape(_64{}, Int<K>{})));
    auto sB = make_tensor(make_smem_ptr(b_smem), tile_to_shape(GmmaLayoutK_SW128_Atom<T>{}, make_shape(_256{}, Int<K>{})));
    float acc[128];
    for (int i = 0; i < iters; ++i) {
      gmma_k_block<typename Wgmma<T>::Atom, GmmaMajor::K, GmmaMajor::K>(sA, sB, acc, i > 0);
      warpgroup_wait<1>();
    }
    warpgroup_wait<0>();
    warpgroup_fence_operand(acc);
    float sum = 0;
#pragma unroll
    for (int v = 0; v < 128; ++v) sum += acc[v];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
  }
}

/// Times one point and returns its row: the work is written as an M×N×K product with the same FLOP
/// count (M = 64 · warpgroups · blocks, N = 256, K = K-per-group · iters), so TFLOP/s reads as for a GEMM.
template <class T, int Warpgroups>
mm::ResultRow measure(int iters, const mm::TimingOptions& topt) {
  const mm::DeviceInfo& dev = mm::device_info();
  const int blocks = dev.sm_count;
  mm::DeviceBuffer<float> out(std::size_t(blocks) * 128 * Warpgroups);
  auto run = [&](cudaStream_t s) { wgmma_loop_kernel<T, Warpgroups><<<blocks, 128 * Warpgroups, 0, s>>>(out.data(), iters); };
  run(nullptr);
  MM_CHECK_LAUNCH();
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  const mm::Timing t = mm::time_on_gpu(run, topt);
  mm::ResultRow r;
  r.chapter = "12_hopper_datatypes_ceiling";  // a probe, not a step: plots/results_data.py keeps it out of the summary
  r.kernel = std::string("wgmma_") + Wgmma<T>::dtype + "_warpgroups" + std::to_string(Warpgroups);
  r.dtype = Wgmma<T>::dtype;
  r.layout = "RCR";  // both operands K-major in shared memory; the tag keeps the rows in the common schema
  r.m = std::int64_t(64) * Warpgroups * blocks;
  r.n = 256;
  r.k = std::int64_t(128 / sizeof(T)) * iters;
  r.median_ms = t.median_ms;
  r.min_ms = t.min_ms;
  r.tflops = 2.0 * double(r.m) * double(r.n) * double(r.k) / (t.median_ms * 1e-3) / 1e12;
  r.gpu = dev.name;
  r.cuda_version = mm::cuda_version_string();
  r.timestamp = mm::utc_timestamp();
  return r;
}

template <class T>
void measure_type(std::vector<mm::ResultRow>& rows, int iters, const mm::TimingOptions& topt) {
  // Two warpgroups per SM, as the chapters' kernels have consumers. (Three measured the same, within
  // 1%, for every type: plots/data/h200/profiles/session_2026-11-27_ch12.txt; left out of the build.)
  rows.push_back(measure<T, 2>(iters, topt));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string program = mm::program_name(argc, argv, "ch12_wgmma_ceiling");
  const mm::ProbeOptions o = mm::parse_probe_cli_or_exit(
      argc, argv,
      {.program = program,
       .description = "Chapter 12's ceilings: wgmma 64x256 (bf16 k16, tf32 k8, e4m3 k32) on shared-memory tiles only, "
                      "two warpgroups per SM",
       .iters_help = "groups of four wgmma per warpgroup",
       .default_iters = 20000});
  if (mm::skipped_on_this_gpu(program, mm::arch::sm90a)) return 0;

  const mm::TimingOptions topt{3, o.reps, false};  // shared memory only: nothing in the L2 to flush
  std::vector<mm::ResultRow> rows;
  measure_type<bf16>(rows, o.iters, topt);
  measure_type<float>(rows, o.iters, topt);
  measure_type<e4m3>(rows, o.iters, topt);

  std::printf("%-28s %6s %10s %10s\n", "kernel", "dtype", "ms", "TFLOP/s");
  for (const auto& r : rows) std::printf("%-28s %6s %10.3f %10.1f\n", r.kernel.c_str(), r.dtype.c_str(), r.median_ms, r.tflops);
  if (!o.csv.empty()) mm::write_csv(o.csv, rows);
  return 0;
}
