#include "harness/copy_runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "harness/chapter_run.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "harness/random.hpp"
#include "harness/results.hpp"
#include "harness/timing.hpp"

namespace mm {
namespace {

CopyCheck compare(std::int64_t m, std::int64_t n, const std::vector<float>& src, const std::vector<float>& dst,
                  bool transposes) {
  CopyCheck c;
  std::int64_t first_i = -1, first_j = -1;
  float got0 = 0, want0 = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const float want = src[i * n + j];
      const float got = transposes ? dst[j * m + i] : dst[i * n + j];
      // Bitwise: a copy moves bits, and NaN (the poison) must never compare equal.
      if (std::memcmp(&want, &got, sizeof want) != 0) {
        if (c.bad++ == 0) { first_i = i; first_j = j; got0 = got; want0 = want; }
      }
    }
  c.ok = c.bad == 0;
  char buf[200];
  if (c.ok) std::snprintf(buf, sizeof buf, "ok");
  else std::snprintf(buf, sizeof buf, "FAIL: %lld elements differ, first at (%lld, %lld): got %g, want %g",
                     (long long)c.bad, (long long)first_i, (long long)first_j, got0, want0);
  c.summary = buf;
  return c;
}

}  // namespace

CopyCheck check_copy_kernel(std::int64_t m, std::int64_t n, const CopyLaunch& launch, bool transposes,
                            std::uint64_t seed) {
  DeviceBuffer<float> src(m * n), dst(m * n);
  fill_random(src, seed);
  poison(dst);
  launch(m, n, src.data(), dst.data(), nullptr);
  MM_CHECK_LAUNCH();
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  return compare(m, n, src.download(), dst.download(), transposes);
}

int run_copy_chapter(int argc, const char* const* argv, const CopyChapter& ch, const std::vector<CopyKernel>& kernels) {
  CliSpec spec;
  spec.program = program_name(argc, argv, ch.chapter);
  spec.description = ch.description;
  for (const auto& kern : kernels) spec.kernels.push_back(kern.name);
  spec.default_sizes = ch.default_sizes;
  spec.default_reps = ch.default_reps;
  spec.default_warmup = ch.default_warmup;
  spec.has_k = false;
  const CliOptions opt = parse_cli_or_exit(argc, argv, spec);

  if (skipped_on_this_gpu(spec.program, arch::any)) return 0;
  const DeviceInfo& dev = device_info();
  print_run_header(ch.chapter, "cudaMemcpy device to device; bandwidth = (bytes read + bytes written) / median time", opt);

  const TimingOptions topt{opt.warmup, opt.reps, true};
  const std::string version = cuda_version_string();
  std::vector<ResultRow> rows;
  int failures = 0;
  for (const ProblemSize& s : opt.sizes) {
    const std::int64_t m = s.m, n = s.n;
    const double bytes = 2.0 * double(m * n) * sizeof(float);
    std::size_t free_b = 0, total_b = 0;
    MM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (bytes > 0.9 * double(free_b)) {
      std::fprintf(stderr, "%s: error: --sizes/--m/--n: %lldx%lld needs %.1f GB of device memory, %.1f GB free\n",
                   spec.program.c_str(), (long long)m, (long long)n, bytes / 1e9, double(free_b) / 1e9);
      return 2;
    }
    DeviceBuffer<float> src(m * n), dst(m * n);
    fill_random(src, opt.seed);
    const std::vector<float> host_src = opt.check ? src.download() : std::vector<float>{};

    auto make_row = [&](const std::string& name, const Timing& t) {
      ResultRow r;
      r.chapter = ch.chapter; r.kernel = name; r.dtype = "fp32"; r.layout = "R";
      r.m = m; r.n = n; r.k = 0;
      r.median_ms = t.median_ms; r.min_ms = t.min_ms;
      r.gbps = bytes / (t.median_ms * 1e-3) / 1e9;
      r.gpu = dev.name; r.cuda_version = version; r.timestamp = utc_timestamp();
      return r;
    };

    auto memcpy_run = [&](cudaStream_t st) {
      MM_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), src.bytes(), cudaMemcpyDeviceToDevice, st));
    };
    const Timing base = time_on_gpu(memcpy_run, topt);
    ResultRow base_row = make_row("cudaMemcpy", base);
    base_row.pct_of_cublas = 100.0;
    rows.push_back(base_row);

    for (const CopyKernel& kern : kernels) {
      if (!kernel_selected(opt, kern.name)) continue;
      if (kernel_skipped_on_this_gpu(kern.name, kern.needs)) continue;
      if (kern.rejects) {
        if (std::string why = kern.rejects(m, n); !why.empty()) {
          std::cout << "  " << kern.name << " at " << m << "x" << n << ": not run: " << why << '\n';
          continue;
        }
      }
      auto run = [&](cudaStream_t st) { kern.launch(m, n, src.data(), dst.data(), st); };
      poison(dst);
      run(nullptr);
      MM_CHECK_LAUNCH();
      MM_CUDA_CHECK(cudaDeviceSynchronize());
      if (opt.check) {
        const CopyCheck c = compare(m, n, host_src, dst.download(), kern.transposes);
        if (!c.ok) {
          std::cout << "  " << kern.name << " at " << m << "x" << n << ": " << c.summary << '\n';
          ++failures;
          continue;
        }
      }
      const Timing t = time_on_gpu(run, topt);
      ResultRow row = make_row(kern.name, t);
      row.pct_of_cublas = 100.0 * base.median_ms / t.median_ms;
      if (opt.check) row.rel_error = 0.0;  // checked bit for bit
      rows.push_back(row);
    }
  }
  return finish_run(rows, opt, failures, "cudaMemcpy");
}

}  // namespace mm
