// Chapter 08's ceiling: how fast can mma.sync multiply on this GPU when nothing else is in the way?
//
// Every warp keeps its A and B fragments in registers and issues `Chains` independent mma.sync
// accumulations per iteration (independent, so that one instruction's latency hides behind the
// others'), for many iterations; no memory is touched but the final store. The block count puts
// `warps_per_sm` warps on every SM. The result is the most a GEMM built on mma.sync can reach here,
// the number the chapter's kernels are measured against besides cuBLAS (README, "The ceiling").
//
// Build: cmake --build build --target ch08_mma_ceiling
// Run:   build/bin/ch08_mma_ceiling [--csv results.csv]
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

namespace {

using mm::SM80_16x8x16_F32BF16BF16F32_TN;
using mm::SM80_16x8x8_F32TF32TF32F32_TN;

/// The atom's K (every atom here is 16×8 in M×N) and its element type's name in the table.
template <class Op> struct AtomInfo;
template <> struct AtomInfo<SM80_16x8x16_F32BF16BF16F32_TN> {
  static constexpr int k = 16;
  static constexpr const char* dtype = "bf16";
};
template <> struct AtomInfo<SM80_16x8x8_F32TF32TF32F32_TN> {
  static constexpr int k = 8;
  static constexpr const char* dtype = "tf32";
};

/// `iters` × `Chains` mma.sync per warp on register operands. The operands depend on the thread so
/// that the compiler cannot fold them; the accumulators are stored so that it cannot drop the work.
template <class Op, int Chains>
__global__ void mma_loop_kernel(float* out, int iters) {
  if constexpr (mm::arch::compiled_for(mm::arch::sm80)) {
    const std::uint32_t seed = threadIdx.x * 0x9e3779b9u;
    const std::uint32_t a0 = seed, a1 = seed ^ 1u, a2 = seed ^ 2u, a3 = seed ^ 3u, b0 = seed ^ 4u, b1 = seed ^ 5u;
    float acc[Chains][4] = {};
    for (int i = 0; i < iters; ++i) {
#pragma unroll
      for (int c = 0; c < Chains; ++c)
        Op::fma(acc[c][0], acc[c][1], acc[c][2], acc[c][3], a0, a1, a2, a3, b0, b1, acc[c][0], acc[c][1], acc[c][2],
                acc[c][3]);
    }
    float sum = 0;
#pragma unroll
    for (int c = 0; c < Chains; ++c) sum += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
  } else {
    mm::arch::no_code_for_this_target();
  }
}

struct Point {
  int chains;        // independent accumulators per warp
  int warps_per_sm;  // resident warps on each SM
};

/// Times one point and returns its row: the work done is written as an M×N×K product with the same
/// FLOP count (M = 16·warps, N = 8·chains, K = k·iters), so TFLOP/s reads as for a GEMM.
template <class Op, int Chains>
mm::ResultRow measure(int warps_per_sm, int iters, const mm::TimingOptions& topt) {
  using Info = AtomInfo<Op>;
  const mm::DeviceInfo& dev = mm::device_info();
  constexpr int kWarpsPerBlock = 4;
  const int blocks = dev.sm_count * warps_per_sm / kWarpsPerBlock;
  mm::DeviceBuffer<float> out(std::size_t(blocks) * kWarpsPerBlock * 32);
  auto run = [&](cudaStream_t s) {
    mma_loop_kernel<Op, Chains><<<blocks, kWarpsPerBlock * 32, 0, s>>>(out.data(), iters);
  };
  run(nullptr);
  MM_CHECK_LAUNCH();
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  const mm::Timing t = mm::time_on_gpu(run, topt);
  mm::ResultRow r;
  r.chapter = "08_tensor_cores_ceiling";  // a probe, not a step: plots/results_data.py keeps it out of the summary
  r.kernel = std::string("mma_sync_") + Info::dtype + "_chains" + std::to_string(Chains) + "_warps" +
             std::to_string(warps_per_sm);
  r.dtype = Info::dtype;
  r.layout = "RRR";  // registers only: no storage order; the tag keeps the rows in the common schema
  r.m = std::int64_t(16) * blocks * kWarpsPerBlock;
  r.n = 8 * Chains;
  r.k = std::int64_t(Info::k) * iters;
  r.median_ms = t.median_ms;
  r.min_ms = t.min_ms;
  r.tflops = 2.0 * double(r.m) * double(r.n) * double(r.k) / (t.median_ms * 1e-3) / 1e12;
  r.gpu = dev.name;
  r.cuda_version = mm::cuda_version_string();
  r.timestamp = mm::utc_timestamp();
  return r;
}

template <class Op>
void measure_atom(std::vector<mm::ResultRow>& rows, int iters, const mm::TimingOptions& topt) {
  // Independent accumulators at full occupancy (64 warps per SM), then occupancy at 4 accumulators.
  rows.push_back(measure<Op, 1>(64, iters, topt));
  rows.push_back(measure<Op, 2>(64, iters, topt));
  rows.push_back(measure<Op, 4>(64, iters, topt));
  rows.push_back(measure<Op, 8>(64, iters, topt));
  for (int w : {4, 8, 16, 32}) rows.push_back(measure<Op, 4>(w, iters, topt));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string program = mm::program_name(argc, argv, "ch08_mma_ceiling");
  const mm::ProbeOptions o = mm::parse_probe_cli_or_exit(
      argc, argv,
      {.program = program,
       .description = "Chapter 08's ceiling: mma.sync (bf16 m16n8k16, tf32 m16n8k8) on registers only, by number of "
                      "independent accumulators and resident warps",
       .iters_help = "mma.sync per accumulator per warp",
       .default_iters = 4096});
  if (mm::skipped_on_this_gpu(program, mm::arch::sm80)) return 0;

  const mm::TimingOptions topt{3, o.reps, false};  // registers only: nothing in the L2 to flush
  std::vector<mm::ResultRow> rows;
  measure_atom<SM80_16x8x16_F32BF16BF16F32_TN>(rows, o.iters, topt);
  measure_atom<SM80_16x8x8_F32TF32TF32F32_TN>(rows, o.iters, topt);

  std::printf("%-28s %6s %10s %10s\n", "kernel", "dtype", "ms", "TFLOP/s");
  for (const auto& r : rows) std::printf("%-28s %6s %10.3f %10.1f\n", r.kernel.c_str(), r.dtype.c_str(), r.median_ms, r.tflops);
  if (!o.csv.empty()) mm::write_csv(o.csv, rows);
  return 0;
}
