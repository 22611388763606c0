// The shared command line: good input parses, bad input (an unwritable --csv included) is rejected
// with one line that names the flag (the binaries print it after their name and exit 2).
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "harness/cli.hpp"
#include "gemm/launch.hpp"

namespace {

mm::CliSpec spec() {
  mm::CliSpec s;
  s.program = "chXX";
  s.kernels = {"naive", "tiled"};
  s.default_sizes = {{256, 256, 256}};
  s.layouts = {"RRR", "RCR"};
  return s;
}

mm::CliOptions parse(std::initializer_list<const char*> args, const mm::CliSpec& s = spec()) {
  std::vector<const char*> argv{"chXX"};
  argv.insert(argv.end(), args);
  return mm::parse_cli(int(argv.size()), argv.data(), s);
}

// Expects a rejection whose one-line message names `flag`.
void expect_rejected(std::initializer_list<const char*> args, const std::string& flag) {
  try {
    parse(args);
    ADD_FAILURE() << "accepted bad input (expected an error naming " << flag << ")";
  } catch (const mm::CliError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.exit_code, 2);
    EXPECT_NE(msg.find(flag), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
  }
}

TEST(Cli, Defaults) {
  const mm::CliOptions o = parse({});
  EXPECT_EQ(o.sizes, (std::vector<mm::ProblemSize>{{256, 256, 256}}));
  EXPECT_EQ(o.kernels, (std::vector<std::string>{"naive", "tiled"}));
  EXPECT_EQ(o.layouts, (std::vector<std::string>{"RRR"}));
  EXPECT_TRUE(o.check);
  EXPECT_EQ(o.reps, 20);
}

TEST(Cli, InterleaveOnlyWhereTheRunnerTakesIt) {
  // The GEMM runner times a size's kernels in turns with --interleave; a spec without it (the copy
  // runner's) rejects the flag as unknown, in one line.
  mm::CliSpec s = spec();
  EXPECT_FALSE(parse({}, s).interleave);
  s.can_interleave = true;
  EXPECT_TRUE(parse({"--interleave"}, s).interleave);
  EXPECT_FALSE(parse({}, s).interleave);
  expect_rejected({"--interleave"}, "--interleave");
}

TEST(Cli, ParsesEverything) {
  const mm::CliOptions o = parse({"--m", "7", "--n", "13", "--k", "5", "--reps", "3", "--warmup", "0",
                                  "--kernel", "tiled", "--csv", "out.csv", "--no-check", "--layout", "all"});
  EXPECT_EQ(o.sizes, (std::vector<mm::ProblemSize>{{7, 13, 5}}));
  EXPECT_EQ(o.reps, 3);
  EXPECT_EQ(o.warmup, 0);
  EXPECT_EQ(o.kernels, (std::vector<std::string>{"tiled"}));
  EXPECT_EQ(o.csv, "out.csv");
  EXPECT_FALSE(o.check);
  EXPECT_EQ(o.layouts.size(), 2u);
}

TEST(Cli, SizeList) {
  const mm::CliOptions o = parse({"--sizes", "128,1000x1x1000"});
  EXPECT_EQ(o.sizes, (std::vector<mm::ProblemSize>{{128, 128, 128}, {1000, 1, 1000}}));
}

TEST(Cli, CopySizesHaveNoK) {
  mm::CliSpec s = spec();
  s.has_k = false;
  EXPECT_EQ(parse({"--sizes", "33x4097"}, s).sizes, (std::vector<mm::ProblemSize>{{33, 4097, 1}}));
}

TEST(Cli, RejectsBadNumbers) {
  expect_rejected({"--m", "abc", "--n", "1", "--k", "1"}, "--m");
  expect_rejected({"--m", "0", "--n", "1", "--k", "1"}, "--m");
  expect_rejected({"--m", "4", "--n", "-3", "--k", "1"}, "--n");
  expect_rejected({"--m", "4", "--n", "4", "--k", "12x"}, "--k");
  expect_rejected({"--m", "4", "--n", "4", "--k", "99999999999999999999"}, "--k");
  expect_rejected({"--reps", "0"}, "--reps");
  expect_rejected({"--warmup", "-1"}, "--warmup");
  expect_rejected({"--sizes", "12,,4"}, "--sizes");
  expect_rejected({"--sizes", "4x4"}, "--sizes");
  expect_rejected({"--sizes", "1.5"}, "--sizes");
}

TEST(Cli, RejectsIncompleteOrConflictingSizes) {
  expect_rejected({"--m", "4"}, "--n");
  expect_rejected({"--m", "4", "--n", "4", "--sizes", "8"}, "--sizes");
}

// The command line limits M, N and K to 2^31 - 1 (cuBLAS's int sizes), exactly at the boundary.
TEST(Cli, RejectsExtentsBeyond32Bits) {
  expect_rejected({"--m", "2147483648", "--n", "1", "--k", "1"}, "--m/--n/--k");
  expect_rejected({"--m", "1", "--n", "1", "--k", "2147483648"}, "--m/--n/--k");
  expect_rejected({"--sizes", "1x2147483648x1"}, "--sizes");
  EXPECT_EQ(parse({"--m", "2147483647", "--n", "1", "--k", "1"}).sizes,
            (std::vector<mm::ProblemSize>{{2147483647, 1, 1}}));
}

// A matrix of more than 2^31 elements is not the command line's business: cuBLAS and 64-bit kernels
// take it, and a 32-bit kernel refuses it itself (mm::launch::int32_offset_rejects).
TEST(Cli, LeavesElementCountsToTheKernels) {
  EXPECT_EQ(parse({"--m", "100000", "--n", "100000", "--k", "1"}).sizes,
            (std::vector<mm::ProblemSize>{{100000, 100000, 1}}));
  mm::CliSpec copy = spec();
  copy.has_k = false;
  EXPECT_EQ(parse({"--sizes", "65536x65536"}, copy).sizes, (std::vector<mm::ProblemSize>{{65536, 65536, 1}}));
}

TEST(Cli, RejectsUnknownKernelLayoutAndFlag) {
  expect_rejected({"--kernel", "fastest"}, "--kernel");
  expect_rejected({"--layout", "RRX"}, "--layout");
  expect_rejected({"--frobnicate"}, "--frobnicate");
  expect_rejected({"--m"}, "--m");
}

TEST(Cli, HelpExitsZeroWithText) {
  try {
    parse({"--help"});
    ADD_FAILURE() << "--help did not stop parsing";
  } catch (const mm::CliError& e) {
    EXPECT_EQ(e.exit_code, 0);
    EXPECT_NE(std::string(e.what()).find("--sizes"), std::string::npos);
  }
}

// --help shows what each option takes: numbers as INT (CLI11 would say TEXT: the values are parsed by parse_int).
TEST(Cli, HelpShowsTheTypeOfEachValue) {
  try {
    parse({"--help"});
    ADD_FAILURE() << "--help did not stop parsing";
  } catch (const mm::CliError& e) {
    const std::string help = e.what();
    for (const char* shown : {"--m INT", "--n INT", "--k INT", "--reps INT", "--warmup INT", "--seed INT",
                              "--sizes SIZES", "--kernel NAMES", "--layout ORDERS", "--csv FILE"})
      EXPECT_NE(help.find(shown), std::string::npos) << shown << " not in:\n" << help;
    EXPECT_EQ(help.find("TEXT"), std::string::npos) << help;
  }
}

// A --csv that cannot be written is bad input, found while parsing: before the run, not after it.
TEST(Cli, RejectsAnUnwritableCsvBeforeTheRun) {
  expect_rejected({"--csv", "/nonexistent-mm-dir/x.csv"}, "--csv");
  try {
    parse({"--csv", "/nonexistent-mm-dir/x.csv"});
  } catch (const mm::CliError& e) {
    EXPECT_EQ(std::string(e.what()), "error: --csv: cannot write '/nonexistent-mm-dir/x.csv': No such file or directory");
  }
  EXPECT_EQ(parse({}).program, "chXX");
}

// ---- The ceiling probes' command line (parse_probe_cli: --csv, --iters, --reps) ----

mm::ProbeOptions parse_probe(std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"chXX_ceiling"};
  argv.insert(argv.end(), args);
  return mm::parse_probe_cli(int(argv.size()), argv.data(),
                             {.program = "chXX_ceiling", .description = "a probe", .iters_help = "loops", .default_iters = 64});
}

// The message parse_probe_cli throws for `args`, after checking its exit code; "" when it accepts them.
std::string probe_error(std::initializer_list<const char*> args, int exit_code = 2) {
  try {
    parse_probe(args);
  } catch (const mm::CliError& e) {
    EXPECT_EQ(e.exit_code, exit_code) << e.what();
    return e.what();
  }
  return "";
}

TEST(ProbeCli, DefaultsAndValues) {
  const mm::ProbeOptions d = parse_probe({});
  EXPECT_EQ(d.iters, 64);
  EXPECT_EQ(d.reps, 10);
  EXPECT_EQ(d.csv, "");
  const mm::ProbeOptions o = parse_probe({"--iters", "16777216", "--reps", "1000", "--csv", "out.csv"});
  EXPECT_EQ(o.iters, 1 << 24);
  EXPECT_EQ(o.reps, 1000);
  EXPECT_EQ(o.csv, "out.csv");
}

TEST(ProbeCli, RejectsOutOfRangeAndUnknownInOneLine) {
  EXPECT_EQ(probe_error({"--iters", "0"}), "error: --iters: Value 0 not in range 1 to 16777216");
  EXPECT_EQ(probe_error({"--iters", "16777217"}), "error: --iters: Value 16777217 not in range 1 to 16777216");
  EXPECT_EQ(probe_error({"--reps", "1001"}), "error: --reps: Value 1001 not in range 1 to 1000");
  EXPECT_EQ(probe_error({"--bogus"}), "error: The following argument was not expected: --bogus");
  EXPECT_EQ(probe_error({"--csv", "/nonexistent-mm-dir/x.csv"}),
            "error: --csv: cannot write '/nonexistent-mm-dir/x.csv': No such file or directory");
}

TEST(ProbeCli, HelpExitsZeroWithTheOptions) {
  const std::string help = probe_error({"--help"}, 0);
  for (const char* shown : {"a probe", "--csv FILE", "--iters INT:INT in [1 - 16777216]", "loops", "--reps INT"})
    EXPECT_NE(help.find(shown), std::string::npos) << shown << " not in:\n" << help;
}

// ---- Launch arithmetic and the 32-bit rule (gemm/launch.hpp), at their boundaries ----

using mm::GemmProblem;
namespace launch = mm::launch;

TEST(LaunchRule, TiledMaxOffsetRoundsRowsAndColumnsUpToWholeTiles) {
  // 5x3 row-major, 4x2 tiles: covers 8x4, last offset 7*3 + 3*1 (beyond the 15 elements).
  EXPECT_EQ(launch::tiled_max_offset(mm::MatrixShape{5, 3, mm::Order::row}, 4, 2), 24);
  // The same matrix column-major: 7*1 + 3*5.
  EXPECT_EQ(launch::tiled_max_offset(mm::MatrixShape{5, 3, mm::Order::col}, 4, 2), 22);
  // Whole tiles: the last element itself.
  EXPECT_EQ(launch::tiled_max_offset(mm::MatrixShape{8, 4, mm::Order::row}, 4, 2), 31);
}

TEST(LaunchRule, OffsetRuleAcceptsExactly2To31Elements) {
  // C of 2^14 x 2^17 = 2^31 elements in whole 128x128 tiles: last offset 2^31 - 1, the largest int.
  EXPECT_EQ(launch::int32_offset_rejects(GemmProblem{16384, 131072, 1}, 128, 128, 8), "");
  // One more row is a whole tile more: 16512 x 131072 reaches beyond 2^31 - 1, and C is named.
  const std::string why = launch::int32_offset_rejects(GemmProblem{16385, 131072, 1}, 128, 128, 8);
  EXPECT_NE(why.find("C (16385x131072"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  // Without tiles (1x1x1) the same C is only one row larger, still beyond.
  EXPECT_NE(launch::int32_offset_rejects(GemmProblem{16385, 131072, 1}, 1, 1, 1), "");
  // The same sizes with the roles of A: M x K column-major, rounded to 128x8.
  GemmProblem col_a{16384, 1, 131072, mm::Order::col};
  EXPECT_EQ(launch::int32_offset_rejects(col_a, 128, 1, 8), "");
  col_a.k += 1;  // 131073 columns round up to 131080: (16384 - 1) + (131080 - 1) * 16384 > 2^31 - 1
  EXPECT_NE(launch::int32_offset_rejects(col_a, 128, 1, 8).find("A ("), std::string::npos);
  // An extent beyond int is refused even where no offset would be (a 2^31 x 1 x 1 product).
  EXPECT_NE(launch::int32_offset_rejects(GemmProblem{std::int64_t(1) << 31, 1, 1}, 1, 1, 1), "");
}

TEST(LaunchRule, IndexRuleForSixtyFourBitOffsets) {
  // 64-bit offsets: a 2^31 - 1 by 2^31 - 1 matrix is fine, as long as every index of the tiles is an int.
  EXPECT_EQ(launch::int32_index_rejects(2147483647, 2147483647, 32, 32), "");
  EXPECT_NE(launch::int32_index_rejects(2147483648, 1, 32, 32), "");
  EXPECT_NE(launch::int32_index_rejects(1, 2147483648, 32, 32), "");
  // A tile that does not divide 2^31: 2^31 - 1 rounds up to 2^31 + 1 with tiles of 3 (index 2^31 too far).
  EXPECT_NE(launch::int32_index_rejects(2147483647, 1, 3, 3), "");
  EXPECT_EQ(launch::int32_index_rejects(2147483646, 1, 3, 3), "");
}

TEST(LaunchRule, CappedBlocksNeverExceedTheGridLimit) {
  EXPECT_EQ(launch::capped_blocks(100, 8, launch::max_grid_y), 13);
  EXPECT_EQ(launch::capped_blocks(65535 * 8, 8, launch::max_grid_y), 65535);
  EXPECT_EQ(launch::capped_blocks(1000000, 8, launch::max_grid_y), 65535);  // the grid-stride loop does the rest
  EXPECT_EQ(launch::capped_blocks(1000000, 32, launch::max_grid_x), 31250);
}

}  // namespace
