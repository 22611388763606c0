/// @file ch01_cli.hpp
/// @brief The command line of the chapter 01 binary: the shared harness flags plus --threads, --thread-sweep, --no-pin
/// and --force, and the estimate of how long a run takes (a run estimated past ten minutes needs --force).
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "01_cpu_matmul/cpu_matmul.hpp"
#include "01_cpu_matmul/steps.hpp"
#include "01_cpu_matmul/cpu_topology.hpp"
#include "harness/cli.hpp"

namespace mm::ch01 {

/// @brief Most workers --threads accepts with --no-pin: beyond any core count, short of exhausting the process's threads.
inline constexpr std::int64_t max_threads = 1024;

/// @brief A run estimated to take longer than this (seconds) is refused unless --force: the naive loop is cubic, and
/// 2048³ already takes about ten minutes, 8192³ most of a day.
inline constexpr double refuse_after_s = 600;
/// @brief A run estimated to take longer than this (seconds) is run with a warning that says how long.
inline constexpr double warn_after_s = 120;

/// @brief The parsed command line of ch01_cpu_matmul.
struct Options {
  CliOptions cli;              ///< the flags every chapter shares
  unsigned threads = 1;        ///< workers of the threaded kernel (default: the logical CPUs this process may use)
  bool thread_sweep = false;   ///< also run threaded at 1, 2, 4, ..., the physical core count, and `threads`
  bool pin = true;             ///< pin the main thread and every worker to a CPU (false with --no-pin)
  bool force = false;          ///< run even when the estimate passes refuse_after_s (--force)
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
  for (const CpuStep& step : kSteps) spec.kernels.emplace_back(step.name);  // the chapter's list
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

/// @brief The speed (GFLOP/s) the estimate assumes for a kernel at size `s` with `threads` workers: below the slower of
/// the CPUs measured so far (a 2-core AMD EPYC VM and the 16-core Xeon of the H200 runs), so that the estimate errs long.
inline double assumed_gflops(const std::string& kernel, const ProblemSize& s, unsigned threads) {
  if (kernel == "naive") {
    // The i-j-k loop walks B down its columns, so its speed falls as B outgrows the caches: measured 2.1 / 1.0 / 0.47
    // / 0.31 GFLOP/s at 256³ / 512³ / 1024³ / 2048³ on the EPYC, 1.6 / 1.8 / 0.70 (to 1024³) on the Xeon. Past
    // 16 MiB (4096³ and up) every step of the column is also a new page: assumed half again, not measured.
    const double b_mib = 4.0 * double(s.k) * double(s.n) / (1024.0 * 1024.0);
    return b_mib <= 0.25 ? 1.5 : b_mib <= 1 ? 0.8 : b_mib <= 16 ? 0.3 : 0.15;
  }
  if (kernel.rfind("threaded", 0) == 0) return 3.0 * std::max(1u, threads);  // 4.8-7 per worker measured
  return 4.0;                                                                   // ikj, blocked: 5.8-17 measured
}

/// @brief How long a run of these options takes, by assumed_gflops: every size's fp64 reference (about 1 GFLOP/s)
/// and (warm-up + timed) rounds of every variant.
struct RunEstimate {
  double seconds = 0;      ///< the whole run
  std::string slowest;     ///< "2048x2048x2048: naive 11 runs at ~0.3 GFLOP/s, about 10 min": the largest part
};

/// @brief "45 s", "12 min", "3.4 h".
inline std::string duration_text(double s) {
  char buf[32];
  if (s < 90) std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (s < 90 * 60) std::snprintf(buf, sizeof buf, "%.0f min", s / 60);
  else std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  return buf;
}

/// @brief The estimate for `o` on a machine with `physical_cores` cores (for the sweep's worker counts).
inline RunEstimate estimate_run(const Options& o, std::size_t physical_cores) {
  // (kernel, workers) of every variant main.cpp runs.
  std::vector<std::pair<std::string, unsigned>> variants;
  for (const std::string& k : o.cli.kernels) variants.emplace_back(k, k == "threaded" ? o.threads : 1u);
  if (o.thread_sweep)
    for (unsigned t : sweep_counts(o.threads, physical_cores)) variants.emplace_back("threaded_" + std::to_string(t), t);
  const double runs = double(o.cli.warmup + o.cli.reps);
  RunEstimate e;
  double largest = -1;
  for (const ProblemSize& s : o.cli.sizes) {
    const double gflop = 2e-9 * double(s.m) * double(s.n) * double(s.k);
    if (o.cli.check) e.seconds += gflop / 1.0;
    for (const auto& [name, threads] : variants) {
      const double rate = assumed_gflops(name, s, threads);
      const double t = runs * gflop / rate;
      e.seconds += t;
      if (t > largest) {
        largest = t;
        char buf[160];
        std::snprintf(buf, sizeof buf, "%lldx%lldx%lld: %s, %.0f runs at ~%.2g GFLOP/s, about %s", (long long)s.m,
                      (long long)s.n, (long long)s.k, name.c_str(), runs, rate, duration_text(t).c_str());
        e.slowest = buf;
      }
    }
  }
  return e;
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
  bool sweep = false, no_pin = false, force = false;
  const std::size_t cpus = std::max<std::size_t>(1, topo.logical());
  spec.extra_options = {
      {"--threads", "INT",
       "workers of the threaded kernel, at most the logical CPUs (default: the logical CPUs this process may use, here " +
           std::to_string(cpus) + ")",
       [&](const std::string& text) {
         threads_text = text;
         threads_given = true;
       }}};
  spec.extra_flags = {
      {"--thread-sweep",
       "also run the threaded kernel at 1, 2, 4, ..., the physical core count and --threads workers, as "
       "kernels threaded_<t>",
       &sweep},
      {"--no-pin",
       "let the operating system place the threads (default: pinned, one worker per physical core first); "
       "allows --threads up to " + std::to_string(max_threads),
       &no_pin},
      {"--force",
       "run even when the run is estimated to take more than " + duration_text(refuse_after_s) +
           " (without it such a run is refused, saying how long it would take)",
       &force}};
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
  o.force = force;
  if (!o.force) {
    const RunEstimate e = estimate_run(o, topo.physical());
    if (e.seconds > refuse_after_s)
      throw CliError("error: --sizes/--m/--n/--k: this run would take about " + duration_text(e.seconds) +
                         " on a CPU like this (a conservative estimate; largest part " + e.slowest +
                         "); runs estimated past " + duration_text(refuse_after_s) +
                         " need --force, or drop naive (--kernel ikj,blocked,threaded) or use fewer --reps",
                     2);
  }
  return o;
}

/// @brief parse_options against this machine's CPUs.
inline Options parse_options(int argc, const char* const* argv) { return parse_options(argc, argv, machine_topology()); }

}  // namespace mm::ch01
