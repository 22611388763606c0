// Chapter 01: the CPU matmul ladder. Runs each variant of cpu_matmul.hpp at a few
// sizes, checks it against the fp64 reference, prints ms, GFLOP/s and the speedup
// over the naive loop, and writes the shared CSV.
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
#include <string>
#include <vector>

#include <unistd.h>

#include "01_cpu_matmul/ch01_cli.hpp"
#include "01_cpu_matmul/cpu_matmul.hpp"
#include "harness/device_info.hpp"
#include "harness/problem.hpp"
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
std::vector<Variant> variants(const mm::ch01::Options& o) {
  using namespace mm::ch01;
  std::vector<Variant> v;
  for (const std::string& name : o.cli.kernels) {
    if (name == "naive") v.push_back({name, naive_ijk});
    if (name == "ikj") v.push_back({name, reordered_ikj});
    if (name == "blocked") v.push_back({name, [](auto... args) { blocked(args...); }});
    if (name == "threaded")
      v.push_back({name, [t = o.threads](auto... args) { threaded(args..., t); }});
  }
  if (o.thread_sweep) {
    std::vector<unsigned> counts;
    for (unsigned t = 1; t < o.threads; t *= 2) counts.push_back(t);
    counts.push_back(o.threads);  // the requested count itself, power of two or not
    for (unsigned t : counts)
      v.push_back({"threaded_" + std::to_string(t), [t](auto... args) { mm::ch01::threaded(args..., t); }});
  }
  return v;
}

struct Timing {
  double median_ms, min_ms;
};

// Warm-up, then `reps` timed runs with C poisoned (NaN) before each, outside the timed region:
// a run that skips an element leaves a NaN behind and fails the check.
Timing time_kernel(const Kernel& run, const std::vector<float>& a, const std::vector<float>& b, std::vector<float>& c,
                   const mm::GemmProblem& p, int warmup, int reps) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int w = 0; w < warmup; ++w) run(a.data(), b.data(), c.data(), p.m, p.n, p.k);
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    std::fill(c.begin(), c.end(), nan);
    const auto t0 = Clock::now();
    run(a.data(), b.data(), c.data(), p.m, p.n, p.k);
    const auto t1 = Clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  return {n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]), ms.front()};
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

}  // namespace

int main(int argc, char** argv) {
  mm::ch01::Options o;
  try {
    o = mm::ch01::parse_options(argc, argv);
  } catch (const mm::CliError& e) {
    if (e.exit_code == 0) {
      std::cout << e.what();
    } else {
      std::cerr << "ch01_cpu_matmul: " << e.what() << '\n';
    }
    return e.exit_code;
  }

  for (const mm::ProblemSize& s : o.cli.sizes) require_fits({s.m, s.n, s.k}, o.cli.check);

  const std::string cpu = mm::cpu_name();
  const std::string when = mm::utc_timestamp();
  std::printf("ch01_cpu_matmul on %s: %u hardware threads, threaded kernel uses %u; %d warm-up + %d timed runs%s\n\n",
              cpu.c_str(), std::thread::hardware_concurrency(), o.threads, o.cli.warmup, o.cli.reps,
              o.cli.check ? "" : " (no check)");
  std::printf("%-14s %16s %12s %12s %10s %12s  %s\n", "kernel", "M x N x K", "median ms", "min ms", "GFLOP/s",
              "vs naive", "check");

  const std::vector<Variant> vs = variants(o);
  std::vector<mm::ResultRow> rows;
  bool all_ok = true;
  for (const mm::ProblemSize& s : o.cli.sizes) {
    const mm::GemmProblem p{s.m, s.n, s.k};
    const auto a = mm::random_host<float>(std::size_t(p.m * p.k), o.cli.seed);      // (M,K) row-major
    const auto b = mm::random_host<float>(std::size_t(p.k * p.n), o.cli.seed + 1);  // (K,N) row-major
    std::vector<float> c(std::size_t(p.m * p.n));                                   // (M,N) row-major
    mm::Reference ref;
    if (o.cli.check) ref = mm::reference_gemm_host(p, a, b);

    double naive_ms = mm::not_measured;
    for (const Variant& v : vs) {
      const Timing t = time_kernel(v.run, a, b, c, p, o.cli.warmup, o.cli.reps);
      if (v.name == "naive") naive_ms = t.median_ms;

      mm::ResultRow row;
      row.chapter = "01_cpu_matmul";
      row.kernel = v.name;
      row.dtype = "fp32";
      row.layout = p.layout_tag();
      row.m = p.m;
      row.n = p.n;
      row.k = p.k;
      row.median_ms = t.median_ms;
      row.min_ms = t.min_ms;
      row.tflops = p.flops() / (t.median_ms * 1e-3) / 1e12;
      row.gpu = cpu;
      row.cuda_version = "n/a (CPU)";
      row.timestamp = when;
      std::string verdict = "not checked";
      if (o.cli.check) {
        const mm::CheckResult r = mm::check_gemm(ref, c, mm::Order::row, mm::elementwise_tolerance(mm::DType::f32));
        row.rel_error = r.rel_frobenius;
        verdict = r.summary;
        all_ok = all_ok && r.ok;
      }
      rows.push_back(row);

      const std::string size = std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
      std::printf("%-14s %16s %12s %12s %10s %12s  %s\n", v.name.c_str(), size.c_str(),
                  fmt("%.3f", t.median_ms).c_str(), fmt("%.3f", t.min_ms).c_str(),
                  fmt("%.2f", row.tflops * 1e3).c_str(), fmt("%.1fx", naive_ms / t.median_ms).c_str(),
                  verdict.c_str());
      std::fflush(stdout);
    }
  }

  // The shared table, as every chapter prints it (its "% of cuBLAS" stays empty: there is no cuBLAS on the CPU).
  std::printf("\n");
  mm::print_table(std::cout, rows);
  if (!o.cli.csv.empty()) {
    mm::write_csv(o.cli.csv, rows);
    std::printf("\nwrote %zu rows to %s\n", rows.size(), o.cli.csv.c_str());
  }
  if (!all_ok) {
    std::fprintf(stderr, "ch01_cpu_matmul: a kernel FAILED the check against the fp64 reference\n");
    return 1;
  }
  return 0;
}
