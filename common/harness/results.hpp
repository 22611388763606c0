/// @file results.hpp
/// @brief One result row per (kernel, size), the CSV schema every chapter writes, and the printed table.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <limits>
#include <string>
#include <vector>

namespace mm {

/// @brief A value that was not measured (written as an empty CSV field, printed as "-").
inline constexpr double not_measured = std::numeric_limits<double>::quiet_NaN();

/// @brief One measured kernel at one size. The columns of the CSV, in order.
struct ResultRow {
  std::string chapter;       ///< e.g. "02_naive_gpu"
  std::string kernel;        ///< e.g. "coalesced", or "cuBLAS" / "cudaMemcpy" for the baseline row
  std::string dtype;         ///< "fp32", "tf32", "bf16", "fp16"
  std::string layout;        ///< storage orders of A, B, C, e.g. "RRR"
  std::int64_t m = 0;                   ///< rows of C (of the source matrix for copies)
  std::int64_t n = 0;                   ///< columns of C
  std::int64_t k = 0;                   ///< the inner dimension; 0 for copies
  double median_ms = not_measured;      ///< median time of the timed runs
  double min_ms = not_measured;         ///< fastest timed run
  double tflops = not_measured;         ///< 2·M·N·K / median time (GEMM); not_measured for copies
  double gbps = not_measured;           ///< bytes that must move (each input read once, output written once) / median time
  double pct_of_cublas = not_measured;  ///< 100 · baseline median / this median; the baseline is cuBLAS for GEMMs, cudaMemcpy for copies
  double rel_error = not_measured;      ///< relative Frobenius error against the fp64 reference
  std::string gpu;                      ///< device name (CPU model for the CPU chapter)
  std::string cuda_version;             ///< runtime, driver and cuBLAS versions
  std::string timestamp;                ///< ISO 8601, UTC
  /// The path that ran: for a composed kernel the adapter's name of its blocks and choices
  /// ("split_k 128x128 x3", every_shape's pick); for a kernel of one path its own name; empty for a
  /// baseline. (CSVs written before the column existed read with an empty path.)
  std::string path;
};

/// @brief The header line of the CSV (column names, comma-separated, no newline).
std::string csv_header();

/// @brief Writes rows (with the header) to `path`, replacing the file. Exits 2 with a one-line message
/// ("<program>: error: --csv: cannot write '<path>': <reason>") if it cannot.
void write_csv(const std::string& path, const std::vector<ResultRow>& rows);

/// @brief Why `path` cannot be written as write_csv will write it ("No such file or directory",
/// "Is a directory", "Permission denied"), or "" when it can.
///
/// Every binary asks this before it measures anything (parse_cli does, for --csv), so that a bad path
/// costs a second, not a whole run. The file is opened for appending: an existing CSV is left as it
/// is, and a file this check had to create is removed again.
std::string csv_unwritable(const std::string& path);

/// @brief Reads a CSV written by write_csv. Throws std::runtime_error naming the line on a malformed file.
std::vector<ResultRow> read_csv(const std::string& path);

/// @brief The unit of the speed column of print_table: TFLOP/s for the GPU chapters, GFLOP/s for the CPU
/// (chapter 01's kernels run at 0.5-100 GFLOP/s, which TFLOP/s would print as 0.00-0.10).
enum class FlopUnit { tera, giga };

/// @brief Prints rows as an aligned table (kernel, dtype, layout, size, ms, TFLOP/s or GFLOP/s, GB/s, % of baseline,
/// error).
void print_table(std::ostream& os, const std::vector<ResultRow>& rows, const std::string& baseline_name = "cuBLAS",
                 FlopUnit unit = FlopUnit::tera);

/// @brief Now as "2026-11-21T10:00:00Z".
std::string utc_timestamp();

}  // namespace mm
