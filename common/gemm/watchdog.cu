// The host's side of the mbarrier watchdog: gemm/watchdog.hpp.
#include "gemm/watchdog.hpp"

#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace mm {

namespace {

std::atomic<bool> record_allocated{false};  // mapped_record() has run and allocated

struct MappedRecord {
  WatchdogRecord* host = nullptr;    // what the host reads
  WatchdogRecord* device = nullptr;  // the same memory, as the GPU addresses it
};

MappedRecord& mapped_record() {
  static std::once_flag once;
  static MappedRecord record;
  std::call_once(once, [] {
    void* p = nullptr;
    if (cudaHostAlloc(&p, sizeof(WatchdogRecord), cudaHostAllocMapped) != cudaSuccess) {
      (void)cudaGetLastError();  // no GPU, or no mapping: nothing is recorded, the bound still holds
      return;
    }
    std::memset(p, 0, sizeof(WatchdogRecord));
    void* d = nullptr;
    if (cudaHostGetDevicePointer(&d, p, 0) != cudaSuccess) {
      (void)cudaGetLastError();
      cudaFreeHost(p);
      return;
    }
    record.host = static_cast<WatchdogRecord*>(p);
    record.device = static_cast<WatchdogRecord*>(d);
    record_allocated = true;
  });
  return record;
}

std::uint64_t process_bound_ns() {
  static const std::uint64_t bound =
      watchdog_bound_or_exit(std::getenv("MM_WATCHDOG_SECONDS"), running_under_cuda_tool());
  return bound;
}

const char* site_text(std::uint32_t site) {
  switch (WatchdogSite(site)) {
    case WatchdogSite::producer_acquire: return "the producer waiting for stage %u to be released";
    case WatchdogSite::consumer_wait: return "a consumer waiting for stage %u to land";
    case WatchdogSite::fixup: return "a block waiting for %u partial sums of tile %u";
    default: return "a wait (stage %u)";
  }
}

}  // namespace

namespace {
// The seconds MM_WATCHDOG_SECONDS = `text` asks for; 0 when it is not a positive number below 1e9.
double parse_seconds(const char* text) {
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  return (end != text && *end == '\0' && seconds > 0 && seconds < 1e9) ? seconds : 0.0;
}
}  // namespace

bool watchdog_seconds_valid(const char* seconds_env) {
  return seconds_env == nullptr || *seconds_env == '\0' || parse_seconds(seconds_env) > 0;
}

std::uint64_t watchdog_bound_ns(const char* seconds_env, bool under_tool) {
  if (seconds_env != nullptr && *seconds_env != '\0') {
    const double seconds = parse_seconds(seconds_env);
    if (seconds > 0) return std::uint64_t(seconds * 1e9);
  }
  return under_tool ? kMbarrierTimeoutNs * kToolBoundScale : kMbarrierTimeoutNs;
}

std::uint64_t watchdog_bound_or_exit(const char* seconds_env, bool under_tool) {
  if (!watchdog_seconds_valid(seconds_env)) {
    std::fprintf(stderr, "MM_WATCHDOG_SECONDS=%s: needs a positive number of seconds (e.g. 30 or 0.5)\n",
                 seconds_env);
    std::exit(2);
  }
  return watchdog_bound_ns(seconds_env, under_tool);
}

bool running_under_cuda_tool() {
  auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0';
  };
  auto names_sanitizer = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && std::strstr(v, "anitizer") != nullptr;
  };
  // Nsight Compute and Nsight Systems inject through CUDA_INJECTION64_PATH; compute-sanitizer (13.0)
  // sets its injection's port and hands NVTX its collection library (seen on the H200 machine).
  return set("CUDA_INJECTION64_PATH") || set("NV_SANITIZER_INJECTION_PORT_BASE") ||
         names_sanitizer("NVTX_INJECTION64_PATH") || names_sanitizer("LD_PRELOAD");
}

Watchdog host_watchdog() { return Watchdog{mapped_record().device, process_bound_ns()}; }

std::string describe_watchdog_record(const WatchdogRecord& r, std::uint64_t bound_ns) {
  if (r.fired == 0) return {};
  char what[96];
  if (WatchdogSite(r.site) == WatchdogSite::fixup)
    std::snprintf(what, sizeof what, site_text(r.site), r.stage, r.barrier);  // the count, the tile
  else
    std::snprintf(what, sizeof what, site_text(r.site), r.stage);
  char line[320];
  if (WatchdogSite(r.site) == WatchdogSite::fixup) {
    std::snprintf(line, sizeof line, "mbarrier watchdog: block %u, thread %u (%s) waited more than %.0f s: a deadlock; "
                  "the kernel trapped",
                  r.block, r.thread, what, double(bound_ns) / 1e9);
  } else {
    std::snprintf(line, sizeof line,
                  "mbarrier watchdog: block %u, thread %u (%s, parity %u, barrier at shared 0x%x) waited more than "
                  "%.0f s: a deadlock; the kernel trapped",
                  r.block, r.thread, what, r.parity, r.barrier, double(bound_ns) / 1e9);
  }
  return line;
}

std::string watchdog_report() {
  if (!record_allocated.load()) return {};  // no kernel was given the record: none can have written it
  const MappedRecord& m = mapped_record();
  if (m.host == nullptr) return {};
  WatchdogRecord copy;
  std::memcpy(&copy, m.host, sizeof copy);
  return describe_watchdog_record(copy, process_bound_ns());
}

void watchdog_clear() {
  if (!record_allocated.load()) return;
  if (WatchdogRecord* r = mapped_record().host; r != nullptr) std::memset(r, 0, sizeof *r);
}

}  // namespace mm
