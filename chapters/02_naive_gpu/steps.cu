// Chapter 02's one list of steps: the binary runs it, the tests iterate it, and compiling it compiles
// every kernel it names, once, into the ch02_steps library (docs/extending.md).
#include "02_naive_gpu/steps.hpp"

#include <string>
#include <utility>

#include "02_naive_gpu/naive_gemm.cuh"

namespace mm::ch02 {

namespace {
template <class Cfg>
GemmKernel<float, float> naive_step(std::string name) {
  return {.name = std::move(name), .dtype = DType::f32, .launch = launch_naive<Cfg>, .rejects = naive_rejects<Cfg>};
}
}  // namespace

std::vector<GemmKernel<float, float>> steps() {
  return {
      naive_step<NaiveStridedCfg>("naive_strided"),      // the tutorial's kernel: a warp walks down a column of C
      naive_step<NaiveCoalescedCfg>("naive_coalesced"),  // the same kernel, a warp walks along a row of C
  };
}

GemmKernel<float, float> best() { return naive_step<NaiveCoalescedCfg>("ch02_naive_coalesced"); }

}  // namespace mm::ch02
