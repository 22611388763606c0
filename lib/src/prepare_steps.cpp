// bf16, tf32 and fp8: chapters 11's and 12's finished steps, compiled once, in the chapters' own step
// libraries (ch11_steps, ch12_steps, whose objects lib/CMakeLists.txt links in), and taken here from
// their lists by name: every_shape (chapter 11's best), tf32_wgmma and tf32_transpose_b, and the fp8
// steps that take few rows too (fp8_per_tensor_small_m, fp8_block_scaled_small_m). A step's `prepare`
// and `rejects` are the chapter's functions themselves (steps.cu), so the problem goes through as it
// came: the step decides what it takes and says why not. This file includes no kernel and compiles as
// plain C++.
#include "prepare.hpp"

#include "11_every_shape/steps.hpp"
#include "12_hopper_datatypes/steps.hpp"

namespace gl::detail {

namespace {

using bf16 = __nv_bfloat16;
using e4m3 = __nv_fp8_e4m3;

// Each list is built once (a static: thread-safe), its steps called from any thread.
const mm::GemmKernel<bf16, bf16>& every_shape() {
  static const auto k = mm::ch11::best();
  return k;
}
const mm::GemmKernel<float, float>& tf32_step(bool rcr) {
  static const auto steps = mm::ch12::tf32_steps();
  static const auto wgmma = mm::kernel_named(steps, "tf32_wgmma");
  static const auto transpose_b = mm::kernel_named(steps, "tf32_transpose_b");
  return rcr ? wgmma : transpose_b;
}
const mm::GemmKernel<e4m3, bf16>& fp8_per_tensor() {
  static const auto k = mm::kernel_named(mm::ch12::fp8_steps(), "fp8_per_tensor_small_m");
  return k;
}
const mm::GemmKernel<e4m3, bf16>& fp8_block_scaled() {
  static const auto k = mm::kernel_named(mm::ch12::fp8_block_steps(), "fp8_block_scaled_small_m");
  return k;
}

}  // namespace

mm::PreparedGemm prepare_bf16(const mm::GemmProblem& p, const bf16* a, const bf16* b, bf16* c) {
  return every_shape().prepare(p, a, b, c);
}

std::string tf32_rejects(const mm::GemmProblem& p) {
  const auto& k = tf32_step(p.b == mm::Order::col);
  if (std::string why = k.rejects(p); !why.empty()) return k.name + ": " + why;
  return {};
}

mm::PreparedGemm prepare_tf32(const mm::GemmProblem& p, const float* a, const float* b, float* c) {
  return tf32_step(p.b == mm::Order::col).prepare(p, a, b, c);
}

std::string fp8_per_tensor_rejects(const mm::GemmProblem& p) {
  if (std::string why = fp8_per_tensor().rejects(p); !why.empty()) return "fp8_per_tensor: " + why;
  return {};
}

mm::PreparedGemm prepare_fp8_per_tensor(const mm::GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
  return fp8_per_tensor().prepare(p, a, b, c);  // fp8_per_tensor where the tiles fill the GPU
}

std::string fp8_block_scaled_rejects(const mm::GemmProblem& p) {
  if (std::string why = fp8_block_scaled().rejects(p); !why.empty()) return "fp8_block_scaled: " + why;
  return {};
}

mm::PreparedGemm prepare_fp8_block_scaled(const mm::GemmProblem& p, const e4m3* a, const e4m3* b, bf16* c) {
  return fp8_block_scaled().prepare(p, a, b, c);  // fp8_block_scaled where the tiles fill the GPU
}

}  // namespace gl::detail
