// The correctness check must catch what a broken kernel produces: a wrong
// element, a NaN, an element never written (poisoned), and must pass a
// correct result. These run on the CPU: the reference and the check are host code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

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
