/// @file cpu_topology.hpp
/// @brief Which logical CPUs share a physical core (Linux sysfs), the order workers are pinned in, and the CPU's model.
///
/// A "logical CPU" is what the operating system schedules on: with SMT
/// (simultaneous multithreading, Intel's Hyper-Threading) one physical core
/// shows up as two or more logical CPUs, its *SMT siblings*, which share that
/// core's vector units, L1 and L2. Linux says which are siblings in
/// /sys/devices/system/cpu/cpuN/topology/thread_siblings_list, e.g. "0,16":
/// logical CPUs 0 and 16 are one core. Chapter 01 reads that file for every
/// CPU it may run on, pins its workers one per physical core first (siblings
/// only after every core has one worker), and writes what it found into the CSV.
///
/// In a virtual machine these files describe the virtual CPUs the hypervisor
/// presents, which is what the measurement ran on; whether the host's cores
/// behind them are shared with other guests is not visible from inside.
///
/// The parsers take text and a directory, not the live system, so the tests
/// feed them strings and a fake sysfs tree.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

namespace mm::ch01 {

/// @brief Parses a Linux CPU list such as "0-3,8,10-11\n" into {0,1,2,3,8,10,11} (sorted, no duplicates).
///
/// Returns std::nullopt for anything else: empty text, a stray character, a
/// reversed range ("5-3"), a number too large to be a CPU id.
inline std::optional<std::vector<int>> parse_cpu_list(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r')) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  constexpr long max_cpu = 1 << 20;
  std::vector<int> cpus;
  std::size_t pos = 0;
  auto number = [&](long& out) {
    const std::size_t start = pos;
    out = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      out = out * 10 + (text[pos] - '0');
      if (out > max_cpu) return false;
      ++pos;
    }
    return pos > start;
  };
  while (true) {
    long first = 0, last = 0;
    if (!number(first)) return std::nullopt;
    last = first;
    if (pos < text.size() && text[pos] == '-') {
      ++pos;
      if (!number(last) || last < first) return std::nullopt;
    }
    for (long c = first; c <= last; ++c) cpus.push_back(int(c));
    if (pos == text.size()) break;
    if (text[pos] != ',') return std::nullopt;
    ++pos;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

/// @brief The logical CPUs this process may run on, grouped by physical core.
struct CpuTopology {
  /// Each physical core's logical CPUs (only those this process may use), ascending;
  /// the cores ordered by their first logical CPU.
  std::vector<std::vector<int>> cores;
  int packages = 1;       ///< sockets (distinct physical_package_id) among those CPUs
  bool known = false;     ///< false: sysfs was unreadable and every CPU is taken as its own core

  /// @brief Logical CPUs in all cores.
  std::size_t logical() const {
    std::size_t n = 0;
    for (const auto& c : cores) n += c.size();
    return n;
  }
  /// @brief Physical cores.
  std::size_t physical() const { return cores.size(); }
  /// @brief The most logical CPUs any one core has (2 with SMT on most x86 servers, 1 without).
  std::size_t max_threads_per_core() const {
    std::size_t m = 0;
    for (const auto& c : cores) m = std::max(m, c.size());
    return m;
  }
  /// @brief The fewest logical CPUs any one core has.
  std::size_t min_threads_per_core() const {
    std::size_t m = cores.empty() ? 0 : cores.front().size();
    for (const auto& c : cores) m = std::min(m, c.size());
    return m;
  }

  /// @brief The order workers are pinned in: the first logical CPU of every core, then the second of every core, ...
  ///
  /// Worker t goes to pin_order()[t]: with T ≤ physical() workers, no two share a
  /// core; only beyond that do SMT siblings fill up. E.g. cores {0,4} {1,5} {2,6} {3,7}
  /// give 0 1 2 3 4 5 6 7, and cores {0,1} {2,3} give 0 2 1 3.
  std::vector<int> pin_order() const {
    std::vector<int> order;
    for (std::size_t round = 0; round < max_threads_per_core(); ++round)
      for (const auto& c : cores)
        if (round < c.size()) order.push_back(c[round]);
    return order;
  }

  /// @brief One line without commas (it goes into a CSV field): "8 cores x 2 threads = 16 logical CPUs on 1 socket".
  std::string describe() const {
    auto count = [](std::size_t n, const std::string& one, const std::string& many) {
      return std::to_string(n) + " " + (n == 1 ? one : many);
    };
    if (!known) return count(logical(), "logical CPU", "logical CPUs") + " (core topology unknown)";
    const std::size_t lo = min_threads_per_core(), hi = max_threads_per_core();
    const std::string per = lo == hi ? count(hi, "thread", "threads") : std::to_string(lo) + "-" + std::to_string(hi) + " threads";
    return count(physical(), "core", "cores") + " x " + per + " = " + count(logical(), "logical CPU", "logical CPUs") +
           " on " + count(std::size_t(packages), "socket", "sockets");
  }
};

namespace detail {
inline std::optional<std::string> read_text(const std::string& path) {
  std::ifstream f(path);
  if (!f) return std::nullopt;
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}
}  // namespace detail

/// @brief Groups `cpus` by physical core from `sysfs_cpu_dir`/cpuN/topology/ (normally /sys/devices/system/cpu).
///
/// Two logical CPUs are one core when their thread_siblings_list is the same
/// list. Any CPU whose file is missing or unreadable makes the whole answer
/// "unknown": each CPU is then taken as its own core (known = false), so
/// pinning still spreads workers, it just cannot tell siblings apart.
inline CpuTopology read_topology(const std::string& sysfs_cpu_dir, std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  CpuTopology t;
  std::map<std::vector<int>, std::vector<int>> by_siblings;  // sibling list -> the usable CPUs in it
  std::map<std::string, int> packages;
  bool ok = !cpus.empty();
  for (int c : cpus) {
    const std::string dir = sysfs_cpu_dir + "/cpu" + std::to_string(c) + "/topology/";
    const auto text = detail::read_text(dir + "thread_siblings_list");
    const auto siblings = text ? parse_cpu_list(*text) : std::nullopt;
    if (!siblings || std::find(siblings->begin(), siblings->end(), c) == siblings->end()) {
      ok = false;  // missing, malformed, or not even listing the CPU itself
      break;
    }
    by_siblings[*siblings].push_back(c);
    const auto pkg = detail::read_text(dir + "physical_package_id");
    packages[pkg ? *pkg : std::string("?")] = 1;
  }
  if (!ok) {
    for (int c : cpus) t.cores.push_back({c});
    return t;
  }
  for (auto& [siblings, mine] : by_siblings) t.cores.push_back(mine);  // `mine` is ascending: cpus was sorted
  std::sort(t.cores.begin(), t.cores.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  t.packages = int(packages.size());
  t.known = true;
  return t;
}

/// @brief The logical CPUs this process may run on (its affinity mask; taskset and cgroups narrow it).
///
/// The mask is the calling thread's: ask before pinning that thread (main.cpp reads the topology first).
inline std::vector<int> usable_cpus() {
  std::vector<int> cpus;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
#endif
  if (cpus.empty())
    for (unsigned c = 0; c < std::max(1u, std::thread::hardware_concurrency()); ++c) cpus.push_back(int(c));
  return cpus;
}

/// @brief This machine's topology, for the CPUs this process may use.
inline CpuTopology machine_topology() { return read_topology("/sys/devices/system/cpu", usable_cpus()); }

/// @brief How many times pin_current_thread failed in this process (a pinned measurement should report 0).
inline std::atomic<int>& pin_failures() {
  static std::atomic<int> failures{0};
  return failures;
}

/// @brief Restricts the calling thread to logical CPU `cpu`; on failure (or off Linux) counts a pin_failures() and returns false.
inline bool pin_current_thread(int cpu) {
#if defined(__linux__)
  if (cpu >= 0 && cpu < CPU_SETSIZE) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0) return true;
  }
#else
  (void)cpu;
#endif
  pin_failures().fetch_add(1, std::memory_order_relaxed);
  return false;
}

/// @brief The CPU model from the text of /proc/cpuinfo: "model name", plus "(family F model M stepping S)" when listed.
///
/// A virtual machine often shows a generic name ("Intel(R) Xeon(R) Processor");
/// family and model still identify the generation (Intel family 6 model 143 is
/// Sapphire Rapids). Commas become spaces (the result goes into a CSV field).
/// Only the first processor's block is read; "unknown CPU" if it has no model name.
inline std::string cpu_model(std::string_view cpuinfo) {
  std::map<std::string, std::string> field;
  std::size_t pos = 0;
  while (pos < cpuinfo.size()) {
    std::size_t end = cpuinfo.find('\n', pos);
    if (end == std::string_view::npos) end = cpuinfo.size();
    const std::string_view line = cpuinfo.substr(pos, end - pos);
    pos = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
      if (!field.empty()) break;  // a blank line ends the first processor's block
      continue;
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    auto trim = [](std::string_view s) {
      const std::size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
      return a == std::string_view::npos ? std::string() : std::string(s.substr(a, b - a + 1));
    };
    const std::string key = trim(line.substr(0, colon));
    if (!field.count(key)) field[key] = trim(line.substr(colon + 1));
  }
  std::string s = field.count("model name") && !field["model name"].empty() ? field["model name"] : "unknown CPU";
  if (field.count("cpu family") && field.count("model")) {
    s += " (family " + field["cpu family"] + " model " + field["model"];
    if (field.count("stepping")) s += " stepping " + field["stepping"];
    s += ")";
  }
  std::replace(s.begin(), s.end(), ',', ' ');
  return s;
}

/// @brief cpu_model of this machine's /proc/cpuinfo ("unknown CPU" where there is none).
inline std::string machine_cpu_model() { return cpu_model(detail::read_text("/proc/cpuinfo").value_or("")); }

}  // namespace mm::ch01
