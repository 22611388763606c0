// Chapter 01's command line (ch01_cli.hpp): the chapter's one file that includes CLI11, so that its ~11 s of
// compile time is spent once, in the ch01_cli library that the binary and test_ch01 link.
#include "01_cpu_matmul/ch01_cli.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <string>

namespace mm::ch01 {

Options parse_options(int argc, const char* const* argv, const CpuTopology& topo) {
  CliSpec spec = cli_spec();
  std::string threads_text;
  bool threads_given = false;  // so that an empty value ("--threads=") is rejected, not taken as the default
  bool sweep = false, no_pin = false, force = false;
  const std::size_t cpus = std::max<std::size_t>(1, topo.logical());
  spec.extra = [&](CLI::App& app) {
    app.add_option_function<std::string>(
        "--threads", [&](const std::string& text) {
          threads_text = text;
          threads_given = true;
        },
        "workers of the threaded kernel, at most the logical CPUs (default: the logical CPUs this process may use, here " +
            std::to_string(cpus) + ")")
        ->type_name("INT");
    app.add_flag("--thread-sweep", sweep,
                 "also run the threaded kernel at 1, 2, 4, ..., the physical core count and --threads workers, as "
                 "kernels threaded_<t>");
    app.add_flag("--no-pin", no_pin,
                 "let the operating system place the threads (default: pinned, one worker per physical core first); "
                 "allows --threads up to " + std::to_string(max_threads));
    app.add_flag("--force", force,
                 "run even when the run is estimated to take more than " + duration_text(refuse_after_s) +
                     " (without it such a run is refused, saying how long it would take)");
  };
  Options o;
  o.cli = parse_cli(argc, argv, spec);
  o.pin = !no_pin;
  o.threads = unsigned(cpus);
  if (threads_given) {
    const std::int64_t t = parse_int(threads_text, "--threads", 1);
    if (t > max_threads)
      throw CliError("error: --threads: '" + threads_text + "' is more than " + std::to_string(max_threads), 2);
    if (o.pin && std::size_t(t) > cpus)
      throw CliError("error: --threads: '" + threads_text + "' is more than the " + std::to_string(cpus) +
                         " logical CPUs this process may use (pinned: one worker per CPU; --no-pin lets them share)",
                     2);
    o.threads = unsigned(t);
  }
  o.thread_sweep = sweep;
  o.force = force;
  if (!o.force) {
    const RunEstimate e = estimate_run(o, topo.physical());
    if (e.seconds > refuse_after_s)
      throw CliError("error: --sizes/--m/--n/--k: this run would take about " + duration_text(e.seconds) +
                         " on a CPU like this (a conservative estimate; largest part " + e.slowest +
                         "); runs estimated past " + duration_text(refuse_after_s) +
                         " need --force, or drop naive (--kernel ikj,blocked,threaded) or use fewer --reps",
                     2);
  }
  return o;
}

}  // namespace mm::ch01
