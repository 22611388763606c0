// Chapter 01: every CPU variant equals the fp64 reference at awkward sizes, with C
// poisoned (NaN) first so an element a variant forgets to write fails; the CPU
// topology (SMT siblings from a fake sysfs tree, the pin order, the CPU model);
// the chapter's --threads / --thread-sweep / --no-pin / --force flags, the run-time estimate behind
// --force, and the progress lines of long sizes. (tests/cli runs the binary itself.)
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <sched.h>
#include <unistd.h>

#include "01_cpu_matmul/ch01_cli.hpp"
#include "01_cpu_matmul/cpu_matmul.hpp"
#include "01_cpu_matmul/steps.hpp"
#include "01_cpu_matmul/cpu_topology.hpp"
#include "01_cpu_matmul/progress.hpp"
#include "harness/dtype.hpp"
#include "gemm/problem.hpp"
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

// Every step of the chapter's list (steps.hpp), as the binary runs it, with 3 workers for the threaded one.
TEST(Ch01Kernels, EveryStepOfTheListMatchesReference) {
  for (const mm::ch01::CpuStep& step : mm::ch01::kSteps)
    expect_matches_reference(std::string(step.name), [run = step.run](auto... args) { run(args..., 3u, {}); });
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
  EXPECT_EQ(mm::ch01::default_threads(), mm::ch01::usable_cpus().size());
  expect_matches_reference("threaded(default)", [](auto... args) { mm::ch01::threaded(args...); });
}

// Pinned workers compute the same thing; more workers than CPUs in the list share them (t % size).
TEST(Ch01Kernels, ThreadedPinnedMatchesReference) {
  const std::vector<int> cpus = mm::ch01::machine_topology().pin_order();
  const int failures_before = mm::ch01::pin_failures().load();
  for (unsigned t : {1u, 2u, 5u})
    expect_matches_reference("threaded(" + std::to_string(t) + ", pinned)",
                             [t, &cpus](auto... args) { mm::ch01::threaded(args..., t, cpus); });
  EXPECT_EQ(mm::ch01::pin_failures().load(), failures_before) << "a worker could not be pinned to a usable CPU";
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

// --- the CPU topology ----------------------------------------------------------

std::vector<int> list(std::string_view text) {
  const auto l = mm::ch01::parse_cpu_list(text);
  EXPECT_TRUE(l.has_value()) << "rejected: '" << text << "'";
  return l.value_or(std::vector<int>{});
}

TEST(Ch01Topology, ParsesCpuLists) {
  EXPECT_EQ(list("0"), (std::vector<int>{0}));
  EXPECT_EQ(list("0,16\n"), (std::vector<int>{0, 16}));
  EXPECT_EQ(list("0-3"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(list("10-11,0-1,8\n"), (std::vector<int>{0, 1, 8, 10, 11}));  // sorted
  EXPECT_EQ(list("2,2,1-2"), (std::vector<int>{1, 2}));                    // no duplicates
}

TEST(Ch01Topology, RejectsMalformedCpuLists) {
  for (const char* bad : {"", "\n", "a", "3-1", "1,", ",1", "1-", "1--2", "1 2", "-1", "0x1", "99999999999", "1,,2"})
    EXPECT_FALSE(mm::ch01::parse_cpu_list(bad).has_value()) << "accepted: '" << bad << "'";
}

// A fake /sys/devices/system/cpu: cpu<N>/topology/{thread_siblings_list,physical_package_id}.
class FakeSysfs {
 public:
  FakeSysfs() {
    static std::atomic<int> n{0};
    dir_ = std::filesystem::temp_directory_path() /
           ("ch01_sysfs_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    std::filesystem::remove_all(dir_);
  }
  ~FakeSysfs() { std::filesystem::remove_all(dir_); }
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;
  void cpu(int c, const std::string& siblings, const std::string& package = "0\n") {
    const auto t = dir_ / ("cpu" + std::to_string(c)) / "topology";
    std::filesystem::create_directories(t);
    std::ofstream(t / "thread_siblings_list") << siblings;
    std::ofstream(t / "physical_package_id") << package;
  }
  std::string path() const { return dir_.string(); }

 private:
  std::filesystem::path dir_;
};

std::vector<int> iota(int n) {
  std::vector<int> v(std::size_t(n), 0);
  for (int i = 0; i < n; ++i) v[std::size_t(i)] = i;
  return v;
}

// Intel's usual numbering: the siblings of core c are c and c + cores.
TEST(Ch01Topology, SiblingsFarApartPinPhysicalCoresFirst) {
  FakeSysfs fs;
  for (int c = 0; c < 8; ++c) fs.cpu(c, std::to_string(c % 4) + "," + std::to_string(c % 4 + 4) + "\n");
  const auto t = mm::ch01::read_topology(fs.path(), iota(8));
  EXPECT_TRUE(t.known);
  EXPECT_EQ(t.physical(), 4u);
  EXPECT_EQ(t.logical(), 8u);
  EXPECT_EQ(t.max_threads_per_core(), 2u);
  EXPECT_EQ(t.cores, (std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(t.pin_order(), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(t.describe(), "4 cores x 2 threads = 8 logical CPUs on 1 socket");
}

// AMD's and many VMs' numbering: siblings are neighbours ("0-1"); the first 4 workers must still take 4 cores.
TEST(Ch01Topology, AdjacentSiblingsPinPhysicalCoresFirst) {
  FakeSysfs fs;
  for (int c = 0; c < 8; ++c) fs.cpu(c, std::to_string(c / 2 * 2) + "-" + std::to_string(c / 2 * 2 + 1) + "\n");
  const auto t = mm::ch01::read_topology(fs.path(), iota(8));
  EXPECT_EQ(t.cores, (std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(t.pin_order(), (std::vector<int>{0, 2, 4, 6, 1, 3, 5, 7}));
}

TEST(Ch01Topology, NoSmtIsOneThreadPerCore) {
  FakeSysfs fs;
  for (int c = 0; c < 3; ++c) fs.cpu(c, std::to_string(c));
  const auto t = mm::ch01::read_topology(fs.path(), {2, 0, 1, 1});  // unsorted, duplicated: as a set
  EXPECT_EQ(t.pin_order(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(t.max_threads_per_core(), 1u);
  EXPECT_EQ(t.describe(), "3 cores x 1 thread = 3 logical CPUs on 1 socket");
}

// taskset / cgroups: only the usable CPUs count; a core with one usable sibling has one thread.
TEST(Ch01Topology, OnlyUsableCpusCount) {
  FakeSysfs fs;
  for (int c = 0; c < 4; ++c) fs.cpu(c, c < 2 ? "0-1" : "2-3");
  const auto t = mm::ch01::read_topology(fs.path(), {1, 2, 3});
  EXPECT_EQ(t.cores, (std::vector<std::vector<int>>{{1}, {2, 3}}));
  EXPECT_EQ(t.pin_order(), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(t.describe(), "2 cores x 1-2 threads = 3 logical CPUs on 1 socket");
}

TEST(Ch01Topology, CountsSockets) {
  FakeSysfs fs;
  for (int c = 0; c < 4; ++c) fs.cpu(c, std::to_string(c), c < 2 ? "0\n" : "1\n");
  EXPECT_EQ(mm::ch01::read_topology(fs.path(), iota(4)).packages, 2);
}

// No sysfs, a malformed file, or a list without the CPU itself: topology unknown, every CPU its own core.
TEST(Ch01Topology, UnreadableSysfsFallsBackToOneCorePerCpu) {
  {
    FakeSysfs fs;  // nothing written: the directory does not exist
    const auto t = mm::ch01::read_topology(fs.path(), iota(3));
    EXPECT_FALSE(t.known);
    EXPECT_EQ(t.pin_order(), (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(t.describe(), "3 logical CPUs (core topology unknown)");
  }
  {
    FakeSysfs fs;
    fs.cpu(0, "0,2");
    fs.cpu(1, "garbage");
    EXPECT_FALSE(mm::ch01::read_topology(fs.path(), iota(2)).known);
  }
  {
    FakeSysfs fs;
    fs.cpu(0, "1");  // does not list cpu0 itself
    fs.cpu(1, "1");
    EXPECT_FALSE(mm::ch01::read_topology(fs.path(), iota(2)).known);
  }
  EXPECT_EQ(mm::ch01::read_topology("/nonexistent", {}).logical(), 0u);
}

// This machine: every usable CPU appears once in the pin order, and pinning to the first one takes effect.
TEST(Ch01Topology, ThisMachine) {
  const auto t = mm::ch01::machine_topology();
  std::vector<int> order = t.pin_order();
  ASSERT_FALSE(order.empty());
  std::sort(order.begin(), order.end());
  EXPECT_EQ(order, mm::ch01::usable_cpus());
  const int cpu = t.pin_order().back();
  int ran_on = -1;
  bool pinned = false;
  std::thread([&] {
    pinned = mm::ch01::pin_current_thread(cpu);
    ran_on = sched_getcpu();
  }).join();
  EXPECT_TRUE(pinned);
  EXPECT_EQ(ran_on, cpu);
}

TEST(Ch01Topology, PinningToAnImpossibleCpuFailsAndIsCounted) {
  const int before = mm::ch01::pin_failures().load();
  bool pinned = true;
  std::thread([&] { pinned = mm::ch01::pin_current_thread(-1); }).join();
  EXPECT_FALSE(pinned);
  std::thread([&] { pinned = mm::ch01::pin_current_thread(1 << 30); }).join();
  EXPECT_FALSE(pinned);
  EXPECT_EQ(mm::ch01::pin_failures().load(), before + 2);
  mm::ch01::pin_failures() = before;  // leave the count as the other tests expect it
}

TEST(Ch01Topology, CpuModelFromCpuinfo) {
  const std::string intel =
      "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n"
      "model name\t: Intel(R) Xeon(R) Processor\nstepping\t: 8\n\n"
      "processor\t: 1\nmodel name\t: Another, CPU\n";
  EXPECT_EQ(mm::ch01::cpu_model(intel), "Intel(R) Xeon(R) Processor (family 6 model 143 stepping 8)");
  EXPECT_EQ(mm::ch01::cpu_model("model name : Vendor, Model 9\n"), "Vendor  Model 9");  // no comma in a CSV field
  EXPECT_EQ(mm::ch01::cpu_model("processor : 0\nCPU implementer : 0x41\nCPU part : 0xd4f\n"), "unknown CPU");
  EXPECT_EQ(mm::ch01::cpu_model(""), "unknown CPU");
  EXPECT_FALSE(mm::ch01::machine_cpu_model().empty());
}

// --- the chapter's command line ------------------------------------------------

// A machine of `cores` cores with `smt` logical CPUs each (cpu c on core c % cores).
mm::ch01::CpuTopology fake_machine(int cores, int smt) {
  mm::ch01::CpuTopology t;
  t.known = true;
  for (int c = 0; c < cores; ++c) {
    t.cores.emplace_back();
    for (int s = 0; s < smt; ++s) t.cores.back().push_back(c + s * cores);
  }
  return t;
}

mm::ch01::Options parse(std::vector<std::string> args, const mm::ch01::CpuTopology& topo = fake_machine(8, 2)) {
  args.insert(args.begin(), "ch01_cpu_matmul");
  std::vector<const char*> argv;
  for (const auto& s : args) argv.push_back(s.c_str());
  return mm::ch01::parse_options(int(argv.size()), argv.data(), topo);
}

// Bad input: a CliError with exit code 2 and a one-line message that names the flag.
void expect_rejected(std::vector<std::string> args, const std::string& flag,
                     const mm::ch01::CpuTopology& topo = fake_machine(8, 2)) {
  try {
    parse(args, topo);
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
  EXPECT_EQ(o.threads, 16u);  // every logical CPU of the (fake) machine
  EXPECT_FALSE(o.thread_sweep);
  EXPECT_TRUE(o.pin);
  EXPECT_EQ(o.cli.kernels, (std::vector<std::string>{"naive", "ikj", "blocked", "threaded"}));
  ASSERT_EQ(o.cli.sizes.size(), 3u);
  EXPECT_EQ(o.cli.sizes.back(), (mm::ProblemSize{1024, 1024, 1024}));
  EXPECT_EQ(o.cli.reps, 10);
  EXPECT_EQ(o.cli.warmup, 1);
  EXPECT_EQ(parse({}, fake_machine(2, 1)).threads, 2u);
}

TEST(Ch01Cli, DefaultsOnThisMachine) {
  const std::vector<std::string> args = {"ch01_cpu_matmul"};
  const char* argv[] = {args[0].c_str()};
  const auto o = mm::ch01::parse_options(1, argv);
  EXPECT_EQ(o.threads, mm::ch01::usable_cpus().size());
}

TEST(Ch01Cli, AcceptsThreadsAndSweep) {
  const auto o = parse({"--threads", "3", "--thread-sweep", "--kernel", "ikj,threaded", "--sizes", "64"});
  EXPECT_EQ(o.threads, 3u);
  EXPECT_TRUE(o.thread_sweep);
  EXPECT_EQ(o.cli.kernels, (std::vector<std::string>{"ikj", "threaded"}));
  EXPECT_EQ(parse({"--threads=1"}).threads, 1u);
  EXPECT_EQ(parse({"--threads=16"}).threads, 16u);  // all logical CPUs, SMT siblings included
}

TEST(Ch01Cli, RejectsBadThreads) {
  for (const char* bad : {"0", "-1", "two", "2x", "", "1.5", "99999999999999999999", "1025"})
    expect_rejected({"--threads", bad}, "--threads");
  expect_rejected({"--threads"}, "--threads");  // value missing
}

// Pinned, a worker per logical CPU at most; --no-pin lets them share CPUs, up to max_threads.
TEST(Ch01Cli, ThreadsBeyondTheLogicalCpusNeedNoPin) {
  expect_rejected({"--threads", "17"}, "--threads");
  expect_rejected({"--threads", "3"}, "--threads", fake_machine(2, 1));
  const auto o = parse({"--threads", "64", "--no-pin"});
  EXPECT_EQ(o.threads, 64u);
  EXPECT_FALSE(o.pin);
  expect_rejected({"--threads", "1025", "--no-pin"}, "--threads");
}

TEST(Ch01Cli, RejectsUnknownKernel) { expect_rejected({"--kernel", "cublas"}, "--kernel"); }

TEST(Ch01Cli, RejectsUnknownFlag) { expect_rejected({"--pin-threads"}, "--pin-threads"); }

// The sweep: powers of two, the physical core count (the last count without SMT siblings), all threads.
TEST(Ch01Cli, SweepCounts) {
  using V = std::vector<unsigned>;
  EXPECT_EQ(mm::ch01::sweep_counts(16, 8), (V{1, 2, 4, 8, 16}));
  EXPECT_EQ(mm::ch01::sweep_counts(32, 16), (V{1, 2, 4, 8, 16, 32}));
  EXPECT_EQ(mm::ch01::sweep_counts(24, 12), (V{1, 2, 4, 8, 12, 16, 24}));
  EXPECT_EQ(mm::ch01::sweep_counts(6, 6), (V{1, 2, 4, 6}));
  EXPECT_EQ(mm::ch01::sweep_counts(4, 8), (V{1, 2, 4}));  // --threads below the core count
  EXPECT_EQ(mm::ch01::sweep_counts(3, 0), (V{1, 2, 3}));
  EXPECT_EQ(mm::ch01::sweep_counts(1, 1), (V{1}));
}

TEST(Ch01Cli, HelpMentionsTheChapterFlags) {
  try {
    parse({"--help"});
    ADD_FAILURE() << "--help did not stop parsing";
  } catch (const mm::CliError& e) {
    EXPECT_EQ(e.exit_code, 0);
    const std::string help = e.what();
    EXPECT_NE(help.find("--threads"), std::string::npos);
    EXPECT_NE(help.find("--thread-sweep"), std::string::npos);
    EXPECT_NE(help.find("--no-pin"), std::string::npos);
  }
}

// --- how long a run takes: the estimate, the refusal, the progress lines ---------

// The default run (256³, 512³, 1024³; 1 + 10 rounds) takes 1.5 minutes on the 2-core EPYC that CI uses: estimated
// above that (the estimate errs long) and below the warning.
TEST(Ch01Estimate, DefaultRunIsMinutesWithoutWarning) {
  const auto o = parse({}, fake_machine(2, 1));
  const mm::ch01::RunEstimate e = mm::ch01::estimate_run(o, 2);
  EXPECT_GT(e.seconds, 60);
  EXPECT_LT(e.seconds, mm::ch01::warn_after_s);
  EXPECT_NE(e.slowest.find("1024x1024x1024: naive"), std::string::npos) << e.slowest;
}

// 2048³ measured 11 min on the EPYC (naive 55 s a run): estimated past the limit; --reps 3 brings it under.
TEST(Ch01Estimate, RefusesRunsPastTenMinutesUnlessForced) {
  expect_rejected({"--sizes", "2048"}, "--sizes", fake_machine(2, 1));
  expect_rejected({"--m", "8192", "--n", "8192", "--k", "8192", "--kernel", "naive"}, "--force", fake_machine(2, 1));
  EXPECT_TRUE(parse({"--sizes", "8192", "--force"}, fake_machine(2, 1)).force);
  EXPECT_FALSE(parse({"--sizes", "2048", "--reps", "3"}, fake_machine(2, 1)).force);
  EXPECT_NO_THROW(parse({"--sizes", "4096", "--kernel", "threaded"}));  // 16 workers: seconds a run
}

TEST(Ch01Estimate, RefusalSaysHowLong) {
  try {
    parse({"--sizes", "8192"}, fake_machine(2, 1));
    ADD_FAILURE() << "8192³ with the naive loop was accepted";
  } catch (const mm::CliError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("would take about"), std::string::npos) << msg;
    EXPECT_NE(msg.find(" h "), std::string::npos) << "hours, said as hours: " << msg;
    EXPECT_NE(msg.find("8192x8192x8192: naive"), std::string::npos) << msg;
  }
}

TEST(Ch01Estimate, SlowerKernelsAndBiggerMatricesAreAssumedSlower) {
  using mm::ch01::assumed_gflops;
  const mm::ProblemSize s256{256, 256, 256}, s1024{1024, 1024, 1024}, s8192{8192, 8192, 8192};
  EXPECT_GT(assumed_gflops("naive", s256, 1), assumed_gflops("naive", s1024, 1));
  EXPECT_GT(assumed_gflops("naive", s1024, 1), assumed_gflops("naive", s8192, 1));
  EXPECT_GT(assumed_gflops("ikj", s1024, 1), assumed_gflops("naive", s1024, 1));
  EXPECT_EQ(assumed_gflops("threaded_4", s1024, 4), 4 * assumed_gflops("threaded_1", s1024, 1));
  EXPECT_EQ(mm::ch01::duration_text(45), "45 s");
  EXPECT_EQ(mm::ch01::duration_text(600), "10 min");
  EXPECT_EQ(mm::ch01::duration_text(5.5 * 3600), "5.5 h");
}

// Progress lines go to the stream given; with no interval every run prints one, and the time to go is the
// remaining runs at their variants' last times (assumed before the first).
TEST(Ch01Progress, LinesSayRoundRunsAndTimeToGo) {
  char* text = nullptr;
  std::size_t len = 0;
  std::FILE* out = open_memstream(&text, &len);
  ASSERT_NE(out, nullptr);
  {
    mm::ch01::Progress progress("64x64x64", {1000.0, 2000.0}, 2, 0.0, out);  // 2 variants, 2 rounds
    EXPECT_DOUBLE_EQ(progress.to_go_ms(), 6000.0);
    progress.after_run(0, 0, 100.0);  // variant 0 is faster than assumed
    EXPECT_DOUBLE_EQ(progress.to_go_ms(), 2000.0 + 100.0 + 2000.0);
    progress.after_run(0, 1, 200.0);
    progress.after_run(1, 0, 100.0);
    progress.after_run(1, 1, 200.0);
    EXPECT_DOUBLE_EQ(progress.to_go_ms(), 0.0);
  }
  std::fclose(out);
  const std::string lines(text, len);
  std::free(text);
  EXPECT_NE(lines.find("64x64x64: round 1 of 2, 1 of 4 runs done"), std::string::npos) << lines;
  EXPECT_NE(lines.find("64x64x64: round 2 of 2, 4 of 4 runs done"), std::string::npos) << lines;
  EXPECT_NE(lines.find("about 0 s to go"), std::string::npos) << lines;
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 4) << lines;
}

// With the interval of a real run, runs of milliseconds print nothing.
TEST(Ch01Progress, ShortRunsPrintNothing) {
  char* text = nullptr;
  std::size_t len = 0;
  std::FILE* out = open_memstream(&text, &len);
  ASSERT_NE(out, nullptr);
  {
    mm::ch01::Progress progress("16x16x16", {1.0}, 3, 5.0, out);
    for (int r = 0; r < 3; ++r) progress.after_run(r, 0, 1.0);
  }
  std::fclose(out);
  EXPECT_EQ(len, 0u) << text;
  std::free(text);
}

}  // namespace
