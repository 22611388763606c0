// Chapter 01: every CPU variant equals the fp64 reference at awkward sizes, with C
// poisoned (NaN) first so an element a variant forgets to write fails; the
// chapter's --threads / --thread-sweep flags.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "01_cpu_matmul/ch01_cli.hpp"
#include "01_cpu_matmul/cpu_matmul.hpp"
#include "harness/dtype.hpp"
#include "harness/problem.hpp"
#include "harness/random.hpp"
#include "harness/reference.hpp"

namespace {

using Kernel = std::function<void(const float*, const float*, float*, std::int64_t, std::int64_t, std::int64_t)>;

struct Size {
  std::int64_t m, n, k;
};

// Odd on purpose: 1, primes, one past a block multiple (KB = 128, NB = 256), vectors.
const std::vector<Size> kSizes = {
    {1, 1, 1},      {17, 33, 9},   {127, 129, 65}, {256, 1, 300},  {1, 257, 1},
    {31, 257, 129}, {13, 7, 131},  {2, 513, 3},    {5, 300, 257},
};

void expect_matches_reference(const std::string& name, const Kernel& run) {
  for (const Size& s : kSizes) {
    const mm::GemmProblem p{s.m, s.n, s.k};
    const auto a = mm::random_host<float>(std::size_t(p.m * p.k), 7);  // (M,K)
    const auto b = mm::random_host<float>(std::size_t(p.k * p.n), 8);  // (K,N)
    std::vector<float> c(std::size_t(p.m * p.n), std::numeric_limits<float>::quiet_NaN());  // poisoned (M,N)
    run(a.data(), b.data(), c.data(), p.m, p.n, p.k);
    const mm::CheckResult r =
        mm::check_gemm(mm::reference_gemm_host(p, a, b), c, mm::Order::row, mm::elementwise_tolerance(mm::DType::f32));
    EXPECT_TRUE(r.ok) << name << " at " << s.m << "x" << s.n << "x" << s.k << ": " << r.summary;
  }
}

TEST(Ch01Kernels, NaiveMatchesReference) { expect_matches_reference("naive", mm::ch01::naive_ijk); }

TEST(Ch01Kernels, IkjMatchesReference) { expect_matches_reference("ikj", mm::ch01::reordered_ikj); }

TEST(Ch01Kernels, BlockedMatchesReference) {
  expect_matches_reference("blocked", [](auto... args) { mm::ch01::blocked(args...); });
}

// Tiny blocks make every size above cross many block edges, partial ones included.
TEST(Ch01Kernels, BlockedWithSmallBlocksMatchesReference) {
  expect_matches_reference("blocked<3,5>", [](auto... args) { mm::ch01::blocked<3, 5>(args...); });
  expect_matches_reference("blocked<1,1>", [](auto... args) { mm::ch01::blocked<1, 1>(args...); });
}

// 7 threads is more than the rows of several sizes (1, 2, 5): those start fewer workers.
TEST(Ch01Kernels, ThreadedMatchesReferenceForEveryThreadCount) {
  for (unsigned t : {1u, 2u, 3u, 7u})
    expect_matches_reference("threaded(" + std::to_string(t) + ")",
                             [t](auto... args) { mm::ch01::threaded(args..., t); });
}

TEST(Ch01Kernels, ThreadedDefaultUsesAtLeastOneThread) {
  EXPECT_GE(mm::ch01::default_threads(), 1u);
  expect_matches_reference("threaded(default)", [](auto... args) { mm::ch01::threaded(args...); });
}

// A variant overwrites C: whatever C held before (here garbage, not zeros) must not leak into the result.
TEST(Ch01Kernels, RepeatedRunsGiveTheSameResult) {
  const std::int64_t m = 33, n = 65, k = 17;
  const auto a = mm::random_host<float>(std::size_t(m * k), 1);
  const auto b = mm::random_host<float>(std::size_t(k * n), 2);
  std::vector<float> first(std::size_t(m * n)), second(std::size_t(m * n), 123.0f);
  mm::ch01::threaded(a.data(), b.data(), first.data(), m, n, k, 3);
  mm::ch01::threaded(a.data(), b.data(), second.data(), m, n, k, 3);
  EXPECT_EQ(first, second);
}

// --- the chapter's command line ------------------------------------------------

mm::ch01::Options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "ch01_cpu_matmul");
  std::vector<const char*> argv;
  for (const auto& s : args) argv.push_back(s.c_str());
  return mm::ch01::parse_options(int(argv.size()), argv.data());
}

// Bad input: a CliError with exit code 2 and a one-line message that names the flag.
void expect_rejected(std::vector<std::string> args, const std::string& flag) {
  try {
    parse(args);
    ADD_FAILURE() << "accepted: " << args.back();
  } catch (const mm::CliError& e) {
    EXPECT_EQ(e.exit_code, 2);
    const std::string msg = e.what();
    EXPECT_NE(msg.find(flag), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(Ch01Cli, Defaults) {
  const auto o = parse({});
  EXPECT_EQ(o.threads, mm::ch01::default_threads());
  EXPECT_FALSE(o.thread_sweep);
  EXPECT_EQ(o.cli.kernels, (std::vector<std::string>{"naive", "ikj", "blocked", "threaded"}));
  ASSERT_EQ(o.cli.sizes.size(), 3u);
  EXPECT_EQ(o.cli.sizes.back(), (mm::ProblemSize{1024, 1024, 1024}));
  EXPECT_EQ(o.cli.reps, 3);
  EXPECT_EQ(o.cli.warmup, 1);
}

TEST(Ch01Cli, AcceptsThreadsAndSweep) {
  const auto o = parse({"--threads", "3", "--thread-sweep", "--kernel", "ikj,threaded", "--sizes", "64"});
  EXPECT_EQ(o.threads, 3u);
  EXPECT_TRUE(o.thread_sweep);
  EXPECT_EQ(o.cli.kernels, (std::vector<std::string>{"ikj", "threaded"}));
  EXPECT_EQ(parse({"--threads=1"}).threads, 1u);
}

TEST(Ch01Cli, RejectsBadThreads) {
  for (const char* bad : {"0", "-1", "two", "2x", "", "1.5", "99999999999999999999", "1025"})
    expect_rejected({"--threads", bad}, "--threads");
  expect_rejected({"--threads"}, "--threads");  // value missing
}

TEST(Ch01Cli, RejectsUnknownKernel) { expect_rejected({"--kernel", "cublas"}, "--kernel"); }

TEST(Ch01Cli, HelpMentionsTheChapterFlags) {
  try {
    parse({"--help"});
    ADD_FAILURE() << "--help did not stop parsing";
  } catch (const mm::CliError& e) {
    EXPECT_EQ(e.exit_code, 0);
    const std::string help = e.what();
    EXPECT_NE(help.find("--threads"), std::string::npos);
    EXPECT_NE(help.find("--thread-sweep"), std::string::npos);
  }
}

}  // namespace
