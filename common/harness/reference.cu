#include "harness/reference.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "gemm/launch.hpp"

namespace mm {
namespace {

template <class T> __host__ __device__ double to_double(T x) { return double(float(x)); }
template <> __host__ __device__ double to_double<double>(double x) { return x; }

// One thread per C element; threadIdx.x walks along n so that B and C reads of
// a warp are contiguous for row-major B. Good enough: the reference runs once per size.
// Both dimensions are grid-stride loops: grid y holds at most 65535 blocks, so a
// tall C (M > 65535 * 8) is covered by blocks that step down by the grid's height,
// and the launch never depends on the problem's shape being within a grid limit.
template <class T>
__global__ void reference_kernel(GemmProblem p, const T* a, const T* b, double* value, double* abs_sum) {
  const MatrixShape sa = p.shape_a(), sb = p.shape_b();
  const std::int64_t step_i = std::int64_t(gridDim.y) * blockDim.y;
  const std::int64_t step_j = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y; i < p.m; i += step_i)
    for (std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; j < p.n; j += step_j) {
      double acc = 0, abs_acc = 0;
      for (std::int64_t kk = 0; kk < p.k; ++kk) {
        const double prod = to_double(a[sa.offset(i, kk)]) * to_double(b[sb.offset(kk, j)]);
        acc += prod;
        abs_acc += fabs(prod);
      }
      value[i * p.n + j] = acc;
      abs_sum[i * p.n + j] = abs_acc;
    }
}

}  // namespace

template <class T>
Reference reference_gemm_host(const GemmProblem& p, const std::vector<T>& a, const std::vector<T>& b) {
  Reference r{p.m, p.n, std::vector<double>(p.m * p.n, 0.0), std::vector<double>(p.m * p.n, 0.0)};
  const MatrixShape sa = p.shape_a(), sb = p.shape_b();
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t kk = 0; kk < p.k; ++kk) {
      const double aik = to_double(a[sa.offset(i, kk)]);
      for (std::int64_t j = 0; j < p.n; ++j) {
        const double prod = aik * to_double(b[sb.offset(kk, j)]);
        r.value[i * p.n + j] += prod;
        r.abs_sum[i * p.n + j] += std::fabs(prod);
      }
    }
  return r;
}

template <class T>
Reference reference_gemm_device(const GemmProblem& p, const T* a, const T* b) {
  DeviceBuffer<double> value(p.m * p.n), abs_sum(p.m * p.n);
  const dim3 block(32, 8);
  // Enough blocks to fill the GPU many times over, never more than a grid dimension holds:
  // the kernel's grid-stride loops cover the rest.
  const dim3 grid(unsigned(launch::capped_blocks(p.n, block.x, launch::max_grid_x)),
                  unsigned(launch::capped_blocks(p.m, block.y, launch::max_grid_y)));
  reference_kernel<<<grid, block>>>(p, a, b, value.data(), abs_sum.data());
  MM_CHECK_LAUNCH();
  MM_CUDA_CHECK(cudaDeviceSynchronize());
  return Reference{p.m, p.n, value.download(), abs_sum.download()};
}

template <class T>
Reference reference_gemm(const GemmProblem& p, const DeviceBuffer<T>& a, const DeviceBuffer<T>& b) {
  if (double(p.m) * double(p.n) * double(p.k) <= double(1 << 24))
    return reference_gemm_host(p, a.download(), b.download());
  return reference_gemm_device(p, a.data(), b.data());
}

template <class T>
CheckResult check_gemm(const Reference& ref, const std::vector<T>& out, Order order, double tol) {
  CheckResult c;
  const MatrixShape sc{ref.m, ref.n, order};
  double err2 = 0, ref2 = 0;
  bool have_first = false;
  double first_got = 0, first_want = 0;
  if (out.size() != std::size_t(ref.m * ref.n)) {
    c.summary = "FAIL: output has " + std::to_string(out.size()) + " elements, expected " +
                std::to_string(ref.m * ref.n);
    return c;
  }
  for (std::int64_t i = 0; i < ref.m; ++i)
    for (std::int64_t j = 0; j < ref.n; ++j) {
      const double want = ref.value[i * ref.n + j];
      const double got = to_double(out[sc.offset(i, j)]);
      const double bound = tol * ref.abs_sum[i * ref.n + j] + 1e-30;
      const double err = std::fabs(got - want);
      const bool finite = std::isfinite(got);
      if (!finite) ++c.nonfinite;
      if (!finite || err > bound) {
        ++c.bad;
        if (!have_first) {
          have_first = true;
          c.first_bad_row = i;
          c.first_bad_col = j;
          first_got = got;
          first_want = want;
        }
      }
      if (finite) {
        err2 += err * err;
        c.max_abs_error = std::max(c.max_abs_error, err);
        c.worst_ratio = std::max(c.worst_ratio, err / bound);
      }
      ref2 += want * want;
    }
  c.rel_frobenius = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  if (c.nonfinite > 0) c.rel_frobenius = std::numeric_limits<double>::quiet_NaN();
  c.ok = c.bad == 0;
  char buf[256];
  if (c.ok)
    std::snprintf(buf, sizeof buf, "ok (rel %.1e)", c.rel_frobenius);
  else
    std::snprintf(buf, sizeof buf, "FAIL: %lld bad elements (%lld NaN/Inf), first at (%lld, %lld): got %g, want %g",
                  (long long)c.bad, (long long)c.nonfinite, (long long)c.first_bad_row,
                  (long long)c.first_bad_col, first_got, first_want);
  c.summary = buf;
  return c;
}

#define MM_INSTANTIATE_REFERENCE(T)                                                              \
  template Reference reference_gemm_host<T>(const GemmProblem&, const std::vector<T>&,            \
                                            const std::vector<T>&);                               \
  template Reference reference_gemm_device<T>(const GemmProblem&, const T*, const T*);            \
  template Reference reference_gemm<T>(const GemmProblem&, const DeviceBuffer<T>&,                \
                                       const DeviceBuffer<T>&);                                   \
  template CheckResult check_gemm<T>(const Reference&, const std::vector<T>&, Order, double);
MM_INSTANTIATE_REFERENCE(float)
MM_INSTANTIATE_REFERENCE(double)
MM_INSTANTIATE_REFERENCE(__nv_bfloat16)
MM_INSTANTIATE_REFERENCE(__half)
MM_INSTANTIATE_REFERENCE(__nv_fp8_e4m3)
#undef MM_INSTANTIATE_REFERENCE

}  // namespace mm
