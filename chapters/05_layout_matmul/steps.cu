// Chapter 05's list of steps: the only place a step is named. The binary runs it, the tests iterate
// it, and compiling it compiles every kernel it names (eight storage orders each), once, into the
// ch05_steps library.
#include "05_layout_matmul/layout_gemm.cuh"
#include "05_layout_matmul/steps.hpp"

namespace mm::ch05 {

namespace {
/// Step Cfg of layout_gemm.cuh under `name`: fp32, its launch and its size rule.
template <class Cfg>
GemmKernel<float, float> layout_gemm_step(const char* name) {
  return {.name = name, .dtype = DType::f32, .launch = launch_layout_gemm<Cfg>, .rejects = layout_gemm_rejects<Cfg>};
}
}  // namespace

std::vector<GemmKernel<float, float>> steps() {
  return {
      // 64×64 tiles, 512 threads, each a column of 8 outputs (a row of 8 for a column-major C).
      layout_gemm_step<Blocktile1dCfg>("blocktile_1d"),
      // 128×128 tiles, 256 threads, each an 8×8 block; shared tiles (128,8):(1,128).
      layout_gemm_step<LayoutUnpaddedCfg>("layout_unpadded"),
      // The same with shared tiles (128,8):(1,129): 4-way store conflicts for a K-major copy instead of 8.
      layout_gemm_step<LayoutPaddedCfg>("layout_padded"),
  };
}

GemmKernel<float, float> best() { return layout_gemm_step<LayoutPaddedCfg>("ch05_layout_padded"); }

}  // namespace mm::ch05
