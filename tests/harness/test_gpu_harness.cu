// The harness on the GPU: the device fill equals the host fill, poison makes
// NaNs, cuBLAS passes the check in every storage order, the device reference
// equals the host one (also for a C taller or wider than a grid dimension holds),
// timing returns sane numbers, and the L2 flush evicts and leaves nothing dirty.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "gpu_test.hpp"
#include "harness/copy_runner.hpp"
#include "harness/cublas_gemm.hpp"
#include "harness/device_info.hpp"
#include "harness/gemm_runner.hpp"
#include "harness/random.hpp"
#include "harness/timing.hpp"

namespace {

TEST(GpuHarness, DeviceFillEqualsHostFill) {
  MM_REQUIRE_GPU();
  mm::DeviceBuffer<float> d(100003);
  mm::fill_random(d, 11);
  EXPECT_EQ(d.download(), mm::random_host<float>(100003, 11));
}

TEST(GpuHarness, PoisonIsNaN) {
  MM_REQUIRE_GPU();
  mm::DeviceBuffer<float> f(17);
  mm::poison(f);
  for (float x : f.download()) EXPECT_TRUE(std::isnan(x));
  mm::DeviceBuffer<__nv_bfloat16> h(17);
  mm::poison(h);
  for (__nv_bfloat16 x : h.download()) EXPECT_TRUE(std::isnan(float(x)));
}

TEST(GpuHarness, DeviceReferenceEqualsHostReference) {
  MM_REQUIRE_GPU();
  const mm::GemmProblem p{45, 31, 67, mm::Order::col, mm::Order::row, mm::Order::row};
  mm::DeviceBuffer<float> a(p.m * p.k), b(p.k * p.n);
  mm::fill_random(a, 1);
  mm::fill_random(b, 2);
  const mm::Reference dev = mm::reference_gemm_device(p, a.data(), b.data());
  const mm::Reference host = mm::reference_gemm_host(p, a.download(), b.download());
  ASSERT_EQ(dev.value.size(), host.value.size());
  for (std::size_t i = 0; i < dev.value.size(); ++i) {
    EXPECT_NEAR(dev.value[i], host.value[i], 1e-12);
    EXPECT_NEAR(dev.abs_sum[i], host.abs_sum[i], 1e-12);
  }
}

// M > 65535 * 8 rows: more blocks of 8 rows than grid y holds (the reference used to fail to launch
// there), and the same along N. K is small so that the host reference stays fast.
TEST(GpuHarness, DeviceReferenceTakesATallAndAWideC) {
  MM_REQUIRE_GPU();
  for (const mm::GemmProblem& p : {mm::GemmProblem{600000, 3, 2, mm::Order::row, mm::Order::col, mm::Order::row},
                                   mm::GemmProblem{3, 600000, 2, mm::Order::col, mm::Order::row, mm::Order::col}}) {
    mm::DeviceBuffer<float> a(p.m * p.k), b(p.k * p.n);
    mm::fill_random(a, 5);
    mm::fill_random(b, 6);
    const mm::Reference dev = mm::reference_gemm_device(p, a.data(), b.data());
    const mm::Reference host = mm::reference_gemm_host(p, a.download(), b.download());
    ASSERT_EQ(dev.value.size(), host.value.size());
    double worst = 0;
    for (std::size_t i = 0; i < dev.value.size(); ++i)
      worst = std::max({worst, std::fabs(dev.value[i] - host.value[i]), std::fabs(dev.abs_sum[i] - host.abs_sum[i])});
    EXPECT_LE(worst, 1e-12) << p.m << "x" << p.n << "x" << p.k;
  }
}

// The checked path end to end at the shape of the bug report (1,000,000 x 64 x 64): cuBLAS passes.
TEST(GpuHarness, CheckTakesATallProblem) {
  MM_REQUIRE_GPU();
  static mm::CublasGemm cublas;
  const mm::GemmLaunch<float, float> run = [](const mm::GemmProblem& q, const float* a, const float* b, float* c,
                                              cudaStream_t st) { cublas.gemm(q, mm::DType::f32, a, b, c, CUDA_R_32F, st); };
  const mm::CheckResult r = mm::check_gemm_kernel(mm::GemmProblem{1000000, 64, 64}, run, mm::DType::f32);
  EXPECT_TRUE(r.ok) << r.summary;
}

class CublasOrders : public ::testing::TestWithParam<const char*> {};

TEST_P(CublasOrders, PassesTheCheck) {
  MM_REQUIRE_GPU();
  static mm::CublasGemm cublas;
  for (mm::ProblemSize s : {mm::ProblemSize{1, 1, 1}, {17, 33, 9}, {129, 257, 33}, {300, 200, 1000}}) {
    const mm::GemmProblem p = mm::make_problem(s, GetParam());
    const mm::GemmLaunch<float, float> run = [](const mm::GemmProblem& q, const float* a, const float* b, float* c,
                                                cudaStream_t st) {
      cublas.gemm(q, mm::DType::f32, a, b, c, CUDA_R_32F, st);
    };
    const mm::CheckResult r = mm::check_gemm_kernel(p, run, mm::DType::f32);
    EXPECT_TRUE(r.ok) << s.m << "x" << s.n << "x" << s.k << " " << GetParam() << ": " << r.summary;
  }
}

INSTANTIATE_TEST_SUITE_P(AllFour, CublasOrders, ::testing::Values("RRR", "RCR", "CRR", "CCC", "RRC"),
                         [](const auto& info) { return std::string(info.param); });

TEST(GpuHarness, CheckCatchesAKernelThatSkipsALastElement) {
  MM_REQUIRE_GPU();
  static mm::CublasGemm cublas;
  // cuBLAS on a problem one row short: the last row of C stays poisoned.
  const mm::GemmLaunch<float, float> short_run = [](const mm::GemmProblem& q, const float* a, const float* b, float* c,
                                                    cudaStream_t st) {
    mm::GemmProblem shorter = q;
    shorter.m -= 1;  // row-major C: the first m-1 rows are contiguous
    cublas.gemm(shorter, mm::DType::f32, a, b, c, CUDA_R_32F, st);
  };
  const mm::CheckResult r = mm::check_gemm_kernel(mm::GemmProblem{8, 8, 8}, short_run, mm::DType::f32);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.nonfinite, 8);
}

TEST(GpuHarness, TimingIsPositiveAndOrdered) {
  MM_REQUIRE_GPU();
  mm::DeviceBuffer<float> x(1 << 24);
  const mm::Timing t = mm::time_on_gpu(
      [&](cudaStream_t s) { MM_CUDA_CHECK(cudaMemsetAsync(x.data(), 0, x.bytes(), s)); }, {2, 9, true});
  EXPECT_EQ(t.samples_ms.size(), 9u);
  EXPECT_GT(t.min_ms, 0.0);
  EXPECT_LE(t.min_ms, t.median_ms);
}

// ---- The L2 flush (timing.cu): it evicts, and it leaves nothing dirty ----

// Reads `count` int4 and writes nothing (the buffers are zeros, the condition never holds).
__global__ void read_kernel(const int4* data, std::size_t count, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const int4 v = data[i];
    acc ^= unsigned(v.x) ^ unsigned(v.y) ^ unsigned(v.z) ^ unsigned(v.w);
  }
  if (acc == 0x9E3779B9u) *sink = acc;
}

// `bytes` of zeros to read, and the read timed `reps` times, each after `prepare` (outside the events).
struct ReadBench {
  mm::DeviceBuffer<int4> data;
  mm::DeviceBuffer<unsigned> sink{1};
  explicit ReadBench(std::size_t bytes) : data(bytes / sizeof(int4)) {
    MM_CUDA_CHECK(cudaMemset(data.data(), 0, data.bytes()));
    MM_CUDA_CHECK(cudaDeviceSynchronize());
  }
  double median_ms(const std::function<void(cudaStream_t)>& prepare, int reps = 31) {
    cudaStream_t s;
    cudaEvent_t start, stop;
    MM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    MM_CUDA_CHECK(cudaEventCreate(&start));
    MM_CUDA_CHECK(cudaEventCreate(&stop));
    const unsigned grid = unsigned(std::min<std::size_t>((data.size() + 255) / 256, 65535));
    std::vector<float> ms(reps);
    for (int i = -1; i < reps; ++i) {  // i = -1: an untimed warm-up
      prepare(s);
      MM_CUDA_CHECK(cudaEventRecord(start, s));
      read_kernel<<<grid, 256, 0, s>>>(data.data(), data.size(), sink.data());
      MM_CUDA_CHECK(cudaEventRecord(stop, s));
      MM_CUDA_CHECK(cudaEventSynchronize(stop));
      MM_CHECK_LAUNCH();
      if (i >= 0) MM_CUDA_CHECK(cudaEventElapsedTime(&ms[i], start, stop));
    }
    MM_CUDA_CHECK(cudaEventDestroy(start));
    MM_CUDA_CHECK(cudaEventDestroy(stop));
    MM_CUDA_CHECK(cudaStreamDestroy(s));
    return mm::median(ms);
  }
};

// The flush kernel launches (its grid covers 2x the L2 whatever its size) on a non-blocking stream,
// twice in a row (the first call also allocates and zeroes its buffer).
TEST(GpuHarness, FlushL2RunsOnAStream) {
  MM_REQUIRE_GPU();
  cudaStream_t s;
  MM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  mm::flush_l2(s);
  mm::flush_l2(s);
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  MM_CUDA_CHECK(cudaStreamDestroy(s));
}

// A read of a quarter of the L2 stays in the L2 between runs without a flush; after flush_l2 every
// run reads device memory again, so it must be clearly slower.
TEST(GpuHarness, FlushL2EvictsWhatTheLastRunLeft) {
  MM_REQUIRE_GPU();
  ReadBench bench(mm::device_info().l2_bytes / 4);
  const double warm = bench.median_ms([](cudaStream_t) {});
  const double cold = bench.median_ms([](cudaStream_t s) { mm::flush_l2(s); });
  EXPECT_GT(cold, 1.2 * warm) << "flushed " << cold * 1e3 << " us, warm " << warm * 1e3 << " us";
}

// The reason for a read-only flush: a cudaMemset over 2x the L2 leaves the L2 full of dirty lines,
// and a DRAM-bound kernel that evicts them pays their write-back inside its timed window. A read of
// 2x the L2 after flush_l2 must be faster than the same read after the memset.
TEST(GpuHarness, FlushL2LeavesNoDirtyLinesForTheTimedRun) {
  MM_REQUIRE_GPU();
  const std::size_t l2 = mm::device_info().l2_bytes;
  ReadBench bench(2 * l2);
  mm::DeviceBuffer<char> scratch(2 * l2);
  const double after_read = bench.median_ms([](cudaStream_t s) { mm::flush_l2(s); });
  const double after_memset = bench.median_ms(
      [&](cudaStream_t s) { MM_CUDA_CHECK(cudaMemsetAsync(scratch.data(), 1, scratch.bytes(), s)); });
  EXPECT_LT(after_read, after_memset) << "after flush_l2 " << after_read * 1e3 << " us, after a memset "
                                      << after_memset * 1e3 << " us";
}

}  // namespace

namespace {

TEST(GpuHarness, CopyCheckPassesMemcpyAndCatchesAShortCopy) {
  MM_REQUIRE_GPU();
  const mm::CopyLaunch full = [](std::int64_t m, std::int64_t n, const float* s, float* d, cudaStream_t st) {
    MM_CUDA_CHECK(cudaMemcpyAsync(d, s, m * n * sizeof(float), cudaMemcpyDeviceToDevice, st));
  };
  const mm::CopyLaunch one_short = [](std::int64_t m, std::int64_t n, const float* s, float* d, cudaStream_t st) {
    MM_CUDA_CHECK(cudaMemcpyAsync(d, s, (m * n - 1) * sizeof(float), cudaMemcpyDeviceToDevice, st));
  };
  EXPECT_TRUE(mm::check_copy_kernel(33, 65, full, false).ok);
  const mm::CopyCheck c = mm::check_copy_kernel(33, 65, one_short, false);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.bad, 1);
  // A plain copy is not a transpose (unless the matrix is 1xN or Nx1).
  EXPECT_FALSE(mm::check_copy_kernel(33, 65, full, true).ok);
  EXPECT_TRUE(mm::check_copy_kernel(1, 65, full, true).ok);
}

}  // namespace
