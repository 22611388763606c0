// Chapter 06's list of steps: the only place a step is named. The binary runs it (after chapter 05's
// best step), the tests iterate it, and compiling it compiles every kernel it names (four storage
// orders each), once, into the ch06_steps library.
#include "06_tiled_copy_mma/steps.hpp"
#include "06_tiled_copy_mma/tiled.cuh"
#include "06_tiled_copy_mma/tiled_prefetch.cuh"

namespace mm::ch06 {

namespace {
/// A step of tiled.cuh under `name`: fp32, its launch and the chapter's size rule.
template <class Cfg>
GemmKernel<float, float> tiled_step(const char* name) {
  return {.name = name, .dtype = DType::f32, .launch = launch_tiled<Cfg>, .rejects = tiled_rejects};
}
/// A step of tiled_prefetch.cuh under `name`.
template <class Cfg>
GemmKernel<float, float> tiled_prefetch_step(const char* name) {
  return {.name = name, .dtype = DType::f32, .launch = launch_tiled_prefetch<Cfg>, .rejects = tiled_rejects};
}
}  // namespace

std::vector<GemmKernel<float, float>> steps() {
  return {
      // From chapter 05's layout_padded to tiled_vec128, one idea each: 128-bit global loads, a pad
      // of 4, then the permuted TiledMMA's 128-bit shared loads.
      tiled_step<TiledLdg128Cfg>("tiled_ldg128"),
      tiled_step<TiledLdg128Pad4Cfg>("tiled_ldg128_pad4"),
      tiled_step<TiledVec128Cfg>("tiled_vec128"),
      // The counter-example: vectorized but not coalesced.
      tiled_step<TiledVec128UncoalescedCfg>("tiled_vec128_uncoalesced"),
      // Register prefetch: the next K step's loads in flight during this one's FMAs.
      tiled_prefetch_step<TiledPrefetchCfg>("tiled_prefetch"),
#if MM_APPENDIX_STEPS
      // Appendix: the other lane order, lane pairs sharing A instead of B: 1.00x tiled_prefetch, as
      // the 12 wavefronts per k said it would be.
      tiled_prefetch_step<TiledPrefetchPairsShareACfg>("tiled_prefetch_pairs_share_a"),
#endif
  };
}

GemmKernel<float, float> best() { return tiled_prefetch_step<TiledPrefetchCfg>("ch06_tiled_prefetch"); }

}  // namespace mm::ch06
