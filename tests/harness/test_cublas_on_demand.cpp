// cuBLAS is loaded on its first call, not at process start (harness/cublas_on_demand.cpp): a process
// that never calls it does not pay its ~0.13 s of CPU. No GPU needed: cublasGetProperty and cuBLASLt's
// preference objects work without one.
#include <gtest/gtest.h>

#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstddef>
#include <fstream>
#include <string>

namespace {

// Whether the process has mapped a file whose path contains `name`.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find(name) != std::string::npos) return true;
  return false;
}

// Read before main, so before any test calls cuBLAS (the binary run by hand runs every test in one process).
const bool cublas_mapped_at_start = mapped("libcublas");

TEST(CublasOnDemand, NotLoadedAtStart) {
  EXPECT_FALSE(cublas_mapped_at_start) << "a library of cuBLAS was mapped before main: something links "
                                          "libcublas or libcublasLt again (common/harness/CMakeLists.txt)";
}

TEST(CublasOnDemand, FirstCallLoadsCublas) {
  int major = 0;
  ASSERT_EQ(cublasGetProperty(MAJOR_VERSION, &major), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(major, CUBLAS_VER_MAJOR);
  EXPECT_TRUE(mapped("libcublas.so"));
}

TEST(CublasOnDemand, FirstCallLoadsCublasLt) {
  cublasLtMatmulPreference_t pref = nullptr;
  ASSERT_EQ(cublasLtMatmulPreferenceCreate(&pref), CUBLAS_STATUS_SUCCESS);
  const std::size_t workspace = 1 << 20;
  EXPECT_EQ(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                 sizeof workspace),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatmulPreferenceDestroy(pref), CUBLAS_STATUS_SUCCESS);
  EXPECT_TRUE(mapped("libcublasLt.so"));
}

}  // namespace
