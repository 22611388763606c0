/// @file ch01_cli.hpp
/// @brief The command line of the chapter 01 binary: the shared harness flags plus --threads and --thread-sweep.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "01_cpu_matmul/cpu_matmul.hpp"
#include "harness/cli.hpp"

namespace mm::ch01 {

/// @brief Most workers --threads accepts: beyond any core count, short of exhausting the process's threads.
inline constexpr std::int64_t max_threads = 1024;

/// @brief The parsed command line of ch01_cpu_matmul.
struct Options {
  CliOptions cli;              ///< the flags every chapter shares
  unsigned threads = 1;        ///< workers of the threaded kernel (default: hardware threads)
  bool thread_sweep = false;   ///< also run threaded at 1, 2, 4, ... up to `threads`
};

/// @brief What the binary accepts: four kernels, sizes a CPU finishes in seconds, few repetitions.
inline CliSpec cli_spec() {
  CliSpec spec;
  spec.program = "ch01_cpu_matmul";
  spec.description = "Chapter 01: C = A*B on the CPU (naive i-j-k, i-k-j, cache-blocked, threaded), fp32 row-major";
  spec.kernels = {"naive", "ikj", "blocked", "threaded"};
  spec.default_sizes = {{256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}};
  spec.default_reps = 3;    // the naive kernel takes seconds at 1024: keep the default run short
  spec.default_warmup = 1;  // one untimed run brings A, B and C into memory and caches
  return spec;
}

/// @brief Parses argv; throws CliError (exit code 2, one line naming the flag) on bad input, CliError with code 0 on --help.
inline Options parse_options(int argc, const char* const* argv) {
  CliSpec spec = cli_spec();
  std::string threads_text;
  bool threads_given = false;  // so that an empty value ("--threads=") is rejected, not taken as the default
  bool sweep = false;
  const std::string default_text = std::to_string(default_threads());
  spec.extra = [&](CLI::App& app) {
    app.add_option_function<std::string>(
        "--threads", [&](const std::string& text) {
          threads_text = text;
          threads_given = true;
        },
        "workers of the threaded kernel (default: hardware threads, here " + default_text + ")");
    app.add_flag("--thread-sweep", sweep,
                 "also run the threaded kernel at 1, 2, 4, ... up to --threads workers, as kernels threaded_<t>");
  };
  Options o;
  o.cli = parse_cli(argc, argv, spec);
  o.threads = default_threads();
  if (threads_given) {
    const std::int64_t t = parse_int(threads_text, "--threads", 1);
    if (t > max_threads)
      throw CliError("error: --threads: '" + threads_text + "' is more than " + std::to_string(max_threads), 2);
    o.threads = unsigned(t);
  }
  o.thread_sweep = sweep;
  return o;
}

}  // namespace mm::ch01
