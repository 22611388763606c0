/// @file steps.hpp
/// @brief Chapter 01's steps, in the order of its page: the one list the binary's `--kernel`, its
/// runs and the tests take (docs/extending.md). A new step is one line here.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "01_cpu_matmul/cpu_matmul.hpp"

namespace mm::ch01 {

/// @brief One step: its name and how it runs. Every step takes the threaded step's arguments (how
/// many workers, which CPUs to pin them to); the single-threaded steps ignore them.
struct CpuStep {
  std::string_view name;  ///< what --kernel selects and the table shows
  /// Computes C = A·B (row-major, M×K times K×N).
  void (*run)(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K,
              unsigned threads, std::span<const int> cpus);
};

/// @brief The chapter's steps: the naive loop, the loop order, cache blocking, threads.
inline constexpr std::array<CpuStep, 4> kSteps = {{
    {"naive", [](const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K, unsigned,
                 std::span<const int>) { naive_ijk(A, B, C, M, N, K); }},
    {"ikj", [](const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K, unsigned,
               std::span<const int>) { reordered_ikj(A, B, C, M, N, K); }},
    {"blocked", [](const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K, unsigned,
                   std::span<const int>) { blocked(A, B, C, M, N, K); }},
    {"threaded", [](const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K,
                    unsigned threads, std::span<const int> cpus) { threaded(A, B, C, M, N, K, threads, cpus); }},
}};

}  // namespace mm::ch01
