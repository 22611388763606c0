#include "harness/results.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

namespace mm {
namespace {

std::string fmt_number(double v) {
  if (std::isnan(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

double parse_number(const std::string& s, int line) {
  if (s.empty()) return not_measured;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) throw std::runtime_error("line " + std::to_string(line) + ": not a number: '" + s + "'");
  return v;
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : line) {
    if (ch == ',') { out.push_back(cur); cur.clear(); }
    else if (ch != '\r') cur += ch;
  }
  out.push_back(cur);
  return out;
}

// Text fields never hold commas: they are replaced so that the CSV needs no quoting.
std::string clean(std::string s) {
  for (char& ch : s) if (ch == ',' || ch == '\n') ch = ' ';
  return s;
}

std::string fixed(double v, int precision) {
  if (std::isnan(v)) return "-";
  std::ostringstream o;
  o << std::fixed << std::setprecision(precision) << v;
  return o.str();
}

}  // namespace

std::string csv_header() {
  return "chapter,kernel,dtype,layout,M,N,K,median_ms,min_ms,tflops,gbps,pct_of_cublas,rel_error,gpu,cuda_version,timestamp,"
         "path";
}

namespace {
// The header before the `path` column was added (CSVs committed before it read with an empty path).
std::string csv_header_without_path() { return csv_header().substr(0, csv_header().rfind(',')); }
}  // namespace

std::string csv_unwritable(const std::string& path) {
  if (path.empty()) return "empty path";
  // Create it only if it is absent (O_EXCL), so that we know to remove it again.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0666);
  if (fd >= 0) {
    ::close(fd);
    ::unlink(path.c_str());
    return "";
  }
  if (errno != EEXIST) return std::strerror(errno);
  fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return std::strerror(errno);
  ::close(fd);
  return "";
}

void write_csv(const std::string& path, const std::vector<ResultRow>& rows) {
  std::ofstream f(path);
  if (!f) {
    // Checked before the run (csv_unwritable); this is a path that went bad since, or a full disk.
    const std::string why = csv_unwritable(path);
    std::fprintf(stderr, "%s: error: --csv: cannot write '%s'%s%s\n", program_invocation_short_name, path.c_str(),
                 why.empty() ? "" : ": ", why.c_str());
    std::exit(2);
  }
  f << csv_header() << '\n';
  for (const ResultRow& r : rows) {
    f << clean(r.chapter) << ',' << clean(r.kernel) << ',' << clean(r.dtype) << ',' << clean(r.layout) << ','
      << r.m << ',' << r.n << ',' << r.k << ',' << fmt_number(r.median_ms) << ',' << fmt_number(r.min_ms) << ','
      << fmt_number(r.tflops) << ',' << fmt_number(r.gbps) << ',' << fmt_number(r.pct_of_cublas) << ','
      << fmt_number(r.rel_error) << ',' << clean(r.gpu) << ',' << clean(r.cuda_version) << ','
      << clean(r.timestamp) << ',' << clean(r.path) << '\n';
  }
}

std::vector<ResultRow> read_csv(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open '" + path + "'");
  std::string line;
  if (!std::getline(f, line)) throw std::runtime_error("line 1: not the gemm-ladder CSV header");
  const bool with_path = split(line) == split(csv_header());
  if (!with_path && split(line) != split(csv_header_without_path()))
    throw std::runtime_error("line 1: not the gemm-ladder CSV header");
  const std::size_t fields = with_path ? 17 : 16;
  std::vector<ResultRow> rows;
  int n = 1;
  while (std::getline(f, line)) {
    ++n;
    if (line.empty()) continue;
    const auto c = split(line);
    if (c.size() != fields)
      throw std::runtime_error("line " + std::to_string(n) + ": expected " + std::to_string(fields) + " fields, found " +
                               std::to_string(c.size()));
    ResultRow r;
    r.chapter = c[0]; r.kernel = c[1]; r.dtype = c[2]; r.layout = c[3];
    r.m = std::int64_t(parse_number(c[4], n)); r.n = std::int64_t(parse_number(c[5], n)); r.k = std::int64_t(parse_number(c[6], n));
    r.median_ms = parse_number(c[7], n); r.min_ms = parse_number(c[8], n); r.tflops = parse_number(c[9], n);
    r.gbps = parse_number(c[10], n); r.pct_of_cublas = parse_number(c[11], n); r.rel_error = parse_number(c[12], n);
    r.gpu = c[13]; r.cuda_version = c[14]; r.timestamp = c[15];
    if (with_path) r.path = c[16];
    rows.push_back(r);
  }
  return rows;
}

void print_table(std::ostream& os, const std::vector<ResultRow>& rows, const std::string& baseline_name,
                 FlopUnit unit) {
  const std::string pct = "% of " + baseline_name;
  const bool giga = unit == FlopUnit::giga;
  // The dtype column fits its longest name ("e4m3_promoted") with a space after it.
  int dtype_w = 6;
  for (const ResultRow& r : rows) dtype_w = std::max(dtype_w, int(r.dtype.size()) + 1);
  os << std::left << std::setw(30) << "kernel" << std::setw(dtype_w) << "dtype" << std::setw(7) << "layout"
     << std::right << std::setw(20) << "M x N x K" << std::setw(11) << "ms" << std::setw(10) << (giga ? "GFLOP/s" : "TFLOP/s")
     << std::setw(10) << "GB/s" << std::setw(14) << pct << std::setw(10) << "rel err" << '\n';
  for (const ResultRow& r : rows) {
    std::ostringstream size;
    size << r.m << 'x' << r.n;
    if (r.k > 0) size << 'x' << r.k;
    char err[32] = "-";
    if (!std::isnan(r.rel_error)) std::snprintf(err, sizeof err, "%.1e", r.rel_error);
    os << std::left << std::setw(30) << r.kernel << std::setw(dtype_w) << r.dtype << std::setw(7) << r.layout
       << std::right << std::setw(20) << size.str() << std::setw(11) << fixed(r.median_ms, 4)
       << std::setw(10) << fixed(giga ? r.tflops * 1e3 : r.tflops, 2) << std::setw(10) << fixed(r.gbps, 1)
       << std::setw(14) << fixed(r.pct_of_cublas, 1) << std::setw(10) << err << '\n';
  }
}

std::string utc_timestamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace mm
