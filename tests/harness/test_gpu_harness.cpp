// The harness on the GPU: the device fill equals the host fill, poison makes
// NaNs, cuBLAS passes the check in every storage order, the device reference
// equals the host one (also for a C taller or wider than a grid dimension holds),
// timing returns sane numbers, the L2 flush runs, and cuBLAS in tf32 and bf16 passes the tolerances
// of those types (tf32 failing the fp32 one).
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

TEST(GpuHarness, InterleavedTimingTakesTurns) {
  MM_REQUIRE_GPU();
  // Three launches that record the order the host calls them in: each warmed up in turn, then each
  // round runs all three once, round r starting at launch r mod 3.
  mm::DeviceBuffer<float> x(1 << 20);
  std::vector<int> order;
  std::vector<std::function<void(cudaStream_t)>> launches;
  for (int i = 0; i < 3; ++i)
    launches.push_back([&, i](cudaStream_t s) {
      order.push_back(i);
      MM_CUDA_CHECK(cudaMemsetAsync(x.data(), 0, x.bytes() / std::size_t(i + 1), s));
    });
  const std::vector<mm::Timing> t = mm::time_interleaved(launches, {1, 4, true});
  ASSERT_EQ(t.size(), 3u);
  for (const mm::Timing& one : t) {
    EXPECT_EQ(one.samples_ms.size(), 4u);
    EXPECT_GT(one.min_ms, 0.0);
    EXPECT_LE(one.min_ms, one.median_ms);
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2}));
  EXPECT_TRUE(mm::time_interleaved({}, {1, 4, true}).empty());
}

// ---- The L2 flush (timing.cu) ----
//
// That it evicts and leaves nothing dirty is a property of the hardware's timing, which a test run
// beside other tests on one GPU cannot measure reliably: chapter 04's README shows it with the
// copy kernels' times against the profiler's (benchmarks are not timed tests). Here: it runs.

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

// ---- cuBLAS in the tensor-core types against the tolerances of those types ----

namespace {

TEST(GpuHarness, CublasTf32PassesTheTf32ToleranceAndFailsTheFp32One) {
  MM_REQUIRE_GPU();
  // FAST_TF32 is a permission: cuBLAS multiplies in tf32 only on a GPU with tf32 tensor cores.
  if (mm::device_info().cc < 80) GTEST_SKIP() << "tf32 tensor cores need sm_80, this GPU is sm_" << mm::device_info().cc;
  static mm::CublasGemm cublas;
  const mm::GemmLaunch<float, float> tf32 = [](const mm::GemmProblem& q, const float* a, const float* b, float* c,
                                               cudaStream_t st) { cublas.gemm(q, mm::DType::tf32, a, b, c, CUDA_R_32F, st); };
  const mm::GemmProblem p{64, 64, 1024};
  const mm::CheckResult as_tf32 = mm::check_gemm_kernel(p, tf32, mm::DType::tf32);
  EXPECT_TRUE(as_tf32.ok) << as_tf32.summary;
  const mm::CheckResult as_fp32 = mm::check_gemm_kernel(p, tf32, mm::DType::f32);
  EXPECT_FALSE(as_fp32.ok) << "CUBLAS_COMPUTE_32F_FAST_TF32 gave an fp32-accurate result at 64x64x1024 ("
                           << as_fp32.summary << "): did cuBLAS run an fp32 kernel for it?";
}

TEST(GpuHarness, CublasBf16PassesTheBf16OutputTolerance) {
  MM_REQUIRE_GPU();
  static mm::CublasGemm cublas;
  const mm::GemmLaunch<__nv_bfloat16, __nv_bfloat16> bf16_out =
      [](const mm::GemmProblem& q, const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, cudaStream_t st) {
        cublas.gemm(q, mm::DType::bf16, a, b, c, CUDA_R_16BF, st);
      };
  const mm::GemmLaunch<__nv_bfloat16, float> fp32_out =
      [](const mm::GemmProblem& q, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, cudaStream_t st) {
        cublas.gemm(q, mm::DType::bf16, a, b, c, CUDA_R_32F, st);
      };
  for (const char* tag : {"RRR", "RCR", "CRC"})
    for (mm::ProblemSize s : {mm::ProblemSize{17, 33, 9}, {64, 64, 1024}, {129, 257, 33}}) {
      const mm::GemmProblem p = mm::make_problem(s, tag);
      const mm::CheckResult r = mm::check_gemm_kernel(p, bf16_out, mm::DType::bf16);
      EXPECT_TRUE(r.ok) << "bf16 C, " << tag << " " << s.m << "x" << s.n << "x" << s.k << ": " << r.summary;
      const mm::CheckResult r32 = mm::check_gemm_kernel(p, fp32_out, mm::DType::bf16);
      EXPECT_TRUE(r32.ok) << "fp32 C, " << tag << " " << s.m << "x" << s.n << "x" << s.k << ": " << r32.summary;
    }
}

}  // namespace
