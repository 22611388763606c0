// The one CSV schema: what write_csv writes, read_csv reads back unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "harness/results.hpp"

namespace {

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string("mm_") + name + "_" + std::to_string(::getpid()) + ".csv")).string();
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

TEST(Csv, HeaderIsTheRoadmapSchema) {
  EXPECT_EQ(mm::csv_header(),
            "chapter,kernel,dtype,layout,M,N,K,median_ms,min_ms,tflops,gbps,pct_of_cublas,rel_error,gpu,cuda_version,timestamp");
}

TEST(Csv, RoundTrips) {
  mm::ResultRow a;
  a.chapter = "03_tiled_shared_memory"; a.kernel = "tiled_32"; a.dtype = "fp32"; a.layout = "RRR";
  a.m = 4096; a.n = 1; a.k = 33; a.median_ms = 1.25; a.min_ms = 1.125; a.tflops = 12.5; a.gbps = 100.25;
  a.pct_of_cublas = 24.5; a.rel_error = 3.5e-7; a.gpu = "NVIDIA H200"; a.cuda_version = "runtime 13.0 cuBLAS 13.1.0";
  a.timestamp = "2026-11-21T10:00:00Z";
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
  }
  EXPECT_EQ(rows[1].gpu, "Some CPU  2 cores") << "commas in text fields are replaced, never quoted";
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

}  // namespace
