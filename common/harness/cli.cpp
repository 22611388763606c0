#include "harness/cli.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "harness/results.hpp"

namespace mm {
namespace {

[[noreturn]] void reject(const std::string& flag, const std::string& why) {
  throw CliError("error: " + flag + ": " + why, 2);
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(text);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!text.empty() && text.back() == sep) out.push_back("");
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string one_line(std::string s) {
  for (char& ch : s) if (ch == '\n') ch = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// The *_or_exit functions' end: --help's text on stdout, or the error line after the program's name on stderr,
// then exit with the error's code (0 or 2).
[[noreturn]] void print_and_exit(const CliError& e, const std::string& program) {
  if (e.exit_code == 0) {
    std::cout << e.what();
  } else {
    std::cerr << program << ": " << e.what() << '\n';
  }
  std::exit(e.exit_code);
}

}  // namespace

std::int64_t parse_int(const std::string& text, const std::string& flag, std::int64_t min) {
  std::int64_t v = 0;
  const char* b = text.data();
  const char* e = b + text.size();
  auto [p, ec] = std::from_chars(b, e, v);
  if (text.empty() || ec == std::errc::invalid_argument || p != e)
    reject(flag, "'" + text + "' is not an integer");
  if (ec == std::errc::result_out_of_range) reject(flag, "'" + text + "' is out of range");
  if (v < min) reject(flag, "'" + text + "' must be at least " + std::to_string(min));
  return v;
}

std::vector<ProblemSize> parse_sizes(const std::string& text, bool has_k, const std::string& flag) {
  std::vector<ProblemSize> sizes;
  for (const std::string& item : split(text, ',')) {
    if (item.empty()) reject(flag, "empty entry in '" + text + "'");
    const auto parts = split(item, 'x');
    ProblemSize s;
    if (parts.size() == 1) {
      s.m = s.n = parse_int(parts[0], flag);
      s.k = has_k ? s.m : 1;
    } else if (has_k && parts.size() == 3) {
      s.m = parse_int(parts[0], flag); s.n = parse_int(parts[1], flag); s.k = parse_int(parts[2], flag);
    } else if (!has_k && parts.size() == 2) {
      s.m = parse_int(parts[0], flag); s.n = parse_int(parts[1], flag);
    } else {
      reject(flag, "'" + item + "' is not " + (has_k ? "N or MxNxK" : "N or MxN"));
    }
    sizes.push_back(s);
  }
  return sizes;
}

CliOptions parse_cli(int argc, const char* const* argv, const CliSpec& spec) {
  CLI::App app{spec.description, spec.program};
  std::string m, n, k, sizes, reps, warmup, kernel, layout, seed;
  CliOptions o;
  o.program = spec.program;
  // The values are parsed here (parse_int, parse_sizes: one line naming the flag), so CLI11 sees strings;
  // type_name gives --help the type a reader must write instead of CLI11's TEXT.
  app.add_option("--m", m, "rows of A and C")->type_name("INT");
  app.add_option("--n", n, "columns of B and C")->type_name("INT");
  if (spec.has_k) app.add_option("--k", k, "columns of A, rows of B")->type_name("INT");
  std::string size_help = spec.has_k ? "comma-separated sizes: N (square) or MxNxK" : "comma-separated sizes: N (square) or MxN";
  app.add_option("--sizes", sizes, size_help + " (default: the chapter's list)")->type_name("SIZES");
  app.add_option("--reps", reps, "timed repetitions (default " + std::to_string(spec.default_reps) + ")")->type_name("INT");
  app.add_option("--warmup", warmup, "untimed warm-up runs (default " + std::to_string(spec.default_warmup) + ")")
      ->type_name("INT");
  app.add_option("--kernel", kernel, "comma-separated kernels to run: " + join(spec.kernels) + " (default: all)")
      ->type_name("NAMES");
  if (spec.layouts.size() > 1)
    app.add_option("--layout", layout, "comma-separated storage orders of A,B,C: " + join(spec.layouts) + " or all (default " + spec.layouts.front() + ")")
        ->type_name("ORDERS");
  app.add_option("--csv", o.csv, "write the results to this CSV file (checked before the run)")->type_name("FILE");
  app.add_flag("--no-check", [&o](std::int64_t) { o.check = false; }, "skip the comparison with the fp64 reference");
  if (spec.can_interleave)
    app.add_flag("--interleave", o.interleave,
                 "time a size's kernels in turns (one run each a round, the first moving each round), "
                 "not each kernel's runs together");
  app.add_option("--seed", seed, "seed of the random inputs (default 42)")->type_name("INT");
  for (const CliExtraOption& x : spec.extra_options) app.add_option_function<std::string>(x.name, x.set, x.help)->type_name(x.type_name);
  for (const CliExtraFlag& f : spec.extra_flags) app.add_flag(f.name, *f.value, f.help);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    throw CliError(app.help(), 0);
  } catch (const CLI::ParseError& e) {
    throw CliError("error: " + one_line(e.what()), 2);
  }

  const bool any_mnk = !m.empty() || !n.empty() || !k.empty();
  if (any_mnk && !sizes.empty()) reject("--sizes", "give either --sizes or --m/--n" + std::string(spec.has_k ? "/--k" : ""));
  if (any_mnk) {
    if (m.empty()) reject("--m", "missing (give --m, --n" + std::string(spec.has_k ? " and --k" : "") + " together)");
    if (n.empty()) reject("--n", "missing (give --m, --n" + std::string(spec.has_k ? " and --k" : "") + " together)");
    if (spec.has_k && k.empty()) reject("--k", "missing (give --m, --n and --k together)");
    o.sizes.push_back({parse_int(m, "--m"), parse_int(n, "--n"), spec.has_k ? parse_int(k, "--k") : 1});
  } else if (!sizes.empty()) {
    o.sizes = parse_sizes(sizes, spec.has_k, "--sizes");
  } else {
    o.sizes = spec.default_sizes;
  }
  const std::string size_flag = any_mnk ? (spec.has_k ? "--m/--n/--k" : "--m/--n") : "--sizes";
  // Only the extents are limited here; whether a kernel's 32-bit offsets hold a matrix is that
  // kernel's own `rejects` (the rule is written once, in gemm/launch.hpp).
  for (const ProblemSize& s : o.sizes) {
    const std::int64_t lim = spec.max_extent;
    if (s.m > lim || s.n > lim || (spec.has_k && s.k > lim))
      reject(size_flag, std::to_string(s.m) + "x" + std::to_string(s.n) + (spec.has_k ? "x" + std::to_string(s.k) : "") +
                            ": M, N" + (spec.has_k ? ", K" : "") + " must be at most " + std::to_string(lim) +
                            " (32-bit sizes: cuBLAS's m, n, k and leading dimensions, every kernel's extents)");
  }

  o.reps = reps.empty() ? spec.default_reps : int(std::min<std::int64_t>(parse_int(reps, "--reps", 1), 1 << 20));
  o.warmup = warmup.empty() ? spec.default_warmup : int(std::min<std::int64_t>(parse_int(warmup, "--warmup", 0), 1 << 20));
  o.seed = seed.empty() ? 42 : std::uint64_t(parse_int(seed, "--seed", 0));

  if (kernel.empty() || kernel == "all") {
    o.kernels = spec.kernels;
  } else {
    for (const std::string& name : split(kernel, ',')) {
      if (std::find(spec.kernels.begin(), spec.kernels.end(), name) == spec.kernels.end())
        reject("--kernel", "unknown kernel '" + name + "' (known: " + join(spec.kernels) + ")");
      o.kernels.push_back(name);
    }
  }

  if (layout.empty()) {
    o.layouts = {spec.layouts.front()};
  } else if (layout == "all") {
    o.layouts = spec.layouts;
  } else {
    for (const std::string& tag : split(layout, ',')) {
      if (std::find(spec.layouts.begin(), spec.layouts.end(), tag) == spec.layouts.end())
        reject("--layout", "unknown layout '" + tag + "' (known: " + join(spec.layouts) + ")");
      o.layouts.push_back(tag);
    }
  }
  // Last, once the rest is known to be good, and long before the CSV is written at the end of the run.
  if (!o.csv.empty())
    if (const std::string why = csv_unwritable(o.csv); !why.empty()) reject("--csv", "cannot write '" + o.csv + "': " + why);
  return o;
}

CliOptions parse_cli_or_exit(int argc, const char* const* argv, const CliSpec& spec) {
  try {
    return parse_cli(argc, argv, spec);
  } catch (const CliError& e) {
    print_and_exit(e, spec.program);
  }
}

ProbeOptions parse_probe_cli(int argc, const char* const* argv, const ProbeSpec& spec) {
  // No name: CLI11 takes argv[0] for --help's usage line.
  CLI::App app{spec.description};
  ProbeOptions o;
  o.iters = spec.default_iters;
  app.add_option("--csv", o.csv, "write the rows to this CSV file (checked before the run)")->type_name("FILE");
  app.add_option("--iters", o.iters, spec.iters_help)->check(CLI::Range(1, 1 << 24));
  app.add_option("--reps", o.reps, "timed runs")->check(CLI::Range(1, 1000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) throw CliError(app.help(), 0);
    throw CliError("error: " + std::string(e.what()), 2);
  }
  if (!o.csv.empty())
    if (const std::string why = csv_unwritable(o.csv); !why.empty()) reject("--csv", "cannot write '" + o.csv + "': " + why);
  return o;
}

ProbeOptions parse_probe_cli_or_exit(int argc, const char* const* argv, const ProbeSpec& spec) {
  try {
    return parse_probe_cli(argc, argv, spec);
  } catch (const CliError& e) {
    print_and_exit(e, spec.program);
  }
}

}  // namespace mm
