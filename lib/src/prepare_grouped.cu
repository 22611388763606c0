// Grouped bf16 (mixture-of-experts): chapter 13's grouped_contiguous and grouped_masked, 128×256 or
// step 2's 64×256 tiles, or step 6's grouped_decode (64 weight rows × 16 token rows, swapped); and step 3's
// grouped_swiglu (the same kernel with the SiLU(gate)·up epilogue, 128×256 or 64×256 tiles), as the
// chapter's prepare_grouped_gemm takes it for GroupedVariant::swiglu. The chapter's rules (grouped_rejects)
// and its check of a host copy of the layout (grouped_layout_rejects) go through as they are, each line
// prefixed with the kernel's name.
#include "prepare.hpp"

#include <stdexcept>

#include "13_grouped_moe/grouped_contiguous.cuh"
#include "13_grouped_moe/grouped_decode.cuh"
#include "13_grouped_moe/grouped_swiglu.cuh"

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
  using mm::ch13::CollectiveEpilogueSwiGlu, mm::ch13::GroupedCfg, mm::ch13::GroupedCfg64;
  const mm::ch13::GroupedProblem p = chapter_problem(g);
  if (g.swiglu) {  // chapter 13's prepare_grouped_gemm for GroupedVariant::swiglu
    if (tile_rows == 64) return mm::ch13::prepare_grouped<GroupedCfg64, CollectiveEpilogueSwiGlu<GroupedCfg64>>(p, a, b, c);
    if (tile_rows == 128) return mm::ch13::prepare_grouped<GroupedCfg, CollectiveEpilogueSwiGlu<GroupedCfg>>(p, a, b, c);
    throw std::invalid_argument(std::string(kernel_name(g)) + "tiles of 128 or 64 rows (no decode tile), not " +
                                std::to_string(tile_rows));
  }
  if (tile_rows == mm::ch13::kDecodeTileRows) return mm::ch13::prepare_grouped_decode(p, a, b, c);
  if (tile_rows == 64) return mm::ch13::prepare_grouped<mm::ch13::GroupedCfg64>(p, a, b, c);
  if (tile_rows == 128) return mm::ch13::prepare_grouped<mm::ch13::GroupedCfg>(p, a, b, c);
  throw std::invalid_argument(std::string(kernel_name(g)) + "tiles of 128, 64 or 16 rows, not " + std::to_string(tile_rows));
}

}  // namespace gl::detail
