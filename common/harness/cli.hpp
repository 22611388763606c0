/// @file cli.hpp
/// @brief The command line every chapter binary shares (sizes, repetitions, kernels, CSV, checking).
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mm {

/// @brief One problem size. For GEMM chapters M×N×K; copy chapters use M×N and leave k = 1.
struct ProblemSize {
  std::int64_t m = 1;  ///< rows of A and C
  std::int64_t n = 1;  ///< columns of B and C
  std::int64_t k = 1;  ///< columns of A, rows of B (1 for copies)
  /// @brief Two sizes are equal when M, N and K are.
  friend bool operator==(const ProblemSize&, const ProblemSize&) = default;
};

/// @brief A chapter's own option that takes a value (CliSpec::extra_options), e.g. chapter 01's --threads.
struct CliExtraOption {
  std::string name;       ///< "--threads"
  std::string type_name;  ///< what --help shows after the name ("INT")
  std::string help;       ///< one line for --help
  std::function<void(const std::string&)> set;  ///< called with the value as written, once the command line parses
};

/// @brief A chapter's own flag (CliSpec::extra_flags), e.g. chapter 01's --force.
struct CliExtraFlag {
  std::string name;      ///< "--force"
  std::string help;      ///< one line for --help
  bool* value = nullptr; ///< set true when the flag is given ("--force=false" sets it false)
};

/// @brief What a chapter binary accepts and its defaults.
struct CliSpec {
  std::string program;                  ///< binary name, for --help
  std::string description;              ///< one line for --help
  std::vector<std::string> kernels;     ///< names accepted by --kernel
  std::vector<ProblemSize> default_sizes;  ///< sizes run unless --sizes or --m/--n/--k say otherwise
  std::vector<std::string> layouts = {"RRR"};  ///< layout tags accepted by --layout; the first is the default
  int default_reps = 20;                ///< timed runs unless --reps says otherwise
  int default_warmup = 5;               ///< warm-up runs unless --warmup says otherwise
  bool has_k = true;                    ///< false for copy chapters: sizes are M×N
  /// @brief Whether --interleave is accepted (the GEMM runner's: time a size's kernels in turns).
  bool can_interleave = false;
  /// @brief Largest M, N or K accepted: 2^31 - 1, as cuBLAS takes `int` m, n, k and leading dimensions
  /// and every kernel `int` extents. Not a limit on elements per matrix: each kernel applies its own
  /// (mm::launch, "the 32-bit rule").
  std::int64_t max_extent = (std::int64_t(1) << 31) - 1;
  /// @brief Chapter-specific options and flags, shown in --help after the shared ones (options first). Declared
  /// as data, so that a chapter's file needs no CLI11 include for them (each such file compiles ~10 s longer).
  std::vector<CliExtraOption> extra_options;
  std::vector<CliExtraFlag> extra_flags;  ///< see extra_options
};

/// @brief The parsed command line.
struct CliOptions {
  std::string program;               ///< the binary's name (CliSpec::program), the prefix of its error lines
  std::vector<ProblemSize> sizes;    ///< the problems to run, in order
  std::vector<std::string> kernels;  ///< the selected kernels, in the spec's order
  std::vector<std::string> layouts;  ///< the selected layout tags
  int reps = 20;                     ///< timed runs
  int warmup = 5;                    ///< untimed runs first
  std::string csv;                   ///< empty: no CSV; else a path parse_cli found writable (csv_unwritable)
  bool check = true;                 ///< false with --no-check
  /// @brief --interleave: a size's kernels timed in turns (time_interleaved), one run each a round,
  /// instead of each kernel's runs together; a clock that moves during the size then moves for all.
  bool interleave = false;
  std::uint64_t seed = 42;           ///< seed of the random inputs
};

/// @brief A rejected command line: `what()` is one line that names the flag; `exit_code` is 2 (0 for --help, whose text is `what()`).
struct CliError : std::runtime_error {
  int exit_code;  ///< 2 for bad input, 0 for --help
  /// @brief A message (one line) and the exit code the binary should return.
  CliError(const std::string& msg, int code) : std::runtime_error(msg), exit_code(code) {}
};

/// @brief Parses argv; throws CliError on bad input or --help.
///
/// Bad input includes a --csv path that cannot be written (results.hpp, csv_unwritable): it is found
/// here, before any measurement, not when the table is written at the end of the run.
CliOptions parse_cli(int argc, const char* const* argv, const CliSpec& spec);

/// @brief parse_cli, printing the message and exiting (2 on bad input, 0 after --help).
CliOptions parse_cli_or_exit(int argc, const char* const* argv, const CliSpec& spec);

/// @brief What a ceiling probe (ch08_mma_ceiling, ch12_wgmma_ceiling) accepts: --csv, --iters and --reps only.
/// A probe measures one instruction on one set of shapes, so it takes none of CliSpec's sizes, kernels or layouts.
struct ProbeSpec {
  std::string program;       ///< binary name, the prefix of its error lines
  std::string description;   ///< the first lines of --help
  std::string iters_help;    ///< what one --iters counts, for --help ("mma.sync per accumulator per warp")
  int default_iters = 4096;  ///< iterations unless --iters says otherwise
};

/// @brief A probe's parsed command line.
struct ProbeOptions {
  std::string csv;   ///< empty: no CSV; else a path parse_probe_cli found writable (csv_unwritable)
  int iters = 4096;  ///< iterations of the probe's loop, 1 to 2^24
  int reps = 10;     ///< timed runs, 1 to 1000
};

/// @brief Parses a probe's argv; throws CliError as parse_cli does: exit code 2 and one line on bad input (an
/// unknown flag, --iters or --reps out of range, a --csv path that cannot be written), 0 for --help.
ProbeOptions parse_probe_cli(int argc, const char* const* argv, const ProbeSpec& spec);

/// @brief parse_probe_cli, printing the message and exiting (2 on bad input, 0 after --help).
ProbeOptions parse_probe_cli_or_exit(int argc, const char* const* argv, const ProbeSpec& spec);

/// @brief Parses a size list such as "1024", "512,1024", "1000x1x1000" (M×N×K; M×N when !has_k). Throws CliError naming `flag`.
std::vector<ProblemSize> parse_sizes(const std::string& text, bool has_k, const std::string& flag);

/// @brief Parses a positive integer (≥ `min`) for `flag`, rejecting text, signs, overflow and trailing junk. Throws CliError.
std::int64_t parse_int(const std::string& text, const std::string& flag, std::int64_t min = 1);

}  // namespace mm
