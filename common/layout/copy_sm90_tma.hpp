// TMA (the tensor memory accelerator, sm_90): bulk copies of a 2-D box between global and shared
// memory, described by a tensor map (a CUtensorMap built on the host: layout/copy_sm90_desc.hpp) and
// issued by one thread. A load completes on an mbarrier (layout/mbarrier.hpp) by transaction
// count; elements of the box outside the tensor read as zero. A store's out-of-bounds elements are
// not written. Loads and stores write and read shared memory in the swizzled order the map names.
//
// The map must be a kernel parameter declared `const __grid_constant__ CUtensorMap` (or live in
// constant/global memory): the instruction takes its generic address.
#pragma once

#include <cstdint>

#include <cuda.h>  // CUtensorMap (a type only: nothing here calls the driver)

#include "layout/mbarrier.hpp"

namespace mm {

/// `cp.async.bulk.tensor.2d` from global to shared memory, completing on an mbarrier by transaction
/// bytes (its qualifiers name the shared window of the cluster, and complete_tx with a byte count): the box whose first
/// element is at tensor coordinates (c0 = inner, c1 = outer) into shared memory at `smem` (aligned as
/// the map's swizzle requires: 1024 bytes for 128-byte swizzle), counting its bytes down on `bar`.
struct SM90_TMA_LOAD_2D {
  /// Issues the copy (one thread).
  template <class = void>
  MM_HD static void copy(CUtensorMap const* map, std::uint64_t* bar, void* smem, int c0, int c1) {
    detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
            detail::smem_address(smem)),
        "l"(reinterpret_cast<std::uint64_t>(map)), "r"(detail::smem_address(bar)), "r"(c0), "r"(c1)
        : "memory");
#else
    (void)map, (void)bar, (void)smem, (void)c0, (void)c1;
#endif
  }
};

/// `cp.async.bulk.tensor.2d ... .multicast::cluster`: SM90_TMA_LOAD_2D's box, read once from
/// global memory (L2) and written to the same shared-memory offset in every block of the cluster
/// whose bit is set in `mask` (cluster.hpp's multicast_mask), each completing its bytes on its own
/// mbarrier at `bar`'s offset. Blocks that share an operand tile load it once between them.
struct SM90_TMA_LOAD_MULTICAST_2D {
  /// Issues the copy (one thread).
  template <class = void>
  MM_HD static void copy(CUtensorMap const* map, std::uint64_t* bar, void* smem, int c0, int c1, std::uint16_t mask) {
    detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(detail::smem_address(smem)),
        "l"(reinterpret_cast<std::uint64_t>(map)), "r"(detail::smem_address(bar)), "r"(c0), "r"(c1), "h"(mask)
        : "memory");
#else
    (void)map, (void)bar, (void)smem, (void)c0, (void)c1, (void)mask;
#endif
  }
};

/// `cp.async.bulk.tensor.2d` from shared to global memory, tracked as a bulk group (its qualifiers: global,
/// the block's shared window, bulk_group): the box at `smem` out to tensor
/// coordinates (c0, c1); elements outside the tensor are dropped. Complete with tma_store_commit()
/// and tma_store_wait<0>(). The shared tile, if written by ordinary stores, needs
/// fence_proxy_async_shared() in each writer and a barrier before the issuing thread stores it.
struct SM90_TMA_STORE_2D {
  /// Issues the copy (one thread).
  template <class = void>
  MM_HD static void copy(CUtensorMap const* map, void const* smem, int c0, int c1) {
    detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                     reinterpret_cast<std::uint64_t>(map)),
                 "r"(detail::smem_address(smem)), "r"(c0), "r"(c1)
                 : "memory");
#else
    (void)map, (void)smem, (void)c0, (void)c1;
#endif
  }
};

/// `cp.async.bulk.commit_group`: this thread's bulk stores issued since the last commit form a group.
template <class = void>
MM_HD void tma_store_commit() {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}

/// `cp.async.bulk.wait_group.read N`: at most N of this thread's store groups still read shared memory.
template <int N>
MM_HD void tma_store_wait() {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
#endif
}

/// `prefetch.tensormap`: brings the map into the cache before its first use.
template <class = void>
MM_HD void tma_prefetch_map(CUtensorMap const* map) {
  detail::require_sm90<int>();
#if defined(MM_HAVE_SM90_ASYNC)
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
#else
  (void)map;
#endif
}

}  // namespace mm
