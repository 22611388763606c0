// Chapter 10's tuning sweep: tma_store, the chapter's best kernel, next to the same kernel with one
// choice changed (the scheduler's group height, clusters of 2 (the last step) and 4, the stage count), RRR and RCR: the
// evidence behind "Choosing the configuration" in the README. Not built by default (each point is two
// more kernel instantiations): configure with -DMM_CH10_SWEEP=ON.
//
// Build: cmake -B build -DMM_CH10_SWEEP=ON && cmake --build build --target ch10_sweep
// Run:   build/bin/ch10_sweep --sizes 2048,4096,8192 --layout RRR,RCR
#include "10_hopper_persistent/persistent.cuh"
#include <cstdio>

#include "harness/arch_check.hpp"
#include "gemm/cluster_launch.hpp"
#include "harness/device_info.hpp"
#include "harness/gemm_runner.hpp"
#include "gemm/smem.hpp"

namespace ch10 = mm::ch10;
// Config<Persistent, ClusterM, Epilogue, Stages, GroupM>
template <int ClusterM, int Stages, int GroupM>
using Point = ch10::Config<true, ClusterM, ch10::Epilogue::tma_store, Stages, GroupM>;

// How many blocks (clusters) of the kernel the GPU holds at once, for each cluster size: a persistent
// grid's size, and the reason larger clusters can lose (a GPC's SMs do not always divide into them).
void print_resident_clusters() {
  if (!mm::device_info().present || !mm::arch::unmet(mm::arch::sm90a).empty()) return;
  auto resident = [](auto kernel, int cluster, int smem) {
    mm::opt_in_dynamic_smem(kernel, std::size_t(smem));
    return mm::max_resident_clusters(kernel, cluster, 384, std::size_t(smem));
  };
  using C1 = Point<1, 4, 16>;
  using C2 = Point<2, 4, 16>;
  using C4 = Point<4, 4, 16>;
  std::printf("resident at once: %d blocks; %d clusters of 2; %d clusters of 4\n",
              resident(ch10::persistent_gemm_kernel<C1, mm::GmmaMajor::K>, 1, C1::kSmemBytes),
              resident(ch10::persistent_gemm_kernel<C2, mm::GmmaMajor::K>, 2, C2::kSmemBytes),
              resident(ch10::persistent_gemm_kernel<C4, mm::GmmaMajor::K>, 4, C4::kSmemBytes));
}

int main(int argc, char** argv) {
  print_resident_clusters();
  const mm::GemmChapter chapter{
      .chapter = "10_hopper_persistent_sweep",
      .description = "Chapter 10 sweep: group height, cluster size and stages of the tma_store kernel",
      .default_sizes = {{2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}},
      .layouts = {"RRR", "RCR"},
      .needs = mm::arch::sm90a,
  };
  return mm::run_gemm_chapter(argc, argv, chapter,
                              mm::GemmKernelGroup<__nv_bfloat16, __nv_bfloat16>{
                                  .kernels = {
                                      // tma_store, the chapter's best, and one change at a time:
                                      ch10::persistent_kernel<ch10::TmaStoreCfg>("tma_store"),
                                      ch10::persistent_kernel<Point<1, 4, 4>>("group_4"),
                                      ch10::persistent_kernel<Point<1, 4, 8>>("group_8"),
                                      ch10::persistent_kernel<Point<1, 4, 32>>("group_32"),
                                      ch10::persistent_kernel<Point<1, 4, 128>>("group_128"),
                                      ch10::persistent_kernel<ch10::ClusterCfg>("cluster_2"),
                                      ch10::persistent_kernel<Point<4, 4, 16>>("cluster_4"),
                                      ch10::persistent_kernel<Point<1, 3, 16>>("stages_3"),
                                  }});
}
