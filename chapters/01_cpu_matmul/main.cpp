// Chapter 01: the CPU matmul ladder. Runs each variant of cpu_matmul.hpp at a few
// sizes, checks it against the fp64 reference, prints ms, GFLOP/s and the speedup
// over the naive loop, and writes the shared CSV.
//
// How it measures: the main thread and every worker are pinned to logical CPUs,
// one per physical core before any SMT sibling (cpu_topology.hpp; --no-pin turns
// that off), and the variants run in interleaved rounds (see time_rounds), so that
// a slow stretch of the machine cannot land on one variant alone.
//
// A long size reports its progress on stderr (a line every few seconds: round, time so far, time
// to go); a run estimated past ten minutes is refused unless --force (ch01_cli.hpp, estimate_run).
//
// Build and run:
//   cmake --build build --target ch01_cpu_matmul && build/bin/ch01_cpu_matmul
//   build/bin/ch01_cpu_matmul --sizes 1024 --kernel ikj,threaded --thread-sweep --csv ch01.csv
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <limits>
#include <new>
#include <span>
#include <string>
#include <vector>

#include <unistd.h>

#include "01_cpu_matmul/ch01_cli.hpp"
#include "01_cpu_matmul/cpu_matmul.hpp"
#include "01_cpu_matmul/progress.hpp"
#include "01_cpu_matmul/steps.hpp"
#include "gemm/problem.hpp"
#include "harness/random.hpp"
#include "harness/reference.hpp"
#include "harness/results.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using Kernel = std::function<void(const float*, const float*, float*, std::int64_t, std::int64_t, std::int64_t)>;

struct Variant {
  std::string name;
  Kernel run;
};

// The variants to run, in the order of the ladder; a sweep adds threaded_<t> rows.
// `cpus` (empty with --no-pin) is the pin order the threaded workers take their CPUs from.
std::vector<Variant> variants(const mm::ch01::Options& o, const mm::ch01::CpuTopology& topo,
                              const std::vector<int>& cpus) {
  using namespace mm::ch01;
  const std::span<const int> pin(cpus);
  std::vector<Variant> v;
  for (const std::string& name : o.cli.kernels)  // the steps selected, from the chapter's list (steps.hpp)
    for (const CpuStep& step : kSteps)
      if (step.name == name) v.push_back({name, [run = step.run, t = o.threads, pin](auto... args) { run(args..., t, pin); }});
  if (o.thread_sweep)
    for (unsigned t : sweep_counts(o.threads, topo.physical()))
      v.push_back({"threaded_" + std::to_string(t), [t, pin](auto... args) { threaded(args..., t, pin); }});
  return v;
}

struct Timing {
  double median_ms, min_ms, max_ms;
};

Timing summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  return {n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]), ms.front(), ms.back()};
}

// `warmup` untimed rounds, then `reps` timed rounds; a round runs every variant once,
// starting one variant later each round (round r begins with variant r mod V), so
// each variant is timed at every stage of the run and after varied predecessors.
// Before each timed run C is poisoned (NaN), outside the timed region: a run that
// skips an element leaves a NaN behind. `after_last(v)` sees C after variant v's
// last timed run (the check); `after_run(round, v, ms)` follows every run, warm-up
// rounds included (the progress lines).
std::vector<Timing> time_rounds(const std::vector<Variant>& vs, const std::vector<float>& a,
                                const std::vector<float>& b, std::vector<float>& c, const mm::GemmProblem& p,
                                int warmup, int reps, const std::function<void(std::size_t)>& after_last,
                                const std::function<void(int, std::size_t, double)>& after_run) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::size_t nv = vs.size();
  std::vector<std::vector<double>> ms(nv);
  auto elapsed_ms = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  for (int w = 0; w < warmup; ++w)
    for (std::size_t v = 0; v < nv; ++v) {
      const auto t0 = Clock::now();
      vs[v].run(a.data(), b.data(), c.data(), p.m, p.n, p.k);
      after_run(w, v, elapsed_ms(t0));
    }
  for (int r = 0; r < reps; ++r)
    for (std::size_t i = 0; i < nv; ++i) {
      const std::size_t v = (i + std::size_t(r)) % nv;
      std::fill(c.begin(), c.end(), nan);
      const auto t0 = Clock::now();
      vs[v].run(a.data(), b.data(), c.data(), p.m, p.n, p.k);
      const auto t1 = Clock::now();
      ms[v].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      if (r == reps - 1) after_last(v);
      after_run(warmup + r, v, ms[v].back());
    }
  std::vector<Timing> out;
  for (auto& m : ms) out.push_back(summarize(std::move(m)));
  return out;
}

// Refuses (one line, exit 2) a size whose matrices would not fit in this machine's memory,
// rather than letting the allocation fail or the kernel swap.
void require_fits(const mm::GemmProblem& p, bool check) {
  const double bytes = 4.0 * double(p.m * p.k + p.k * p.n + p.m * p.n) + (check ? 16.0 * double(p.m * p.n) : 0.0);
  const double phys = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  if (phys > 0 && bytes > 0.8 * phys) {
    std::fprintf(stderr, "ch01_cpu_matmul: error: --sizes/--m/--n/--k: %lldx%lldx%lld needs %.1f GB of host memory, this machine has %.1f GB\n",
                 (long long)p.m, (long long)p.n, (long long)p.k, bytes / 1e9, phys / 1e9);
    std::exit(2);
  }
}

std::string fmt(const char* f, double v) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// "0-7,16-23": a list of logical CPUs, short.
std::string cpu_ranges(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cpus[i]) + (j > i ? "-" + std::to_string(cpus[j]) : "");
    i = j + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const mm::ch01::CpuTopology topo = mm::ch01::machine_topology();
  mm::ch01::Options o;
  try {
    o = mm::ch01::parse_options(argc, argv, topo);
  } catch (const mm::CliError& e) {
    if (e.exit_code == 0) {
      std::cout << e.what();
    } else {
      std::cerr << "ch01_cpu_matmul: " << e.what() << '\n';
    }
    return e.exit_code;
  }

  for (const mm::ProblemSize& s : o.cli.sizes) require_fits({s.m, s.n, s.k}, o.cli.check);

  // Pinned: the main thread (which runs every single-threaded variant and threaded_1) on
  // the first CPU of the pin order, the workers of the threaded kernel on the order from there.
  const std::vector<int> order = o.pin ? topo.pin_order() : std::vector<int>{};
  if (o.pin && !mm::ch01::pin_current_thread(order.front())) {
    std::fprintf(stderr, "ch01_cpu_matmul: error: could not pin the main thread to CPU %d (--no-pin runs unpinned)\n",
                 order.front());
    return 2;
  }
  // What goes into the CSV's `gpu` column for this CPU chapter: model, cores, SMT, pinning.
  const std::string machine =
      mm::ch01::machine_cpu_model() + "; " + topo.describe() + (o.pin ? "; pinned" : "; not pinned");
  const std::string when = mm::utc_timestamp();
  std::printf("ch01_cpu_matmul on %s\n", mm::ch01::machine_cpu_model().c_str());
  std::printf("  %s; SMT siblings %s\n", topo.describe().c_str(),
              !topo.known ? "unknown (no sysfs topology)"
                          : topo.max_threads_per_core() > 1 ? "present (thread_siblings_list)" : "none");
  if (o.pin) {
    const std::vector<int> firsts(order.begin(), order.begin() + std::ptrdiff_t(std::min(order.size(), topo.physical())));
    std::printf("  pinned: main thread on CPU %d; workers on CPUs in the order %s (one per physical core first: %s)\n",
                order.front(), cpu_ranges(order).c_str(), cpu_ranges(firsts).c_str());
  } else {
    std::printf("  not pinned (--no-pin): the operating system places and moves the threads\n");
  }
  std::printf("  threaded uses %u workers; %d warm-up + %d timed rounds, every variant once per round%s\n",
              o.threads, o.cli.warmup, o.cli.reps, o.cli.check ? "" : " (no check)");
  const mm::ch01::RunEstimate estimate = mm::ch01::estimate_run(o, topo.physical());
  std::printf("  estimated: at most about %s in all (longest part %s); progress on stderr\n\n",
              mm::ch01::duration_text(estimate.seconds).c_str(), estimate.slowest.c_str());
  // Piped output shows the header now, not after the first size's fp64 reference.
  std::fflush(stdout);
  if (estimate.seconds > mm::ch01::warn_after_s)
    std::fprintf(stderr, "ch01_cpu_matmul: warning: this run may take about %s (%s)%s\n",
                 mm::ch01::duration_text(estimate.seconds).c_str(), estimate.slowest.c_str(),
                 o.force ? " (--force)" : "");

  const std::vector<Variant> vs = variants(o, topo, order);
  std::vector<mm::ResultRow> rows;
  bool all_ok = true;
  for (const mm::ProblemSize& s : o.cli.sizes) {
    const mm::GemmProblem p{s.m, s.n, s.k};
    const std::string size = std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
    const auto a = mm::random_host<float>(std::size_t(p.m * p.k), o.cli.seed);      // (M,K) row-major
    const auto b = mm::random_host<float>(std::size_t(p.k * p.n), o.cli.seed + 1);  // (K,N) row-major
    std::vector<float> c(std::size_t(p.m * p.n));                                   // (M,N) row-major
    std::printf("%s: %s%zu variants x (%d + %d) rounds ...\n", size.c_str(),
                o.cli.check ? "the fp64 reference, then " : "", vs.size(), o.cli.warmup, o.cli.reps);
    std::fflush(stdout);
    mm::Reference ref;
    if (o.cli.check) ref = mm::reference_gemm_host(p, a, b);

    std::vector<double> assumed_ms;
    for (const Variant& v : vs) {
      const bool threaded = v.name.rfind("threaded", 0) == 0;
      const unsigned workers = v.name == "threaded" ? o.threads
                               : threaded           ? unsigned(std::stoul(v.name.substr(9)))
                                                    : 1u;
      assumed_ms.push_back(1e3 * p.flops() * 1e-9 / mm::ch01::assumed_gflops(v.name, s, workers));
    }
    mm::ch01::Progress progress(size, assumed_ms, o.cli.warmup + o.cli.reps);
    std::vector<std::string> verdict(vs.size(), "not checked");
    std::vector<double> rel(vs.size(), mm::not_measured);
    const auto t_size = Clock::now();
    const std::vector<Timing> ts = time_rounds(vs, a, b, c, p, o.cli.warmup, o.cli.reps, [&](std::size_t v) {
      if (!o.cli.check) return;
      const mm::CheckResult r = mm::check_gemm(ref, c, mm::Order::row, mm::elementwise_tolerance(mm::DType::f32));
      rel[v] = r.rel_frobenius;
      verdict[v] = r.summary;
      all_ok = all_ok && r.ok;
    }, [&](int round, std::size_t v, double ms) { progress.after_run(round, v, ms); });
    const double size_s = std::chrono::duration<double>(Clock::now() - t_size).count();

    std::printf("%-14s %16s %12s %12s %12s %10s %12s  %s\n", "kernel", "M x N x K", "median ms", "min ms", "max ms",
                "GFLOP/s", "vs naive", "check");
    double naive_ms = mm::not_measured;
    for (std::size_t v = 0; v < vs.size(); ++v)
      if (vs[v].name == "naive") naive_ms = ts[v].median_ms;
    for (std::size_t v = 0; v < vs.size(); ++v) {
      const Timing& t = ts[v];
      mm::ResultRow row;
      row.chapter = "01_cpu_matmul";
      row.kernel = vs[v].name;
      row.dtype = "fp32";
      row.layout = p.layout_tag();
      row.m = p.m;
      row.n = p.n;
      row.k = p.k;
      row.median_ms = t.median_ms;
      row.min_ms = t.min_ms;
      row.tflops = p.flops() / (t.median_ms * 1e-3) / 1e12;
      row.rel_error = rel[v];
      row.gpu = machine;
      row.cuda_version = "n/a (CPU)";
      row.timestamp = when;
      rows.push_back(row);
      std::printf("%-14s %16s %12s %12s %12s %10s %12s  %s\n", vs[v].name.c_str(), size.c_str(),
                  fmt("%.3f", t.median_ms).c_str(), fmt("%.3f", t.min_ms).c_str(), fmt("%.3f", t.max_ms).c_str(),
                  fmt("%.2f", row.tflops * 1e3).c_str(), fmt("%.1fx", naive_ms / t.median_ms).c_str(),
                  verdict[v].c_str());
    }
    std::printf("(%s took %.1f s)\n\n", size.c_str(), size_s);
    std::fflush(stdout);
  }

  // The shared table, as every chapter prints it (its "% of cuBLAS" stays empty: there is no cuBLAS on the CPU).
  mm::print_table(std::cout, rows, "cuBLAS", mm::FlopUnit::giga);
  if (!o.cli.csv.empty()) {
    mm::write_csv(o.cli.csv, rows);
    std::printf("\nwrote %zu rows to %s\n", rows.size(), o.cli.csv.c_str());
  }
  if (const int failed = mm::ch01::pin_failures().load(); failed > 0)
    std::fprintf(stderr, "ch01_cpu_matmul: warning: %d worker(s) could not be pinned to their CPU\n", failed);
  if (!all_ok) {
    std::fprintf(stderr, "ch01_cpu_matmul: a kernel FAILED the check against the fp64 reference\n");
    return 1;
  }
  return 0;
}
