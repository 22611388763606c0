/// @file launch.hpp
/// @brief Launch arithmetic every GPU chapter needs: rounding a grid up, and the grid's y limit.
#pragma once

#include <cstdint>

/// @brief Launch arithmetic shared by the chapters (a namespace of its own, so that these integer
/// helpers never compete with the layout library's tuple `mm::ceil_div`).
namespace mm::launch {

/// @brief ⌈a / b⌉ for positive a, b: the number of b-wide tiles (or blocks) that cover a elements.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

/// @brief The most blocks a grid may have along y (x may have 2^31 - 1).
inline constexpr std::int64_t max_grid_y = 65535;

}  // namespace mm::launch
