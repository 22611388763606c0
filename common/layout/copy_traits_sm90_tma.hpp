// TMA copies built from the shared-memory layout they fill (CuTe's make_tma_copy): the box, the
// swizzle and the transaction bytes of a stage are read off one source of truth, the stage's layout,
// instead of three numbers that must agree.
//
//   host:    auto tma_a = make_tma_copy(SM90_TMA_LOAD_2D{}, make_tensor(A, make_layout((M,K), (K,1))),
//                                       SmemLayoutA{});            // one stage, (BM,BK)
//            params.tma_a = tma_a;                                 // a __grid_constant__ kernel parameter
//   device:  pipeline arms tma_a.kTransactionBytes (+ B's) per stage, then one thread
//            params.tma_a.copy(bar, sA(_, _, stage), m0, k0);     // every box of the stage
//
// How a stage splits into boxes. A TMA box is at most 256 elements along each dimension and, with
// a swizzle, its contiguous dimension is at most one swizzle row (128 bytes for the 128-byte
// swizzle: 64 bf16). The stage's contiguous mode (the one with unit stride in shared memory: K for a
// K-major tile, MN for an MN-major one) is cut into "panels" one swizzle row wide, its other mode
// into pieces of at most 256 rows; each (panel, piece) is one box, which TMA writes densely, in the
// swizzled order, at the shared address of its first element. make_tma_copy checks on the host that
// the layout really places every box that way (a layout that does not is a programming error and
// throws std::logic_error), and that the global tensor is contiguous along the same mode.
//
// Multicast (SM90_TMA_LOAD_MULTICAST_2D, `Multicast` blocks of a cluster share the tile): the boxes
// are divided among the blocks, each loads its share and multicasts it into every block, and each
// block's full barrier still expects the whole stage's bytes. (CuTe's make_tma_copy takes the
// cluster size the same way.) A store (SM90_TMA_STORE_2D) sends a shared tile out box by box.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "layout/copy_sm90_desc.hpp"  // host: the tensor map
#include "layout/copy_sm90_tma.hpp"   // device: the instructions
#include "layout/mma_sm90.hpp"        // gmma_swizzle_of: the swizzle a layout encodes
#include "layout/predicate.hpp"       // identity tensors: a tile's global coordinates
#include "layout/tensor.hpp"

namespace mm {

/// How one shared-memory stage of layout `SmemLayout` (rank 2, compile-time) of elements T splits
/// into TMA boxes, for `Multicast` blocks sharing it (see the file comment).
template <class T, class SmemLayout, int Multicast = 1>
struct TmaBoxes {
  /// The layout under the swizzle (the swizzle itself is what kSwizzle names).
  using Inner = std::remove_cvref_t<decltype(detail::gmma_inner_layout(SmemLayout{}))>;
  static_assert(rank_v<typename Inner::shape_type> == 2, "a TMA copy fills a rank-2 shared tile");
  /// The stage's extent along its mode 0 (MN for an operand, M for C).
  static constexpr int kExtent0 = size_v<std::remove_cvref_t<decltype(get<0>(typename Inner::shape_type{}))>>;
  /// The stage's extent along its mode 1 (K for an operand, N for C).
  static constexpr int kExtent1 = size_v<std::remove_cvref_t<decltype(get<1>(typename Inner::shape_type{}))>>;
  /// The mode with unit stride in shared memory: TMA's inner (contiguous) dimension.
  static constexpr int kContiguous = detail::gmma_delta(Inner{}, 1, 0, 0, 0) == 1 ? 0 : 1;
  static_assert(detail::gmma_delta(Inner{}, kContiguous == 0 ? 1 : 0, kContiguous == 0 ? 0 : 1, 0, 0) == 1,
                "a TMA copy fills a shared tile with one unit-stride mode");
  /// The swizzle the layout encodes, as wgmma's descriptor names it.
  static constexpr GmmaSwizzle kGmmaSwizzle = gmma_swizzle_of<T, SmemLayout>();
  static constexpr TmaSwizzle kSwizzle = tma_swizzle_for(kGmmaSwizzle);  ///< what the map must write
  static constexpr int kExtentInner = kContiguous == 0 ? kExtent0 : kExtent1;  ///< along the contiguous mode
  static constexpr int kExtentOuter = kContiguous == 0 ? kExtent1 : kExtent0;  ///< along the other mode
  /// A box's extent along the contiguous mode: one swizzle row (or the whole mode, up to 256, unswizzled).
  static constexpr int kBoxInner = kSwizzle == TmaSwizzle::none
                                       ? (kExtentInner < 256 ? kExtentInner : 256)
                                       : (kExtentInner < tma_swizzle_bytes(kSwizzle) / int(sizeof(T))
                                              ? kExtentInner
                                              : tma_swizzle_bytes(kSwizzle) / int(sizeof(T)));
  static constexpr int kPanels = kExtentInner / kBoxInner;  ///< boxes along the contiguous mode
  static_assert(kPanels * kBoxInner == kExtentInner, "whole boxes along the contiguous mode");
  /// Pieces along the other mode: at most 256 rows each, and enough boxes to share among the blocks.
  static constexpr int kPieces = (kExtentOuter + 255) / 256 > (Multicast > kPanels ? Multicast / kPanels : 1)
                                     ? (kExtentOuter + 255) / 256
                                     : (Multicast > kPanels ? Multicast / kPanels : 1);
  /// A box's extent along the other mode: the pieces it is cut into (at most 256).
  static constexpr int kBoxOuter = kExtentOuter / kPieces;
  static_assert(kBoxOuter * kPieces == kExtentOuter, "whole boxes along the outer mode");
  static constexpr int kBoxes = kPanels * kPieces;            ///< boxes per stage
  static_assert(kBoxes % Multicast == 0, "the boxes of a stage divide among the blocks of a multicast");
  static constexpr int kBoxesPerBlock = kBoxes / Multicast;   ///< boxes one block issues
  /// Bytes one stage receives in each block: the whole tile, whoever issued its boxes.
  static constexpr std::uint32_t kTransactionBytes = std::uint32_t(size_v<SmemLayout> * int(sizeof(T)));

  /// Box b's first element along the contiguous mode (boxes number panels first).
  MM_HD static constexpr int inner_origin(int b) { return (b % kPanels) * kBoxInner; }
  /// Box b's first element along the other mode.
  MM_HD static constexpr int outer_origin(int b) { return (b / kPanels) * kBoxOuter; }
  /// Box b's first element along mode 0 (a coordinate of the shared layout).
  MM_HD static constexpr int mode0_origin(int b) { return kContiguous == 0 ? inner_origin(b) : outer_origin(b); }
  /// Box b's first element along mode 1.
  MM_HD static constexpr int mode1_origin(int b) { return kContiguous == 0 ? outer_origin(b) : inner_origin(b); }

  /// Empty when the layout writes every box densely, in the swizzled order, from a box origin that
  /// starts a whole swizzle pattern; else the first element that breaks it (host, once per map).
  static std::string layout_rejects() {
    constexpr Inner inner{};
    constexpr int pattern = kSwizzle == TmaSwizzle::none ? 1 : 8 * kBoxInner;  // elements of one 8-row pattern
    for (int b = 0; b < kBoxes; ++b) {
      const int origin = int(inner(mode0_origin(b), mode1_origin(b)));
      if (origin % pattern != 0)
        return "box " + std::to_string(b) + " starts at element " + std::to_string(origin) +
               ", not at a whole swizzle pattern";
      for (int o = 0; o < kBoxOuter; ++o)
        for (int i = 0; i < kBoxInner; ++i) {
          const int c0 = kContiguous == 0 ? mode0_origin(b) + i : mode0_origin(b) + o;
          const int c1 = kContiguous == 0 ? mode1_origin(b) + o : mode1_origin(b) + i;
          if (int(inner(c0, c1)) != origin + o * kBoxInner + i)
            return "element (" + std::to_string(c0) + "," + std::to_string(c1) + ") of box " + std::to_string(b) +
                   " is not where TMA writes it";
        }
    }
    return {};
  }
};

/// A TMA copy of one shared stage of layout `SmemLayout`: the tensor map (a kernel parameter: keep
/// this object in a `const __grid_constant__` struct) and, from the layout, the boxes. `Op` is
/// SM90_TMA_LOAD_2D, SM90_TMA_LOAD_MULTICAST_2D (with `Multicast` blocks) or SM90_TMA_STORE_2D.
template <class Op, class T, class SmemLayout, int Multicast = 1>
struct TmaCopy {
  using Boxes = TmaBoxes<T, SmemLayout, Multicast>;  ///< the geometry
  /// The bytes one stage brings into each block: what the stage's full barrier expects.
  static constexpr std::uint32_t kTransactionBytes = Boxes::kTransactionBytes;
  CUtensorMap map;  ///< built by make_tma_copy

  /// Loads the stage tile whose element (0,0) is element (c0, c1) of the global tensor (coordinates
  /// in the shared layout's mode order, e.g. (m0, k0)): every box, issued by one thread, completing
  /// on `bar`.
  template <class Stage>
  MM_HD void copy(std::uint64_t* bar, Stage&& stage, int c0, int c1) const {
    static_assert(std::is_same_v<Op, SM90_TMA_LOAD_2D>, "TmaCopy::copy: a load");
    MM_UNROLL
    for (int b = 0; b < Boxes::kBoxes; ++b) issue_box(bar, stage, c0, c1, b, 0);
  }
  /// The same, the tile named by its coordinates: `coords` is the tile of an identity tensor of the
  /// global tensor (make_identity_tensor, local_tile, domain_offset), whose element (0,0) is the global
  /// coordinate of the stage's element (0,0), as CuTe's TMA copies take a tile of `get_tma_tensor`.
  template <class Stage, class E2, class L>
  MM_HD void copy(std::uint64_t* bar, Stage&& stage, Tensor<E2, L> const& coords) const {
    const auto origin = coords(0);
    copy(bar, stage, int(get<0>(origin)), int(get<1>(origin)));
  }
  /// Multicast: this block's share of the boxes (block `rank` of the `Multicast` sharing the tile),
  /// written into every block of `mask`, each completing on its own barrier at `bar`'s offset.
  template <class Stage>
  MM_HD void copy_multicast(std::uint64_t* bar, Stage&& stage, int c0, int c1, int rank, std::uint16_t mask) const {
    static_assert(std::is_same_v<Op, SM90_TMA_LOAD_MULTICAST_2D>, "TmaCopy::copy_multicast: a multicast load");
    MM_UNROLL
    for (int i = 0; i < Boxes::kBoxesPerBlock; ++i) issue_box(bar, stage, c0, c1, rank * Boxes::kBoxesPerBlock + i, mask);
  }
  /// Stores the shared tile `stage` to the global tile whose element (0,0) is (c0, c1); elements
  /// outside the global tensor are dropped. One thread; then tma_store_commit().
  template <class Stage>
  MM_HD void store(Stage const& stage, int c0, int c1) const {
    static_assert(std::is_same_v<Op, SM90_TMA_STORE_2D>, "TmaCopy::store: a store");
    MM_UNROLL
    for (int b = 0; b < Boxes::kBoxes; ++b) {
      const int g0 = c0 + Boxes::mode0_origin(b), g1 = c1 + Boxes::mode1_origin(b);
      SM90_TMA_STORE_2D::copy(&map, &stage(Boxes::mode0_origin(b), Boxes::mode1_origin(b)),
                              Boxes::kContiguous == 0 ? g0 : g1, Boxes::kContiguous == 0 ? g1 : g0);
    }
  }
  /// The same, the global tile named by its coordinates (see copy).
  template <class Stage, class E2, class L>
  MM_HD void store(Stage const& stage, Tensor<E2, L> const& coords) const {
    const auto origin = coords(0);
    store(stage, int(get<0>(origin)), int(get<1>(origin)));
  }
  /// prefetch.tensormap: the map into the cache before its first use.
  MM_HD void prefetch() const { tma_prefetch_map(&map); }

 private:
  template <class Stage>
  MM_HD void issue_box(std::uint64_t* bar, Stage&& stage, int c0, int c1, int b, std::uint16_t mask) const {
    const int g0 = c0 + Boxes::mode0_origin(b), g1 = c1 + Boxes::mode1_origin(b);  // global, mode order
    const int inner = Boxes::kContiguous == 0 ? g0 : g1, outer = Boxes::kContiguous == 0 ? g1 : g0;
    void* dst = &stage(Boxes::mode0_origin(b), Boxes::mode1_origin(b));
    if constexpr (std::is_same_v<Op, SM90_TMA_LOAD_MULTICAST_2D>)
      SM90_TMA_LOAD_MULTICAST_2D::copy(&map, bar, dst, inner, outer, mask);
    else
      SM90_TMA_LOAD_2D::copy(&map, bar, dst, inner, outer);
  }
};

/// Builds the TMA copy that fills (or, for SM90_TMA_STORE_2D, empties) one shared stage of layout
/// `smem_layout` from the global tensor `gmem` (rank 2, in the same mode order: (MN,K) for an
/// operand, (M,N) for C): the map's box, swizzle and the stage's transaction bytes all come from the
/// layout. `Multicast` blocks share each tile for SM90_TMA_LOAD_MULTICAST_2D. Throws
/// std::invalid_argument when TMA cannot describe the global tensor (not contiguous along the tile's
/// contiguous mode, misaligned, a pitch off 16 bytes: the line names the rule), std::logic_error when
/// the shared layout is not one TMA writes box by box.
template <class Op, class Engine, class GLayout, class SmemLayout, int Multicast = 1,
          class U = std::remove_cv_t<std::remove_pointer_t<decltype(std::declval<Tensor<Engine, GLayout> const&>().data())>>>
TmaCopy<Op, U, SmemLayout, Multicast> make_tma_copy(Op, Tensor<Engine, GLayout> const& gmem, SmemLayout const&,
                                                     Int<Multicast> = {},
                                                     TmaL2Promotion promotion = TmaL2Promotion::b256) {
  using Boxes = TmaBoxes<U, SmemLayout, Multicast>;
  static_assert(Multicast == 1 || std::is_same_v<Op, SM90_TMA_LOAD_MULTICAST_2D>, "Multicast > 1: SM90_TMA_LOAD_MULTICAST_2D");
  if (std::string why = Boxes::layout_rejects(); !why.empty())
    throw std::logic_error("make_tma_copy: the shared layout is not one TMA writes box by box: " + why);
  const auto& g = gmem.layout();
  const std::int64_t e0 = std::int64_t(size<0>(g)), e1 = std::int64_t(size<1>(g));
  const std::int64_t s0 = std::int64_t(stride<0>(g)), s1 = std::int64_t(stride<1>(g));
  const bool contiguous = Boxes::kContiguous == 0 ? (s0 == 1 || e0 == 1) : (s1 == 1 || e1 == 1);
  if (!contiguous)
    throw std::invalid_argument(std::string("make_tma_copy: the global tensor must be contiguous along mode ") +
                                std::to_string(Boxes::kContiguous) + ", the shared tile's contiguous mode");
  const std::int64_t inner = Boxes::kContiguous == 0 ? e0 : e1, outer = Boxes::kContiguous == 0 ? e1 : e0;
  std::int64_t pitch = Boxes::kContiguous == 0 ? s1 : s0;
  if (outer == 1) pitch = inner;  // one row: the pitch is never used
  TmaCopy<Op, U, SmemLayout, Multicast> tma{};
  tma.map = make_tma_map_2d(tma_data_type<U>(), int(sizeof(U)), gmem.data(), inner, outer, pitch, Boxes::kBoxInner,
                            Boxes::kBoxOuter, Boxes::kSwizzle, promotion);
  return tma;
}

}  // namespace mm
