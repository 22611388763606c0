// The collective main loop of the Hopper kernels (CUTLASS's sm90 `CollectiveMma` with the
// `MainloopSm90TmaGmmaWarpSpecialized` policy): what is loaded and multiplied per K step, for one
// tile of C, by the two roles of a warp-specialized block.
//
//   producer (one thread)          load():  for each K step of the range, acquire a stage of the ring,
//                                           and TMA A's BM×BK and B's BN×BK boxes into it
//   consumer (a warpgroup)         mma():   for each K step, wait for the stage, issue the wgmma of
//                                           its 64-row slice of A against all of B, release the stage
//                                           whose wgmma completed (one K step in flight)
//
// Chapters 09 and 10 write this out inside each kernel; from chapter 11 on a kernel
// (gemm/kernel_sm90.hpp) calls it, and a step that changes what a K step does (the block-scaled
// promotion of chapter 12) is another collective with the same two functions.
//
// One configuration struct `Cfg` describes the tile, as in the chapters: BM, BN, BK (CuTe integers),
// kStages, kConsumers (warpgroups multiplying 64 rows each), kWgmmaM (64). The element type and the
// major-ness of each operand are the collective's other parameters: bf16 with B K-major (RCR: B
// stored N×K, nn.Linear's weights) or MN-major (RRR: B stored K×N), tf32 and e4m3 K-major only (as
// wgmma reads them). The operand's storage order becomes a layout on the host
// (to_underlying_arguments), not another kernel.
//
// Where ours differs from CUTLASS: the producer's loop and the consumer's take a range of K steps
// [k_begin, k_end) (what a split-K or stream-K scheduler hands out; CUTLASS passes an iterator and a
// count); mma() ends with the tail (CUTLASS's mma_tail: the last stage released after
// warpgroup_wait<0>); clusters (Cfg::kClusterM × kClusterN, 1 × 1 unless a step says) multicast A
// along N and B along M (copy_operands), as chapter 10's written-out cluster_multicast does for B.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

#include "gemm/pipeline.hpp"
#include "layout/cluster.hpp"
#include "gemm/problem.hpp"
#include "gemm/tile_scheduler.hpp"  // WorkUnit
#include "gemm/smem_layout_sm90.hpp"
#include "layout/all.hpp"
#include "layout/copy_traits_sm90_tma.hpp"
#include "layout/mma_sm90.hpp"

namespace mm {

/// The wgmma atom of a 64×N tile for an element type and the operands' major-ness: bf16 (k16, either
/// major-ness), tf32 (k8) and e4m3 (k32), both K-major.
template <class Element, int N, GmmaMajor MajorA, GmmaMajor MajorB>
struct GmmaAtomFor;
/// @cond SPECIALIZATIONS
template <int N, GmmaMajor MajorA, GmmaMajor MajorB>
struct GmmaAtomFor<__nv_bfloat16, N, MajorA, MajorB> {
  using type = SM90_64xNx16_F32BF16BF16_SS<N, MajorA, MajorB>;
};
template <int N>
struct GmmaAtomFor<float, N, GmmaMajor::K, GmmaMajor::K> {
  using type = SM90_64xNx8_F32TF32TF32_SS<N>;
};
template <int N>
struct GmmaAtomFor<__nv_fp8_e4m3, N, GmmaMajor::K, GmmaMajor::K> {
  using type = SM90_64xNx32_F32E4M3E4M3_SS<N>;
};
/// @endcond

/// An operand of the main loop as TMA sees it: `rows` × `k` with K contiguous (K-major) or the rows
/// contiguous (MN-major), rows `ld` elements apart (K-major) or K rows `ld` apart (MN-major). A as
/// M×K, B as N×K: a row-major K×N B is the MN-major N×K.
template <GmmaMajor Major, class T>
auto make_operand_tensor(const T* ptr, int rows, int k, std::int64_t ld) {
  if constexpr (Major == GmmaMajor::K) {
    return make_tensor(ptr, make_layout(make_shape(rows, k), make_stride(int(ld), _1{})));
  } else {
    return make_tensor(ptr, make_layout(make_shape(rows, k), make_stride(_1{}, int(ld))));
  }
}

/// The collective main loop: TMA producer, wgmma consumers, a ring of Cfg::kStages stages (see the
/// file comment).
template <class Cfg, class Element, GmmaMajor MajorA = GmmaMajor::K, GmmaMajor MajorB = GmmaMajor::K>
struct CollectiveMma {
  using BM = typename Cfg::BM;  ///< rows of the tile
  using BN = typename Cfg::BN;  ///< columns of the tile
  using BK = typename Cfg::BK;  ///< K per stage
  static constexpr int kStages = Cfg::kStages;  ///< stages in the ring
  static constexpr int kWgmmaM = Cfg::kWgmmaM;  ///< rows one wgmma multiplies
  /// An operand's extent in its ring: BM or BN, but an MN-major operand's rounded up to whole panels
  /// of the 128-byte swizzle (64 bf16): a panel is the one unit TMA writes and wgmma's descriptor steps
  /// over (LBO), so a tile of 96, 160 or 176 columns of an MN-major B (RRR) fills 2, 3 or 3 panels, and
  /// wgmma's N reads the first BN columns of them; TMA reads the rest from the next tile's columns (or
  /// zeros past N), unused.
  template <GmmaMajor Major, class MN>
  using RingExtent = std::conditional_t<Major == GmmaMajor::MN,
                                        Int<(MN::value + 128 / int(sizeof(Element)) - 1) / (128 / int(sizeof(Element))) *
                                            (128 / int(sizeof(Element)))>,
                                        MN>;
  using RingA = GmmaRing<Element, MajorA, RingExtent<MajorA, BM>, BK, kStages>;  ///< (BM,BK,S); MN-major: whole panels
  using RingB = GmmaRing<Element, MajorB, RingExtent<MajorB, BN>, BK, kStages>;  ///< (BN,BK,S); MN-major: whole panels
  static constexpr int kClusterM = Cfg::kClusterM;  ///< blocks of a cluster along M: they share B
  static constexpr int kClusterN = Cfg::kClusterN;  ///< blocks of a cluster along N: they share A
  using Pipeline = PipelineTmaAsync<kStages, kClusterM, kClusterN>;  ///< the ring's barriers
  using State = typename Pipeline::State;      ///< a position in the ring
  using Atom = typename GmmaAtomFor<Element, BN::value, MajorA, MajorB>::type;  ///< the 64×BN wgmma
  /// One warpgroup's wgmma: the atom alone (CUTLASS tiles it over the consumers, Layout<Shape<_2,_1,_1>>;
  /// here each consumer is one TiledMma, and mma() says which 64 rows it multiplies).
  using TiledMma = decltype(make_tiled_mma(Atom{}, Layout<Shape<_1, _1, _1>>{}));
  /// A consumer warpgroup's accumulators for Rows·64 rows of the tile (CuTe's partition_fragment_C):
  /// (MMA,Rows,1), in registers, uninitialized (the first K step's wgmma overwrite it). The kernel
  /// hands the whole fragment to mma(), the scheduler's fixup and the epilogue; each takes row block
  /// h's values as `flatten(accum(_, h, 0))`, (c, r, g) = GmmaFragmentLayout<BN>.
  template <int Rows = 1>
  MM_HD static constexpr auto partition_fragment_C() {
    return mm::partition_fragment_C(TiledMma{}, make_shape(Int<kWgmmaM * Rows>{}, BN{}));
  }

  /// The rings' shared memory (CUTLASS's TensorStorage of the main loop); the pipeline's barriers
  /// live in the kernel's PipelineStorage.
  struct TensorStorage {
    alignas(1024) Element a[cosize_v<RingA>];  ///< A's ring
    alignas(1024) Element b[cosize_v<RingB>];  ///< B's ring
  };

  /// A's copy: a plain load, or, shared by the kClusterN blocks of a cluster's row, a multicast.
  using CopyOpA = std::conditional_t<(kClusterN > 1), SM90_TMA_LOAD_MULTICAST_2D, SM90_TMA_LOAD_2D>;
  /// B's copy: a plain load, or, shared by the kClusterM blocks of a cluster's column, a multicast.
  using CopyOpB = std::conditional_t<(kClusterM > 1), SM90_TMA_LOAD_MULTICAST_2D, SM90_TMA_LOAD_2D>;

  /// The TMA copies: A's boxes and B's into a stage (hold their tensor maps: `__grid_constant__`).
  struct Params {
    TmaCopy<CopyOpA, Element, GmmaStage<RingA>, kClusterN> tma_a;  ///< A's boxes into a stage
    TmaCopy<CopyOpB, Element, GmmaStage<RingB>, kClusterM> tma_b;  ///< B's boxes into a stage
  };

  /// Host: the copies of A (M×K, rows `lda` apart) and B (N×K as make_operand_tensor has it, `ldb`).
  /// Throws std::invalid_argument when TMA cannot describe an operand (a pointer or pitch not
  /// 16-byte aligned). `promotion`: the maps' L2 promotion (make_tma_map_2d; 256 bytes unless a step
  /// says).
  static Params to_underlying_arguments(const Element* A, const Element* B, int m, int n, int k, std::int64_t lda,
                                        std::int64_t ldb, TmaL2Promotion promotion = TmaL2Promotion::b256) {
    return {make_tma_copy(CopyOpA{}, make_operand_tensor<MajorA>(A, m, k, lda), GmmaStage<RingA>{}, Int<kClusterN>{}, promotion),
            make_tma_copy(CopyOpB{}, make_operand_tensor<MajorB>(B, n, k, ldb), GmmaStage<RingB>{}, Int<kClusterM>{}, promotion)};
  }

  /// The bytes one stage receives: its A tile and its B tile.
  static constexpr std::uint32_t kTransactionBytes =
      decltype(Params::tma_a)::kTransactionBytes + decltype(Params::tma_b)::kTransactionBytes;

  /// One thread: the tensor maps into the cache before the first copy.
  MM_HD static void prefetch(const Params& params) {
    params.tma_a.prefetch();
    params.tma_b.prefetch();
  }

  /// The producer thread: K steps [k_begin, k_end) of the tile whose rows start at m0 and columns at
  /// n0, each into the stage `write` acquires; `write` runs on across calls (the next tile's first
  /// stages fill while the consumers still multiply the last one).
  template <class Pipe>
  MM_HD static void load(const Params& params, Pipe& pipeline, State& write, TensorStorage& storage, int m0, int n0,
                         int k_begin, int k_end) {
    const int rank = block_rank_in_cluster<kClusterM * kClusterN>();
    for (int kt = k_begin; kt < k_end; ++kt) {
      pipeline.producer_acquire(write);  // every reader of this stage has released it
      copy_operands(params, pipeline.producer_get_barrier(write), storage, write.index(), m0, n0, kt, rank);
      ++write;
    }
  }

  /// The producer thread: A's and B's boxes of K step `kt` of the tile at (m0, n0) into stage `stage`,
  /// completing on `bar`. In a cluster (block `rank`, column-major in kClusterM × kClusterN), an
  /// operand the cluster shares arrives in pieces: this block loads its share of the boxes (its place
  /// along the other dimension) and multicasts it into every block of its row (A) or column (B); its
  /// stage's full barrier expects the whole tile, its own boxes and its peers'.
  MM_HD static void copy_operands(const Params& params, std::uint64_t* bar, TensorStorage& storage, int stage, int m0,
                                  int n0, int kt, int rank) {
    auto sA = make_tensor(make_smem_ptr(storage.a), RingA{});  // (BM,BK,S)
    auto sB = make_tensor(make_smem_ptr(storage.b), RingB{});  // (BN,BK,S)
    const auto cA = make_identity_tensor(make_shape(BM{}, BK{}));  // (BM,BK): a stage's coordinates in its tile
    const auto cB = make_identity_tensor(make_shape(BN{}, BK{}));  // (BN,BK)
    if constexpr (kClusterN > 1) {  // A shared along N: the blocks of this block's row, same rank % kClusterM
      params.tma_a.copy_multicast(bar, sA(_, _, stage), m0, kt * BK::value, rank / kClusterM,
                                  multicast_mask(rank % kClusterM, kClusterN, kClusterM));
    } else {
      params.tma_a.copy(bar, sA(_, _, stage), domain_offset(make_coord(m0, kt * BK::value), cA));
    }
    if constexpr (kClusterM > 1) {  // B shared along M: the blocks of this block's column
      params.tma_b.copy_multicast(bar, sB(_, _, stage), n0, kt * BK::value, rank % kClusterM,
                                  multicast_mask(rank / kClusterM * kClusterM, kClusterM));
    } else {
      params.tma_b.copy(bar, sB(_, _, stage), domain_offset(make_coord(n0, kt * BK::value), cB));
    }
  }

  /// A consumer warpgroup: K steps [work.k_begin, work.k_end) of rows [64·row_block, 64·(row_block +
  /// Rows)) of the tile against all its BN columns, into `accum` (partition_fragment_C<Rows>(),
  /// (MMA,Rows,1); overwritten by the first step): Rows wgmma groups a K step (1 when the consumers
  /// share a tile, 2 when one consumer owns a 128-row tile: the ping-pong kernel), row block h into
  /// `accum(_, h, 0)`. One K step's groups in flight: a stage is released once the next
  /// step's groups have been issued and its own have completed; the last stage after
  /// warpgroup_wait<0> (the tail). `read` and `release` run on across calls.
  template <class Pipe, class Accumulators>
  MM_HD static void mma(const Params&, Pipe& pipeline, State& read, State& release, TensorStorage& storage,
                        Accumulators& accum, int row_block, const WorkUnit& work) {
    constexpr int Rows = decltype(size<1>(accum.layout()))::value;  // 64-row wgmma a K step
    auto sA = make_tensor(make_smem_ptr(storage.a), RingA{});  // (BM,BK,S)
    auto sB = make_tensor(make_smem_ptr(storage.b), RingB{});  // (BN,BK,S)
    for (int kt = work.k_begin; kt < work.k_end; ++kt) {
      pipeline.consumer_wait(read);
      MM_UNROLL
      for (int h = 0; h < Rows; ++h) {
        auto a_tile = local_tile(sA(_, _, read.index()), make_shape(Int<kWgmmaM>{}, BK{}), make_coord(row_block + h, 0));  // (64,BK)
        gmma_k_block<Atom, MajorA, MajorB>(a_tile, sB(_, _, read.index()), accum(_, h, 0), kt > work.k_begin);  // B: (BN,BK)
      }
      warpgroup_wait<Rows>();  // the previous step's groups have completed: its stage is free
      warpgroup_fence_operand(accum);
      if (kt > work.k_begin) {
        pipeline.consumer_release(release);
        ++release;
      }
      ++read;
    }
    warpgroup_wait<0>();
    warpgroup_fence_operand(accum);
    pipeline.consumer_release(release);  // the range's last stage
    ++release;
  }

  /// A consumer with nothing to multiply in a unit (its rows of the tile all padding) keeps its place
  /// in the ring: it waits for each stage, so that it never runs a lap ahead of the other consumers
  /// (its arrival would then count towards a later fill), and releases it at once. `read` and
  /// `release` advance as mma() advances them.
  template <class Pipe>
  MM_HD static void skip(Pipe& pipeline, State& read, State& release, const WorkUnit& work) {
    for (int kt = work.k_begin; kt < work.k_end; ++kt) {
      pipeline.consumer_wait(read);
      pipeline.consumer_release(release);
      ++read;
      ++release;
    }
  }
};

}  // namespace mm
