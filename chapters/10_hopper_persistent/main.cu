// Chapter 10: keeping Hopper's tensor cores busy. Warp specialization with setmaxnreg, a persistent
// grouped tile scheduler, a TMA-store epilogue, clusters with TMA multicast; bf16 in, fp32
// accumulation, bf16 C, next to cuBLAS bf16 and chapter 09's best kernel, C = A·B (RRR) and
// C = A·Bᵀ (RCR).
//
// Build: cmake --build build --target ch10_hopper_persistent
// Run:   build/bin/ch10_hopper_persistent [--sizes 4096,8192] [--layout all] [--csv results.csv]   (--help for all flags)
#include "09_hopper_wgmma_tma/wgmma_tma.cuh"
#include "10_hopper_persistent/persistent.cuh"
#include "harness/gemm_runner.hpp"

namespace ch09 = mm::ch09;
namespace ch10 = mm::ch10;
using bf16 = __nv_bfloat16;

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "10_hopper_persistent",
      .description = "Chapter 10: warp specialization, a persistent tile scheduler, a TMA-store epilogue, "
                     "clusters with TMA multicast (bf16, fp32 accumulation, bf16 C); RRR and RCR",
      .default_sizes = {{2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}},
      .layouts = {"RRR", "RCR"},
      .needs = mm::arch::sm90a,
  };
  auto kernel = [](const char* name, mm::GemmLaunch<bf16, bf16> launch, mm::GemmPrepare<bf16, bf16> prepare,
                   auto rejects) {
    return mm::GemmKernel<bf16, bf16>{.name = name, .dtype = mm::DType::bf16, .launch = launch, .rejects = rejects,
                                      .needs = mm::arch::sm90a, .prepare = prepare};
  };
#define MM_CH10_KERNEL(name, Cfg)                                                                            \
  kernel(name, ch10::launch_persistent<ch10::Cfg>, ch10::prepare_persistent<ch10::Cfg>,                      \
         ch10::persistent_rejects<ch10::Cfg>)
  return mm::run_gemm_chapter(
      argc, argv, chapter,
      mm::GemmKernelGroup<bf16, bf16>{
          .kernels = {
              // Chapter 09's best kernel, the point of departure.
              kernel("ch09_wgmma_in_flight", ch09::launch_wgmma<ch09::InFlightCfg>, ch09::prepare_wgmma<ch09::InFlightCfg>,
                     ch09::wgmma_rejects<ch09::InFlightCfg>),
              MM_CH10_KERNEL("warp_specialized", WarpSpecializedCfg),
              MM_CH10_KERNEL("persistent", PersistentCfg),
              MM_CH10_KERNEL("tma_store", TmaStoreCfg),
              MM_CH10_KERNEL("cluster_multicast", ClusterCfg),
          }});
#undef MM_CH10_KERNEL
}
