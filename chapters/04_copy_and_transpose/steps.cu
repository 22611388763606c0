// Chapter 04's one list of steps: the binary runs it, the tests iterate it, and compiling it compiles
// every kernel it names, once, into the ch04_steps library (docs/extending.md). Every step is a lesson
// of the page, so all eight are on the main path; the chapter has no appendix steps.
#include "04_copy_and_transpose/steps.hpp"

#include <string>
#include <utility>

#include "04_copy_and_transpose/copy_cp_async.cuh"
#include "04_copy_and_transpose/copy_smem.cuh"
#include "04_copy_and_transpose/copy_vec128.cuh"
#include "04_copy_and_transpose/layouts.hpp"
#include "04_copy_and_transpose/transpose_naive.cuh"
#include "04_copy_and_transpose/transpose_smem.cuh"

namespace mm::ch04 {

namespace {
CopyKernel copy_vec128_step(std::string name) {
  return {.name = std::move(name), .launch = launch_copy_vec128<CopyVec128Cfg>, .rejects = tile_rejects<CopyVec128Cfg>};
}
}  // namespace

std::vector<CopyKernel> steps() {
  return {
      {.name = "copy_smem", .launch = launch_copy_smem<CopySmemCfg>, .rejects = tile_rejects<CopySmemCfg>},
      {.name = "copy_cp_async", .launch = launch_copy_cp_async<CopyCpAsyncCfg>,
       .rejects = tile_rejects<CopyCpAsyncCfg>, .needs = arch::sm80},
      copy_vec128_step("copy_vec128"),
      {.name = "copy_vec128_64x64", .launch = launch_copy_vec128<CopyVec128_64x64Cfg>,
       .rejects = tile_rejects<CopyVec128_64x64Cfg>},
      {.name = "transpose_naive", .transposes = true, .launch = launch_transpose_naive<TransposeNaiveCfg>,
       .rejects = tile_rejects<TransposeNaiveCfg>},
      {.name = "transpose_smem", .transposes = true, .launch = launch_transpose_smem<TransposeSmemCfg>,
       .rejects = tile_rejects<TransposeSmemCfg>},
      {.name = "transpose_smem_padded", .transposes = true, .launch = launch_transpose_smem<TransposeSmemPaddedCfg>,
       .rejects = tile_rejects<TransposeSmemPaddedCfg>},
      {.name = "transpose_smem_padded_64x64", .transposes = true,
       .launch = launch_transpose_smem<TransposeSmemPadded64x64Cfg>, .rejects = tile_rejects<TransposeSmemPadded64x64Cfg>},
  };
}

CopyKernel best() { return copy_vec128_step("ch04_copy_vec128"); }

}  // namespace mm::ch04
