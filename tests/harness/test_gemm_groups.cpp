// The several-group chapter driver (run_gemm_chapter with GemmKernelGroups): one bf16 group and one
// tf32 group run from one command line into one CSV, each kernel against the cuBLAS of its own type.
// On the GPU: the CSV's rows. On the CPU: the command line (names from every group, a name twice
// refused), a baseline that cannot read the group's inputs refused, and the header line.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "gpu_test.hpp"
#include "harness/gemm_runner.hpp"
#include "harness/results.hpp"
#include "naive_gemm_kernel.hpp"

namespace {

using Bf16Group = mm::GemmKernelGroup<__nv_bfloat16, __nv_bfloat16>;
using Tf32Group = mm::GemmKernelGroup<float, float>;

Bf16Group bf16_group() {
  return {.baseline = mm::DType::bf16,
          .kernels = {{.name = "naive_bf16", .dtype = mm::DType::bf16, .launch = mm::test::launch_naive_bf16,
                       .rejects = {}, .prepare = {}}}};
}

Tf32Group tf32_group() {
  return {.baseline = mm::DType::tf32,
          .kernels = {{.name = "naive_tf32", .dtype = mm::DType::tf32, .launch = mm::test::launch_naive_tf32,
                       .rejects = {}, .prepare = {}}}};
}

const mm::GemmChapter chapter{.chapter = "99_groups_test", .description = "two groups",
                              .default_sizes = {{40, 24, 72}}, .layouts = {"RRR", "CRC"}};

std::string temp_csv(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string("mm_") + name + "_" + std::to_string(::getpid()) + ".csv")).string();
}

// Runs the two-group chapter with `args` after the program name, writing a CSV; returns its rows.
std::vector<mm::ResultRow> run_two_groups(std::vector<const char*> args, int& exit_code) {
  const std::string csv = temp_csv("groups");
  std::vector<const char*> argv = {"test_gemm_groups", "--reps", "2", "--warmup", "1", "--csv", csv.c_str()};
  argv.insert(argv.end(), args.begin(), args.end());
  exit_code = mm::run_gemm_chapter(int(argv.size()), argv.data(), chapter, bf16_group(), tf32_group());
  std::vector<mm::ResultRow> rows = mm::read_csv(csv);
  std::remove(csv.c_str());
  return rows;
}

TEST(GemmGroups, EachGroupHasItsCublasRowAndItsKernelsAreMeasuredAgainstIt) {
  MM_REQUIRE_GPU();
  int rc = -1;
  const auto rows = run_two_groups({"--layout", "all"}, rc);
  EXPECT_EQ(rc, 0) << "a check failed (see the output above)";
  // Per layout: bf16's cuBLAS and kernel, then tf32's.
  const std::vector<std::pair<std::string, std::string>> want = {
      {"cuBLAS", "bf16"}, {"naive_bf16", "bf16"}, {"cuBLAS", "tf32"}, {"naive_tf32", "tf32"}};
  ASSERT_EQ(rows.size(), 2 * want.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const mm::ResultRow& r = rows[i];
    SCOPED_TRACE("row " + std::to_string(i) + ": " + r.kernel + " " + r.dtype + " " + r.layout);
    EXPECT_EQ(r.chapter, "99_groups_test");
    EXPECT_EQ(r.layout, i < want.size() ? "RRR" : "CRC");
    EXPECT_EQ(r.kernel, want[i % want.size()].first);
    EXPECT_EQ(r.dtype, want[i % want.size()].second);
    EXPECT_EQ(r.m, 40);
    EXPECT_EQ(r.n, 24);
    EXPECT_EQ(r.k, 72);
    EXPECT_GT(r.median_ms, 0.0);
    EXPECT_TRUE(std::isfinite(r.rel_error));
    EXPECT_GT(r.pct_of_cublas, 0.0);
    if (r.kernel == "cuBLAS") {
      EXPECT_EQ(r.pct_of_cublas, 100.0);
    }
  }
  // % of cuBLAS is against the row of the kernel's own group, measured just before it.
  for (std::size_t i : {1u, 3u, 5u, 7u})
    EXPECT_NEAR(rows[i].pct_of_cublas, 100.0 * rows[i - 1].median_ms / rows[i].median_ms,
                1e-4 * rows[i].pct_of_cublas) << rows[i].kernel << " " << rows[i].layout;
}

TEST(GemmGroups, InterleavedRunGivesTheSameRowsInTheSameOrder) {
  MM_REQUIRE_GPU();
  // --interleave times a size's launches in turns after all are checked: the rows are the same, in
  // the same order, each kernel's % against its own group's cuBLAS row.
  int rc = -1;
  const auto rows = run_two_groups({"--interleave"}, rc);
  EXPECT_EQ(rc, 0) << "a check failed (see the output above)";
  ASSERT_EQ(rows.size(), 4u);
  const char* want[] = {"cuBLAS bf16", "naive_bf16 bf16", "cuBLAS tf32", "naive_tf32 tf32"};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].kernel + " " + rows[i].dtype, want[i]);
    EXPECT_GT(rows[i].median_ms, 0.0);
    EXPECT_TRUE(std::isfinite(rows[i].rel_error));
  }
  EXPECT_EQ(rows[0].pct_of_cublas, 100.0);
  EXPECT_EQ(rows[2].pct_of_cublas, 100.0);
  for (std::size_t i : {1u, 3u})
    EXPECT_NEAR(rows[i].pct_of_cublas, 100.0 * rows[i - 1].median_ms / rows[i].median_ms, 1e-4 * rows[i].pct_of_cublas);
}

TEST(GemmGroups, KernelSelectsAcrossGroupsAndAnUnselectedGroupIsNotRun) {
  MM_REQUIRE_GPU();
  int rc = -1;
  const auto rows = run_two_groups({"--kernel", "naive_tf32"}, rc);
  EXPECT_EQ(rc, 0);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].kernel + " " + rows[0].dtype, "cuBLAS tf32");
  EXPECT_EQ(rows[1].kernel + " " + rows[1].dtype, "naive_tf32 tf32");
}

// ---- On the CPU: the command line and the header line ----

// A death test's child re-runs this binary from the start ("threadsafe"), so that no CUDA state of
// the parent is forked; both cases exit while parsing, before any GPU is touched.
TEST(GemmGroups, KernelKnowsTheNamesOfEveryGroup) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const char* argv[] = {"test_gemm_groups", "--kernel", "naive_fp64"};
  EXPECT_EXIT(mm::run_gemm_chapter(3, argv, chapter, bf16_group(), tf32_group()), ::testing::ExitedWithCode(2),
              "--kernel: unknown kernel 'naive_fp64' \\(known: naive_bf16, naive_tf32\\)");
}

TEST(GemmGroups, ANameInTwoGroupsIsRefused) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Tf32Group clash = tf32_group();
  clash.kernels[0].name = "naive_bf16";
  const char* argv[] = {"test_gemm_groups"};
  EXPECT_EXIT(std::exit(mm::run_gemm_chapter(1, argv, chapter, bf16_group(), clash)), ::testing::ExitedWithCode(2),
              "kernel 'naive_bf16' is listed twice");
}

TEST(GemmGroups, ABaselineOfAnotherInputTypeIsRefused) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Tf32Group fp32_inputs_bf16_cublas = tf32_group();
  fp32_inputs_bf16_cublas.baseline = mm::DType::bf16;  // cuBLAS would read the fp32 inputs as bf16
  const char* argv[] = {"test_gemm_groups"};
  EXPECT_EXIT(std::exit(mm::run_gemm_chapter(1, argv, chapter, fp32_inputs_bf16_cublas)), ::testing::ExitedWithCode(2),
              "a group of fp32 inputs cannot have a bf16 cuBLAS baseline");
}

TEST(GemmGroups, HeaderLineNamesEachBaseline) {
  using mm::DType;
  EXPECT_EQ(mm::describe_baselines({{DType::f32, DType::f32, DType::f32}}), "cublasGemmEx, CUBLAS_COMPUTE_32F")
      << "chapters 02-07 print what they always printed";
  EXPECT_EQ(mm::describe_baselines({{DType::bf16, DType::bf16, DType::bf16}}),
            "cublasGemmEx, CUBLAS_COMPUTE_32F (bf16 in, bf16 out)");
  EXPECT_EQ(mm::describe_baselines({{DType::bf16, DType::bf16, DType::bf16}, {DType::tf32, DType::f32, DType::f32}}),
            "cublasGemmEx, one per group of kernels: bf16: CUBLAS_COMPUTE_32F (bf16 in, bf16 out); "
            "tf32: CUBLAS_COMPUTE_32F_FAST_TF32 (fp32 in, fp32 out)");
}

}  // namespace
