/// @file launch.hpp
/// @brief Launch arithmetic every GPU chapter needs: rounding a grid up, and the grid's limits.
#pragma once

#include <cstdint>

/// @brief Launch arithmetic shared by the chapters (a namespace of its own, so that these integer
/// helpers never compete with the layout library's tuple `mm::ceil_div`).
namespace mm::launch {

/// @brief ⌈a / b⌉ for positive a, b: the number of b-wide tiles (or blocks) that cover a elements.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

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

}  // namespace mm::launch
