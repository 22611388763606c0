// fp8 e4m3 quantization (harness/fp8.hpp) on the CPU: the format's constants, rounding to nearest
// with saturation, per-tensor and per-block scales (1×128 activations, 128×128 weights), every
// dequantized value within the format's bound of the original, scales of 1, powers of two and awkward
// values, the extremes (448, subnormals), and bad input refused with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/fp8.hpp"

namespace {

using namespace mm::fp8;

TEST(Fp8, TheFormatsExtremesRoundTrip) {
  EXPECT_EQ(to_float(to_e4m3(448.0f)), 448.0f);
  EXPECT_EQ(to_float(to_e4m3(-448.0f)), -448.0f);
  EXPECT_EQ(to_float(to_e4m3(E4m3::kMinNormal)), E4m3::kMinNormal);
  EXPECT_EQ(to_float(to_e4m3(E4m3::kMinSubnormal)), E4m3::kMinSubnormal);
  EXPECT_EQ(to_float(to_e4m3(3 * E4m3::kMinSubnormal)), 3 * E4m3::kMinSubnormal);  // a subnormal
  EXPECT_EQ(to_float(to_e4m3(0.0f)), 0.0f);
  // Saturation: beyond 448 stays 448 (no infinity in e4m3).
  EXPECT_EQ(to_float(to_e4m3(1e6f)), 448.0f);
  EXPECT_EQ(to_float(to_e4m3(-500.0f)), -448.0f);
  // Round to nearest: 1 + 2^-4 lies halfway between 1 and 1.125 (ties to even: 1); 1.07 goes up.
  EXPECT_EQ(to_float(to_e4m3(1.0625f)), 1.0f);
  EXPECT_EQ(to_float(to_e4m3(1.07f)), 1.125f);
  EXPECT_TRUE(std::isnan(to_float(to_e4m3(NAN))));
}

// Every dequantized element lies within the format's bound of the original, whatever the scales.
void expect_within_bound(const std::vector<float>& x, const Quantized& q) {
  const std::vector<float> d = dequantize(q);
  ASSERT_EQ(d.size(), x.size());
  int bad = 0;
  for (std::int64_t r = 0; r < q.rows; ++r)
    for (std::int64_t c = 0; c < q.cols; ++c) {
      const std::size_t i = std::size_t(r * q.cols + c);
      if (std::fabs(double(d[i]) - double(x[i])) > error_bound(x[i], q.scale(r, c)) * (1 + 1e-6) && bad++ < 5)
        ADD_FAILURE() << "(" << r << "," << c << "): " << x[i] << " -> " << d[i] << " (scale " << q.scale(r, c) << ")";
    }
  EXPECT_EQ(bad, 0);
}

std::vector<float> random_matrix(std::int64_t rows, std::int64_t cols, float spread, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> x(std::size_t(rows * cols));
  for (auto& v : x) v = n(rng) * spread;
  return x;
}

TEST(Fp8, PerTensorScaleMapsTheLargestValueTo448) {
  for (float spread : {1.0f, 1e-3f, 37.5f, 1024.0f, 1.0f / 3.0f}) {
    const auto x = random_matrix(64, 96, spread, 1);
    const Quantized q = quantize_per_tensor(x, 64, 96);
    ASSERT_EQ(q.scales.size(), 1u);
    float amax = 0;
    for (float v : x) amax = std::max(amax, std::fabs(v));
    EXPECT_FLOAT_EQ(q.scales[0], amax / 448.0f) << spread;
    // The largest value becomes ±448 exactly, so the scale is used to the full.
    float qmax = 0;
    for (auto c : q.codes) qmax = std::max(qmax, std::fabs(to_float(c)));
    EXPECT_EQ(qmax, 448.0f) << spread;
    expect_within_bound(x, q);
  }
}

TEST(Fp8, BlockScalesAsDeepSeekV3) {
  // Activations 1×128, weights 128×128; sizes not multiples of the blocks (partial last blocks).
  const auto act = random_matrix(5, 300, 2.0f, 2);
  const Quantized qa = quantize(act, 5, 300, 1, 128);
  EXPECT_EQ(qa.scales.size(), 5u * 3u);
  expect_within_bound(act, qa);
  const auto w = random_matrix(260, 200, 0.05f, 3);
  const Quantized qw = quantize(w, 260, 200, 128, 128);
  EXPECT_EQ(qw.scales.size(), 3u * 2u);
  expect_within_bound(w, qw);
}

TEST(Fp8, BlockScalesKeepSmallValuesOutOfTheSubnormals) {
  // One outlier of 1e4 beside values near 1e-2: one scale for the tensor sends the small ones to
  // e4m3's subnormals (few bits); a scale per 1×128 block keeps their relative error at half an ulp.
  std::vector<float> x(256, 0.0f);
  for (int i = 0; i < 256; ++i) x[std::size_t(i)] = 0.01f * (1.0f + float(i % 7) / 7.0f);
  x[0] = 1e4f;
  const auto rel_err = [&](const Quantized& q) {
    const auto d = dequantize(q);
    double worst = 0;
    for (int i = 128; i < 256; ++i) worst = std::max(worst, std::fabs(double(d[std::size_t(i)]) / x[std::size_t(i)] - 1));
    return worst;
  };
  const double per_tensor = rel_err(quantize_per_tensor(x, 1, 256));
  const double per_block = rel_err(quantize(x, 1, 256, 1, 128));
  EXPECT_LE(per_block, E4m3::kHalfUlp);
  EXPECT_GT(per_tensor, 4 * per_block);
}

TEST(Fp8, ScalesOfOnePowersOfTwoAndAwkwardValues) {
  // Data whose amax makes the scale exactly 1, a power of two, or an awkward number.
  for (float amax : {448.0f, 448.0f * 1024.0f, 448.0f / 64.0f, 3.14159f, 1e-7f}) {
    std::vector<float> x(128);
    for (int i = 0; i < 128; ++i) x[std::size_t(i)] = amax * float(i - 64) / 64.0f;
    const Quantized q = quantize_per_tensor(x, 1, 128);
    EXPECT_FLOAT_EQ(q.scales[0], amax / 448.0f);
    expect_within_bound(x, q);
  }
  // All zeros: scale 1, codes 0.
  const Quantized z = quantize_per_tensor(std::vector<float>(16, 0.0f), 4, 4);
  EXPECT_EQ(z.scales[0], 1.0f);
  for (float v : dequantize(z)) EXPECT_EQ(v, 0.0f);
}

TEST(Fp8, BadInputIsRefusedWithTheReason) {
  try {
    quantize(std::vector<float>(10), 3, 4, 1, 128);
    ADD_FAILURE() << "10 values for 3x4 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("10 values for a 3x4 matrix"), std::string::npos) << e.what();
  }
  EXPECT_THROW(quantize(std::vector<float>(12), 3, 4, 0, 4), std::invalid_argument);
  EXPECT_THROW(quantize_per_tensor({1.0f, INFINITY}, 1, 2), std::invalid_argument);
  EXPECT_THROW(scale_for(-1.0f), std::invalid_argument);
}

}  // namespace
