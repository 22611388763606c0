// The shared command line: good input parses, bad input is rejected with one
// line that names the flag (the binaries print it and exit 2).
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "harness/cli.hpp"
#include "harness/launch.hpp"

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

TEST(Cli, RejectsSizesBeyond32BitIndexing) {
  expect_rejected({"--m", "100000", "--n", "100000", "--k", "1"}, "--m/--n/--k");
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

// ---- Launch arithmetic (harness/launch.hpp) ----

namespace launch = mm::launch;

TEST(LaunchRule, CappedBlocksNeverExceedTheGridLimit) {
  EXPECT_EQ(launch::capped_blocks(100, 8, launch::max_grid_y), 13);
  EXPECT_EQ(launch::capped_blocks(65535 * 8, 8, launch::max_grid_y), 65535);
  EXPECT_EQ(launch::capped_blocks(1000000, 8, launch::max_grid_y), 65535);  // the grid-stride loop does the rest
  EXPECT_EQ(launch::capped_blocks(1000000, 32, launch::max_grid_x), 31250);
}

}  // namespace
