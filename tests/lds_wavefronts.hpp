// Shared by the CPU tests that predict shared-memory wavefronts (what ncu counts as
// l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld): the rule for a warp's 128-bit shared load that
// chapter 03 states and chapter 07 measures ("the pair rule"), and the bank rule of a 32-bit access.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <vector>

namespace mm::test {

/// Wavefronts of one LDS.128 of a warp whose lane i reads the 16-byte vector starting at float offset
/// `float_offsets[i]`, by the rule measured with ncu: a wavefront returns 128 bytes, 8 lanes' 16-byte
/// vectors, so a warp needs 4 — or 2 when the two lanes of every pair (2i, 2i+1) read the same address.
/// Within a quarter-warp the distinct vectors must sit on distinct bank groups (16 bytes = 4 banks, 8
/// groups), else the conflict adds wavefronts that the rule does not count: checked here (a failure
/// names the quarter-warp), and 0 conflicts is what ncu shows for the layouts tested with it.
inline int lds128_wavefronts(const std::vector<int>& float_offsets) {
  EXPECT_EQ(float_offsets.size(), 32u) << "one vector per lane";
  if (float_offsets.size() != 32u) return 0;
  std::vector<int> vec(32);
  for (std::size_t lane = 0; lane < 32; ++lane) {
    const int v = float_offsets[lane];
    EXPECT_EQ(v % 4, 0) << "a 128-bit load must be 16-byte aligned";
    vec[lane] = v / 4;
  }
  for (int q = 0; q < 4; ++q) {
    std::set<int> vectors(vec.begin() + 8 * q, vec.begin() + 8 * q + 8), groups;
    for (int v : vectors) groups.insert(v % 8);
    EXPECT_EQ(groups.size(), vectors.size()) << "bank conflict in quarter-warp " << q;
  }
  bool pairs_share = true;
  for (std::size_t i = 0; i < 16; ++i) pairs_share = pairs_share && vec[2 * i] == vec[2 * i + 1];
  return pairs_share ? 2 : 4;
}

/// Wavefronts of one 32-bit shared access of a warp (LDS or STS), lane i at float offset
/// `word_offsets[i]`: 32 banks of 4-byte words; lanes at the same word share it (a broadcast),
/// different words of one bank are served one after another, so the busiest bank sets the count.
inline int lds32_wavefronts(const std::vector<int>& word_offsets) {
  std::map<int, std::set<int>> words_per_bank;
  for (int w : word_offsets) words_per_bank[w % 32].insert(w);
  int worst = 0;
  for (const auto& [bank, words] : words_per_bank) worst = std::max(worst, int(words.size()));
  return worst;
}

}  // namespace mm::test
