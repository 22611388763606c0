/// @file chapter_run.hpp
/// @brief The steps every chapter driver (run_gemm_chapter, run_copy_chapter) shares: its name,
/// the clean skip without a GPU, the header lines, and the table + CSV + exit code at the end.
#pragma once

#include <string>
#include <vector>

#include "harness/arch_check.hpp"
#include "harness/cli.hpp"
#include "harness/results.hpp"

namespace mm {

/// @brief The binary's name without its directory ("ch05_layout_matmul"), or `fallback` when argv is empty.
std::string program_name(int argc, const char* const* argv, const std::string& fallback);

/// @brief Without a usable GPU, or when this GPU (with this build) lacks what the chapter needs, prints
/// "<program>: skipped: <reason>" and returns true.
bool skipped_on_this_gpu(const std::string& program, arch::Requirement needs);

/// @brief When this GPU (with this build) lacks what kernel `name` needs, prints "  <name>: skipped: <reason>"
/// and returns true.
bool kernel_skipped_on_this_gpu(const std::string& name, arch::Requirement needs);

/// @brief Prints which GPU and versions ran `chapter`, the baseline, and how timing was done.
void print_run_header(const std::string& chapter, const std::string& baseline, const CliOptions& opt);

/// @brief Prints the table, writes the CSV when --csv was given, and returns the exit code:
/// 0 when no check failed, 1 otherwise.
int finish_run(const std::vector<ResultRow>& rows, const CliOptions& opt, int failures,
               const std::string& baseline_name);

/// @brief Whether the command line selected kernel `name` (--kernel).
bool kernel_selected(const CliOptions& opt, const std::string& name);

}  // namespace mm
