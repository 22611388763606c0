// Chapter 13: grouped_contiguous and grouped_masked against the fp64 reference, expert by expert.
#include <gtest/gtest.h>

#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cstring>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "13_grouped_moe/grouped_fp8.hpp"
#include "13_grouped_moe/moe_layer.hpp"
#include "13_grouped_moe/steps.hpp"
#include "gpu_test.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/fp8_scales.hpp"
#include "harness/random.hpp"
#include "harness/reference.hpp"

using namespace mm;
using namespace mm::ch13;

namespace {

constexpr int kGuardRows = 130;  // rows of C past the buffer the kernel is given: must stay poisoned

/// Expert e's `rows` rows of a host copy of C (`first` its first row; `swiglu`: C holds SiLU(gate)·up, N / 2
/// columns) against the fp64 reference of its rows of A times its weight, e's N×K rows of the stacked B.
CheckResult check_expert(const bf16* A, const bf16* B, const std::vector<bf16>& c, int e, std::int64_t first,
                         std::int64_t rows, int n, int k, bool swiglu) {
  const int c_cols = swiglu ? n / 2 : n;
  GemmProblem p;
  p.m = rows, p.n = n, p.k = k, p.a = Order::row, p.b = Order::col, p.c = Order::row;
  const Reference gemm_ref = reference_gemm_device(p, A + first * k, B + std::int64_t(e) * n * k);
  const std::vector<bf16> out(c.begin() + first * c_cols, c.begin() + (first + rows) * c_cols);
  return check_gemm(swiglu ? swiglu_reference(gemm_ref) : gemm_ref, out, Order::row, gemm_tolerance<bf16>(DType::bf16));
}

/// Where each expert's rows are in a test's buffers: masked (a capacity per expert, the largest
/// count rounded up to 128) or contiguous (step 1's layout).
struct TestLayout {
  std::vector<std::int64_t> first;  ///< each expert's first row
  std::int64_t buffer_rows = 0;     ///< rows of A and C
  std::int64_t capacity = 0;        ///< masked: rows per expert
  ContiguousLayout layout;          ///< contiguous: the layout
  /// The grouped problem of E experts over these buffers: contiguous by `offsets`, or masked by `counts`
  /// (device memory; the other null).
  GroupedProblem problem(int n, int k, const std::int64_t* offsets, const int* counts) const {
    GroupedProblem g;
    g.groups = int(first.size()), g.n = n, g.k = k, g.rows = buffer_rows, g.offsets = offsets, g.counts = counts;
    if (counts) g.capacity = capacity;
    return g;
  }
};

TestLayout test_layout(const std::vector<std::int64_t>& rows, bool masked) {
  TestLayout t;
  const int E = int(rows.size());
  if (masked) {
    t.capacity = std::max<std::int64_t>(kGroupAlignment, (*std::max_element(rows.begin(), rows.end()) + 127) / 128 * 128);
    for (int e = 0; e < E; ++e) t.first.push_back(e * t.capacity);
    t.buffer_rows = E * t.capacity;
  } else {
    t.layout = contiguous_layout(rows);
    t.first = t.layout.first;
    t.buffer_rows = t.layout.rows;
  }
  return t;
}

/// Each expert's rows of C (poisoned before the launch) against the fp64 reference of its rows of A
/// times its weight; the pad rows between experts are not checked, the guard rows past the buffer
/// must be untouched.
void expect_grouped_correct(const std::vector<std::int64_t>& rows, int n, int k, bool masked, int max_blocks, int tile_rows,
                            GroupedVariant variant) {
  const bool swiglu = variant == GroupedVariant::swiglu;
  const int c_cols = swiglu ? n / 2 : n;  // step 3 writes SiLU(gate)·up: half the columns
  const int E = int(rows.size());
  const TestLayout t = test_layout(rows, masked);
  const std::vector<std::int64_t>& first = t.first;
  const std::int64_t buffer_rows = t.buffer_rows;
  const ContiguousLayout& layout = t.layout;
  DeviceBuffer<bf16> A(std::size_t(buffer_rows) * k), B(std::size_t(E) * n * k), C(std::size_t(buffer_rows + kGuardRows) * c_cols);
  fill_random(A, 11);
  fill_random(B, 12);
  MM_CUDA_CHECK(cudaMemset(C.data(), 0xff, C.size() * sizeof(bf16)));
  const std::vector<int> counts(rows.begin(), rows.end());
  const DeviceBuffer<std::int64_t> offsets(masked ? std::vector<std::int64_t>{0} : layout.offsets);
  const DeviceBuffer<int> d_counts(counts);
  const GroupedProblem g = t.problem(n, k, masked ? nullptr : offsets.data(), masked ? d_counts.data() : nullptr);
  ASSERT_EQ(grouped_rejects(g), "");
  ASSERT_EQ(masked ? grouped_layout_rejects(g, counts) : grouped_layout_rejects(g, layout.offsets), "");
  const PreparedGemm gemm = prepare_grouped_gemm(g, A.data(), B.data(), C.data(), max_blocks, tile_rows, variant);
  gemm.run(nullptr);
  MM_CUDA_CHECK(cudaGetLastError());
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<bf16> c = C.download();
  for (int e = 0; e < E; ++e) {
    if (rows[e] == 0) continue;
    const CheckResult r = check_expert(A.data(), B.data(), c, e, first[e], rows[e], n, k, swiglu);
    EXPECT_TRUE(r.ok) << "expert " << e << " of " << E << " (" << rows[e] << " rows, N " << n << ", K " << k
                      << (masked ? ", masked" : ", contiguous") << ", " << tile_rows << "-row tiles"
                      << (variant == GroupedVariant::skip_padding ? " skipping padding, " : swiglu ? " SiLU(gate)·up, " : ", ")
                      << max_blocks
                      << " blocks at most): " << r.summary;
  }
  for (std::int64_t i = buffer_rows * c_cols; i < std::int64_t(c.size()); ++i) {
    const float v = __bfloat162float(c[i]);
    ASSERT_TRUE(v != v) << "an element past the buffer was written, row " << i / c_cols;
  }
  if (tile_rows == kDecodeTileRows) {  // step 6 stores only the experts' rows: every other row stays poisoned
    std::vector<char> real(std::size_t(buffer_rows), 0);
    for (int e = 0; e < E; ++e)
      for (std::int64_t r = first[e]; r < first[e] + rows[e]; ++r) real[std::size_t(r)] = 1;
    for (std::int64_t r = 0; r < buffer_rows; ++r) {
      if (real[std::size_t(r)]) continue;
      for (int j = 0; j < c_cols; ++j) {
        const float v = __bfloat162float(c[std::size_t(r * c_cols + j)]);
        ASSERT_TRUE(v != v) << "grouped_decode wrote row " << r << " (padding, no expert's), column " << j;
      }
    }
  }
}

struct Case {
  std::string name;
  std::vector<std::int64_t> rows;
  int n, k;
};

/// gtest prints a case by its name (not its bytes).
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> cases() {
  std::vector<std::int64_t> many(37);
  for (int e = 0; e < 37; ++e) many[e] = (e * 7919) % 23;  // many small groups, some empty
  return {
      {"OneExpertOneRow", {1}, 256, 64},
      {"OneExpertIsAPlainGemm", {300}, 512, 136},
      {"EmptyExpertsAroundOne", {0, 0, 257, 0}, 256, 64},
      {"TileEdges", {1, 127, 128, 129, 0, 255, 256}, 256, 72},
      {"AllEmptyButTheLast", {0, 0, 0, 5}, 768, 200},
      {"ManySmallGroups", many, 256, 8},
      {"NoRowsAtAll", {0, 0}, 256, 64},
      {"DecodeFewRowsPerExpert", {1, 1, 0, 1, 17, 0, 3, 33, 16}, 768, 520},  // step 6: 1-33 rows, K % 64 = 8
  };
}

class Grouped : public ::testing::TestWithParam<std::tuple<Case, bool>> {};

TEST_P(Grouped, EveryExpertMatchesTheReference) {
  MM_REQUIRE_ARCH(arch::sm90a);
  const auto& [c, masked] = GetParam();
  for (int max_blocks : {0, 3}) {
    for (int tile_rows : {128, 64}) {
      expect_grouped_correct(c.rows, c.n, c.k, masked, max_blocks, tile_rows, GroupedVariant::gemm);
      expect_grouped_correct(c.rows, c.n, c.k, masked, max_blocks, tile_rows, GroupedVariant::swiglu);  // step 3
    }
    expect_grouped_correct(c.rows, c.n, c.k, masked, max_blocks, 128, GroupedVariant::skip_padding);  // the appendix's
    expect_grouped_correct(c.rows, c.n, c.k, masked, max_blocks, kDecodeTileRows, GroupedVariant::gemm);  // step 6
  }
}

INSTANTIATE_TEST_SUITE_P(ch13, Grouped, ::testing::Combine(::testing::ValuesIn(cases()), ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param).name + (std::get<1>(info.param) ? "_masked" : "_contiguous");
                         });

TEST(Router, EachTokenPicksDistinctExpertsAndTheCountsAddUp) {
  MM_REQUIRE_GPU();
  for (Routing routing : {Routing::balanced, Routing::skewed}) {
    const int tokens = 4096, E = 64, k = 8;
    const Routed r = route(tokens, E, k, routing, 42);
    ASSERT_EQ(int(r.rows.size()), E);
    EXPECT_EQ(std::accumulate(r.rows.begin(), r.rows.end(), std::int64_t(0)), std::int64_t(tokens) * k);
    std::vector<std::int64_t> counted(E, 0);
    for (int t = 0; t < tokens; ++t) {
      std::set<int> seen;
      float sum = 0;
      for (int j = 0; j < k; ++j) {
        const int id = r.ids[t * k + j];
        ASSERT_GE(id, 0);
        ASSERT_LT(id, E);
        EXPECT_TRUE(seen.insert(id).second) << "token " << t << " picked expert " << id << " twice";
        ++counted[id];
        sum += r.weights[t * k + j];
      }
      EXPECT_NEAR(sum, 1.0f, 1e-5f);
    }
    EXPECT_EQ(counted, r.rows);
    const double mean = double(tokens) * k / E;
    if (routing == Routing::skewed) {
      for (int e = E - E / 8; e < E; ++e) EXPECT_EQ(r.rows[e], 0) << "the last E/8 experts get nothing";
      EXPECT_EQ(std::max_element(r.rows.begin(), r.rows.end()) - r.rows.begin(), 0) << "expert 0 is the busiest";
      EXPECT_GT(double(r.rows[0]), 3.0 * mean);
      EXPECT_LT(double(r.rows[0]), 6.0 * mean);
    } else {
      for (int e = 0; e < E; ++e) EXPECT_LT(std::abs(double(r.rows[e]) - mean), 0.2 * mean) << "expert " << e;
    }
  }
}

TEST(SwiGlu, ReferencePairsEachGateColumnWithItsUpColumn) {
  // One row of a gate+up GEMM with N = 512: column c of tile t is gate (c < 128) or up (c >= 128) of
  // output column 128·t + c % 128.
  Reference gate_up;
  gate_up.m = 1, gate_up.n = 512;
  gate_up.value.assign(512, 0.0);
  gate_up.abs_sum.assign(512, 1.0);
  gate_up.value[3] = 2.0, gate_up.value[128 + 3] = 5.0;          // output 3: gate 2, up 5
  gate_up.value[256 + 7] = -1.0, gate_up.value[384 + 7] = 4.0;   // output 135: gate -1, up 4
  const Reference h = swiglu_reference(gate_up);
  ASSERT_EQ(h.m, 1);
  ASSERT_EQ(h.n, 256);
  EXPECT_NEAR(h.value[3], 2.0 / (1.0 + std::exp(-2.0)) * 5.0, 1e-12);
  EXPECT_NEAR(h.value[135], -1.0 / (1.0 + std::exp(1.0)) * 4.0, 1e-12);
  EXPECT_EQ(h.value[4], 0.0);
  EXPECT_GT(h.abs_sum[3], std::fabs(h.value[3]));  // the bound covers the result's own rounding
}

TEST(SwiGlu, TheUnfusedTwinMatchesTheReference) {
  MM_REQUIRE_ARCH(arch::sm90a);
  const std::vector<std::int64_t> rows = {5, 0, 130, 1};
  const int n = 512, k = 72, E = int(rows.size());
  const ContiguousLayout layout = contiguous_layout(rows);
  DeviceBuffer<bf16> A(std::size_t(layout.rows) * k), B(std::size_t(E) * n * k), C(std::size_t(layout.rows) * n),
      H(std::size_t(layout.rows) * n / 2);
  fill_random(A, 21);
  fill_random(B, 22);
  MM_CUDA_CHECK(cudaMemset(H.data(), 0xff, H.size() * sizeof(bf16)));
  DeviceBuffer<std::int64_t> offsets(layout.offsets), first(layout.first), count(rows);
  GroupedProblem g;
  g.groups = E, g.n = n, g.k = k, g.rows = layout.rows, g.offsets = offsets.data();
  prepare_grouped_gemm(g, A.data(), B.data(), C.data()).run(nullptr);
  silu_mul_grouped(C.data(), H.data(), n, first.data(), count.data(), E, nullptr);
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<bf16> h = H.download();
  for (int e = 0; e < E; ++e) {
    if (rows[e] == 0) continue;
    const CheckResult r = check_expert(A.data(), B.data(), h, e, layout.first[e], rows[e], n, k, true);
    EXPECT_TRUE(r.ok) << "expert " << e << ": " << r.summary;
  }
}

TEST(GroupedRejects, ProblemsTheKernelCannotTake) {
  const std::int64_t offsets[2] = {0, 1};
  const int counts[1] = {1};
  GroupedProblem g;
  g.groups = 1, g.n = 256, g.k = 64, g.rows = 128, g.offsets = offsets;
  EXPECT_EQ(grouped_rejects(g), "");
  GroupedProblem bad = g;
  bad.n = 300;
  EXPECT_NE(grouped_rejects(bad).find("N % 256"), std::string::npos);
  bad = g, bad.k = 20;
  EXPECT_NE(grouped_rejects(bad).find("K % 8"), std::string::npos);
  bad = g, bad.groups = 0;
  EXPECT_NE(grouped_rejects(bad), "");
  bad = g, bad.counts = counts;
  EXPECT_NE(grouped_rejects(bad).find("either"), std::string::npos);
  bad = g, bad.offsets = nullptr, bad.counts = counts, bad.capacity = 100;
  EXPECT_NE(grouped_rejects(bad).find("capacity"), std::string::npos);
  EXPECT_THROW(contiguous_layout({3, -1}), std::invalid_argument);
  EXPECT_THROW(prepare_grouped_gemm(g, nullptr, nullptr, nullptr, 0, 96), std::invalid_argument);
  EXPECT_THROW(prepare_grouped_gemm(g, nullptr, nullptr, nullptr, 0, 64, GroupedVariant::skip_padding), std::invalid_argument);  // 128 rows only
  EXPECT_THROW(prepare_grouped_gemm(g, nullptr, nullptr, nullptr, 0, kDecodeTileRows, GroupedVariant::swiglu), std::invalid_argument);  // the plain GEMM only
  EXPECT_THROW(route(10, 8, 9, Routing::balanced, 1), std::invalid_argument);
  EXPECT_THROW(route(10, 8, 8, Routing::skewed, 1), std::invalid_argument);  // skewed leaves 7 experts
}

TEST(GroupedRejects, LayoutsTheHostCanSeeAreCheckedBeforeTheLaunch) {
  const std::int64_t dummy_offsets[1] = {0};
  const int dummy_counts[1] = {0};
  GroupedProblem g;
  g.groups = 3, g.n = 256, g.k = 64, g.rows = 512, g.offsets = dummy_offsets;
  const ContiguousLayout l = contiguous_layout({1, 0, 130});
  EXPECT_EQ(grouped_layout_rejects(g, l.offsets), "");
  EXPECT_NE(grouped_layout_rejects(g, std::vector<std::int64_t>{0, 1, 0, 130}), "") << "an end before its aligned start";
  EXPECT_NE(grouped_layout_rejects(g, std::vector<std::int64_t>{1, 1, 128, 258}), "") << "offsets[0] != 0";
  EXPECT_NE(grouped_layout_rejects(g, std::vector<std::int64_t>{0, 1, 128}), "") << "E offsets, not E + 1";
  g.rows = 200;  // expert 2 ends at row 258
  EXPECT_NE(grouped_layout_rejects(g, l.offsets).find("past A and C"), std::string::npos) << l.offsets.back();
  GroupedProblem m = g;
  m.offsets = nullptr, m.counts = dummy_counts, m.capacity = 128, m.rows = 3 * 128;
  EXPECT_EQ(grouped_layout_rejects(m, std::vector<int>{0, 128, 5}), "");
  EXPECT_NE(grouped_layout_rejects(m, std::vector<int>{0, 129, 5}), "") << "a count above the capacity";
  EXPECT_NE(grouped_layout_rejects(m, std::vector<int>{-1, 1, 5}), "") << "a negative count";
  m.rows = 2 * 128;
  EXPECT_NE(grouped_layout_rejects(m, std::vector<int>{0, 1, 5}).find("past A and C"), std::string::npos);
}

TEST(GroupedDecodeRule, TheDecodeTileWhereStep2sTilesCannotFillTheGpu) {
  const int sms = 132;
  const std::vector<std::int64_t> one_token(8, 1), qwen3_64(128, 4), mixtral_64(8, 16), mixtral_256(8, 64);
  // Without a host copy (the model's call): the buffer bounds step 2's tiles.
  EXPECT_EQ(choose_grouped_tile(128, 1536, 2048, 1024, false, nullptr, sms), kDecodeTileRows);  // Qwen3 gate+up, one token: <= 96 tiles
  EXPECT_EQ(choose_grouped_tile(128, 2048, 768, 1024, false, nullptr, sms), 64);   // Qwen3 down: K = 768 (0.96x measured)
  EXPECT_EQ(choose_grouped_tile(128, 1536, 2048, 16384, false, nullptr, sms), 64);  // Qwen3, 64 tokens: 1536 tiles
  EXPECT_EQ(choose_grouped_tile(128, 1536, 2048, 49024, false, nullptr, sms), 128);  // prefill: more than 128 rows an expert
  EXPECT_EQ(choose_grouped_tile(8, 4096, 14336, 256, false, nullptr, sms), kDecodeTileRows);  // Mixtral down, one token: 1.74x
  EXPECT_EQ(choose_grouped_tile(8, 28672, 4096, 256, false, nullptr, sms), 64);    // Mixtral gate+up: 448 tiles
  EXPECT_EQ(choose_grouped_tile(8, 4096, 14336, 8 * 128, true, nullptr, sms), 64);  // masked: E·capacity bounds it
  // With a host copy: the experts' own rows.
  EXPECT_EQ(choose_grouped_tile(8, 1536, 2048, 1024, false, one_token.data(), sms), kDecodeTileRows);  // 48 tiles
  EXPECT_EQ(choose_grouped_tile(128, 1536, 2048, 16384, false, qwen3_64.data(), sms), 64);  // 768 tiles
  EXPECT_EQ(choose_grouped_tile(8, 256, 4096, 1024, false, mixtral_64.data(), sms), kDecodeTileRows);  // 8 tiles, 16 rows each
  EXPECT_EQ(choose_grouped_tile(8, 256, 4096, 1024, false, mixtral_256.data(), sms), 128);  // 64 rows each: more than 32
  EXPECT_EQ(choose_grouped_tile(8, 256, 512, 1024, false, one_token.data(), sms), 64);  // K below 1024
}

TEST(GroupedLayout, EachExpertStartsOnATileEdge) {
  const ContiguousLayout l = contiguous_layout({1, 0, 128, 129, 3});
  EXPECT_EQ(l.first, (std::vector<std::int64_t>{0, 128, 128, 256, 512}));
  EXPECT_EQ(l.offsets, (std::vector<std::int64_t>{0, 1, 128, 256, 385, 515}));
  EXPECT_EQ(l.rows, 640);
}

// ---- The scheduler's walk, on the CPU ----

/// What a test compares of a unit: (group, tile index, tile.m, tile.n, row_begin, row_end).
using WalkUnit = std::tuple<int, std::int64_t, int, int, std::int64_t, std::int64_t>;

/// Block `block`'s units as PersistentGroupTileScheduler hands them out.
std::vector<WalkUnit> scheduler_walk(const PersistentGroupTileScheduler::Params& p, int block, int blocks) {
  std::vector<WalkUnit> units;
  PersistentGroupTileScheduler s(p, block, blocks);
  for (GroupWorkTileInfo w = s.get_current_work(); w.is_valid(); w = s.advance_to_next_work())
    units.emplace_back(w.group, w.tile_index, w.tile.m, w.tile.n, w.row_begin, w.row_end);
  return units;
}

/// The same units from a plain walk: each tile looked up from expert 0, one expert at a time, its rows
/// with `/` and the scheduler's clamps written out again (a negative count or end: empty; a masked count
/// above the capacity: the capacity).
std::vector<WalkUnit> reference_walk(const PersistentGroupTileScheduler::Params& p, int block, int blocks) {
  std::vector<std::int64_t> first(p.groups), rows(p.groups);
  for (int g = 0; g < p.groups; ++g) {
    const std::int64_t a = p.alignment;
    first[g] = p.offsets ? (p.offsets[g] + a - 1) / a * a : g * p.capacity;
    const std::int64_t r = p.offsets ? p.offsets[g + 1] - first[g] : p.counts[g];
    rows[g] = r < 0 ? 0 : (!p.offsets && r > p.capacity ? p.capacity : r);
  }
  std::vector<WalkUnit> units;
  for (std::int64_t t = block;; t += blocks) {
    std::int64_t group_first = 0;
    int g = 0;
    for (; g < p.groups; ++g) {
      const std::int64_t tiles = (rows[g] + p.bm - 1) / p.bm * p.tiles_n;
      if (t < group_first + tiles) break;
      group_first += tiles;
    }
    if (g == p.groups) return units;
    const int tiles_m = int((rows[g] + p.bm - 1) / p.bm);
    const TileCoord c = GroupedTileScheduler{tiles_m, p.tiles_n, std::min(p.group_m, tiles_m)}.tile(t - group_first);
    units.emplace_back(g, t, c.m, c.n, first[g] + std::int64_t(c.m) * p.bm, first[g] + rows[g]);
  }
}

/// Every block of grids of 1 to 133 blocks (a whole H200 wave, one past it, and strides around the walk's
/// batch of 8) walks the same units as the reference.
void expect_walk_matches_reference(const PersistentGroupTileScheduler::Params& p, const std::string& what) {
  for (const int blocks : {1, 2, 3, 7, 8, 9, 31, 64, 127, 131, 132, 133})
    for (int b = 0; b < blocks; ++b) {
      const std::vector<WalkUnit> got = scheduler_walk(p, b, blocks), want = reference_walk(p, b, blocks);
      if (got == want) continue;
      std::size_t i = 0;
      while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
      ADD_FAILURE() << what << ", bm " << p.bm << ", alignment " << p.alignment << ", tiles_n " << p.tiles_n
                    << ", block " << b << " of " << blocks << ": unit " << i << " of " << want.size()
                    << (i < got.size() ? " is group " + std::to_string(std::get<0>(got[i])) + " tile " +
                                             std::to_string(std::get<1>(got[i]))
                                       : std::string(" is missing"))
                    << (i < want.size() ? ", the reference's group " + std::to_string(std::get<0>(want[i])) + " tile " +
                                              std::to_string(std::get<1>(want[i]))
                                        : std::string(", the reference has none"));
      return;  // one line a layout
    }
}

/// Contiguous offsets for `rows` (E of them), each group starting on a multiple of `alignment`.
std::vector<std::int64_t> aligned_offsets(const std::vector<std::int64_t>& rows, std::int64_t alignment) {
  std::vector<std::int64_t> offsets{0};
  for (const std::int64_t r : rows) offsets.push_back((offsets.back() + alignment - 1) / alignment * alignment + r);
  return offsets;
}

// The walk's batch (every load first, then masks and shifts, or `/` where bm or the alignment is not a
// power of two) against a walk of one expert at a time with `/`: decode layouts (128 experts, 8 with rows),
// prefill-like ones, batches that end past the last expert, and the counts a bad router could write.
TEST(GroupedWalk, EveryBlockWalksTheSameUnitsAsAPlainWalk) {
  std::vector<std::vector<std::int64_t>> layouts;
  std::vector<std::int64_t> one_token(128, 0);  // Qwen3 at one token: 8 experts of 128 with a row each
  for (const int e : {0, 5, 17, 40, 63, 64, 101, 127}) one_token[e] = 1;
  layouts.push_back(one_token);
  std::vector<std::int64_t> few(128, 0);  // a few rows on a few experts, none on the last batch's
  for (const int e : {3, 9, 10, 70, 118}) few[e] = 1 + 37 * (e % 5);
  layouts.push_back(few);
  std::mt19937 gen(13);
  std::vector<std::int64_t> random_rows(125);  // 125 experts: the last batch ends past the last expert
  for (auto& r : random_rows) r = gen() % 3 == 0 ? std::int64_t(gen() % 300) : 0;
  layouts.push_back(random_rows);
  layouts.push_back({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});  // no rows at all
  layouts.push_back({257, 1, 128, 0, 129, 16, 17, 63, 64, 65});  // tile edges for bm 16, 64, 128

  for (const std::vector<std::int64_t>& rows : layouts) {
    const int groups = int(rows.size());
    const std::vector<int> counts(rows.begin(), rows.end());
    for (const int bm : {16, 64, 128, 48})  // 48: the generic path (`/`)
      for (const int tiles_n : {1, 3})
        for (const int group_m : {8, 2}) {
          for (const int alignment : {1, 128, 96}) {  // 96: the generic path
            const std::vector<std::int64_t> offsets = aligned_offsets(rows, alignment);
            expect_walk_matches_reference(PersistentGroupTileScheduler::contiguous(groups, offsets.data(), bm, tiles_n,
                                                                                   group_m, 1, alignment),
                                          "contiguous, " + std::to_string(groups) + " experts");
          }
          expect_walk_matches_reference(PersistentGroupTileScheduler::masked(groups, counts.data(), 300, bm, tiles_n, group_m),
                                        "masked, " + std::to_string(groups) + " experts");
        }
  }
}

// Counts the host never saw (the device's) are clamped the same way by the batch as by rows(): a negative
// count, a masked count above the capacity, offsets that go back (a group's end before its aligned start),
// and a negative offset, whose aligned start rounds toward zero as `/` does (floor would give its group a
// tile more).
TEST(GroupedWalk, BadDeviceCountsAreClampedAsRowsReadsThem) {
  std::vector<int> counts(20, 0);
  counts[1] = -5, counts[2] = 70, counts[3] = 1000, counts[9] = INT32_MIN, counts[10] = INT32_MAX, counts[17] = 64;
  std::vector<std::int64_t> offsets(21, 0);
  offsets[2] = 300, offsets[3] = 100, offsets[4] = -300, offsets[5] = 5, offsets[6] = 5, offsets[7] = 700;
  for (int g = 8; g <= 20; ++g) offsets[g] = 700 + 90 * (g - 7);
  for (const int bm : {16, 64, 128, 48})
    for (const int tiles_n : {1, 2}) {
      expect_walk_matches_reference(PersistentGroupTileScheduler::masked(20, counts.data(), 64, bm, tiles_n), "bad counts");
      for (const int alignment : {1, 128, 96})
        expect_walk_matches_reference(PersistentGroupTileScheduler::contiguous(20, offsets.data(), bm, tiles_n, 8, 1, alignment),
                                      "bad offsets");
    }
  // The negative offset's rows, as rows() reads them: offsets[4] = -300 starts group 4 at -128 (alignment 128).
  const auto p = PersistentGroupTileScheduler::contiguous(20, offsets.data(), 128, 1, 8, 1, 128);
  const PersistentGroupTileScheduler s(p, 0, 1);
  EXPECT_EQ(s.first_row(4), -128);
  EXPECT_EQ(s.rows(4), 133);
  EXPECT_EQ(s.rows(3), 0);
}

// ---- Step 4: the whole MoE pass ----

/// A layer's shape and the tokens of one test of the whole pass.
struct MoeCase {
  std::string name;
  MoeShape shape;
  int tokens;
};

/// Runs `run` (one way of the layer) on x routed by `logits` into an output with guard rows after it,
/// all poisoned; then every token's output against the fp64 layer, the routing against the host's top-k,
/// and the guard rows untouched.
/// The layer's output y (T rows, then guard rows, on the device) after a run on x routed by `logits`:
/// every token against the fp64 layer, the routing against the host's top-k, the guard rows untouched
/// (poisoned before the run).
template <class Layer>
void check_layer(const MoeShape& s, int tokens, const DeviceBuffer<float>& logits, const MoeWeights& w, const DeviceBuffer<bf16>& x,
                 const DeviceBuffer<bf16>& y, const Layer& layer, const std::string& what) {
  std::vector<int> all(tokens);
  std::iota(all.begin(), all.end(), 0);
  const std::vector<int> ids = layer.scratch().ids.download();
  const std::vector<float> weights = layer.scratch().weights.download();
  ASSERT_EQ(routing_mismatch(s, logits.download(), ids, weights, all), "") << what;
  const std::vector<int> counts = layer.scratch().counts.download();
  EXPECT_EQ(std::accumulate(counts.begin(), counts.begin() + s.experts, std::int64_t(0)), std::int64_t(tokens) * s.topk) << what;
  const std::vector<bf16> out = y.download();
  const Reference ref = moe_reference(s, x.data(), w, ids, weights, all);
  const CheckResult c = check_gemm(ref, std::vector<bf16>(out.begin(), out.begin() + std::size_t(tokens) * s.hidden), Order::row,
                                   gemm_tolerance<bf16>(DType::bf16));
  EXPECT_TRUE(c.ok) << what << ": " << c.summary;
  for (std::size_t i = std::size_t(tokens) * s.hidden; i < out.size(); ++i) {
    std::uint16_t bits;
    std::memcpy(&bits, &out[i], 2);
    ASSERT_EQ(bits, 0xffff) << what << ": written past the output, element " << i;
  }
}

constexpr int kGuardTokens = 3;  // rows of the layer's output past its T rows: must stay poisoned

/// Runs `layer` on random x routed by `logits` into a poisoned output with guard rows, then check_layer.
template <class Layer>
void expect_layer_correct(const MoeShape& s, int tokens, const DeviceBuffer<float>& logits, const MoeWeights& w, Layer& layer,
                          const std::string& what) {
  DeviceBuffer<bf16> x(std::size_t(tokens) * s.hidden), y(std::size_t(tokens + kGuardTokens) * s.hidden);
  fill_random(x, 31);
  MM_CUDA_CHECK(cudaMemset(y.data(), 0xff, y.size() * sizeof(bf16)));
  layer.run(logits.data(), x.data(), y.data(), nullptr);
  MM_CUDA_CHECK(cudaGetLastError());
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  check_layer(s, tokens, logits, w, x, y, layer, what);
}

class MoePass : public ::testing::TestWithParam<MoeCase> {};

std::vector<MoeCase> moe_cases() {
  return {
      {"E8_top2_T1", {8, 2, 256, 128}, 1},
      {"E8_top2_T2", {8, 2, 256, 128}, 2},
      {"E8_top2_T129", {8, 2, 256, 128}, 129},
      {"E1_top1_T300", {1, 1, 256, 128}, 300},         // E = 1: a plain SwiGLU MLP
      {"E64_top8_T300", {64, 8, 512, 256}, 300},       // many small experts, some empty
      {"E256_top8_T67", {256, 8, 256, 128}, 67},       // the most experts the top-k holds
  };
}

/// The weights and logits of a MoePass case, and each routing it runs (skewed where its top-k fits).
struct MoeInputs {
  explicit MoeInputs(const MoeCase& c)
      : w_gate_up(std::size_t(c.shape.experts) * 2 * c.shape.width * c.shape.hidden),
        w_down(std::size_t(c.shape.experts) * c.shape.hidden * c.shape.width) {
    fill_random(w_gate_up, 32);
    fill_random(w_down, 33);
  }
  template <class F>
  void each_routing(const MoeCase& c, F&& f) const {
    for (Routing routing : {Routing::balanced, Routing::skewed}) {
      if (routing == Routing::skewed && c.shape.topk > c.shape.experts - c.shape.experts / 8) continue;
      DeviceBuffer<float> logits(std::size_t(c.tokens) * c.shape.experts);
      make_router_logits(logits.data(), c.tokens, c.shape.experts, routing, 34, nullptr);
      f(logits, routing_name(routing));
    }
  }
  MoeWeights weights() const { return {w_gate_up.data(), w_down.data()}; }
  DeviceBuffer<bf16> w_gate_up, w_down;
};

// This chapter's layer (the racecheck run of chapter 13 takes this test: the cuBLAS twin's own kernels
// report hazards of their own and take minutes under the tool).
TEST_P(MoePass, EveryTokenMatchesTheFp64Layer) {
  MM_REQUIRE_ARCH(arch::sm90a);
  const MoeCase& c = GetParam();
  ASSERT_EQ(moe_rejects(c.shape, c.tokens), "");
  const MoeInputs in(c);
  in.each_routing(c, [&](const DeviceBuffer<float>& logits, const std::string& r) {
    for (int tile_rows : {128, 64}) {
      MoeLayer layer(c.shape, c.tokens, in.weights(), tile_rows);
      expect_layer_correct(c.shape, c.tokens, logits, in.weights(), layer, r + " moe_layer " + std::to_string(tile_rows));
    }
  });
}

// The baseline computes the same layer: the page's comparison is of like with like.
TEST_P(MoePass, TheCublasTwinMatchesTheFp64Layer) {
  MM_REQUIRE_ARCH(arch::sm90a);
  const MoeCase& c = GetParam();
  const MoeInputs in(c);
  cublasHandle_t handle;
  MM_CUBLAS_CHECK(cublasCreate(&handle));
  in.each_routing(c, [&](const DeviceBuffer<float>& logits, const std::string& r) {
    for (CublasWay way : {CublasWay::loop, CublasWay::grouped}) {
      CublasMoeLayer layer(handle, c.shape, c.tokens, in.weights(), way, way);
      expect_layer_correct(c.shape, c.tokens, logits, in.weights(), layer, r + " cublas " + cublas_way_name(way));
    }
  });
  MM_CUBLAS_CHECK(cublasDestroy(handle));
}

INSTANTIATE_TEST_SUITE_P(ch13, MoePass, ::testing::ValuesIn(moe_cases()), [](const auto& info) { return info.param.name; });

TEST(MoePassRouting, EveryTokenOnOneExpertAndTiesToTheLowerExpert) {
  MM_REQUIRE_ARCH(arch::sm90a);
  const MoeShape s{16, 2, 256, 128};
  const int tokens = 200;
  // Expert 5 first for every token, then a tie between all the rest (the lower, expert 0, wins); token 7's
  // logits all NaN but one (NaN counts as -inf).
  std::vector<float> host(std::size_t(tokens) * s.experts, 0.0f);
  for (int t = 0; t < tokens; ++t) host[std::size_t(t) * s.experts + 5] = 3.0f;
  for (int e = 0; e < s.experts; ++e) host[7 * s.experts + e] = std::nanf("");
  host[7 * s.experts + 9] = 1.0f;
  DeviceBuffer<float> logits(host);
  DeviceBuffer<bf16> w_gate_up(std::size_t(s.experts) * 2 * s.width * s.hidden), w_down(std::size_t(s.experts) * s.hidden * s.width);
  fill_random(w_gate_up, 35);
  fill_random(w_down, 36);
  const MoeWeights w{w_gate_up.data(), w_down.data()};
  MoeLayer layer(s, tokens, w);
  expect_layer_correct(s, tokens, logits, w, layer, "one expert");
  const std::vector<int> ids = layer.scratch().ids.download();
  EXPECT_EQ(ids[0], 5);
  EXPECT_EQ(ids[1], 0);
  EXPECT_EQ(ids[7 * 2], 9);
  EXPECT_EQ(ids[7 * 2 + 1], 0);  // then the lowest of the -inf
  const std::vector<int> counts = layer.scratch().counts.download();
  EXPECT_EQ(counts[5], tokens - 1);
}

TEST(MoePassRejects, ShapesTheLayerCannotTake) {
  const MoeShape ok{8, 2, 256, 128};
  EXPECT_EQ(moe_rejects(ok, 1), "");
  EXPECT_NE(moe_rejects({300, 2, 256, 128}, 1).find("experts"), std::string::npos);
  EXPECT_NE(moe_rejects({8, 9, 256, 128}, 1).find("top-k"), std::string::npos);
  EXPECT_NE(moe_rejects({4, 5, 256, 128}, 1).find("top-k"), std::string::npos);
  EXPECT_NE(moe_rejects({8, 2, 384, 128}, 1).find("H % 256"), std::string::npos);
  EXPECT_NE(moe_rejects({8, 2, 256, 192}, 1).find("I % 128"), std::string::npos);
  EXPECT_NE(moe_rejects(ok, 0).find("token"), std::string::npos);
  EXPECT_THROW(MoeLayer({8, 2, 256, 100}, 4, MoeWeights{}), std::invalid_argument);
}

// ---- Step 5: fp8 block-scaled experts ----

/// grouped_fp8 on random e4m3 codes and random block scales (each (0.5 to 2)/448, so that a wrong
/// block's scale fails), C poisoned with guard rows after it; each expert's rows against the fp64
/// product of its dequantized rows of A and weight (chapter 12's reference, on the expert's own
/// operands and scales copied out), and the guard rows untouched.
void expect_grouped_fp8_correct(const std::vector<std::int64_t>& rows, int n, int k, bool masked, int max_blocks,
                                int tile_rows) {
  using e4m3 = __nv_fp8_e4m3;
  const int E = int(rows.size());
  const TestLayout t = test_layout(rows, masked);
  const std::vector<std::int64_t>& first = t.first;
  const std::int64_t buffer_rows = t.buffer_rows;
  const ContiguousLayout& layout = t.layout;
  const std::int64_t kb = scale_blocks_k(k), kb4 = scale_blocks_k_padded(k), nb = n / 128;
  DeviceBuffer<e4m3> A(std::size_t(buffer_rows) * k), B(std::size_t(E) * n * k);
  fill_random(A, 41);
  fill_random(B, 42);
  GemmProblem all;  // one GEMM of all rows by all experts' stacked weights: its scales are the grouped kernel's
  all.m = buffer_rows, all.n = std::int64_t(E) * n, all.k = k, all.a = Order::row, all.b = Order::col, all.c = Order::row;
  const BlockScales scales = random_block_scales(all, 43);
  const std::vector<float>&sa = scales.a, &sb = scales.b;
  DeviceBuffer<float> d_sa(sa), d_sb(sb);
  DeviceBuffer<bf16> C(std::size_t(buffer_rows + kGuardRows) * n);
  MM_CUDA_CHECK(cudaMemset(C.data(), 0xff, C.size() * sizeof(bf16)));
  const std::vector<int> counts(rows.begin(), rows.end());
  const DeviceBuffer<std::int64_t> offsets(masked ? std::vector<std::int64_t>{0} : layout.offsets);
  const DeviceBuffer<int> d_counts(counts);
  const GroupedProblem g = t.problem(n, k, masked ? nullptr : offsets.data(), masked ? d_counts.data() : nullptr);
  ASSERT_EQ(grouped_fp8_rejects(g), "");
  prepare_grouped_fp8(g, A.data(), B.data(), d_sa.data(), d_sb.data(), C.data(), max_blocks, tile_rows).run(nullptr);
  MM_CUDA_CHECK(cudaGetLastError());
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<bf16> c = C.download();
  for (int e = 0; e < E; ++e) {
    if (rows[e] == 0) continue;
    GemmProblem p;
    p.m = rows[e], p.n = n, p.k = k, p.a = Order::row, p.b = Order::col, p.c = Order::row;
    DeviceBuffer<e4m3> Ae(std::size_t(rows[e]) * k), Be(std::size_t(n) * k);
    MM_CUDA_CHECK(cudaMemcpy(Ae.data(), A.data() + first[e] * k, Ae.size(), cudaMemcpyDeviceToDevice));
    MM_CUDA_CHECK(cudaMemcpy(Be.data(), B.data() + std::int64_t(e) * n * k, Be.size(), cudaMemcpyDeviceToDevice));
    BlockScales bs;  // the expert's own scales, in chapter 12's layouts for M = rows[e], N = n
    bs.a.resize(std::size_t(rows[e]) * kb);
    for (std::int64_t b = 0; b < kb; ++b)
      for (std::int64_t m = 0; m < rows[e]; ++m) bs.a[b * rows[e] + m] = sa[b * buffer_rows + first[e] + m];
    bs.b.assign(sb.begin() + std::int64_t(e) * nb * kb4, sb.begin() + std::int64_t(e + 1) * nb * kb4);
    DeviceScales ds;
    ds.set(p, bs);
    const Reference ref = fp8_reference(p, Ae, Be, DType::e4m3_block, {});
    const std::vector<bf16> out(c.begin() + first[e] * n, c.begin() + (first[e] + rows[e]) * n);
    const CheckResult r = check_gemm(ref, out, Order::row, gemm_tolerance<bf16>(DType::e4m3_block));
    EXPECT_TRUE(r.ok) << (masked ? "masked" : "contiguous") << " tile rows " << tile_rows << " expert " << e << " (" << rows[e] << " rows): " << r.summary;
  }
  for (std::size_t i = std::size_t(buffer_rows) * n; i < c.size(); ++i) {
    std::uint16_t bits;
    std::memcpy(&bits, &c[i], 2);
    ASSERT_EQ(bits, 0xffff) << "written past C, element " << i;
  }
}

TEST(GroupedFp8, EveryExpertMatchesTheReference) {
  MM_REQUIRE_ARCH(arch::sm90a);
  for (bool masked : {false, true})
    for (int tile_rows : {128, 64}) {
      expect_grouped_fp8_correct({5, 0, 130, 1}, 512, 384, masked, 0, tile_rows);  // empty, one-row, one past a tile
      expect_grouped_fp8_correct({300}, 256, 208, masked, 0, tile_rows);           // E = 1; K not a multiple of 128
      expect_grouped_fp8_correct({0, 0, 257, 0}, 256, 1024, masked, 3, tile_rows); // every row on one expert, 3 blocks looping
      expect_grouped_fp8_correct(std::vector<std::int64_t>(40, 3), 256, 128, masked, 0, tile_rows);  // many small groups
    }
}

TEST(GroupedFp8, ProblemsItCannotTake) {
  const std::int64_t offsets[2] = {0, 1};
  GroupedProblem g;
  g.groups = 1, g.n = 256, g.k = 64, g.rows = 128, g.offsets = offsets;
  EXPECT_EQ(grouped_fp8_rejects(g), "");
  GroupedProblem bad = g;
  bad.k = 72;
  EXPECT_NE(grouped_fp8_rejects(bad).find("K % 16"), std::string::npos);
  bad = g, bad.n = 128;
  EXPECT_NE(grouped_fp8_rejects(bad).find("N % 256"), std::string::npos);
  EXPECT_THROW(prepare_grouped_fp8(g, nullptr, nullptr, nullptr, nullptr, nullptr), std::invalid_argument);  // no scales
  const float scale = 1.0f;
  EXPECT_THROW(prepare_grouped_fp8(g, nullptr, nullptr, &scale, &scale, nullptr, 0, 96), std::invalid_argument);  // 128 or 64 rows
}

// The layer has no host synchronization: captured once in a CUDA graph, it replays on new logits (another
// routing: other rows per expert, other offsets), which is what a decode step's graph does.
TEST(MoePassGraph, ACapturedLayerReplaysOnNewLogits) {
  MM_REQUIRE_ARCH(arch::sm90a);
  const MoeShape s{16, 2, 256, 128};
  const int tokens = 140;
  DeviceBuffer<bf16> w_gate_up(std::size_t(s.experts) * 2 * s.width * s.hidden), w_down(std::size_t(s.experts) * s.hidden * s.width);
  fill_random(w_gate_up, 51);
  fill_random(w_down, 52);
  const MoeWeights w{w_gate_up.data(), w_down.data()};
  DeviceBuffer<bf16> x(std::size_t(tokens) * s.hidden), y(std::size_t(tokens + kGuardTokens) * s.hidden);
  DeviceBuffer<float> logits(std::size_t(tokens) * s.experts);
  fill_random(x, 53);
  MoeLayer layer(s, tokens, w, 64);
  cudaStream_t stream;
  MM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  MM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  layer.run(logits.data(), x.data(), y.data(), stream);
  MM_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  MM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  std::vector<int> previous;
  for (Routing routing : {Routing::balanced, Routing::skewed, Routing::balanced}) {
    make_router_logits(logits.data(), tokens, s.experts, routing, 54 + int(routing), stream);
    MM_CUDA_CHECK(cudaMemsetAsync(y.data(), 0xff, y.size() * sizeof(bf16), stream));
    MM_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    MM_CUDA_CHECK(cudaStreamSynchronize(stream));
    check_layer(s, tokens, logits, w, x, y, layer, "replay, " + routing_name(routing));
    const std::vector<int> counts = layer.scratch().counts.download();
    if (routing == Routing::skewed) EXPECT_NE(counts, previous) << "the skewed routing moved rows between experts";
    previous = counts;
  }
  MM_CUDA_CHECK(cudaGraphExecDestroy(exec));
  MM_CUDA_CHECK(cudaGraphDestroy(graph));
  MM_CUDA_CHECK(cudaStreamDestroy(stream));
}

// Masked decode (step 2): the counts live on the device, so one captured launch serves any counts.
TEST(GroupedGraph, AMaskedLaunchReplaysOnNewCounts) {
  MM_REQUIRE_ARCH(arch::sm90a);
  const int E = 4, n = 256, k = 192;
  const std::int64_t capacity = 256;
  DeviceBuffer<bf16> A(std::size_t(E) * capacity * k), B(std::size_t(E) * n * k), C(std::size_t(E) * capacity * n);
  fill_random(A, 61);
  fill_random(B, 62);
  DeviceBuffer<int> d_counts{std::size_t(E)};
  GroupedProblem g;
  g.groups = E, g.n = n, g.k = k, g.rows = E * capacity, g.counts = d_counts.data(), g.capacity = capacity;
  const PreparedGemm gemm = prepare_grouped_gemm(g, A.data(), B.data(), C.data(), 0, 64);
  cudaStream_t stream;
  MM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  MM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  gemm.run(stream);
  MM_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  MM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (const std::vector<int>& counts : {std::vector<int>{5, 0, 130, 1}, std::vector<int>{0, 256, 1, 64}}) {
    d_counts.upload(counts);
    MM_CUDA_CHECK(cudaMemset(C.data(), 0xff, C.size() * sizeof(bf16)));
    MM_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    MM_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<bf16> c = C.download();
    for (int e = 0; e < E; ++e) {
      if (counts[e] == 0) continue;
      const CheckResult r = check_expert(A.data(), B.data(), c, e, e * capacity, counts[e], n, k, false);
      EXPECT_TRUE(r.ok) << "counts " << counts[0] << "," << counts[1] << "," << counts[2] << "," << counts[3] << " expert " << e << ": "
                        << r.summary;
    }
  }
  MM_CUDA_CHECK(cudaGraphExecDestroy(exec));
  MM_CUDA_CHECK(cudaGraphDestroy(graph));
  MM_CUDA_CHECK(cudaStreamDestroy(stream));
}

// Rows per expert the host never sees: the device check names the first broken rule, and the grouped
// kernel run on them anyway writes nothing past its buffers.
TEST(GroupedLayoutCheck, TheDeviceNamesABadLayoutAndTheKernelStaysInItsBuffers) {
  MM_REQUIRE_ARCH(arch::sm90a);
  const int n = 256, k = 64;
  DeviceBuffer<int> error{std::size_t(1)};
  auto code = [&](const GroupedProblem& g) {
    MM_CUDA_CHECK(cudaMemset(error.data(), 0, sizeof(int)));
    check_grouped_layout(g, error.data(), nullptr);
    MM_CUDA_CHECK(cudaDeviceSynchronize());
    return GroupedLayoutError(error.download()[0]);
  };
  struct Contiguous {
    std::vector<std::int64_t> offsets;
    GroupedLayoutError want;
  };
  const std::int64_t rows = 384;
  for (const Contiguous& c : {Contiguous{{0, 1, 128, 258}, GroupedLayoutError::none},
                              Contiguous{{0, 1, 0, 130}, GroupedLayoutError::end_before_start},
                              Contiguous{{2, 3, 128, 130}, GroupedLayoutError::first_offset_not_zero},
                              Contiguous{{0, 1, 128, 400}, GroupedLayoutError::past_the_buffer}}) {
    const DeviceBuffer<std::int64_t> offsets(c.offsets);
    GroupedProblem g;
    g.groups = 3, g.n = n, g.k = k, g.rows = rows, g.offsets = offsets.data();
    EXPECT_EQ(code(g), c.want) << grouped_layout_error_name(int(c.want));
  }
  struct Masked {
    std::vector<int> counts;
    GroupedLayoutError want;
  };
  const std::int64_t capacity = 128;
  DeviceBuffer<bf16> A(std::size_t(3 * capacity) * k), B(std::size_t(3) * n * k), C(std::size_t(3 * capacity + kGuardRows) * n);
  fill_random(A, 71);
  fill_random(B, 72);
  for (const Masked& m : {Masked{{0, 128, 5}, GroupedLayoutError::none}, Masked{{-3, 1, 5}, GroupedLayoutError::negative_count},
                          Masked{{1, 129, 5}, GroupedLayoutError::count_above_capacity}}) {
    const DeviceBuffer<int> counts(m.counts);
    GroupedProblem g;
    g.groups = 3, g.n = n, g.k = k, g.rows = 3 * capacity, g.counts = counts.data(), g.capacity = capacity;
    EXPECT_EQ(code(g), m.want) << grouped_layout_error_name(int(m.want));
    MM_CUDA_CHECK(cudaMemset(C.data(), 0xff, C.size() * sizeof(bf16)));
    prepare_grouped_gemm(g, A.data(), B.data(), C.data(), 0, 64).run(nullptr);
    MM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<bf16> c = C.download();
    for (std::size_t i = std::size_t(3 * capacity) * n; i < c.size(); ++i) {
      std::uint16_t bits;
      std::memcpy(&bits, &c[i], 2);
      ASSERT_EQ(bits, 0xffff) << "written past C with counts " << m.counts[0] << "," << m.counts[1] << "," << m.counts[2];
    }
  }
  EXPECT_EQ(grouped_layout_error_name(0), "");
  EXPECT_NE(grouped_layout_error_name(int(GroupedLayoutError::count_above_capacity)).find("capacity"), std::string::npos);
}

}  // namespace
