// Zero-cost check (tests/layout/zero_cost_check.py): the same tiled transpose written with
// static layouts and by hand. The layout version must compile to (about) the same code.
// Static problem (the claim is about static layouts): in is (M,N) row-major, out is (N,M)
// row-major, one block per 32-row stripe, 256 threads. Both loops are kept rolled so that
// the comparison measures indexing, not the compiler's unrolling choices.
#include "layout/all.hpp"

using namespace mm;

constexpr int kM = 2048;
constexpr int kN = 1024;

extern "C" __global__ void transpose_layout(float const* in, float* out) {
  auto M = Int<kM>{};
  auto N = Int<kN>{};
  using SmemLayout = Layout<Shape<_32, _32>, Stride<_1, _33>>;  // padded against bank conflicts
  using ThrLayout = Layout<Shape<_8, _32>, Stride<_32, _1>>;    // consecutive threads: consecutive columns
  __shared__ float smem[cosize_v<SmemLayout>];
  auto sT = make_tensor(make_smem_ptr(smem), SmemLayout{});                    // (32,32)
  auto sTt = make_tensor(make_smem_ptr(smem), select<1, 0>(SmemLayout{}));     // (32,32) transposed view
  auto mIn = make_tensor(make_gmem_ptr(in), make_shape(M, N), make_stride(N, _1{}));    // (M,N)
  auto mOut = make_tensor(make_gmem_ptr(out), make_shape(N, M), make_stride(M, _1{}));  // (N,M)
  auto gIn = local_tile(mIn, Shape<_32, _32>{}, make_coord(int(blockIdx.x), _));        // (32,32,n)
  auto gOut = local_tile(mOut, Shape<_32, _32>{}, make_coord(_, int(blockIdx.x)));      // (32,32,n)
  auto tIn = local_partition(gIn, ThrLayout{}, threadIdx.x);    // (4,1,n)
  auto tS = local_partition(sT, ThrLayout{}, threadIdx.x);      // (4,1)
  auto tSt = local_partition(sTt, ThrLayout{}, threadIdx.x);    // (4,1)
  auto tOut = local_partition(gOut, ThrLayout{}, threadIdx.x);  // (4,1,n)
#pragma unroll 1
  for (int n = 0; n < int(size<2>(tIn)); ++n) {
    copy(tIn(_, _, n), tS);
    __syncthreads();
    copy(tSt, tOut(_, _, n));
    __syncthreads();
  }
}

extern "C" __global__ void transpose_by_hand(float const* in, float* out) {
  constexpr int M = kM, N = kN;
  __shared__ float smem[32 * 33];
  int r = threadIdx.x / 32, c = threadIdx.x % 32;
  int bm = blockIdx.x;
#pragma unroll 1
  for (int n = 0; n < N / 32; ++n) {
    for (int j = 0; j < 4; ++j) smem[(r + 8 * j) + 33 * c] = in[(bm * 32 + r + 8 * j) * N + n * 32 + c];
    __syncthreads();
    for (int j = 0; j < 4; ++j) out[(n * 32 + r + 8 * j) * M + bm * 32 + c] = smem[c + 33 * (r + 8 * j)];
    __syncthreads();
  }
}
