/// @file progress.hpp
/// @brief Progress lines for chapter 01's long sizes (1024³ runs for a minute or two, 2048³ for ten): on stderr, at most
/// one every few seconds, so that a short size prints none and piped output stays readable.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "01_cpu_matmul/ch01_cli.hpp"

namespace mm::ch01 {

/// @brief Follows the rounds of one size: `after_run` after every run of every variant, warm-up rounds included.
///
/// A line says the round, the runs done, the time so far and the time to go. The time to go counts each
/// variant's remaining runs (every variant runs once a round) at its last measured time, and before its first
/// run at `assumed_ms` (the estimate's speed, assumed_gflops).
class Progress {
 public:
  using Clock = std::chrono::steady_clock;

  /// @brief `size` names the size in the lines ("1024x1024x1024"); `rounds` = warm-up + timed; a line at most every
  /// `every_s` seconds, to `out`.
  Progress(std::string size, std::vector<double> assumed_ms, int rounds, double every_s = 5, std::FILE* out = stderr)
      : size_(std::move(size)), last_ms_(std::move(assumed_ms)), runs_(last_ms_.size(), 0), rounds_(rounds),
        every_s_(every_s), out_(out), start_(Clock::now()), printed_(start_) {}

  /// @brief Variant `v` ran once, in round `round` (0-based, warm-up first), for `ms` milliseconds.
  void after_run(int round, std::size_t v, double ms) {
    last_ms_[v] = ms;
    ++runs_[v];
    ++done_;
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - printed_).count() < every_s_) return;
    printed_ = now;
    std::fprintf(out_, "  %s: round %d of %d, %zu of %zu runs done, %s so far, about %s to go\n", size_.c_str(),
                 round + 1, rounds_, done_, total(),
                 duration_text(std::chrono::duration<double>(now - start_).count()).c_str(),
                 duration_text(to_go_ms() * 1e-3).c_str());
    std::fflush(out_);
  }

  /// @brief The runs still to come, each at its variant's last known time (ms).
  double to_go_ms() const {
    double ms = 0;
    for (std::size_t v = 0; v < last_ms_.size(); ++v) ms += double(rounds_ - runs_[v]) * last_ms_[v];
    return ms;
  }

 private:
  std::size_t total() const { return std::size_t(rounds_) * last_ms_.size(); }

  std::string size_;
  std::vector<double> last_ms_;
  std::vector<int> runs_;  // runs of each variant so far
  int rounds_;
  double every_s_;
  std::FILE* out_;
  std::size_t done_ = 0;
  Clock::time_point start_, printed_;
};

}  // namespace mm::ch01
