// Thread-block clusters (sm_90): a group of blocks the hardware schedules together on one GPC, each
// able to read, write and signal the others' shared memory ("distributed shared memory").
//
//   cluster_ctarank()              this block's rank in its cluster (0 .. cluster size - 1)
//   cluster_id_x()                 the cluster's index along x in the grid of clusters
//   cluster_arrive(); cluster_wait()  barrier.cluster: every thread of every block of the cluster
//                                  arrives, then waits for all; release/acquire at cluster scope
//   map_shared_rank(p, r)          the cluster-wide shared address of what `p` points to in block r
//   multicast_mask(first, count, stride)  the 16-bit mask of ranks a TMA multicast writes to
//
// Why a kernel needs the barrier: a block may touch another block's shared memory (a TMA multicast
// into it, an mbarrier arrival on it) only while that block is running. The blocks therefore meet
// once after initializing their barriers (before any remote use) and once before exiting (after
// the last remote use). PTX ISA: "Cluster of Cooperative Thread Arrays", "barrier.cluster", "mapa".
#pragma once

#include <cstdint>

#include "layout/mbarrier.hpp"  // detail::require_sm90, MM_HAVE_SM90_ASYNC

namespace mm {

/// This block's rank within its cluster (`%cluster_ctarank`); 0 on the host.
template <class = void>
MM_HD std::uint32_t cluster_ctarank() {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  std::uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
#else
  return 0;
#endif
}

/// This block's rank in a cluster of `ClusterSize` blocks (CuTe's block_rank_in_cluster): 0 without
/// one (ClusterSize 1), where no instruction is issued.
template <int ClusterSize>
MM_HD int block_rank_in_cluster() {
  if constexpr (ClusterSize == 1) {
    return 0;
  } else {
    return int(cluster_ctarank());
  }
}

/// The index along x of this block's cluster in the grid of clusters (`%clusterid.x`); 0 on the host.
template <class = void>
MM_HD std::uint32_t cluster_id_x() {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  std::uint32_t r;
  asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(r));
  return r;
#else
  return 0;
#endif
}

/// `barrier.cluster.arrive.release.aligned`: this thread arrives at the cluster barrier; its
/// earlier memory accesses (shared memory of any block of the cluster included) are released.
/// Every thread of the warp must execute it.
template <class = void>
MM_HD void cluster_arrive() {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
#endif
}

/// `barrier.cluster.wait.acquire.aligned`: waits until every thread of the cluster has arrived.
template <class = void>
MM_HD void cluster_wait() {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}

/// cluster_arrive() then cluster_wait(): all threads of all blocks of the cluster meet.
template <class = void>
MM_HD void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

/// `mapa.shared::cluster.u32`: the shared::cluster address of the object at shared-window address
/// `addr` (in this block's shared memory) in the shared memory of block `rank` of the cluster (the
/// same offset there).
template <class = void>
MM_HD std::uint32_t map_shared_rank(std::uint32_t addr, std::uint32_t rank) {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(rank));
  return remote;
#else
  (void)rank;
  return addr;
#endif
}
/// map_shared_rank of the object at `p`.
template <class = void>
MM_HD std::uint32_t map_shared_rank(void const* p, std::uint32_t rank) {
  return map_shared_rank(detail::smem_address(p), rank);
}

/// The multicast mask of a TMA load (bit r set: block r of the cluster receives the box): `count`
/// ranks starting at `first`, `stride` apart. For a cluster of 2 blocks along M that share B, both
/// ranks: multicast_mask(0, 2) == 0b11.
MM_HD constexpr std::uint16_t multicast_mask(int first, int count, int stride = 1) {
  std::uint32_t mask = 0;
  for (int i = 0; i < count; ++i) mask |= 1u << (first + i * stride);
  return std::uint16_t(mask);
}

/// `mbarrier.arrive.shared::cluster.b64` (release at CTA scope, the default): one arrival on the
/// barrier at the same offset as `bar` in block `rank` of the cluster (this block's own when rank is
/// its own): how a consumer tells every block that multicasts into its shared memory that a stage is
/// free. What it releases are reads by wgmma, already complete (wgmma.wait_group); the stronger
/// `.release.cluster` would add a GPU-wide memory barrier (MEMBAR.ALL.GPU in SASS) to every K step.
template <class = void>
MM_HD void mbarrier_arrive_cluster(std::uint32_t bar, std::uint32_t rank) {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(map_shared_rank(bar, rank)) : "memory");
#else
  (void)bar, (void)rank;
#endif
}
/// mbarrier_arrive_cluster of the barrier at `bar`.
template <class = void>
MM_HD void mbarrier_arrive_cluster(std::uint64_t* bar, std::uint32_t rank) {
  mbarrier_arrive_cluster(detail::smem_address(bar), rank);
}

}  // namespace mm
