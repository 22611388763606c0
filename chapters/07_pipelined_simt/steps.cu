// Chapter 07's list of steps: the only place a step is named. The binary runs it (after chapter 06's
// best step), the tests iterate it, and compiling it compiles every kernel it names (four storage
// orders each), once, into the ch07_steps library.
#include "07_pipelined_simt/fragment_pipelined.cuh"
#include "07_pipelined_simt/pipelined.cuh"
#if MM_APPENDIX_STEPS
#include "07_pipelined_simt/register_transpose.cuh"
#endif
#include "07_pipelined_simt/steps.hpp"

namespace mm::ch07 {

namespace {
/// A step of pipelined.cuh under `name`: fp32, sm_80 (cp.async), its launch and its size rule.
template <class Cfg>
GemmKernel<float, float> pipelined_step(const char* name) {
  return {.name = name, .dtype = DType::f32, .launch = launch_pipelined<Cfg>, .rejects = pipelined_rejects<Cfg>,
          .needs = arch::sm80};
}
#if MM_APPENDIX_STEPS
/// A step of register_transpose.cuh under `name`.
template <class Cfg>
GemmKernel<float, float> register_transpose_step(const char* name) {
  return {.name = name, .dtype = DType::f32, .launch = launch_register_transpose<Cfg>,
          .rejects = pipelined_rejects<Cfg>, .needs = arch::sm80};
}
#endif
/// A step of fragment_pipelined.cuh under `name`.
template <class Cfg>
GemmKernel<float, float> fragment_pipelined_step(const char* name) {
  return {.name = name, .dtype = DType::f32, .launch = launch_fragment_pipelined<Cfg>,
          .rejects = pipelined_rejects<Cfg>, .needs = arch::sm80};
}
}  // namespace

std::vector<GemmKernel<float, float>> steps() {
  return {
      // The cp.async ring: 2 stages, then 4 (3 is in the appendix: within the spread of both).
      pipelined_step<PipelinedS2Cfg>("pipelined_s2"),
#if MM_APPENDIX_STEPS
      pipelined_step<PipelinedS3Cfg>("pipelined_s3"),
#endif
      pipelined_step<PipelinedS4Cfg>("pipelined_s4"),
      // Two lessons on shared memory: a warp numbering that does not lower the wavefronts (the pair
      // rule), and a swizzle that costs more than the padding it replaces.
      pipelined_step<WarpTiledCfg>("warp_tiled"),
      pipelined_step<SwizzledCfg>("swizzled"),
      // Registers for two k, then deeper K steps (the best), then cuBLAS's block tile.
      fragment_pipelined_step<FragmentPipelinedCfg>("fragment_pipelined"),
      fragment_pipelined_step<DeepKCfg>("deep_k"),
      fragment_pipelined_step<BigTileCfg>("big_tile"),
#if MM_APPENDIX_STEPS
      // deep_k with a row-major A copied through registers: 8-byte loads along K, 16-byte
      // conflict-free stores along M. Measured slower in RRR and RCR (the page's appendix).
      register_transpose_step<RegisterTransposeCfg>("register_transpose"),
#endif
  };
}

GemmKernel<float, float> best() { return fragment_pipelined_step<DeepKCfg>("ch07_deep_k"); }

}  // namespace mm::ch07
