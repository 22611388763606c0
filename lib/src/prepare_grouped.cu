// Grouped bf16 (mixture-of-experts): chapter 13's grouped_contiguous and grouped_masked, 128×256 or
// step 2's 64×256 tiles, or step 6's grouped_decode (64 weight rows × 16 token rows, swapped); and step 3's
// grouped_swiglu (the same kernel with the SiLU(gate)·up epilogue, 128×256 or 64×256 tiles), as the
// chapter's prepare_grouped_gemm takes it for GroupedVariant::swiglu. The chapter's rules (grouped_rejects)
// and its check of a host copy of the layout (grouped_layout_rejects) go through as they are, each line
// prefixed with the kernel's name.
#include "prepare.hpp"

#include <stdexcept>

#include "13_grouped_moe/grouped_contiguous.cuh"  // grouped_rejects, grouped_layout_rejects
#include "13_grouped_moe/grouped_decode.cuh"      // kDecodeTileRows
#include "13_grouped_moe/steps.hpp"               // prepare_grouped_gemm

namespace gl::detail {

namespace {

mm::ch13::GroupedProblem chapter_problem(const Grouped& g) {
  mm::ch13::GroupedProblem p;
  p.groups = g.groups, p.n = g.n, p.k = g.k, p.rows = g.rows;
  p.offsets = g.offsets, p.counts = g.counts, p.capacity = g.capacity;
  return p;
}

const char* kernel_name(const Grouped& g) {
  return g.swiglu ? "grouped_swiglu: " : g.offsets ? "grouped_contiguous: " : "grouped_masked: ";
}

}  // namespace

std::string grouped_rejects(const Grouped& g) {
  if (std::string why = mm::ch13::grouped_rejects(chapter_problem(g)); !why.empty()) return kernel_name(g) + why;
  return {};
}

std::string grouped_layout_rejects(const Grouped& g, const std::int64_t* host_offsets, const int* host_counts) {
  std::string why;
  if (g.offsets)
    why = mm::ch13::grouped_layout_rejects(chapter_problem(g), std::vector<std::int64_t>(host_offsets, host_offsets + g.groups + 1));
  else
    why = mm::ch13::grouped_layout_rejects(chapter_problem(g), std::vector<int>(host_counts, host_counts + g.groups));
  return why.empty() ? why : kernel_name(g) + why;
}

mm::PreparedGemm prepare_grouped(const Grouped& g, const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c,
                                 int tile_rows) {
  if (g.swiglu && tile_rows != 64 && tile_rows != 128)
    throw std::invalid_argument(std::string(kernel_name(g)) + "tiles of 128 or 64 rows (no decode tile), not " +
                                std::to_string(tile_rows));
  if (tile_rows != mm::ch13::kDecodeTileRows && tile_rows != 64 && tile_rows != 128)
    throw std::invalid_argument(std::string(kernel_name(g)) + "tiles of 128, 64 or 16 rows, not " + std::to_string(tile_rows));
  // The chapter's preparation, compiled in its steps.cu (whose object the library links: lib/CMakeLists.txt).
  return mm::ch13::prepare_grouped_gemm(chapter_problem(g), a, b, c, 0, tile_rows,
                                        g.swiglu ? mm::ch13::GroupedVariant::swiglu : mm::ch13::GroupedVariant::gemm);
}

}  // namespace gl::detail
