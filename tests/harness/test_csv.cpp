// The one CSV schema: what write_csv writes, read_csv reads back unchanged; csv_unwritable, which
// every binary asks before it measures; the printed table's units.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/results.hpp"

namespace {

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string("mm_") + name + "_" + std::to_string(::getpid()) + ".csv")).string();
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

TEST(Csv, HeaderIsTheRoadmapSchema) {
  EXPECT_EQ(mm::csv_header(),
            "chapter,kernel,dtype,layout,M,N,K,median_ms,min_ms,tflops,gbps,pct_of_cublas,rel_error,gpu,cuda_version,timestamp,"
            "path");
}

TEST(Csv, RoundTrips) {
  mm::ResultRow a;
  a.chapter = "03_tiled_shared_memory"; a.kernel = "tiled_32"; a.dtype = "fp32"; a.layout = "RRR";
  a.m = 4096; a.n = 1; a.k = 33; a.median_ms = 1.25; a.min_ms = 1.125; a.tflops = 12.5; a.gbps = 100.25;
  a.pct_of_cublas = 24.5; a.rel_error = 3.5e-7; a.gpu = "NVIDIA H200"; a.cuda_version = "runtime 13.0 cuBLAS 13.1.0";
  a.timestamp = "2026-11-21T10:00:00Z";
  a.path = "split_k 128x128 x3";
  mm::ResultRow b = a;  // a CPU row: nothing GPU-specific measured
  b.kernel = "naive"; b.pct_of_cublas = mm::not_measured; b.rel_error = mm::not_measured; b.gpu = "Some CPU, 2 cores";
  const std::string path = temp_path("roundtrip");
  mm::write_csv(path, {a, b});
  const auto rows = mm::read_csv(path);
  std::remove(path.c_str());
  ASSERT_EQ(rows.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const mm::ResultRow& want = i == 0 ? a : b;
    const mm::ResultRow& got = rows[i];
    EXPECT_EQ(got.chapter, want.chapter);
    EXPECT_EQ(got.kernel, want.kernel);
    EXPECT_EQ(got.dtype, want.dtype);
    EXPECT_EQ(got.layout, want.layout);
    EXPECT_EQ(got.m, want.m);
    EXPECT_EQ(got.n, want.n);
    EXPECT_EQ(got.k, want.k);
    EXPECT_TRUE(same(got.median_ms, want.median_ms));
    EXPECT_TRUE(same(got.min_ms, want.min_ms));
    EXPECT_TRUE(same(got.tflops, want.tflops));
    EXPECT_TRUE(same(got.gbps, want.gbps));
    EXPECT_TRUE(same(got.pct_of_cublas, want.pct_of_cublas));
    EXPECT_TRUE(same(got.rel_error, want.rel_error));
    EXPECT_EQ(got.cuda_version, want.cuda_version);
    EXPECT_EQ(got.timestamp, want.timestamp);
    EXPECT_EQ(got.path, want.path);
  }
  EXPECT_EQ(rows[1].gpu, "Some CPU  2 cores") << "commas in text fields are replaced, never quoted";
}

// The CSVs committed before the `path` column existed still read, with an empty path; a row of the
// wrong width for its header does not.
TEST(Csv, ReadsTheHeaderWithoutPath) {
  const std::string path = temp_path("nopath");
  const std::string old_header = mm::csv_header().substr(0, mm::csv_header().rfind(','));
  {
    std::ofstream f(path);
    f << old_header << "\n03,tiled,fp32,RRR,1,2,3,1,1,1,,100,0,gpu,cuda,now\n";
  }
  const auto rows = mm::read_csv(path);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].kernel, "tiled");
  EXPECT_EQ(rows[0].path, "");
  {
    std::ofstream f(path);
    f << mm::csv_header() << "\n03,tiled,fp32,RRR,1,2,3,1,1,1,,100,0,gpu,cuda,now\n";  // 16 fields under 17 names
  }
  EXPECT_THROW(mm::read_csv(path), std::runtime_error);
  std::remove(path.c_str());
}

TEST(Csv, MalformedFileIsRejected) {
  const std::string path = temp_path("bad");
  {
    std::ofstream f(path);
    f << mm::csv_header() << "\n" << "03,tiled,fp32,RRR,1,2\n";
  }
  EXPECT_THROW(mm::read_csv(path), std::runtime_error);
  {
    std::ofstream f(path);
    f << "not,the,header\n";
  }
  EXPECT_THROW(mm::read_csv(path), std::runtime_error);
  std::remove(path.c_str());
}

// Before any measurement: a path that cannot be written is named with its reason; one that can is left as it was
// (an existing CSV keeps its rows, an absent one is not created).
TEST(Csv, UnwritablePathsAreFoundBeforeTheRun) {
  EXPECT_EQ(mm::csv_unwritable("/nonexistent-mm-dir/x.csv"), "No such file or directory");
  EXPECT_EQ(mm::csv_unwritable(std::filesystem::temp_directory_path().string()), "Is a directory");
  EXPECT_FALSE(mm::csv_unwritable("").empty());

  const std::string absent = temp_path("absent");
  std::remove(absent.c_str());
  EXPECT_EQ(mm::csv_unwritable(absent), "");
  EXPECT_FALSE(std::filesystem::exists(absent)) << "the check created the file and left it";

  const std::string existing = temp_path("existing");
  { std::ofstream(existing) << "old rows\n"; }
  EXPECT_EQ(mm::csv_unwritable(existing), "");
  std::ifstream in(existing);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "old rows") << "the check changed an existing file";
  std::remove(existing.c_str());

  if (::geteuid() != 0) {  // root writes anywhere
    const std::string read_only = temp_path("read_only");
    { std::ofstream(read_only) << "x\n"; }
    ::chmod(read_only.c_str(), 0444);
    EXPECT_EQ(mm::csv_unwritable(read_only), "Permission denied");
    std::remove(read_only.c_str());
  }
}

// GPU chapters print TFLOP/s; chapter 01 asks for GFLOP/s, where a CPU's 0.5-100 reads as more than 0.00.
TEST(Csv, TableSpeedUnit) {
  mm::ResultRow r;
  r.kernel = "naive"; r.dtype = "fp32"; r.layout = "RRR"; r.m = r.n = r.k = 1024;
  r.median_ms = 4585.7; r.tflops = 0.000468;
  std::ostringstream tera, giga;
  mm::print_table(tera, {r});
  mm::print_table(giga, {r}, "cuBLAS", mm::FlopUnit::giga);
  EXPECT_NE(tera.str().find("TFLOP/s"), std::string::npos);
  EXPECT_NE(tera.str().find(" 0.00 "), std::string::npos) << tera.str();
  EXPECT_NE(giga.str().find("GFLOP/s"), std::string::npos);
  EXPECT_EQ(giga.str().find("TFLOP/s"), std::string::npos);
  EXPECT_NE(giga.str().find(" 0.47 "), std::string::npos) << giga.str();
}

}  // namespace
