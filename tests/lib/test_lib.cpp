// The C library (lib/include/gemm_ladder.h): the refusals that need no GPU, each a status and one
// line, from several threads at once (CPU); every dtype and storage order against the fp64 reference
// at odd sizes, the cache, two host threads on two streams sharing operands, and a call captured into
// a CUDA graph (GPU, sm_90a). The grouped calls (chapter 13): their refusals (CPU), and every expert of
// odd layouts against the fp64 reference, both layouts, both tiles, C's rows outside every expert's
// tiles untouched (GPU); the same for gl_grouped_swiglu (step 3's SiLU(gate)·up epilogue) against the
// fp64 SwiGLU of the interleaved gate and up weights. gl_moe_permute (the MoE permute into chapter 13's layout): its
// refusals (CPU), and random routings copied bit for bit against a host reference, A's other rows untouched (GPU).
// Every test name starts with "lib".
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ostream>
#include <cstdint>
#include <numeric>
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

// Expects `call` (any of this file's call records: its run() makes the library call) to be refused with
// `status` and a one-line message containing `words`, and starting with `named` (the call's name) where given.
template <class CallRecord>
void expect_refused(const CallRecord& call, gl_status status, const std::string& words, const std::string& named = "") {
  const gl_status got = call.run();
  const std::string why = gl_last_error();
  EXPECT_EQ(got, status) << gl_status_name(got) << ": " << why;
  EXPECT_NE(why.find(words), std::string::npos) << "message: " << why;
  if (!named.empty()) {
    EXPECT_EQ(why.find(named), 0u) << "names the call: " << why;
  }
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

// ---- Grouped GEMMs: the refusals (CPU) ----

struct GroupedCall {
  std::int64_t experts = 4, rows = 512, n = 256, k = 64;
  const void* a = fake();
  const void* b = fake();
  void* c = fake();
  const std::int64_t* offsets = static_cast<const std::int64_t*>(fake(0x200));
  const std::int64_t* host_offsets = nullptr;
  std::int64_t tile_rows = 0;
  gl_status run() const { return gl_grouped_gemm(experts, rows, n, k, a, b, c, offsets, host_offsets, tile_rows, nullptr); }
};

void expect_grouped_refused(const GroupedCall& call, gl_status status, const std::string& words) {
  expect_refused(call, status, words, "gl_grouped_gemm");
}

TEST(lib, GroupedRefusesSizesAndPointers) {
  GroupedCall c;
  c.experts = 0;
  expect_grouped_refused(c, GL_INVALID_ARGUMENT, "needs at least one expert");
  for (auto [rows, n, k] : {std::tuple{0, 256, 64}, {512, -256, 64}, {512, 256, 0}}) {
    c = GroupedCall{};
    c.rows = rows, c.n = n, c.k = k;
    expect_grouped_refused(c, GL_INVALID_ARGUMENT, "rows, N and K must be at least 1");
  }
  c = GroupedCall{};
  c.offsets = nullptr;
  expect_grouped_refused(c, GL_INVALID_ARGUMENT, "offsets is NULL");
  c = GroupedCall{};
  c.offsets = static_cast<const std::int64_t*>(fake(0x204));
  expect_grouped_refused(c, GL_INVALID_ARGUMENT, "offsets starts 4 bytes past a 8-byte boundary");
  c = GroupedCall{};
  c.c = nullptr;
  expect_grouped_refused(c, GL_INVALID_ARGUMENT, "C is NULL");
  c = GroupedCall{};
  c.b = fake(1);
  expect_grouped_refused(c, GL_INVALID_ARGUMENT, "B starts 1 bytes past a 2-byte boundary");
  c = GroupedCall{};
  c.a = fake(2);  // a whole bf16 off, but not 16-byte aligned: TMA's rule
  expect_grouped_refused(c, GL_UNSUPPORTED, "A starts 2 bytes past a 16-byte boundary: TMA needs 16-byte aligned operands");
  c = GroupedCall{};
  c.tile_rows = 32;
  expect_grouped_refused(c, GL_INVALID_ARGUMENT, "tile_rows = 32: 0 (the library chooses), 16, 64 or 128");
}

TEST(lib, GroupedRefusesWhatChapter13Refuses) {
  GroupedCall c;
  c.n = 384;
  expect_grouped_refused(c, GL_UNSUPPORTED, "grouped_contiguous: needs N % 256 == 0");
  c = GroupedCall{};
  c.k = 60;
  expect_grouped_refused(c, GL_UNSUPPORTED, "grouped_contiguous: needs K % 8 == 0");
  c = GroupedCall{};
  c.rows = std::int64_t(1) << 31;
  expect_grouped_refused(c, GL_UNSUPPORTED, "below 2^31");
  // The host's copy of the layout, checked by the chapter's grouped_layout_rejects.
  const std::int64_t from_one[] = {1, 128, 256, 384, 512};
  const std::int64_t before_start[] = {0, 130, 200, 384, 512};  // expert 1 starts at 256 but ends at 200
  const std::int64_t past_rows[] = {0, 128, 256, 384, 600};
  const std::int64_t fine[] = {0, 1, 128, 256, 300};
  c = GroupedCall{};
  c.host_offsets = from_one;
  expect_grouped_refused(c, GL_INVALID_ARGUMENT, "offsets[0] must be 0 (in the host's copy of the layout)");
  c.host_offsets = before_start;
  expect_grouped_refused(c, GL_INVALID_ARGUMENT, "a group's end must not come before its aligned start");
  c.host_offsets = past_rows;
  expect_grouped_refused(c, GL_INVALID_ARGUMENT, "the experts' rows end at row 600, past A and C's 512");
  // A layout that passes every check: without a GPU only the device refuses it. (With one it would be
  // launched on the fake pointers: the GPU tests below launch real ones.)
  c.host_offsets = fine;
  if (!mm::device_info().present) expect_grouped_refused(c, GL_NO_SM90A, "no CUDA GPU");
}

TEST(lib, GroupedMaskedRefusals) {
  const void* counts = fake(0x300);
  auto masked = [&](std::int64_t capacity, const void* cnt, const std::int32_t* host) {
    return gl_grouped_gemm_masked(4, capacity, 256, 64, fake(), fake(), fake(), static_cast<const std::int32_t*>(cnt), host, 0,
                                  nullptr);
  };
  EXPECT_EQ(masked(100, counts, nullptr), GL_UNSUPPORTED);
  EXPECT_NE(std::string(gl_last_error()).find("grouped_masked: needs a capacity that is a multiple of 128"), std::string::npos)
      << gl_last_error();
  EXPECT_EQ(masked(0, counts, nullptr), GL_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gl_last_error()).find("capacity, N and K must be at least 1"), std::string::npos) << gl_last_error();
  EXPECT_EQ(masked(128, nullptr, nullptr), GL_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gl_last_error()).find("counts is NULL"), std::string::npos) << gl_last_error();
  EXPECT_EQ(masked(128, fake(0x302), nullptr), GL_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gl_last_error()).find("counts starts 2 bytes past a 4-byte boundary"), std::string::npos) << gl_last_error();
  const std::int32_t over[] = {0, 129, 3, 4}, negative[] = {0, -1, 3, 4};
  for (const std::int32_t* host : {over, negative}) {
    EXPECT_EQ(masked(128, counts, host), GL_INVALID_ARGUMENT);
    EXPECT_NE(std::string(gl_last_error()).find("every count must be from 0 to the capacity (in the host's copy of the layout)"),
              std::string::npos)
        << gl_last_error();
  }
}

// ---- gl_grouped_swiglu: the refusals (CPU) ----

struct SwigluCall {
  std::int64_t experts = 4, rows = 512, intermediate = 128, k = 64;
  const void* a = fake();
  const void* b = fake();
  void* h = fake();
  const std::int64_t* offsets = static_cast<const std::int64_t*>(fake(0x200));
  const std::int64_t* host_offsets = nullptr;
  std::int64_t tile_rows = 0;
  gl_status run() const {
    return gl_grouped_swiglu(experts, rows, intermediate, k, a, b, h, offsets, host_offsets, tile_rows, nullptr);
  }
};

void expect_swiglu_refused(const SwigluCall& call, gl_status status, const std::string& words) {
  expect_refused(call, status, words, "gl_grouped_swiglu");
}

TEST(lib, SwigluRefusesSizesPointersAndTiles) {
  SwigluCall c;
  c.experts = 0;
  expect_swiglu_refused(c, GL_INVALID_ARGUMENT, "needs at least one expert");
  for (auto [rows, i, k] : {std::tuple{0, 128, 64}, {512, 0, 64}, {512, 128, -8}}) {
    c = SwigluCall{};
    c.rows = rows, c.intermediate = i, c.k = k;
    expect_swiglu_refused(c, GL_INVALID_ARGUMENT, "rows, I and K must be at least 1");
  }
  c = SwigluCall{};
  c.offsets = nullptr;
  expect_swiglu_refused(c, GL_INVALID_ARGUMENT, "offsets is NULL");
  c = SwigluCall{};
  c.h = nullptr;
  expect_swiglu_refused(c, GL_INVALID_ARGUMENT, "H is NULL");
  c = SwigluCall{};
  c.b = fake(1);
  expect_swiglu_refused(c, GL_INVALID_ARGUMENT, "B starts 1 bytes past a 2-byte boundary");
  c = SwigluCall{};
  c.h = fake(2);  // a whole bf16 off, but not 16-byte aligned: TMA's rule
  expect_swiglu_refused(c, GL_UNSUPPORTED, "H starts 2 bytes past a 16-byte boundary: TMA needs 16-byte aligned operands");
  c = SwigluCall{};
  c.tile_rows = 16;  // a tile of gl_grouped_gemm's, but not of the fused epilogue's
  expect_swiglu_refused(c, GL_UNSUPPORTED, "tile_rows = 16: grouped_swiglu has no decode tile");
  c.tile_rows = 32;
  expect_swiglu_refused(c, GL_INVALID_ARGUMENT, "tile_rows = 32: 0 (the library chooses), 64 or 128");
}

TEST(lib, SwigluRefusesWhatStep3Refuses) {
  SwigluCall c;
  for (std::int64_t i : {64, 192, 200}) {  // N = 2I a multiple of 256 at 192 too: the rule is on I
    c.intermediate = i;
    expect_swiglu_refused(c, GL_UNSUPPORTED, "grouped_swiglu: needs I % 128 == 0");
  }
  EXPECT_EQ(std::string(gl_last_error()).find("gl_grouped_swiglu(E = 4, rows = 512, I = 200, K = 64): "), 0u) << gl_last_error();
  c = SwigluCall{};
  c.k = 60;
  expect_swiglu_refused(c, GL_UNSUPPORTED, "grouped_swiglu: needs K % 8 == 0");
  c = SwigluCall{};
  c.intermediate = std::int64_t(1) << 30;  // 2I = 2^31
  expect_swiglu_refused(c, GL_UNSUPPORTED, "needs E, 2I, K and the rows below 2^31");
  c = SwigluCall{};
  c.experts = 1 << 20, c.intermediate = 1024;  // E·2I = 2^31
  expect_swiglu_refused(c, GL_UNSUPPORTED, "grouped_swiglu: needs rows and E·N below 2^31");
  const std::int64_t from_one[] = {1, 128, 256, 384, 512};
  const std::int64_t past_rows[] = {0, 128, 256, 384, 600};
  const std::int64_t fine[] = {0, 1, 128, 256, 300};
  c = SwigluCall{};
  c.host_offsets = from_one;
  expect_swiglu_refused(c, GL_INVALID_ARGUMENT, "grouped_swiglu: offsets[0] must be 0 (in the host's copy of the layout)");
  c.host_offsets = past_rows;
  expect_swiglu_refused(c, GL_INVALID_ARGUMENT, "the experts' rows end at row 600, past A and C's 512");
  c.host_offsets = fine;
  if (!mm::device_info().present) expect_swiglu_refused(c, GL_NO_SM90A, "no CUDA GPU");
}

// Without an sm_90a GPU a grouped call that passes every check is refused with the device's reason.
TEST(lib, GroupedWithoutAGpuSaysWhy) {
  if (mm::device_info().present) GTEST_SKIP() << "a GPU is present: the GPU tests below launch grouped GEMMs";
  GroupedCall c;
  expect_grouped_refused(c, GL_NO_SM90A, "no CUDA GPU");
  EXPECT_EQ(gl_grouped_gemm_masked(4, 128, 256, 64, fake(), fake(), fake(), static_cast<const std::int32_t*>(fake(0x300)),
                                   nullptr, 64, nullptr),
            GL_NO_SM90A);
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
  // RRR decode with an odd N: chapter 11's ragged_decode in 16-byte chunks, K in several slices (its
  // workspace and counters, cached with the prepared GEMM and used again).
  for (Size s : {Size{3, 1001, 520}, Size{8, 249, 4097}}) v.push_back({GL_BF16, "RRR", s, true});
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
    EXPECT_EQ(entries - gl_cache_pinned(), std::min<std::int64_t>(capacity, 3)) << "capacity " << capacity;
  }
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(compare_rcr(a, b, c.data(), s.m, s.n, s.k), "");  // the last call: M = 64
  gl_clear_cache();
  gl_cache_stats(&entries, nullptr, nullptr);
  EXPECT_EQ(entries, gl_cache_pinned());
  ASSERT_EQ(gl_set_cache_capacity(1024), GL_OK);
}

// A call captured into a CUDA graph (torch.compile's mode="reduce-overhead" does it), on a GEMM the
// cache has not seen: it is prepared during the capture (its split-K workspace's cudaMalloc and
// cudaMemset, which a global-mode capture forbids unless the library relaxes the mode). The graph is
// replayed on two different A, with gl_clear_cache between: the entry stays pinned (the graph reads its
// workspace), and each replay matches the fp64 reference.
TEST(lib, CapturedIntoACudaGraph) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const Size s{16, 4096, 4096};  // swap_ab 64x16, K in 2 slices: a workspace
  const std::size_t a_bytes = std::size_t(s.m * s.k) * sizeof(bf16);
  Bf16Matrix a1(s.m * s.k, 31), a2(s.m * s.k, 32), b(s.n * s.k, 33);
  mm::DeviceBuffer<bf16> a(std::size_t(s.m * s.k)), c(std::size_t(s.m * s.n));
  cudaStream_t stream = nullptr;
  MM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::int64_t pinned_before = gl_cache_pinned();
  MM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const gl_status status = gl_gemm(GL_BF16, GL_RCR, s.m, s.n, s.k, a.data(), s.k, b.device.data(), s.k, c.data(), s.n,
                                   nullptr, nullptr, stream);
  const std::string why = gl_last_error(), path = gl_last_path();
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  ASSERT_EQ(status, GL_OK) << why;
  ASSERT_EQ(ended, cudaSuccess) << cudaGetErrorString(ended);
  EXPECT_NE(path.find(" x2"), std::string::npos) << "expected K split (a workspace): " << path;
  EXPECT_EQ(gl_cache_pinned(), pinned_before + 1);
  cudaGraphExec_t exec = nullptr;
  MM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (const Bf16Matrix* in : {&a1, &a2}) {
    MM_CUDA_CHECK(cudaMemcpyAsync(a.data(), in->device.data(), a_bytes, cudaMemcpyDeviceToDevice, stream));
    MM_CUDA_CHECK(cudaMemsetAsync(c.data(), 0xFF, std::size_t(s.m * s.n) * sizeof(bf16), stream));  // NaN
    MM_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    MM_CUDA_CHECK(cudaStreamSynchronize(stream));
    EXPECT_EQ(compare_rcr(*in, b, c.data(), s.m, s.n, s.k), "");
    gl_clear_cache();  // keeps the pinned entry: the second replay reads its workspace
  }
  EXPECT_EQ(gl_cache_pinned(), pinned_before + 1);
  MM_CUDA_CHECK(cudaGraphExecDestroy(exec));
  MM_CUDA_CHECK(cudaGraphDestroy(graph));
  MM_CUDA_CHECK(cudaStreamDestroy(stream));
}

// ---- GPU: grouped GEMMs against the fp64 reference ----

// A grouped layout to run: each expert's rows (contiguous) or counts (masked, with a capacity), the
// tile (0: the library's choice), whether the host's copy goes with the call, and the tile expected.
struct GroupedCase {
  const char* name;
  std::vector<std::int64_t> rows_per_expert;
  std::int64_t capacity;  // 0: contiguous
  std::int64_t tile_rows;
  bool host_copy;
  const char* path;  // gl_last_path() must contain it
};

// gtest prints a GroupedCase as its name ("empty_one_edges").
void PrintTo(const GroupedCase& c, std::ostream* os) { *os << c.name; }

std::vector<GroupedCase> grouped_cases() {
  std::vector<std::int64_t> many(37);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = std::int64_t((i * 7) % 23);  // 0 .. 22 rows, some empty
  return {
      {"empty_one_edges", {0, 1, 128, 0, 257, 129}, 0, 0, true, "grouped_contiguous 128x256"},
      {"empty_one_edges_64", {0, 1, 128, 0, 257, 129}, 0, 64, true, "grouped_contiguous 64x256"},
      {"empty_one_edges_16", {0, 1, 128, 0, 257, 129}, 0, 16, true, "grouped_decode 64x16"},  // forced: 17 tiles of token rows
      {"one_expert", {300}, 0, 0, false, "grouped_contiguous 128x256"},
      {"one_row", {1}, 0, 0, false, "grouped_contiguous 128x256"},  // 192 rows of buffer > 128·E: 128 rows
      {"many_small_host", many, 0, 0, true, "grouped_contiguous 64x256"},  // K = 136: below the decode tile's 1024
      {"many_small_device", many, 0, 0, false, "grouped_contiguous 64x256"},  // rows <= 128·E
      {"many_small_16", many, 0, 16, false, "grouped_decode 64x16"},
      {"many_small_128", many, 0, 128, true, "grouped_contiguous 128x256"},
      {"all_empty", {0, 0, 0}, 0, 0, true, "grouped_contiguous 64x256"},
      {"masked", {3, 0, 128, 77}, 128, 0, false, "grouped_masked 64x256"},
      {"masked_16", {3, 0, 128, 77}, 128, 16, false, "grouped_masked_decode 64x16"},
      {"masked_host_128", {100, 256, 0, 200}, 256, 0, true, "grouped_masked 128x256"},
  };
}

class LibGrouped : public ::testing::TestWithParam<GroupedCase> {};

TEST_P(LibGrouped, MatchesFp64) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const GroupedCase& tc = GetParam();
  const std::int64_t experts = std::int64_t(tc.rows_per_expert.size()), n = 512, k = 136;
  // The layout: each expert's first row and the E + 1 offsets (contiguous) or counts (masked).
  std::vector<std::int64_t> first(static_cast<std::size_t>(experts)), offsets{0};
  std::vector<std::int32_t> counts;
  std::int64_t rows = 0;
  if (tc.capacity == 0) {
    for (std::int64_t e = 0; e < experts; ++e) {
      first[e] = (offsets.back() + 127) / 128 * 128;
      offsets.push_back(first[e] + tc.rows_per_expert[e]);
    }
    rows = std::max<std::int64_t>((offsets.back() + 127) / 128 * 128, 128) + 64;  // 64 rows no expert owns
  } else {
    for (std::int64_t e = 0; e < experts; ++e) first[e] = e * tc.capacity, counts.push_back(std::int32_t(tc.rows_per_expert[e]));
    rows = experts * tc.capacity;
  }
  Bf16Matrix a(rows * k, 3), b(experts * n * k, 4);
  mm::DeviceBuffer<bf16> c(std::size_t(rows * n));
  // C poisoned (0xFFFF: a NaN) so that rows the kernel must not write are seen unwritten.
  MM_CUDA_CHECK(cudaMemset(c.data(), 0xFF, std::size_t(rows * n) * sizeof(bf16)));
  mm::DeviceBuffer<std::int64_t> d_offsets(offsets.size());
  mm::DeviceBuffer<std::int32_t> d_counts(std::max<std::size_t>(counts.size(), 1));
  MM_CUDA_CHECK(cudaMemcpy(d_offsets.data(), offsets.data(), offsets.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  if (!counts.empty())
    MM_CUDA_CHECK(cudaMemcpy(d_counts.data(), counts.data(), counts.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice));
  cudaStream_t stream = nullptr;
  MM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const gl_status status =
      tc.capacity == 0
          ? gl_grouped_gemm(experts, rows, n, k, a.device.data(), b.device.data(), c.data(), d_offsets.data(),
                            tc.host_copy ? offsets.data() : nullptr, tc.tile_rows, stream)
          : gl_grouped_gemm_masked(experts, tc.capacity, n, k, a.device.data(), b.device.data(), c.data(), d_counts.data(),
                                   tc.host_copy ? counts.data() : nullptr, tc.tile_rows, stream);
  ASSERT_EQ(status, GL_OK) << gl_status_name(status) << ": " << gl_last_error();
  const std::string path = gl_last_path();
  EXPECT_NE(path.find(tc.path), std::string::npos) << "ran " << path;
  MM_CUDA_CHECK(cudaStreamSynchronize(stream));
  MM_CUDA_CHECK(cudaStreamDestroy(stream));
  std::vector<bf16> got(std::size_t(rows * n));
  MM_CUDA_CHECK(cudaMemcpy(got.data(), c.data(), got.size() * sizeof(bf16), cudaMemcpyDeviceToHost));
  // Every expert's rows against fp64; rows past the last tile of the buffer (contiguous) untouched.
  int bad = 0;
  std::string first_bad;
  for (std::int64_t e = 0; e < experts; ++e)
    for (std::int64_t r = first[e]; r < first[e] + tc.rows_per_expert[e]; ++r)
      for (std::int64_t j = 0; j < n; ++j) {
        double want = 0, scale = 0;
        for (std::int64_t l = 0; l < k; ++l) {
          const double t = double(a.host[std::size_t(r * k + l)]) * double(b.host[std::size_t((e * n + j) * k + l)]);
          want += t, scale += std::fabs(t);
        }
        const double g = double(__bfloat162float(got[std::size_t(r * n + j)]));
        if (!(std::fabs(g - want) <= 8e-3 * scale + 1e-6) && bad++ == 0)
          first_bad = "expert " + std::to_string(e) + " C(" + std::to_string(r) + "," + std::to_string(j) + ") = " +
                      std::to_string(g) + ", want " + std::to_string(want);
      }
  EXPECT_EQ(bad, 0) << first_bad << " (" << path << ")";
  if (tc.capacity == 0) {
    const std::int64_t untouched = (offsets.back() + 127) / 128 * 128;
    for (std::int64_t i = untouched * n; i < rows * n; ++i) {
      std::uint16_t bits;
      std::memcpy(&bits, &got[std::size_t(i)], 2);
      ASSERT_EQ(bits, 0xFFFF) << "C row " << i / n << " is past every expert's tiles but was written (" << path << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(lib, LibGrouped, ::testing::ValuesIn(grouped_cases()),
                         [](const ::testing::TestParamInfo<GroupedCase>& info) { return std::string(info.param.name); });

// ---- GPU: gl_grouped_swiglu against the fp64 SwiGLU ----

// A contiguous layout for gl_grouped_swiglu: each expert's rows, I and K, the tile (0: the library's
// choice), whether the host's copy goes with the call, and the path expected.
struct SwigluCase {
  const char* name;
  std::vector<std::int64_t> rows_per_expert;
  std::int64_t intermediate, k;
  std::int64_t tile_rows;
  bool host_copy;
  const char* path;  // gl_last_path() must contain it
};

// gtest prints a SwigluCase as its name.
void PrintTo(const SwigluCase& c, std::ostream* os) { *os << c.name; }

std::vector<SwigluCase> swiglu_cases() {
  std::vector<std::int64_t> many(37);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = std::int64_t((i * 7) % 23);  // 0 .. 22 rows, some empty
  const char* p128 = "grouped_contiguous 128x256 SiLU(gate)·up";
  const char* p64 = "grouped_contiguous 64x256 SiLU(gate)·up";
  // I = 384: three 256-column tiles an expert, so that tile t's gate rows 256t.. are W_gate's 128t.. for t > 0 too.
  return {
      {"empty_one_edges", {0, 1, 128, 0, 257, 129}, 384, 136, 0, true, p128},  // a mean of 86 rows: 128
      {"empty_one_edges_64", {0, 1, 128, 0, 257, 129}, 384, 136, 64, true, p64},
      {"one_expert", {300}, 128, 72, 0, false, p128},
      {"one_row", {1}, 384, 136, 0, false, p128},  // 192 rows of buffer > 128·E: 128 rows
      {"many_small_host", many, 128, 136, 0, true, p64},
      {"many_small_device", many, 256, 136, 0, false, p64},  // rows <= 128·E
      {"many_small_128", many, 128, 136, 128, true, p128},
      // K >= 1024 and 2 tiles of 64×256: gl_grouped_gemm's rule takes its decode tile, the fused call 64 rows
      {"decode_rule_takes_64", {1, 0, 3}, 128, 1024, 0, true, p64},
      {"all_empty", {0, 0, 0}, 128, 64, 0, true, p64},
  };
}

class LibGroupedSwiglu : public ::testing::TestWithParam<SwigluCase> {};

TEST_P(LibGroupedSwiglu, MatchesFp64) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const SwigluCase& tc = GetParam();
  const std::int64_t experts = std::int64_t(tc.rows_per_expert.size()), inter = tc.intermediate, k = tc.k, n = 2 * inter;
  std::vector<std::int64_t> first(static_cast<std::size_t>(experts)), offsets{0};
  for (std::int64_t e = 0; e < experts; ++e) {
    first[e] = (offsets.back() + 127) / 128 * 128;
    offsets.push_back(first[e] + tc.rows_per_expert[e]);
  }
  const std::int64_t rows = std::max<std::int64_t>((offsets.back() + 127) / 128 * 128, 128) + 64;  // 64 rows no expert owns
  // B: each expert's 2I × K block in the kernel's order, gate and up rows interleaved by 128 (the reference
  // below reads it that way; python/tests check the interleaving helper against stacked [W_gate; W_up]).
  Bf16Matrix a(rows * k, 5), b(experts * n * k, 6);
  mm::DeviceBuffer<bf16> h(std::size_t(rows * inter));
  MM_CUDA_CHECK(cudaMemset(h.data(), 0xFF, std::size_t(rows * inter) * sizeof(bf16)));  // poisoned: NaN
  mm::DeviceBuffer<std::int64_t> d_offsets(offsets.size());
  MM_CUDA_CHECK(cudaMemcpy(d_offsets.data(), offsets.data(), offsets.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  cudaStream_t stream = nullptr;
  MM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const gl_status status = gl_grouped_swiglu(experts, rows, inter, k, a.device.data(), b.device.data(), h.data(),
                                             d_offsets.data(), tc.host_copy ? offsets.data() : nullptr, tc.tile_rows, stream);
  ASSERT_EQ(status, GL_OK) << gl_status_name(status) << ": " << gl_last_error();
  const std::string path = gl_last_path();
  EXPECT_NE(path.find(tc.path), std::string::npos) << "ran " << path;
  MM_CUDA_CHECK(cudaStreamSynchronize(stream));
  MM_CUDA_CHECK(cudaStreamDestroy(stream));
  std::vector<bf16> got(std::size_t(rows * inter));
  MM_CUDA_CHECK(cudaMemcpy(got.data(), h.data(), got.size() * sizeof(bf16), cudaMemcpyDeviceToHost));
  // h = SiLU(g)·u with g, u the fp64 dot products of A's row and the weight rows of output j; the error
  // scale as chapter 13's swiglu_reference: the gate's and the up's sum|a·b| through |SiLU'| <= 1.1 and
  // |SiLU(g)|, and |h| itself (the rounding of the result).
  auto dot = [&](std::int64_t r, std::int64_t w_row, double& scale) {
    double sum = 0;
    scale = 0;
    for (std::int64_t l = 0; l < k; ++l) {
      const double t = double(a.host[std::size_t(r * k + l)]) * double(b.host[std::size_t(w_row * k + l)]);
      sum += t, scale += std::fabs(t);
    }
    return sum;
  };
  int bad = 0;
  std::string first_bad;
  for (std::int64_t e = 0; e < experts; ++e)
    for (std::int64_t r = first[e]; r < first[e] + tc.rows_per_expert[e]; ++r)
      for (std::int64_t j = 0; j < inter; ++j) {
        const std::int64_t gate_row = e * n + (j / 128) * 256 + j % 128, up_row = gate_row + 128;
        double gate_scale = 0, up_scale = 0;
        const double g = dot(r, gate_row, gate_scale), u = dot(r, up_row, up_scale);
        const double silu = g / (1.0 + std::exp(-g)), want = silu * u;
        const double scale = 1.1 * std::fabs(u) * gate_scale + std::fabs(silu) * up_scale + std::fabs(want);
        const double v = double(__bfloat162float(got[std::size_t(r * inter + j)]));
        if (!(std::fabs(v - want) <= 8e-3 * scale + 1e-6) && bad++ == 0)
          first_bad = "expert " + std::to_string(e) + " H(" + std::to_string(r) + "," + std::to_string(j) + ") = " +
                      std::to_string(v) + ", want " + std::to_string(want);
      }
  EXPECT_EQ(bad, 0) << first_bad << " (" << path << ")";
  const std::int64_t untouched = (offsets.back() + 127) / 128 * 128;
  for (std::int64_t i = untouched * inter; i < rows * inter; ++i) {
    std::uint16_t bits;
    std::memcpy(&bits, &got[std::size_t(i)], 2);
    ASSERT_EQ(bits, 0xFFFF) << "H row " << i / inter << " is past every expert's tiles but was written (" << path << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(lib, LibGroupedSwiglu, ::testing::ValuesIn(swiglu_cases()),
                         [](const ::testing::TestParamInfo<SwigluCase>& info) { return std::string(info.param.name); });

// ---- gl_moe_permute: refusals (CPU) ----

struct PermuteCall {
  std::int64_t tokens = 4, hidden = 64, k = 2, experts = 8, rows = 1024;
  const void* x = fake();
  std::int64_t ldx = 64;
  const std::int64_t* flat = static_cast<const std::int64_t*>(fake(0x100));
  const std::int64_t* order = static_cast<const std::int64_t*>(fake(0x200));
  const std::int64_t* counts = static_cast<const std::int64_t*>(fake(0x300));
  void* a = fake(0x1000);
  std::int64_t* offsets = static_cast<std::int64_t*>(fake(0x400));
  std::int64_t* place = static_cast<std::int64_t*>(fake(0x500));
  gl_status run() const {
    return gl_moe_permute(tokens, hidden, k, experts, rows, x, ldx, flat, order, counts, a, offsets, place, nullptr);
  }
};

void expect_permute_refused(const PermuteCall& call, gl_status status, const std::string& words) {
  expect_refused(call, status, words, "gl_moe_permute(tokens = ");
}

TEST(lib, PermuteRefusesSizes) {
  PermuteCall c;
  c.tokens = -1;
  expect_permute_refused(c, GL_INVALID_ARGUMENT, "tokens and hidden must be at least 0");
  c = PermuteCall{};
  c.hidden = -8;
  expect_permute_refused(c, GL_INVALID_ARGUMENT, "tokens and hidden must be at least 0");
  c = PermuteCall{};
  c.k = 0;
  expect_permute_refused(c, GL_INVALID_ARGUMENT, "k (each token's experts) must be at least 1");
  c = PermuteCall{};
  c.experts = 0;
  expect_permute_refused(c, GL_INVALID_ARGUMENT, "needs at least one expert");
  c = PermuteCall{};
  c.experts = 4097;
  expect_permute_refused(c, GL_UNSUPPORTED, "E above 4096");
  c = PermuteCall{};
  c.tokens = std::int64_t(1) << 30, c.k = 2;
  expect_permute_refused(c, GL_UNSUPPORTED, "the routed rows must be below 2^31");
  c = PermuteCall{};
  c.rows = 7;  // 4 tokens · 2 = 8 routed rows
  expect_permute_refused(c, GL_INVALID_ARGUMENT, "rows = 7 is below the tokens·k = 8 routed rows");
  c = PermuteCall{};
  c.ldx = 63;
  expect_permute_refused(c, GL_INVALID_ARGUMENT, "ldx = 63 is below hidden = 64");
}

TEST(lib, PermuteRefusesPointers) {
  PermuteCall c;
  c.x = nullptr;
  expect_permute_refused(c, GL_INVALID_ARGUMENT, "x is NULL");
  c = PermuteCall{};
  c.order = static_cast<const std::int64_t*>(fake(0x204));
  expect_permute_refused(c, GL_INVALID_ARGUMENT, "order starts 4 bytes past a 8-byte boundary");
  c = PermuteCall{};
  c.flat = nullptr;
  expect_permute_refused(c, GL_INVALID_ARGUMENT, "flat is NULL");
  c = PermuteCall{};
  c.place = nullptr;
  expect_permute_refused(c, GL_INVALID_ARGUMENT, "place is NULL");
  c = PermuteCall{};
  c.counts = nullptr;
  expect_permute_refused(c, GL_INVALID_ARGUMENT, "counts is NULL");
  c = PermuteCall{};
  c.offsets = static_cast<std::int64_t*>(fake(0x401));
  expect_permute_refused(c, GL_INVALID_ARGUMENT, "offsets starts 1 bytes past a 8-byte boundary");
  c = PermuteCall{};
  c.a = fake(1);
  expect_permute_refused(c, GL_INVALID_ARGUMENT, "A starts 1 bytes past a 2-byte boundary");
}

// Without an sm_90a GPU a permute that passes every check is refused with the device's reason; with no token, x,
// flat, order and place reach no element and may be NULL (the checks pass them on to the device's).
TEST(lib, PermuteWithoutAGpuSaysWhy) {
  if (mm::device_info().present) GTEST_SKIP() << "a GPU is present: LibMoePermute below launches the permute";
  PermuteCall c;
  expect_permute_refused(c, GL_NO_SM90A, "no CUDA GPU");
  c.tokens = 0, c.x = nullptr, c.flat = nullptr, c.order = nullptr, c.place = nullptr;
  expect_permute_refused(c, GL_NO_SM90A, "no CUDA GPU");
}

// ---- GPU: gl_moe_permute against a host reference ----

struct PermuteCase {
  const char* name;
  std::int64_t tokens, hidden, ldx, k, experts;
  const char* path;
};

void PrintTo(const PermuteCase& c, std::ostream* os) { *os << c.name; }

class LibMoePermute : public ::testing::TestWithParam<PermuteCase> {};

TEST_P(LibMoePermute, MatchesTheHostReference) {
  MM_REQUIRE_ARCH(mm::arch::sm90a);
  const PermuteCase& tc = GetParam();
  const std::int64_t routed = tc.tokens * tc.k, experts = tc.experts;
  // A random routing: each token's k distinct experts, token-major; the slots sorted by expert (stable); the counts.
  std::mt19937 rng(unsigned(tc.tokens * 131 + experts));
  std::vector<std::int64_t> flat, all(static_cast<std::size_t>(experts));
  std::iota(all.begin(), all.end(), 0);
  for (std::int64_t t = 0; t < tc.tokens; ++t) {
    std::shuffle(all.begin(), all.end(), rng);
    flat.insert(flat.end(), all.begin(), all.begin() + tc.k);
  }
  std::vector<std::int64_t> order(static_cast<std::size_t>(routed)), counts(static_cast<std::size_t>(experts), 0);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t l, std::int64_t r) { return flat[l] < flat[r]; });
  for (std::int64_t e : flat) ++counts[std::size_t(e)];
  // The reference: each expert's first row (the padded layout), offsets, each slot's place.
  std::vector<std::int64_t> first(static_cast<std::size_t>(experts)), offsets{0}, place(static_cast<std::size_t>(routed));
  for (std::int64_t e = 0; e < experts; ++e) {
    first[e] = (offsets.back() + 127) / 128 * 128;
    offsets.push_back(first[e] + counts[e]);
  }
  std::vector<std::int64_t> seen(static_cast<std::size_t>(experts), 0);
  for (std::int64_t i = 0; i < routed; ++i) {
    const std::int64_t s = order[i], e = flat[s];
    place[s] = first[e] + seen[e]++;
  }
  const std::int64_t rows = std::max<std::int64_t>((offsets.back() + 127) / 128 * 128, 128) + 64;  // 64 rows no expert owns
  std::vector<std::uint16_t> x(static_cast<std::size_t>(std::max<std::int64_t>(tc.tokens * tc.ldx, 1)));
  for (auto& v : x) v = std::uint16_t(rng());  // any bits: the rows are copied, never computed with
  mm::DeviceBuffer<std::uint16_t> d_x(x.size()), d_a(std::size_t(rows * tc.hidden));
  mm::DeviceBuffer<std::int64_t> d_flat(std::max<std::size_t>(flat.size(), 1)), d_order(std::max<std::size_t>(order.size(), 1));
  mm::DeviceBuffer<std::int64_t> d_counts(counts.size()), d_offsets(offsets.size()), d_place(std::max<std::size_t>(place.size(), 1));
  MM_CUDA_CHECK(cudaMemcpy(d_x.data(), x.data(), x.size() * 2, cudaMemcpyHostToDevice));
  if (routed > 0) {
    MM_CUDA_CHECK(cudaMemcpy(d_flat.data(), flat.data(), flat.size() * 8, cudaMemcpyHostToDevice));
    MM_CUDA_CHECK(cudaMemcpy(d_order.data(), order.data(), order.size() * 8, cudaMemcpyHostToDevice));
  }
  MM_CUDA_CHECK(cudaMemcpy(d_counts.data(), counts.data(), counts.size() * 8, cudaMemcpyHostToDevice));
  // Poisoned outputs: A's unwritten rows must stay 0xFFFF, every offset and place must be written.
  MM_CUDA_CHECK(cudaMemset(d_a.data(), 0xFF, std::size_t(rows * tc.hidden) * 2));
  MM_CUDA_CHECK(cudaMemset(d_offsets.data(), 0xAB, offsets.size() * 8));
  MM_CUDA_CHECK(cudaMemset(d_place.data(), 0xAB, d_place.size() * 8));
  // The memsets run on the legacy stream, which the non-blocking stream below does not wait for: without
  // this wait the poison could land after the kernel's offsets (seen once on the H200, 2026-12-01).
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  cudaStream_t stream = nullptr;
  MM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const gl_status status = gl_moe_permute(tc.tokens, tc.hidden, tc.k, experts, rows, d_x.data(), tc.ldx, d_flat.data(),
                                          d_order.data(), d_counts.data(), d_a.data(), d_offsets.data(), d_place.data(),
                                          stream);
  ASSERT_EQ(status, GL_OK) << gl_status_name(status) << ": " << gl_last_error();
  EXPECT_EQ(std::string(gl_last_path()), tc.path);
  MM_CUDA_CHECK(cudaStreamSynchronize(stream));
  MM_CUDA_CHECK(cudaStreamDestroy(stream));
  std::vector<std::int64_t> got_offsets(offsets.size()), got_place(d_place.size());
  std::vector<std::uint16_t> got_a(std::size_t(rows * tc.hidden));
  MM_CUDA_CHECK(cudaMemcpy(got_offsets.data(), d_offsets.data(), offsets.size() * 8, cudaMemcpyDeviceToHost));
  MM_CUDA_CHECK(cudaMemcpy(got_place.data(), d_place.data(), got_place.size() * 8, cudaMemcpyDeviceToHost));
  MM_CUDA_CHECK(cudaMemcpy(got_a.data(), d_a.data(), got_a.size() * 2, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got_offsets, offsets);
  got_place.resize(place.size());
  EXPECT_EQ(got_place, place);
  std::vector<bool> placed(static_cast<std::size_t>(rows), false);
  for (std::int64_t s = 0; s < routed; ++s) {
    placed[std::size_t(place[s])] = true;
    for (std::int64_t j = 0; j < tc.hidden; ++j)
      ASSERT_EQ(got_a[std::size_t(place[s] * tc.hidden + j)], x[std::size_t((s / tc.k) * tc.ldx + j)])
          << "slot " << s << " (token " << s / tc.k << ") at row " << place[s] << ", column " << j;
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    if (placed[std::size_t(r)]) continue;
    for (std::int64_t j = 0; j < tc.hidden; ++j)
      ASSERT_EQ(got_a[std::size_t(r * tc.hidden + j)], 0xFFFF) << "row " << r << " holds no slot but was written";
  }
}

INSTANTIATE_TEST_SUITE_P(
    lib, LibMoePermute,
    ::testing::Values(PermuteCase{"one_token_e8_k2", 1, 256, 256, 2, 8, "moe_permute 16-byte"},
                      PermuteCase{"decode_e128_k8", 64, 2048, 2048, 8, 128, "moe_permute 16-byte"},
                      PermuteCase{"odd_tokens_e8_k2", 300, 264, 264, 2, 8, "moe_permute 16-byte"},
                      PermuteCase{"pitch_e128_k8", 37, 136, 200, 8, 128, "moe_permute 16-byte"},  // x a slice of wider rows
                      PermuteCase{"odd_hidden_e8_k2", 33, 100, 100, 2, 8, "moe_permute 2-byte"},   // hidden % 8 != 0
                      PermuteCase{"odd_pitch_e5_k3", 20, 64, 67, 3, 5, "moe_permute 2-byte"},     // ldx % 8 != 0
                      PermuteCase{"many_experts_e1000_k4", 50, 64, 64, 4, 1000, "moe_permute 16-byte"},
                      PermuteCase{"no_token_e8_k2", 0, 64, 64, 2, 8, "moe_permute 16-byte"}),
    [](const ::testing::TestParamInfo<PermuteCase>& info) { return std::string(info.param.name); });

}  // namespace
