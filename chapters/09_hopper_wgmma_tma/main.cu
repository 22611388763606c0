// Chapter 09: Hopper's asynchronous tensor cores. wgmma from shared-memory descriptors, TMA loads, an
// mbarrier ring; bf16 in, fp32 accumulation, bf16 C, next to cuBLAS bf16 and chapter 08's best
// mma.sync kernel, C = A·B (RRR) and C = A·Bᵀ (RCR).
//
// Build: cmake --build build --target ch09_hopper_wgmma_tma
// Run:   build/bin/ch09_hopper_wgmma_tma [--sizes 4096,8192] [--layout all] [--csv results.csv]   (--help for all flags)
#include "08_tensor_cores/tensor_cores.cuh"
#include "09_hopper_wgmma_tma/wgmma_tma.cuh"
#include "harness/gemm_runner.hpp"

namespace ch08 = mm::ch08;
namespace ch09 = mm::ch09;
using bf16 = __nv_bfloat16;

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "09_hopper_wgmma_tma",
      .description = "Chapter 09: Hopper's wgmma from shared-memory descriptors, TMA loads and an mbarrier ring "
                     "(bf16, fp32 accumulation, bf16 C); RRR and RCR",
      .default_sizes = {{2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}},
      .layouts = {"RRR", "RCR"},
      .needs = mm::arch::sm90a,
  };
  return mm::run_gemm_chapter(
      argc, argv, chapter,
      mm::GemmKernelGroup<bf16, bf16>{
          .kernels = {
              // Chapter 08's best mma.sync kernel, the point of departure.
              mm::GemmKernel<bf16, bf16>{.name = "ch08_stage_in_pointer", .dtype = mm::DType::bf16,
                                         .launch = ch08::launch_tensor_core<ch08::StageInPointerCfg, bf16>,
                                         .rejects = ch08::tensor_core_rejects<ch08::StageInPointerCfg>,
                                         .needs = mm::arch::sm80},
              ch09::wgmma_kernel<ch09::WgmmaCpAsyncCfg>("wgmma_cp_async"),
              ch09::wgmma_kernel<ch09::TmaCfg>("tma"),
              ch09::wgmma_kernel<ch09::TwoConsumersCfg>("two_consumers"),
              ch09::wgmma_kernel<ch09::BigTileCfg>("big_tile"),
              ch09::wgmma_kernel<ch09::InFlightCfg>("wgmma_in_flight"),
          }});
}
