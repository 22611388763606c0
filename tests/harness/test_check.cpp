// The correctness check must catch what a broken kernel produces: a wrong
// element, a NaN, an element never written (poisoned), and must pass a
// correct result; and the tolerances of the tensor-core types must pass what those types compute
// (tf32 inputs, a bf16 output) while the fp32 one fails it. These run on the CPU: the reference and
// the check are host code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "harness/gemm_runner.hpp"
#include "harness/random.hpp"
#include "harness/reference.hpp"

namespace {

using mm::GemmProblem;
using mm::Order;

struct Fixture {
  GemmProblem p;
  std::vector<float> a, b;
  mm::Reference ref;
  std::vector<float> c;  // a correct result, in C's storage order
};

Fixture make(GemmProblem p) {
  Fixture f{p, mm::random_host<float>(p.m * p.k, 7), mm::random_host<float>(p.k * p.n, 8), {}, {}};
  f.ref = mm::reference_gemm_host(p, f.a, f.b);
  f.c.resize(p.m * p.n);
  const mm::MatrixShape sc = p.shape_c();
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) f.c[sc.offset(i, j)] = float(f.ref.value[i * p.n + j]);
  return f;
}

const double tol = mm::elementwise_tolerance(mm::DType::f32);

TEST(Check, CorrectResultPasses) {
  for (Order oc : {Order::row, Order::col}) {
    Fixture f = make({37, 41, 29, Order::row, Order::col, oc});
    const mm::CheckResult r = mm::check_gemm(f.ref, f.c, oc, tol);
    EXPECT_TRUE(r.ok) << r.summary;
    EXPECT_LT(r.rel_frobenius, 1e-7);
    EXPECT_EQ(r.bad, 0);
  }
}

TEST(Check, OneWrongElementFails) {
  Fixture f = make({64, 64, 64});
  f.c[5 * 64 + 9] += 0.01f;  // a small error in one element of a 64x64 result
  const mm::CheckResult r = mm::check_gemm(f.ref, f.c, Order::row, tol);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.bad, 1);
  EXPECT_EQ(r.first_bad_row, 5);
  EXPECT_EQ(r.first_bad_col, 9);
}

TEST(Check, NaNFails) {
  Fixture f = make({16, 8, 4});
  f.c[3] = std::numeric_limits<float>::quiet_NaN();
  const mm::CheckResult r = mm::check_gemm(f.ref, f.c, Order::row, tol);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.nonfinite, 1);
  EXPECT_TRUE(std::isnan(r.rel_frobenius));
}

TEST(Check, InfFails) {
  Fixture f = make({16, 8, 4});
  f.c[0] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(mm::check_gemm(f.ref, f.c, Order::row, tol).ok);
}

TEST(Check, UnwrittenPoisonedElementFails) {
  Fixture f = make({33, 17, 9});
  // What poison() does on the device: every byte 0xFF, which is a NaN.
  unsigned int bits = 0xFFFFFFFFu;
  float poisoned;
  std::memcpy(&poisoned, &bits, sizeof poisoned);
  ASSERT_TRUE(std::isnan(poisoned));
  f.c.back() = poisoned;  // the kernel "forgot" the last element
  const mm::CheckResult r = mm::check_gemm(f.ref, f.c, Order::row, tol);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_row, 32);
  EXPECT_EQ(r.first_bad_col, 16);
}

TEST(Check, TransposedResultFails) {
  // Writing C in the wrong storage order is a classic bug; the check must see it.
  Fixture f = make({20, 20, 20, Order::row, Order::row, Order::row});
  EXPECT_FALSE(mm::check_gemm(f.ref, f.c, Order::col, tol).ok);
}

TEST(Check, WrongSizeFails) {
  Fixture f = make({4, 4, 4});
  f.c.pop_back();
  EXPECT_FALSE(mm::check_gemm(f.ref, f.c, Order::row, tol).ok);
}

TEST(Reference, MatchesHandComputedProduct) {
  // [1 2; 3 4] * [5 6; 7 8] = [19 22; 43 50]
  const GemmProblem p{2, 2, 2};
  const mm::Reference r = mm::reference_gemm_host<float>(p, {1, 2, 3, 4}, {5, 6, 7, 8});
  EXPECT_EQ(r.value, (std::vector<double>{19, 22, 43, 50}));
  // B stored column-major holds the same matrix as {5, 7, 6, 8}.
  const mm::Reference rc = mm::reference_gemm_host<float>({2, 2, 2, Order::row, Order::col}, {1, 2, 3, 4}, {5, 7, 6, 8});
  EXPECT_EQ(rc.value, r.value);
}

TEST(Random, UniformInRangeAndNotConstant) {
  const auto v = mm::random_host<float>(10000, 3);
  double sum = 0;
  int zeros = 0;
  for (float x : v) {
    EXPECT_GE(x, -1.0f);
    EXPECT_LT(x, 1.0f);
    sum += x;
    zeros += x == 0.0f;
  }
  EXPECT_NEAR(sum / v.size(), 0.0, 0.05);
  EXPECT_LT(zeros, 5);
  EXPECT_NE(mm::random_host<float>(4, 3), mm::random_host<float>(4, 4)) << "different seeds, same stream";
}

}  // namespace

// ---- The tensor-core types: round_to_tf32, and the tolerances of tf32 and of a bf16 output ----

namespace {

float from_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::uint32_t to_bits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

TEST(RoundToTf32, RoundsToNearestWithTiesAwayFromZero) {
  const float ulp = std::ldexp(1.0f, -10);  // tf32's last mantissa bit at 1.0
  EXPECT_EQ(mm::round_to_tf32(1.0f), 1.0f);
  EXPECT_EQ(mm::round_to_tf32(1.0f + ulp), 1.0f + ulp) << "a tf32 value is kept";
  EXPECT_EQ(mm::round_to_tf32(1.0f + ulp / 2), 1.0f + ulp) << "a tie goes away from zero (to even would give 1)";
  EXPECT_EQ(mm::round_to_tf32(-(1.0f + ulp / 2)), -(1.0f + ulp)) << "ties away from zero on both sides";
  EXPECT_EQ(mm::round_to_tf32(std::nextafter(1.0f + ulp / 2, 0.0f)), 1.0f) << "just below a tie rounds down";
  EXPECT_EQ(mm::round_to_tf32(std::nextafter(1.0f + ulp, 2.0f)), 1.0f + ulp);
  EXPECT_EQ(mm::round_to_tf32(2.0f - ulp / 2), 2.0f) << "the carry steps the exponent up";
  EXPECT_EQ(mm::round_to_tf32(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(mm::round_to_tf32(-0.0f)));
  // Subnormals: tf32 keeps 10 of their 23 bits, its smallest step is 2^-136.
  EXPECT_EQ(mm::round_to_tf32(std::ldexp(1.0f, -149)), 0.0f);
  EXPECT_EQ(mm::round_to_tf32(std::ldexp(1.0f, -137)), std::ldexp(1.0f, -136)) << "a subnormal tie, away from zero";
}

TEST(RoundToTf32, InfinitiesAndNaNs) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(mm::round_to_tf32(inf), inf);
  EXPECT_EQ(mm::round_to_tf32(-inf), -inf);
  EXPECT_EQ(mm::round_to_tf32(std::numeric_limits<float>::max()), inf) << "beyond the largest tf32 + half a step";
  EXPECT_EQ(mm::round_to_tf32(-std::numeric_limits<float>::max()), -inf);
  EXPECT_TRUE(std::isnan(mm::round_to_tf32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(mm::round_to_tf32(from_bits(0x7F800001u)))) << "a NaN whose payload would round to inf";
  EXPECT_TRUE(std::isnan(mm::round_to_tf32(from_bits(0xFFFFFFFFu)))) << "what poison() writes";
}

TEST(RoundToTf32, KeepsTenMantissaBitsWithinHalfAStep) {
  for (float x : mm::random_host<float>(100000, 5)) {
    const float r = mm::round_to_tf32(x);
    EXPECT_EQ(to_bits(r) & 0x1FFFu, 0u) << x;
    EXPECT_LE(std::fabs(double(r) - double(x)), std::ldexp(std::fabs(double(x)), -11)) << x;
  }
}

// C = A·B on the host as a tensor-core kernel computes it: each input rounded by `in`, products
// accumulated in fp32 in k order, the sum stored through `out`.
template <class TIn, class TOut, class RoundIn, class Store>
std::vector<TOut> host_gemm(const GemmProblem& p, const std::vector<TIn>& a, const std::vector<TIn>& b,
                            RoundIn in, Store out) {
  const mm::MatrixShape sa = p.shape_a(), sb = p.shape_b(), sc = p.shape_c();
  std::vector<TOut> c(p.m * p.n);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      float acc = 0.0f;
      for (std::int64_t kk = 0; kk < p.k; ++kk) acc += in(float(a[sa.offset(i, kk)])) * in(float(b[sb.offset(kk, j)]));
      c[sc.offset(i, j)] = out(acc);
    }
  return c;
}

const auto as_is = [](float x) { return x; };

// The largest |error| / sum|ab| of a check made with tolerance `tol`.
double worst_relative_to_abs_sum(const mm::CheckResult& r, double tol) { return r.worst_ratio * tol; }

TEST(Tolerance, Tf32ResultPassesTf32AndFailsFp32) {
  const GemmProblem p{64, 64, 1024};
  const auto a = mm::random_host<float>(p.m * p.k, 7), b = mm::random_host<float>(p.k * p.n, 8);
  // The reference sees the fp32 inputs the kernel is given; the kernel rounds them to tf32.
  const mm::Reference ref = mm::reference_gemm_host(p, a, b);
  const auto c = host_gemm<float, float>(p, a, b, mm::round_to_tf32, as_is);

  const double tol_tf32 = mm::gemm_tolerance<float>(mm::DType::tf32);
  const mm::CheckResult tf32 = mm::check_gemm(ref, c, Order::row, tol_tf32);
  EXPECT_TRUE(tf32.ok) << tf32.summary;
  // The bound the tolerance is built on: each product off by at most 2^-10 of |ab|.
  EXPECT_LE(worst_relative_to_abs_sum(tf32, tol_tf32), std::ldexp(1.0, -10));

  const mm::CheckResult fp32 = mm::check_gemm(ref, c, Order::row, mm::gemm_tolerance<float>(mm::DType::f32));
  EXPECT_FALSE(fp32.ok) << "a tf32 result must not pass as fp32 (worst error "
                        << worst_relative_to_abs_sum(tf32, tol_tf32) << " of sum|ab|)";
  EXPECT_GT(fp32.bad, p.m * p.n / 10) << "not just a few tail elements: " << fp32.summary;

  // The same product without the rounding passes as fp32, far inside the tolerance: the failure
  // above is the tf32 rounding, not the fp32 accumulation.
  const double tol_fp32 = mm::gemm_tolerance<float>(mm::DType::f32);
  const mm::CheckResult exact = mm::check_gemm(ref, host_gemm<float, float>(p, a, b, as_is, as_is), Order::row, tol_fp32);
  EXPECT_TRUE(exact.ok) << exact.summary;
  EXPECT_LT(worst_relative_to_abs_sum(exact, tol_fp32), 1e-6);
}

TEST(Tolerance, Bf16OutputPassesBf16AndNeedsTheOutputRounding) {
  const GemmProblem p{64, 64, 256, Order::row, Order::col, Order::row};
  const auto a = mm::random_host<__nv_bfloat16>(p.m * p.k, 7), b = mm::random_host<__nv_bfloat16>(p.k * p.n, 8);
  const mm::Reference ref = mm::reference_gemm_host(p, a, b);
  const auto c = host_gemm<__nv_bfloat16, __nv_bfloat16>(p, a, b, as_is, [](float x) { return __float2bfloat16(x); });

  const double tol = mm::gemm_tolerance<__nv_bfloat16>(mm::DType::bf16);
  const mm::CheckResult bf16 = mm::check_gemm(ref, c, Order::row, tol);
  EXPECT_TRUE(bf16.ok) << bf16.summary;
  EXPECT_LE(worst_relative_to_abs_sum(bf16, tol), std::ldexp(1.0, -9) + 1e-6) << "one rounding to nearest of |c| ≤ sum|ab|";

  // bf16 inputs alone (an fp32 C) would be held to fp32 accumulation: the output rounding fails it.
  const mm::CheckResult no_output_rounding = mm::check_gemm(ref, c, Order::row, mm::elementwise_tolerance(mm::DType::bf16));
  EXPECT_FALSE(no_output_rounding.ok);

  // The same sums stored in fp32 pass the bf16-input tolerance.
  const auto c32 = host_gemm<__nv_bfloat16, float>(p, a, b, as_is, as_is);
  const mm::CheckResult fp32_out = mm::check_gemm(ref, c32, Order::row, mm::gemm_tolerance<float>(mm::DType::bf16));
  EXPECT_TRUE(fp32_out.ok) << fp32_out.summary;
}

}  // namespace
