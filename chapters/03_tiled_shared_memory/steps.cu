// Chapter 03's one list of steps: the binary runs it, the tests iterate it, and compiling it compiles
// every kernel it names, once, into the ch03_steps library (docs/extending.md).
#include "03_tiled_shared_memory/steps.hpp"

#include <string>
#include <utility>

#include "02_naive_gpu/steps.hpp"
#include "03_tiled_shared_memory/tiled_gemm.cuh"

namespace mm::ch03 {

namespace {
template <class Cfg>
GemmKernel<float, float> tiled_step(std::string name) {
  return {.name = std::move(name), .dtype = DType::f32, .launch = launch_tiled<Cfg>, .rejects = tiled_rejects<Cfg>};
}
}  // namespace

std::vector<GemmKernel<float, float>> steps() {
  return {
      // The step before, measured in the same run so the speedup of tiling is read off one table.
      ch02::best(),
      tiled_step<Tiled16Cfg>("tiled_16"),
      tiled_step<Tiled32Cfg>("tiled_32"),  // the tutorial's tile: twice the reuse of tiled_16
  };
}

GemmKernel<float, float> best() { return tiled_step<Tiled32Cfg>("ch03_tiled_32"); }

}  // namespace mm::ch03
