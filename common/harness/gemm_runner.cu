#include "harness/gemm_runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <type_traits>

#include "harness/chapter_run.hpp"
#include "harness/cublas_gemm.hpp"
#include "gemm/launch.hpp"  // launch::fp8_rejects
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "harness/random.hpp"
#include "harness/results.hpp"
#include "harness/timing.hpp"

namespace mm {

namespace {

std::string size_text(const GemmProblem& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
}

// Bad sizes are bad input: one line naming the flag, exit 2, before anything is allocated.
template <class TIn, class TOut>
void require_memory(const GemmProblem& p, bool check, const std::string& program) {
  // fp8's reference multiplies A and B dequantized to fp64 when they have block scales.
  constexpr double dequantized = sizeof(TIn) == 1 ? double(sizeof(double)) : 0.0;
  const double dev_bytes = double(p.m * p.k + p.k * p.n) * sizeof(TIn) + double(p.m * p.n) * sizeof(TOut) +
                           (check ? 2.0 * double(p.m * p.n) * sizeof(double) + double(p.m * p.k + p.k * p.n) * dequantized : 0.0);
  std::size_t free_b = 0, total_b = 0;
  MM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (dev_bytes > 0.9 * double(free_b)) {
    std::fprintf(stderr, "%s: error: --sizes/--m/--n/--k: %s needs %.1f GB of device memory, %.1f GB free\n",
                 program.c_str(), size_text(p).c_str(), dev_bytes / 1e9, double(free_b) / 1e9);
    std::exit(2);
  }
  const double host_bytes = check ? double(p.m * p.n) * (2 * sizeof(double) + sizeof(TOut)) : 0.0;
  const double host_free = double(sysconf(_SC_AVPHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  if (host_bytes > 0.9 * host_free) {
    std::fprintf(stderr, "%s: error: --sizes/--m/--n/--k: checking %s needs %.1f GB of host memory, %.1f GB free (or pass --no-check)\n",
                 program.c_str(), size_text(p).c_str(), host_bytes / 1e9, host_free / 1e9);
    std::exit(2);
  }
}

}  // namespace

std::string describe_baselines(const std::vector<GemmBaseline>& baselines) {
  auto types = [](const GemmBaseline& b) {
    return " (" + std::string(dtype_name(b.in)) + " in, " + std::string(dtype_name(b.out)) + " out)";
  };
  const bool lt = std::any_of(baselines.begin(), baselines.end(), [](const GemmBaseline& b) { return is_fp8(b.compute); });
  std::string text = lt ? "cuBLAS and cuBLASLt, " : "cublasGemmEx, ";
  if (baselines.size() == 1) {
    const GemmBaseline& b = baselines.front();
    const bool fp32 = b.in == DType::f32 && b.out == DType::f32;
    return text + CublasGemm::compute_type_name(b.compute) + (fp32 ? "" : types(b));
  }
  text += "one per group of kernels: ";
  for (std::size_t i = 0; i < baselines.size(); ++i) {
    const GemmBaseline& b = baselines[i];
    text += (i ? "; " : "") + std::string(dtype_name(b.compute)) + ": " + CublasGemm::compute_type_name(b.compute) +
            types(b);
  }
  return text;
}

// The driver's state at one problem, shared by every group run there.
struct detail::GemmGroupRun {
  const GemmChapter& ch;
  const CliOptions& opt;
  CublasGemm& cublas;
  std::vector<ResultRow>& rows;
  int& failures;
  const std::string& cuda_version;  // asked once per run
  GemmProblem p;
  std::string tag;
};

namespace {

// One group at one problem: its inputs, its reference, its cuBLAS row, then its kernels.
template <class TIn, class TOut>
void run_group(const GemmKernelGroup<TIn, TOut>& group, detail::GemmGroupRun& run) {
  GemmProblem p = run.p;
  const CliOptions& opt = run.opt;
  // fp8's size rules (K and N in whole 16-byte rows, RCR) are cuBLASLt's as well as the kernels': a size or
  // storage order that breaks them skips the fp8 groups there with one line, while the chapter's other
  // types (and its other sizes) run.
  if (is_fp8(group.baseline)) {
    if (std::string why = launch::fp8_rejects(p); !why.empty()) {
      std::cout << "  " << dtype_name(group.baseline) << " kernels at " << size_text(p) << " " << run.tag
                << ": not run: " << why << '\n';
      return;
    }
  }
  require_memory<TIn, TOut>(p, opt.check, opt.program);
  DeviceBuffer<TIn> a(p.m * p.k), b(p.k * p.n);
  DeviceBuffer<TOut> c(p.m * p.n);
  // fp8: the codes span e4m3's range, and per-tensor scales of 1/448 (in device memory, where
  // cuBLASLt and the kernels read them) map them back to the [-1, 1] of the other types' inputs.
  // Block scales (e4m3_block): a random scale per block, (0.5 to 2)/448.
  constexpr bool fp8 = std::is_same_v<TIn, __nv_fp8_e4m3>;
  DeviceScales scales;
  if constexpr (fp8) {
    if (group.baseline == DType::e4m3_block) scales.set(p, random_block_scales(p, opt.seed + 2));
    else scales.set(p, OperandScales{});
  }
  fill_random(a, opt.seed);
  fill_random(b, opt.seed + 1);
  Reference ref;
  if (opt.check) {
    if constexpr (fp8) ref = fp8_reference(p, a, b, group.baseline, OperandScales{});
    else ref = reference_gemm(p, a, b);
  }

  const TimingOptions topt{opt.warmup, opt.reps, true};
  auto make_row = [&](const std::string& name, DType dt, const Timing& t, double rel) {
    ResultRow r;
    r.chapter = run.ch.chapter; r.kernel = name; r.dtype = std::string(dtype_name(dt)); r.layout = run.tag;
    r.m = p.m; r.n = p.n; r.k = p.k;
    r.median_ms = t.median_ms; r.min_ms = t.min_ms;
    r.tflops = p.flops() / (t.median_ms * 1e-3) / 1e12;
    const double bytes = double(p.m * p.k + p.k * p.n) * sizeof(TIn) + double(p.m * p.n) * sizeof(TOut);
    r.gbps = bytes / (t.median_ms * 1e-3) / 1e9;
    r.rel_error = rel;
    r.gpu = device_info().name; r.cuda_version = run.cuda_version; r.timestamp = utc_timestamp();
    return r;
  };
  // Poison, run once, compare: an element the kernel never writes stays NaN and fails.
  auto run_checked = [&](const std::string& name, DType dt, const std::function<void(cudaStream_t)>& launch,
                         double& rel) {
    poison(c);
    launch(nullptr);
    MM_CHECK_LAUNCH();
    // A kernel that faults or traps (the mbarrier watchdog) ends the process: say which one first, as the
    // rows are printed only at the end (under racecheck, 2026-12-01, a trap left no row to name it).
    if (const cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
      std::cerr << name << " at " << size_text(p) << " " << run.tag << ": its checked run failed\n";
      cuda_fail("cudaDeviceSynchronize()", __FILE__, __LINE__, cudaGetErrorString(e));
    }
    rel = not_measured;
    if (!opt.check) return true;
    const CheckResult r = check_gemm(ref, c.download(), p.c, gemm_tolerance<TOut>(dt));
    rel = r.rel_frobenius;
    if (!r.ok) {
      std::cout << "  " << name << " at " << size_text(p) << " " << run.tag << ": " << r.summary << '\n';
      ++run.failures;
    }
    return r.ok;
  };

  auto cublas_run = [&](cudaStream_t s) {
    run.cublas.gemm(p, group.baseline, a.data(), b.data(), c.data(), cuda_data_type<TOut>(), s);
  };
  double rel = 0;
  // Without its baseline a group is not measured at this size: its `% of cuBLAS` would mean nothing.
  // (cuBLASLt throws std::runtime_error, before launching anything, when it has no algorithm.)
  try {
    run_checked("cuBLAS " + std::string(dtype_name(group.baseline)), group.baseline, cublas_run, rel);
  } catch (const std::runtime_error& e) {
    std::cout << "  " << dtype_name(group.baseline) << " kernels at " << size_text(p) << " " << run.tag
              << ": not run: " << e.what() << '\n';
    return;
  }
  // Each launch that passed its check, in the order of its row. Timed as it passes (each one's runs
  // together), or with --interleave once the size's last has passed, all in turns (time_interleaved).
  struct Measured {
    std::string name;
    DType dtype;
    double rel;
    std::string path;
    std::function<void(cudaStream_t)> run;
  };
  std::vector<Measured> measured;
  std::vector<Timing> timings;
  auto measure = [&](Measured m) {
    if (!opt.interleave) timings.push_back(time_on_gpu(m.run, topt));
    measured.push_back(std::move(m));
  };
  measure({"cuBLAS", group.baseline, rel, "", cublas_run});
  for (DType other : group.also_measure) {
    const std::string name = "cuBLAS_" + std::string(dtype_name(other));
    auto other_run = [&, other](cudaStream_t s) {
      run.cublas.gemm(p, other, a.data(), b.data(), c.data(), cuda_data_type<TOut>(), s);
    };
    run_checked(name, other, other_run, rel);
    measure({name, other, rel, "", other_run});
  }

  for (const auto& kern : group.kernels) {
    if (!kernel_selected(opt, kern.name)) continue;
    if (kernel_skipped_on_this_gpu(kern.name, kern.needs)) continue;
    if (kern.rejects) {
      if (std::string why = kern.rejects(p); !why.empty()) {
        std::cout << "  " << kern.name << " at " << size_text(p) << ": not run: " << why << '\n';
        continue;
      }
    }
    // A kernel with a preparation step gets it here, once, before its check and its timed runs.
    // The path that runs is the preparation's name for it (a dispatcher's choice), or the kernel's.
    PreparedGemm launch;
    if (kern.prepare) launch = kern.prepare(p, a.data(), b.data(), c.data());
    else launch = PreparedGemm([&](cudaStream_t s) { kern.launch(p, a.data(), b.data(), c.data(), s); });
    if (launch.path.empty()) launch.path = kern.name;
    if (!run_checked(kern.name, kern.dtype, launch.run, rel)) continue;  // a wrong kernel is not timed
    measure({kern.name, kern.dtype, rel, launch.path, launch.run});  // the copy keeps the preparation's buffers
  }

  if (opt.interleave) {
    std::vector<std::function<void(cudaStream_t)>> runs;
    for (const Measured& m : measured) runs.push_back(m.run);
    timings = time_interleaved(runs, topt);
  }
  for (std::size_t i = 0; i < measured.size(); ++i) {
    ResultRow row = make_row(measured[i].name, measured[i].dtype, timings[i], measured[i].rel);
    row.path = measured[i].path;
    row.pct_of_cublas = i == 0 ? 100.0 : 100.0 * timings[0].median_ms / timings[i].median_ms;
    run.rows.push_back(row);
  }
}

}  // namespace

template <class TIn, class TOut>
detail::ErasedGemmGroup detail::erase_group(const GemmKernelGroup<TIn, TOut>& group) {
  ErasedGemmGroup erased{{group.baseline, dtype_of<TIn>(), dtype_of<TOut>()}, {}, {}, {}};
  for (DType other : group.also_measure) erased.also_measure.push_back(other);
  for (const auto& kern : group.kernels) erased.kernel_names.push_back(kern.name);
  erased.run = [&group](GemmGroupRun& run) { run_group(group, run); };
  return erased;
}

int detail::run_gemm_groups(int argc, const char* const* argv, const GemmChapter& ch,
                            const std::vector<ErasedGemmGroup>& groups) {
  CliSpec spec;
  spec.program = program_name(argc, argv, ch.chapter);
  spec.description = ch.description;
  std::vector<GemmBaseline> baselines;
  for (const ErasedGemmGroup& group : groups) {
    // cuBLAS reads A and B as the baseline's input type: fp32 for f32 and tf32, else the type itself.
    const GemmBaseline& b = group.baseline;
    const bool reads_in = b.in == b.compute || (b.in == DType::f32 && b.compute == DType::tf32) ||
                          (b.in == DType::e4m3 && is_fp8(b.compute));
    if (!reads_in) {
      std::cerr << spec.program << ": error: a group of " << dtype_name(b.in) << " inputs cannot have a "
                << dtype_name(b.compute) << " cuBLAS baseline\n";
      return 2;
    }
    baselines.push_back(b);
    for (DType other : group.also_measure) baselines.push_back({other, b.in, b.out});
    for (const std::string& name : group.kernel_names) {
      // --kernel selects by name: a name in two groups could not be told apart.
      if (std::find(spec.kernels.begin(), spec.kernels.end(), name) != spec.kernels.end()) {
        std::cerr << spec.program << ": error: kernel '" << name << "' is listed twice (names must differ across groups)\n";
        return 2;
      }
      spec.kernels.push_back(name);
    }
  }
  spec.default_sizes = ch.default_sizes;
  spec.layouts = ch.layouts;
  spec.default_reps = ch.default_reps;
  spec.default_warmup = ch.default_warmup;
  spec.can_interleave = true;
  const CliOptions opt = parse_cli_or_exit(argc, argv, spec);

  if (skipped_on_this_gpu(spec.program, ch.needs)) return 0;
  print_run_header(ch.chapter, describe_baselines(baselines), opt);

  CublasGemm cublas;
  const std::string version = cuda_version_string();
  std::vector<ResultRow> rows;
  int failures = 0;
  for (const ProblemSize& size : opt.sizes)
    for (const std::string& tag : opt.layouts) {
      GemmProblem p;
      try {
        p = make_problem(size, tag);
      } catch (const CliError& e) {
        std::cerr << spec.program << ": " << e.what() << '\n';
        return 2;
      }
      for (const ErasedGemmGroup& group : groups) {
        // A baseline with none of its kernels selected would be measured for nothing.
        if (std::none_of(group.kernel_names.begin(), group.kernel_names.end(),
                         [&](const std::string& name) { return kernel_selected(opt, name); }))
          continue;
        GemmGroupRun run{ch, opt, cublas, rows, failures, version, p, tag};
        group.run(run);
      }
    }

  return finish_run(rows, opt, failures, "cuBLAS");
}

#define MM_INSTANTIATE_RUNNER(TIn, TOut) \
  template detail::ErasedGemmGroup detail::erase_group<TIn, TOut>(const GemmKernelGroup<TIn, TOut>&);
MM_INSTANTIATE_RUNNER(float, float)
MM_INSTANTIATE_RUNNER(__nv_bfloat16, float)
MM_INSTANTIATE_RUNNER(__nv_bfloat16, __nv_bfloat16)
MM_INSTANTIATE_RUNNER(__half, float)
MM_INSTANTIATE_RUNNER(__half, __half)
MM_INSTANTIATE_RUNNER(__nv_fp8_e4m3, __nv_bfloat16)
#undef MM_INSTANTIATE_RUNNER

}  // namespace mm
