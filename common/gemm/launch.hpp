/// @file launch.hpp
/// @brief Launch arithmetic every GPU chapter needs: rounding a grid up, the grid's limits, and
/// the one rule for sizes that 32-bit indices can hold.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "gemm/problem.hpp"

/// @brief Launch arithmetic shared by the chapters (a namespace of its own, so that these integer
/// helpers never compete with the layout library's tuple `mm::ceil_div`).
///
/// **Which sizes a kernel takes: the 32-bit rule.** The limits that 32-bit integers put on a
/// problem are stated here, once, and applied by each kernel that has them, through its `rejects`
/// function (the harness then prints "not run: <reason>" for that kernel and runs the others and
/// cuBLAS):
///
/// - A kernel that computes offsets into A, B or C in `int` (chapters 02, 03, 05, 06) calls
///   int32_offset_rejects with its tile. A kernel that covers the matrices with whole tiles
///   computes the offsets of a partial tile's outside elements too, never reading them (chapters
///   05, 06; chapter 03 forms only inside offsets, but its indices run over whole tiles), so the
///   bound is each matrix's largest offset with its rows and columns rounded up to whole tiles.
///   Since every stride is at least 1, the row and column indices of those tiles fit as well.
///   A kernel whose threads outside C return before computing any offset (chapter 02) passes
///   a 1×1×1 tile: only the matrices' own last elements count. A pipelined kernel that issues its
///   copies past the last K tile too (chapter 08's no_copy_branch: S−1 tiles, predicated off and
///   never read, but their offsets computed) passes those tiles as `k_tiles_past_end`: A and B
///   count as that many tile_k rows or columns longer along K.
/// - A kernel whose offsets are 64-bit and whose indices are `int` (chapter 04's copies) calls
///   int32_index_rejects: only the rounded-up extents must fit.
/// - The command line (harness/cli.hpp) refuses only what no kernel and no baseline could take:
///   an M, N or K above 2^31 - 1, because cuBLAS takes `int` m, n, k and leading dimensions (each
///   of them one of M, N, K). A matrix of more than 2^31 elements is not refused there: cuBLAS and
///   chapter 04 handle it, and each 32-bit kernel says for itself that it cannot.
namespace mm::launch {

/// @brief ⌈a / b⌉ for positive a, b: the number of b-wide tiles (or blocks) that cover a elements.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

/// @brief a rounded up to a whole number of b-wide tiles: the extent a kernel with b-wide tiles covers.
constexpr std::int64_t round_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

/// @brief The most blocks a grid may have along y (and z).
inline constexpr std::int64_t max_grid_y = 65535;

/// @brief The most blocks a grid may have along x.
inline constexpr std::int64_t max_grid_x = 2147483647;

/// @brief Blocks of `per_block` threads that cover `extent` elements, but at most `limit`: the grid
/// dimension of a kernel whose grid-stride loop covers what the grid does not.
constexpr std::int64_t capped_blocks(std::int64_t extent, std::int64_t per_block, std::int64_t limit) {
  const std::int64_t blocks = ceil_div(extent, per_block);
  return blocks < limit ? blocks : limit;
}

/// @brief The largest value an `int` offset or index may take: 2^31 - 1.
inline constexpr std::int64_t int32_max = 2147483647;

/// @brief The largest offset a kernel computes into matrix `s` when it covers it with whole
/// `row_tile` × `col_tile` tiles: the offset of the last element of the rounded-up matrix.
constexpr std::int64_t tiled_max_offset(const MatrixShape& s, std::int64_t row_tile, std::int64_t col_tile) {
  return (round_up(s.rows, row_tile) - 1) * s.row_stride() + (round_up(s.cols, col_tile) - 1) * s.col_stride();
}

/// @brief Empty when every offset a kernel with block tile (tile_m, tile_n, tile_k) computes into A
/// (M×K, in tile_m × tile_k tiles), B (K×N, tile_k × tile_n) and C (M×N, tile_m × tile_n) fits in an
/// `int`; otherwise one line naming the first matrix that does not (see the namespace's 32-bit rule).
/// `k_tiles_past_end`: K tiles past the last whose offsets the kernel computes as well (a pipeline
/// that issues predicated-off copies past the end). (Their K coordinates, at most A's largest offset
/// along K, then fit too.)
inline std::string int32_offset_rejects(const GemmProblem& p, std::int64_t tile_m, std::int64_t tile_n,
                                        std::int64_t tile_k, std::int64_t k_tiles_past_end = 0) {
  struct Operand {
    const char* name;
    MatrixShape shape;
    std::int64_t row_tile, col_tile;
    std::int64_t extra_rows, extra_cols;  ///< the K tiles past the end, along K
  };
  const std::int64_t past = k_tiles_past_end * tile_k;
  const Operand operands[] = {{"A", p.shape_a(), tile_m, tile_k, 0, past},
                              {"B", p.shape_b(), tile_k, tile_n, past, 0},
                              {"C", p.shape_c(), tile_m, tile_n, 0, 0}};
  if (p.m > int32_max || p.n > int32_max || p.k > int32_max) return "needs M, N and K below 2^31 (32-bit ints)";
  for (const Operand& o : operands) {
    const std::int64_t last = tiled_max_offset(o.shape, o.row_tile, o.col_tile) +
                              o.extra_rows * o.shape.row_stride() + o.extra_cols * o.shape.col_stride();
    if (last > int32_max) {
      std::string tiles = std::to_string(o.row_tile) + "x" + std::to_string(o.col_tile) + " tiles";
      if (o.extra_rows + o.extra_cols > 0)
        tiles += " and " + std::to_string(k_tiles_past_end) + " past the last along K";
      return "needs 32-bit offsets: " + std::string(o.name) + " (" + std::to_string(o.shape.rows) + "x" +
             std::to_string(o.shape.cols) + ", rounded up to whole " + tiles + ") reaches offset " +
             std::to_string(last) + " > 2^31 - 1";
    }
  }
  return {};
}

/// @brief Empty when the row and column indices of a rows × cols matrix covered with whole
/// row_tile × col_tile tiles fit in an `int`; otherwise one line saying so. For kernels whose
/// offsets are 64-bit but whose indices (and extents) are `int` (see the namespace's 32-bit rule).
inline std::string int32_index_rejects(std::int64_t rows, std::int64_t cols, std::int64_t row_tile,
                                       std::int64_t col_tile) {
  if (rows > int32_max || cols > int32_max || round_up(rows, row_tile) - 1 > int32_max ||
      round_up(cols, col_tile) - 1 > int32_max)
    return "needs M and N, and every index of their whole " + std::to_string(row_tile) + "x" +
           std::to_string(col_tile) + " tiles, below 2^31 (32-bit indices; the offsets are 64-bit)";
  return {};
}

/// @brief Empty when TMA can describe the bf16 operands of `p`; otherwise the rule it breaks (the
/// Hopper chapters' size rule). A and C row-major; A's rows (K elements) and, when B is row-major
/// (K×N), B's rows (N elements) must be a multiple of 16 bytes apart, since a tensor map's row pitch
/// is; M, N and K must fit TMA's 32-bit coordinates. `elem_bytes`: 2 for bf16.
inline std::string tma_operand_rejects(const GemmProblem& p, int elem_bytes = 2) {
  const std::int64_t per16 = 16 / elem_bytes;  // elements in 16 bytes
  if (p.a != Order::row || p.c != Order::row) return "takes a row-major A and C (layouts RRR and RCR)";
  if (p.k % per16 != 0)
    return "needs K % " + std::to_string(per16) +
           " == 0: TMA reads rows whose pitch is a multiple of 16 bytes (A is M×K, row-major)";
  if (p.b == Order::row && p.n % per16 != 0)
    return "needs N % " + std::to_string(per16) +
           " == 0 in RRR: TMA reads rows whose pitch is a multiple of 16 bytes (B is K×N, row-major)";
  if (p.m > int32_max || p.n > int32_max || p.k > int32_max)
    return "needs M, N and K below 2^31 (TMA coordinates are 32-bit)";
  return {};
}

/// @brief Empty when every pointer a kernel's tensor maps will hold starts on a 16-byte boundary, as a
/// tensor map's global address must; otherwise one line naming the first that does not ("A starts 2
/// bytes past a 16-byte boundary: TMA needs 16-byte aligned operands"). A step checks it before
/// anything asks the GPU (the SM count, the occupancy), so that a machine without one refuses the
/// same pointers for the same reason. Null pointers are not checked (an operand not read by TMA).
inline std::string tma_pointer_rejects(std::initializer_list<std::pair<const char*, const void*>> pointers) {
  for (const auto& [name, ptr] : pointers) {
    const auto off = reinterpret_cast<std::uintptr_t>(ptr) % 16;
    if (ptr != nullptr && off != 0)
      return std::string(name) + " starts " + std::to_string(off) +
             " bytes past a 16-byte boundary: TMA needs 16-byte aligned operands";
  }
  return {};
}

/// Empty when an fp8 GEMM (e4m3 A and B, bf16 C: cuBLASLt's on sm_90 and chapter 12's) takes `p`;
/// otherwise the rule it breaks, in one line: the RCR order (wgmma and cuBLASLt read e4m3 K-major
/// only), K % 16 == 0 (16-byte rows of e4m3) and N % 8 == 0 (16-byte rows of a bf16 C).
inline std::string fp8_rejects(const GemmProblem& p) {
  if (p.a != Order::row || p.b != Order::col || p.c != Order::row)
    return "fp8 takes only the RCR order (C = A·Bᵀ, A and B K-major): wgmma and cuBLASLt read e4m3 only K-major";
  if (p.k % 16 != 0) return "fp8 needs K % 16 == 0: rows of e4m3 A and B are a multiple of 16 bytes (TMA, cuBLASLt)";
  if (p.n % 8 != 0) return "fp8 needs N % 8 == 0: rows of the bf16 C are a multiple of 16 bytes (TMA, cuBLASLt)";
  return {};
}

}  // namespace mm::launch
