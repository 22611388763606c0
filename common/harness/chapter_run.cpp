#include "harness/chapter_run.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "harness/device_info.hpp"

namespace mm {

std::string program_name(int argc, const char* const* argv, const std::string& fallback) {
  std::string name = argc > 0 && argv[0] ? argv[0] : fallback;
  if (auto slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
  return name;
}

bool skipped_on_this_gpu(const std::string& program, arch::Requirement needs) {
  const DeviceInfo& dev = device_info();
  if (!dev.present) {
    std::cout << program << ": skipped: " << dev.unavailable << " (this chapter runs on a GPU)\n";
    return true;
  }
  if (std::string why = arch::unmet(needs); !why.empty()) {
    std::cout << program << ": skipped: " << why << '\n';
    return true;
  }
#if defined(MM_QUICK_BUILD) && MM_QUICK_BUILD
  // A quick build's kernels are compiled for compile speed (CMakeLists.txt, MM_QUICK_BUILD): their times are
  // not the chapter's, and a CSV of them must not reach plots/data.
  std::cerr << program << ": error: this build is a quick build (MM_QUICK_BUILD=ON: device code compiled with "
               "--Ofast-compile=min, for CI without a GPU); its kernels are not the chapter's to time: configure "
               "with -DMM_QUICK_BUILD=OFF\n";
  std::exit(2);
#endif
  return false;
}

bool kernel_skipped_on_this_gpu(const std::string& name, arch::Requirement needs) {
  if (std::string why = arch::unmet(needs); !why.empty()) {
    std::cout << "  " << name << ": skipped: " << why << '\n';
    return true;
  }
  return false;
}

void print_run_header(const std::string& chapter, const std::string& baseline, const CliOptions& opt) {
  const DeviceInfo& dev = device_info();
  std::cout << chapter << " on " << dev.name << " (sm_" << dev.cc << ", " << dev.sm_count << " SMs), "
            << cuda_version_string() << "\n"
            << "baseline: " << baseline << "; timing: median of " << opt.reps << " runs after " << opt.warmup
            << " warm-up runs, L2 flushed before each\n\n";
}

int finish_run(const std::vector<ResultRow>& rows, const CliOptions& opt, int failures,
               const std::string& baseline_name) {
  std::cout << '\n';
  print_table(std::cout, rows, baseline_name);
  if (!opt.csv.empty()) {
    write_csv(opt.csv, rows);
    std::cout << "\nwrote " << opt.csv << '\n';
  }
  if (failures > 0) {
    std::cout << failures << " check(s) FAILED\n";
    return 1;
  }
  return 0;
}

bool kernel_selected(const CliOptions& opt, const std::string& name) {
  return std::find(opt.kernels.begin(), opt.kernels.end(), name) != opt.kernels.end();
}

}  // namespace mm
