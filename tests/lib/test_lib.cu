// The C library (lib/include/gemm_ladder.h): the refusals that need no GPU, each a status and one
// line, from several threads at once (CPU); every dtype and storage order against the fp64 reference
// at odd sizes, the cache, and two host threads on two streams sharing operands (GPU, sm_90a). Every
// test name starts with "lib".
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cmath>
#include <ostream>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gemm_ladder.h"
#include "gpu_test.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/gemm_runner.hpp"

namespace {

using bf16 = __nv_bfloat16;
using e4m3 = __nv_fp8_e4m3;
using mm::test::Size;

// Addresses for the refusals: never dereferenced, since every call below is refused before the GPU.
// 0x10000 is 256-byte aligned; +2 is a bf16 element off a 16-byte boundary, +1 off any element.
void* fake(std::uintptr_t offset = 0) { return reinterpret_cast<void*>(std::uintptr_t(0x10000) + offset); }
const float* fake_scale() { return static_cast<const float*>(fake(0x100)); }

struct Call {
  gl_dtype dtype = GL_BF16;
  gl_layout layout = GL_RCR;
  std::int64_t m = 64, n = 64, k = 64;
  const void* a = fake();
  std::int64_t lda = 64;
  const void* b = fake();
  std::int64_t ldb = 64;
  void* c = fake();
  std::int64_t ldc = 64;
  const float* scale_a = nullptr;
  const float* scale_b = nullptr;
  gl_status run() const { return gl_gemm(dtype, layout, m, n, k, a, lda, b, ldb, c, ldc, scale_a, scale_b, nullptr); }
};

// Expects `call` to be refused with `status` and a message containing `words`.
void expect_refused(const Call& call, gl_status status, const std::string& words) {
  const gl_status got = call.run();
  const std::string why = gl_last_error();
  EXPECT_EQ(got, status) << gl_status_name(got) << ": " << why;
  EXPECT_NE(why.find(words), std::string::npos) << "message: " << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << "one line: " << why;
}

TEST(lib, RefusesSizesBelowOne) {
  for (auto [m, n, k] : {std::tuple{0, 64, 64}, {64, -1, 64}, {64, 64, 0}}) {
    Call c;
    c.m = m, c.n = n, c.k = k;
    expect_refused(c, GL_INVALID_ARGUMENT, "every size must be at least 1");
  }
}

TEST(lib, RefusesNullPointers) {
  Call c;
  c.a = nullptr;
  expect_refused(c, GL_INVALID_ARGUMENT, "A is NULL");
  c = Call{};
  c.c = nullptr;
  expect_refused(c, GL_INVALID_ARGUMENT, "C is NULL");
}

TEST(lib, RefusesPointersOffTheirElement) {
  Call c;
  c.b = fake(1);
  expect_refused(c, GL_INVALID_ARGUMENT, "B starts 1 bytes past a 2-byte boundary");
  c = Call{};
  c.dtype = GL_TF32;
  c.c = fake(2);
  expect_refused(c, GL_INVALID_ARGUMENT, "C starts 2 bytes past a 4-byte boundary");
}

TEST(lib, RefusesLeadingDimensions) {
  Call c;
  c.lda = 63;
  expect_refused(c, GL_INVALID_ARGUMENT, "lda = 63 but A is 64x64 row-major: a row pitch below its row's length");
  c = Call{};
  c.ldc = 128;
  expect_refused(c, GL_UNSUPPORTED, "only dense operands are taken for now (ldc = 64)");
  c = Call{};
  c.layout = GL_RRR;
  c.n = 32, c.ldc = 32;  // B is K×N = 64×32 in RRR: ldb must be 32
  expect_refused(c, GL_UNSUPPORTED, "ldb = 64 but B (RRR: stored K×N) is 64x32 row-major");
}

TEST(lib, RefusesUnknownDtypeAndLayout) {
  Call c;
  c.dtype = static_cast<gl_dtype>(7);
  expect_refused(c, GL_UNSUPPORTED, "unsupported dtype 7");
  c = Call{};
  c.layout = static_cast<gl_layout>(2);
  expect_refused(c, GL_UNSUPPORTED, "unsupported layout 2");
}

TEST(lib, ScalesAreForFp8Only) {
  Call c;
  c.scale_a = fake_scale();
  expect_refused(c, GL_INVALID_ARGUMENT, "scale_a and scale_b are for the fp8 dtypes only");
  for (gl_dtype d : {GL_FP8_E4M3_PER_TENSOR, GL_FP8_E4M3_BLOCK_SCALED}) {
    c = Call{};
    c.dtype = d;
    c.scale_a = fake_scale();
    expect_refused(c, GL_INVALID_ARGUMENT, "scale_b is NULL (fp8 needs the scales of A and B");
  }
}

// Chapter 12's rules apply before the GPU is asked: a machine without one refuses the same way.
TEST(lib, RefusesWhatChapter12Refuses) {
  Call c;
  c.dtype = GL_FP8_E4M3_PER_TENSOR;
  c.scale_a = c.scale_b = fake_scale();
  c.layout = GL_RRR;
  expect_refused(c, GL_UNSUPPORTED, "fp8_per_tensor: fp8 takes only the RCR order");
  c.layout = GL_RCR;
  c.k = c.lda = c.ldb = 40;
  expect_refused(c, GL_UNSUPPORTED, "fp8_per_tensor: fp8 needs K % 16 == 0");
  c = Call{};
  c.dtype = GL_FP8_E4M3_BLOCK_SCALED;
  c.scale_a = c.scale_b = fake_scale();
  c.a = fake(8);
  expect_refused(c, GL_UNSUPPORTED, "A starts 8 bytes past a 16-byte boundary");
  c = Call{};
  c.dtype = GL_TF32;
  c.k = c.lda = c.ldb = 17;
  expect_refused(c, GL_UNSUPPORTED, "tf32_wgmma: needs K % 4 == 0");
  c.layout = GL_RRR;
  c.ldb = 64;
  expect_refused(c, GL_UNSUPPORTED, "tf32_transpose_b:");
}

TEST(lib, MessagesBelongToTheirThread) {
  std::string first, second;
  std::thread t1([&] {
    Call c;
    c.m = 0;
    for (int i = 0; i < 1000; ++i) (void)c.run();
    first = gl_last_error();
  });
  std::thread t2([&] {
    Call c;
    c.a = nullptr;
    for (int i = 0; i < 1000; ++i) (void)c.run();
    second = gl_last_error();
  });
  t1.join();
  t2.join();
  EXPECT_NE(first.find("every size must be at least 1"), std::string::npos) << first;
  EXPECT_NE(second.find("A is NULL"), std::string::npos) << second;
}

TEST(lib, StatusNamesAndCapacity) {
  EXPECT_STREQ(gl_status_name(GL_NO_SM90A), "GL_NO_SM90A");
  EXPECT_STREQ(gl_status_name(static_cast<gl_status>(42)), "unknown status");
  EXPECT_EQ(gl_set_cache_capacity(-1), GL_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gl_last_error()).find("a capacity is at least 0"), std::string::npos);
  EXPECT_EQ(gl_set_cache_capacity(1024), GL_OK);
  EXPECT_STREQ(gl_last_error(), "");
}

// Without an sm_90a GPU every call that passes the checks is refused with the reason; with one, the
// device is reported usable.
TEST(lib, DeviceStatusSaysWhy) {
  const gl_status s = gl_device_status();
  const std::string why = gl_last_error();
  if (!mm::device_info().present) {
    EXPECT_EQ(s, GL_NO_SM90A);
    EXPECT_NE(why.find("no CUDA GPU"), std::string::npos) << why;
    Call c;  // passes every check but the device's
    expect_refused(c, GL_NO_SM90A, "no CUDA GPU");
  } else if (mm::arch::unmet(mm::arch::sm90a).empty()) {
    EXPECT_EQ(s, GL_OK) << why;
  } else {
    EXPECT_EQ(s, GL_NO_SM90A);
    EXPECT_NE(why.find("sm_90a"), std::string::npos) << why;
  }
}

// ---- GPU: against the fp64 reference ----

struct Case {
  gl_dtype dtype;
  const char* layout;  // "RCR" or "RRR"
  Size size;
  // True when the chapter's kernel takes the problem today; otherwise it may refuse it
  // (GL_UNSUPPORTED and its rule: the test is skipped with that line) or take it and must be right.
  bool must_take;
};

std::string case_label(const Case& c) {
  const char* d = c.dtype == GL_BF16 ? "bf16" : c.dtype == GL_TF32 ? "tf32" : c.dtype == GL_FP8_E4M3_PER_TENSOR ? "fp8" : "fp8block";
  return std::string(d) + "_" + c.layout + "_" + mm::test::size_name(c.size);
}
std::string case_name(const ::testing::TestParamInfo<Case>& info) { return case_label(info.param); }
// gtest prints a Case as its name ("bf16_RCR_1x4096x4096").
void PrintTo(const Case& c, std::ostream* os) { *os << case_label(c); }

std::vector<Case> cases() {
  std::vector<Case> v;
  // bf16 (every_shape): RCR with K % 8 and N % 8 (M > 64) as chapter 11 takes it today: decode (swap_ab),
  // skinny with a ragged N, tile edges, a split K, a square; and sizes no 16-byte rule allows, in both
  // orders, which every_shape takes once it takes every shape.
  for (Size s : {Size{1, 4096, 4096}, Size{33, 1000, 520}, Size{129, 264, 72}, Size{128, 256, 4096}, Size{1000, 1000, 1000}})
    v.push_back({GL_BF16, "RCR", s, true});
  for (Size s : {Size{1, 1, 1}, Size{31, 33, 17}, Size{257, 129, 65}, Size{100, 100, 30}}) v.push_back({GL_BF16, "RCR", s, false});
  for (Size s : {Size{1, 4096, 4096}, Size{129, 264, 72}, Size{31, 33, 17}, Size{257, 129, 65}}) v.push_back({GL_BF16, "RRR", s, false});
  // tf32: K and N multiples of 4, both orders.
  for (const char* layout : {"RCR", "RRR"})
    for (Size s : {Size{1, 4096, 4096}, Size{33, 1000, 520}, Size{129, 264, 72}, Size{1000, 1000, 1000}})
      v.push_back({GL_TF32, layout, s, true});
  // fp8: K % 16, N % 8, RCR; K not a multiple of 128 (a short last scale block) too.
  for (gl_dtype d : {GL_FP8_E4M3_PER_TENSOR, GL_FP8_E4M3_BLOCK_SCALED})
    for (Size s : {Size{1, 4096, 4096}, Size{33, 1000, 528}, Size{129, 264, 80}, Size{1000, 1000, 1040}})
      v.push_back({d, "RCR", s, true});
  return v;
}

class LibVsReference : public ::testing::TestWithParam<Case> {};

template <class TIn, class TOut>
void check_case(const Case& tc, mm::DType dtype) {
  const mm::GemmProblem p = mm::test::problem(tc.size, tc.layout);
  gl_status status = GL_INTERNAL;
  std::string why, path;
  mm::GemmLaunch<TIn, TOut> launch = [&](const mm::GemmProblem& q, const TIn* a, const TIn* b, TOut* c, cudaStream_t s) {
    const bool rcr = q.b == mm::Order::col;
    status = gl_gemm(tc.dtype, rcr ? GL_RCR : GL_RRR, q.m, q.n, q.k, a, q.k, b, rcr ? q.k : q.n, c, q.n, q.scale_a,
                     q.scale_b, s);
    why = gl_last_error();
    path = gl_last_path();
  };
  const mm::CheckResult r = mm::check_gemm_kernel<TIn, TOut>(p, launch, dtype, 3);
  if (status == GL_UNSUPPORTED && !tc.must_take) GTEST_SKIP() << "the chapter's kernel refuses it for now: " << why;
  ASSERT_EQ(status, GL_OK) << gl_status_name(status) << ": " << why;
  EXPECT_FALSE(path.empty());
  EXPECT_TRUE(r.ok) << path << " at " << tc.layout << " " << mm::test::size_name(tc.size) << ": " << r.summary;
}

TEST_P(LibVsReference, MatchesFp64) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const Case& tc = GetParam();
  switch (tc.dtype) {
    case GL_BF16: check_case<bf16, bf16>(tc, mm::DType::bf16); break;
    case GL_TF32: check_case<float, float>(tc, mm::DType::tf32); break;
    case GL_FP8_E4M3_PER_TENSOR: check_case<e4m3, bf16>(tc, mm::DType::e4m3); break;
    case GL_FP8_E4M3_BLOCK_SCALED: check_case<e4m3, bf16>(tc, mm::DType::e4m3_block); break;
  }
}

INSTANTIATE_TEST_SUITE_P(lib, LibVsReference, ::testing::ValuesIn(cases()), case_name);

// ---- GPU: the cache, threads and streams ----

// Random bf16 in [-1, 1) on the host and on the device.
struct Bf16Matrix {
  std::vector<float> host;
  mm::DeviceBuffer<bf16> device;
  Bf16Matrix(std::int64_t elements, unsigned seed) : host(std::size_t(elements)), device(std::size_t(elements)) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<bf16> bits(host.size());
    for (std::size_t i = 0; i < host.size(); ++i) {
      bits[i] = __float2bfloat16(dist(gen));
      host[i] = __bfloat162float(bits[i]);
    }
    MM_CUDA_CHECK(cudaMemcpy(device.data(), bits.data(), bits.size() * sizeof(bf16), cudaMemcpyHostToDevice));
  }
};

// C = A·Bᵀ (A M×K, B N×K) in fp64 on the host; "" when `c` (bf16, on the device) matches it within
// bf16's tolerance relative to Σ|a·b|, else the first element that does not.
std::string compare_rcr(const Bf16Matrix& a, const Bf16Matrix& b, const bf16* c, std::int64_t m, std::int64_t n,
                        std::int64_t k) {
  std::vector<bf16> got(std::size_t(m * n));
  MM_CUDA_CHECK(cudaMemcpy(got.data(), c, got.size() * sizeof(bf16), cudaMemcpyDeviceToHost));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double want = 0, scale = 0;
      for (std::int64_t l = 0; l < k; ++l) {
        const double t = double(a.host[std::size_t(i * k + l)]) * double(b.host[std::size_t(j * k + l)]);
        want += t, scale += std::fabs(t);
      }
      const double g = double(__bfloat162float(got[std::size_t(i * n + j)]));
      if (!(std::fabs(g - want) <= 8e-3 * scale + 1e-6))
        return "C(" + std::to_string(i) + "," + std::to_string(j) + ") = " + std::to_string(g) + ", want " + std::to_string(want);
    }
  return "";
}

// Two host threads, each on its own stream, run the same problems on the same A and B into their own
// C, many times interleaved: a split-K problem (M > 64: split_k's workspace) and a decode problem
// (swap_ab, K split too). Each (problem, pointers, stream) is prepared once, so its workspace is its
// stream's own; a shared one would mix the partial sums of the two streams.
TEST(lib, TwoThreadsTwoStreams) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const std::vector<Size> sizes = {{128, 256, 4096}, {16, 4096, 1024}};
  std::vector<Bf16Matrix> as, bs;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    as.emplace_back(sizes[i].m * sizes[i].k, unsigned(10 + i));
    bs.emplace_back(sizes[i].n * sizes[i].k, unsigned(20 + i));
  }
  std::int64_t misses_before = 0;
  gl_cache_stats(nullptr, nullptr, &misses_before);
  std::string errors[2];
  std::string paths[2];
  auto worker = [&](int t) {
    cudaStream_t stream = nullptr;
    MM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::vector<mm::DeviceBuffer<bf16>> cs;
    for (const Size& s : sizes) cs.emplace_back(std::size_t(s.m * s.n));
    for (int rep = 0; rep < 50 && errors[t].empty(); ++rep)
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        const Size& s = sizes[i];
        if (gl_gemm(GL_BF16, GL_RCR, s.m, s.n, s.k, as[i].device.data(), s.k, bs[i].device.data(), s.k, cs[i].data(), s.n,
                    nullptr, nullptr, stream) != GL_OK) {
          errors[t] = gl_last_error();
          break;
        }
        paths[t] += std::string(gl_last_path()) + ";";
      }
    MM_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::size_t i = 0; i < sizes.size() && errors[t].empty(); ++i)
      errors[t] = compare_rcr(as[i], bs[i], cs[i].data(), sizes[i].m, sizes[i].n, sizes[i].k);
    MM_CUDA_CHECK(cudaStreamDestroy(stream));
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  std::int64_t misses_after = 0, hits = 0;
  gl_cache_stats(nullptr, &hits, &misses_after);
  // One preparation per (problem, C, stream): 2 problems × 2 threads (another thread's same key may
  // prepare twice at once and keep one, so at least that many).
  EXPECT_GE(misses_after - misses_before, 4);
  EXPECT_LE(misses_after - misses_before, 8) << "a lookup that should hit prepared again";
  EXPECT_NE(paths[0].find("split_k"), std::string::npos) << "the M > 64 problem should split K: " << paths[0];
}

// The cache gives the same answer as a fresh preparation, keeps at most its capacity, and forgets on
// gl_clear_cache; capacity 0 prepares every call.
TEST(lib, CacheCapacityAndClear) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const Size s{64, 512, 1024};
  Bf16Matrix a(s.m * s.k, 1), b(s.n * s.k, 2);
  mm::DeviceBuffer<bf16> c(std::size_t(s.m * s.n));
  gl_clear_cache();
  std::int64_t entries = -1;
  for (std::int64_t capacity : {0, 1, 4}) {
    ASSERT_EQ(gl_set_cache_capacity(capacity), GL_OK);
    for (int rep = 0; rep < 3; ++rep)
      for (std::int64_t m : {1, 17, 64})  // three keys
        ASSERT_EQ(gl_gemm(GL_BF16, GL_RCR, m, s.n, s.k, a.device.data(), s.k, b.device.data(), s.k, c.data(), s.n, nullptr,
                          nullptr, nullptr),
                  GL_OK)
            << gl_last_error();
    gl_cache_stats(&entries, nullptr, nullptr);
    EXPECT_EQ(entries, std::min<std::int64_t>(capacity, 3)) << "capacity " << capacity;
  }
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(compare_rcr(a, b, c.data(), s.m, s.n, s.k), "");  // the last call: M = 64
  gl_clear_cache();
  gl_cache_stats(&entries, nullptr, nullptr);
  EXPECT_EQ(entries, 0);
  ASSERT_EQ(gl_set_cache_capacity(1024), GL_OK);
}

}  // namespace
