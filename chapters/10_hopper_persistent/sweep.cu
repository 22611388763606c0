// Chapter 10's tuning sweep: tma_store, the chapter's best kernel, next to the same kernel with one
// choice changed (the scheduler's group height, clusters of 2 (the last step) and 4, the stage count),
// RRR and RCR: the evidence behind "Choosing the configuration" in the README. Not built by default
// (each point is two more kernel instantiations): configure with -DMM_CH10_SWEEP=ON.
//
// Build: cmake -B build -DMM_CH10_SWEEP=ON && cmake --build build --target ch10_sweep
// Run:   build/bin/ch10_sweep --sizes 2048,4096,8192 --layout RRR,RCR
#include <cstdio>

#include "10_hopper_persistent/cluster_multicast.cuh"
#include "10_hopper_persistent/tma_store.cuh"
#include "gemm/cluster_launch.hpp"
#include "gemm/smem.hpp"
#include "harness/arch_check.hpp"
#include "harness/device_info.hpp"
#include "harness/gemm_runner.hpp"

namespace ch10 = mm::ch10;
using bf16 = __nv_bfloat16;

// One choice of tma_store changed at a time, as named configurations.
template <int G>
struct Group : ch10::TmaStoreCfg {
  static constexpr int kGroupM = G;  // rows of tiles the scheduler walks down before moving right
};
struct Cluster4 : ch10::ClusterCfg {
  static constexpr int kClusterM = 4;  // clusters of 4 blocks along M
};
struct Stages3 : ch10::TmaStoreCfg {
  static constexpr int kStages = 3;  // a ring of 3 stages
};

template <class Cfg>
mm::GemmKernel<bf16, bf16> store_point(const char* name) {
  return mm::prepared_kernel<bf16, bf16>(
      name, mm::DType::bf16, [](auto const& p, auto a, auto b, auto c) { return ch10::prepare_tma_store<Cfg>(p, a, b, c); },
      ch10::tma_store_rejects<Cfg>, mm::arch::sm90a);
}
template <class Cfg>
mm::GemmKernel<bf16, bf16> cluster_point(const char* name) {
  return mm::prepared_kernel<bf16, bf16>(
      name, mm::DType::bf16,
      [](auto const& p, auto a, auto b, auto c) { return ch10::prepare_cluster_multicast<Cfg>(p, a, b, c); },
      ch10::cluster_multicast_rejects<Cfg>, mm::arch::sm90a);
}

// How many blocks (clusters) of the kernel the GPU holds at once, for each cluster size: a persistent
// grid's size, and the reason larger clusters can lose (a GPC's SMs do not always divide into them).
void print_resident_clusters() {
  if (!mm::device_info().present || !mm::arch::unmet(mm::arch::sm90a).empty()) return;
  auto resident = [](auto kernel, int cluster, std::size_t smem) {
    mm::opt_in_dynamic_smem(kernel, smem);
    return mm::max_resident_clusters(kernel, cluster, 384, smem);
  };
  using K = mm::GmmaMajor;
  std::printf("resident at once: %d blocks; %d clusters of 2; %d clusters of 4\n",
              resident(ch10::tma_store_kernel<ch10::TmaStoreCfg, K::K>, 1,
                       mm::shared_storage_bytes<ch10::StoreSharedStorage<ch10::TmaStoreCfg, K::K>>()),
              resident(ch10::cluster_multicast_kernel<ch10::ClusterCfg, K::K>, 2,
                       mm::shared_storage_bytes<ch10::MulticastSharedStorage<ch10::ClusterCfg, K::K>>()),
              resident(ch10::cluster_multicast_kernel<Cluster4, K::K>, 4,
                       mm::shared_storage_bytes<ch10::MulticastSharedStorage<Cluster4, K::K>>()));
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
                              mm::GemmKernelGroup<bf16, bf16>{
                                  .kernels = {
                                      // tma_store, the chapter's best, and one change at a time:
                                      store_point<ch10::TmaStoreCfg>("tma_store"),
                                      store_point<Group<4>>("group_4"),
                                      store_point<Group<8>>("group_8"),
                                      store_point<Group<32>>("group_32"),
                                      store_point<Group<128>>("group_128"),
                                      cluster_point<ch10::ClusterCfg>("cluster_2"),
                                      cluster_point<Cluster4>("cluster_4"),
                                      store_point<Stages3>("stages_3"),
                                  }});
}
