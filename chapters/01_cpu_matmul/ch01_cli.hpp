/// @file ch01_cli.hpp
/// @brief The command line of the chapter 01 binary: the shared harness flags plus --threads, --thread-sweep and --no-pin.
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "01_cpu_matmul/cpu_matmul.hpp"
#include "01_cpu_matmul/cpu_topology.hpp"
#include "harness/cli.hpp"

namespace mm::ch01 {

/// @brief Most workers --threads accepts with --no-pin: beyond any core count, short of exhausting the process's threads.
inline constexpr std::int64_t max_threads = 1024;

/// @brief The parsed command line of ch01_cpu_matmul.
struct Options {
  CliOptions cli;              ///< the flags every chapter shares
  unsigned threads = 1;        ///< workers of the threaded kernel (default: the logical CPUs this process may use)
  bool thread_sweep = false;   ///< also run threaded at 1, 2, 4, ..., the physical core count, and `threads`
  bool pin = true;             ///< pin the main thread and every worker to a CPU (false with --no-pin)
};

/// @brief What the binary accepts: four kernels, sizes a CPU finishes in seconds.
///
/// 10 timed rounds after 1 warm-up round: main.cpp runs every variant once per
/// round, so drift during the run (clock frequency, other load on the machine)
/// reaches all variants alike. The naive kernel at 1024³ takes seconds per run
/// and sets the length of the default run: about a minute on a 16-core server.
inline CliSpec cli_spec() {
  CliSpec spec;
  spec.program = "ch01_cpu_matmul";
  spec.description = "Chapter 01: C = A*B on the CPU (naive i-j-k, i-k-j, cache-blocked, threaded), fp32 row-major";
  spec.kernels = {"naive", "ikj", "blocked", "threaded"};
  spec.default_sizes = {{256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}};
  spec.default_reps = 10;   // timed rounds: median and min of 10 runs per variant
  spec.default_warmup = 1;  // one untimed round brings A, B and C into memory and caches and the clock up
  return spec;
}

/// @brief The worker counts of --thread-sweep: 1, 2, 4, ... below `threads`, the physical core count, and `threads`.
///
/// The core count is in the list even when it is not a power of two, because
/// with workers pinned one per core first it is the last count without SMT
/// siblings: the step from it to the logical CPU count measures what SMT adds.
inline std::vector<unsigned> sweep_counts(unsigned threads, std::size_t physical_cores) {
  std::vector<unsigned> counts;
  for (unsigned t = 1; t < threads; t *= 2) counts.push_back(t);
  if (physical_cores >= 1 && physical_cores < threads) counts.push_back(unsigned(physical_cores));
  counts.push_back(std::max(1u, threads));
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

/// @brief Parses argv against the CPUs in `topo`; throws CliError (exit code 2, one line naming the flag) on bad
/// input, CliError with code 0 on --help.
///
/// Pinned (the default), --threads may not exceed topo.logical(): a second worker
/// on one logical CPU measures the scheduler, not the kernel. --no-pin lifts
/// that limit up to max_threads.
inline Options parse_options(int argc, const char* const* argv, const CpuTopology& topo) {
  CliSpec spec = cli_spec();
  std::string threads_text;
  bool threads_given = false;  // so that an empty value ("--threads=") is rejected, not taken as the default
  bool sweep = false, no_pin = false;
  const std::size_t cpus = std::max<std::size_t>(1, topo.logical());
  spec.extra = [&](CLI::App& app) {
    app.add_option_function<std::string>(
        "--threads", [&](const std::string& text) {
          threads_text = text;
          threads_given = true;
        },
        "workers of the threaded kernel, at most the logical CPUs (default: the logical CPUs this process may use, here " +
            std::to_string(cpus) + ")");
    app.add_flag("--thread-sweep", sweep,
                 "also run the threaded kernel at 1, 2, 4, ..., the physical core count and --threads workers, as "
                 "kernels threaded_<t>");
    app.add_flag("--no-pin", no_pin,
                 "let the operating system place the threads (default: pinned, one worker per physical core first); "
                 "allows --threads up to " + std::to_string(max_threads));
  };
  Options o;
  o.cli = parse_cli(argc, argv, spec);
  o.pin = !no_pin;
  o.threads = unsigned(cpus);
  if (threads_given) {
    const std::int64_t t = parse_int(threads_text, "--threads", 1);
    if (t > max_threads)
      throw CliError("error: --threads: '" + threads_text + "' is more than " + std::to_string(max_threads), 2);
    if (o.pin && std::size_t(t) > cpus)
      throw CliError("error: --threads: '" + threads_text + "' is more than the " + std::to_string(cpus) +
                         " logical CPUs this process may use (pinned: one worker per CPU; --no-pin lets them share)",
                     2);
    o.threads = unsigned(t);
  }
  o.thread_sweep = sweep;
  return o;
}

/// @brief parse_options against this machine's CPUs.
inline Options parse_options(int argc, const char* const* argv) { return parse_options(argc, argv, machine_topology()); }

}  // namespace mm::ch01
