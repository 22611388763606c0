// Chapter 04: the layout library at work. Copies and transposes of an M×N row-major fp32
// matrix, each kernel one small step from the one before:
//
//   copy_smem              global -> shared -> global, 32×32 tile, 8×32 threads, 4 floats each
//   copy_cp_async          the global -> shared leg with cp.async (sm_80+)
//   copy_vec128            the same tile moved as float4: one 128-bit access per thread and leg
//   copy_vec128_64x64      tuned: a 64×64 tile, four float4 per thread (more bytes in flight)
//   transpose_naive        a copy into the destination viewed column-major: reads coalesced, writes strided
//   transpose_smem         through shared memory, read back through the transposed shared layout
//   transpose_smem_padded  the same with rows of 33 floats: no bank conflicts
//   transpose_smem_padded_64x64  tuned: a 64×64 tile, 16 floats per thread
//
// Every kernel takes any M, N ≥ 1: tiles that overhang the matrix are predicated with an
// identity tensor (the coordinate of each element) compared against (M, N).
//
// Build: cmake --build build --target ch04_copy_and_transpose   Run: build/bin/ch04_copy_and_transpose
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gemm/launch.hpp"
#include "layout/all.hpp"

namespace mm::ch04 {

// ---- Layouts the kernels share ------------------------------------------------------------

/// The threads of a block: 8 rows of 32, numbered row by row, so that warp w is row w and
/// its 32 lanes sit on 32 neighbouring columns (neighbouring addresses of a row-major tile).
using ThreadLayout = Layout<Shape<_8, _32>, Stride<_32, _1>>;  // (THR_M,THR_N) -> thread index
/// Threads per block.
inline constexpr int kThreads = size_v<ThreadLayout>;  // 256

/// The threads over a tile of float4: 32 rows of 8, so that a warp covers 4 rows × 8 float4
/// (4 × 128 contiguous bytes).
using VecThreadLayout = Layout<Shape<_32, _8>, Stride<_8, _1>>;  // (THR_M,THR_N4) -> thread index
static_assert(size_v<VecThreadLayout> == kThreads, "both thread layouts describe the same 256-thread block");

/// A BM×BN tile of floats in shared memory, row-major like the matrix: element (i, j) at i·BN + j.
template <int BM, int BN>
using SmemRowMajor = Layout<Shape<Int<BM>, Int<BN>>, Stride<Int<BN>, _1>>;  // (BM,BN) -> offset
/// The same tile with one unused float after every row: element (i, j) at i·(BN+1) + j.
/// A column of the tile then falls into 32 different banks instead of one.
template <int BM, int BN>
using SmemPadded = Layout<Shape<Int<BM>, Int<BN>>, Stride<Int<BN + 1>, _1>>;  // (BM,BN) -> offset

/// The M×N row-major matrix at `p` as a tensor. The row stride is 64-bit so that offsets
/// of matrices with more than 2^31 elements do not overflow.
template <class T>
MM_HD auto row_major(T* p, int m, int n) {
  return make_tensor(make_gmem_ptr(p), make_shape(m, n), make_stride(std::int64_t(n), _1{}));  // (m,n)
}

using launch::max_grid_y;  // gemm/launch.hpp: 65535 blocks (tiles) along grid y

/// One block per BM×BN tile of the source: x counts tile columns (N), y tile rows (M).
template <int BM, int BN>
dim3 tile_grid(std::int64_t m, std::int64_t n) {
  return dim3(unsigned((n + BN - 1) / BN), unsigned((m + BM - 1) / BM));
}

/// Empty when a kernel with BM×BM tiles takes an M×N matrix; otherwise the constraint it breaks.
/// The offsets are 64-bit (row_major's stride), so a matrix may have more than 2^31 elements;
/// M, N and the coordinates are ints (gemm/launch.hpp, the 32-bit rule).
template <int BM>
std::string tile_rejects(std::int64_t m, std::int64_t n) {
  if (m < 1 || n < 1) return "needs M, N >= 1";
  if ((m + BM - 1) / BM > max_grid_y)
    return "needs M <= " + std::to_string(max_grid_y * BM) + " (65535 tiles of " + std::to_string(BM) +
           " rows along grid y)";
  return launch::int32_index_rejects(m, n, BM, BM);
}

// ---- Step 1: global -> shared -> global ---------------------------------------------------

/// Copies the M×N row-major `src` to `dst` through a BM×BN shared-memory tile.
template <int BM, int BN, class SmemLayout>
__global__ void __launch_bounds__(kThreads) copy_smem_kernel(int M, int N, const float* src, float* dst) {
  static_assert(BM % size<0>(ThreadLayout{}) == 0 && BN % size<1>(ThreadLayout{}) == 0,
                "the thread layout tiles the block tile: BM % 8 == 0, BN % 32 == 0");
  __shared__ float smem[cosize_v<SmemLayout>];

  auto mS = row_major(src, M, N);                             // (M,N)
  auto mD = row_major(dst, M, N);                             // (M,N)
  auto cM = make_identity_tensor(make_shape(M, N));           // (M,N) -> (m,n)
  auto sS = make_tensor(make_smem_ptr(smem), SmemLayout{});   // (BM,BN)

  auto tiler = Shape<Int<BM>, Int<BN>>{};
  auto blk = make_coord(int(blockIdx.y), int(blockIdx.x));   // this block's tile
  auto gS = tile(mS, tiler, blk);                             // (BM,BN)
  auto gD = tile(mD, tiler, blk);                             // (BM,BN)
  auto cS = tile(cM, tiler, blk);                             // (BM,BN) -> (m,n)

  auto tSgS = parallelize(gS, ThreadLayout{}, int(threadIdx.x));   // (BM/8,BN/32)
  auto tSsS = parallelize(sS, ThreadLayout{}, int(threadIdx.x));   // (BM/8,BN/32)
  auto tSgD = parallelize(gD, ThreadLayout{}, int(threadIdx.x));   // (BM/8,BN/32)
  auto tScS = parallelize(cS, ThreadLayout{}, int(threadIdx.x));   // (BM/8,BN/32) -> (m,n)
  auto tSp = make_predicate(tScS, make_shape(M, N));          // (BM/8,BN/32) inside the matrix?

  // Global -> registers -> shared. A load from global memory lands in a register in any case
  // (LDG, then STS); writing the register stage out, with the whole fragment cleared first and
  // stored unpredicated, lets the compiler issue every load of the thread before the first
  // shared store: all its bytes are in flight at once.
  auto tSrS = make_fragment_like(tSsS);                       // (BM/8,BN/32) registers
  clear(tSrS);
  copy_if(tSp, tSgS, tSrS);
  copy(tSrS, tSsS);
  // No barrier: every thread reads back exactly the elements it wrote itself. (nvcc notices,
  // and stores to global straight from the registers: the SASS has STS but no LDS.)
  copy_if(tSp, tSsS, tSgD);
}

// ---- Step 2: the global -> shared leg with cp.async ---------------------------------------

/// copy_smem_kernel with the global -> shared leg done by cp.async (sm_80 and later). The body
/// exists only where cp.async does (layout/arch.hpp): an sm_75 build compiles a stub that the
/// harness never launches (the kernel's requirement is arch::sm80, in main.cu).
template <int BM, int BN, class SmemLayout>
__global__ void __launch_bounds__(kThreads) copy_cp_async_kernel(int M, int N, const float* src, float* dst) {
  if constexpr (!arch::compiled_for(arch::sm80)) {
    arch::no_code_for_this_target();
  } else {
    __shared__ float smem[cosize_v<SmemLayout>];

    auto mS = row_major(src, M, N);                             // (M,N)
    auto mD = row_major(dst, M, N);                             // (M,N)
    auto cM = make_identity_tensor(make_shape(M, N));           // (M,N) -> (m,n)
    auto sS = make_tensor(make_smem_ptr(smem), SmemLayout{});   // (BM,BN)

    auto tiler = Shape<Int<BM>, Int<BN>>{};
    auto blk = make_coord(int(blockIdx.y), int(blockIdx.x));
    auto tSgS = parallelize(tile(mS, tiler, blk), ThreadLayout{}, int(threadIdx.x));  // (BM/8,BN/32)
    auto tSgD = parallelize(tile(mD, tiler, blk), ThreadLayout{}, int(threadIdx.x));  // (BM/8,BN/32)
    auto tScS = parallelize(tile(cM, tiler, blk), ThreadLayout{}, int(threadIdx.x));  // (BM/8,BN/32) -> (m,n)
    auto tSsS = parallelize(sS, ThreadLayout{}, int(threadIdx.x));                    // (BM/8,BN/32)
    auto tSp = make_predicate(tScS, make_shape(M, N));                                // (BM/8,BN/32)

    // Global -> shared without a register: each cp.async is issued and the thread moves on, so
    // all four are in flight at once without the register stage of copy_smem. Where tSp is
    // false the instruction reads nothing and writes a zero.
    copy_if(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<float>, float>{}, tSp, tSgS, tSsS);
    cp_async_fence();    // close the group of copies issued so far
    cp_async_wait<0>();  // wait until this thread's group has landed (also a compiler memory barrier)
    // No __syncthreads(): each thread reads back only the elements its own cp.async wrote.
    copy_if(tSp, tSsS, tSgD);
  }
}

// ---- Step 3: 128-bit accesses ---------------------------------------------------------------

/// copy_smem_kernel on the matrix seen as M × N/4 float4 (needs N % 4 == 0): a BM×BN tile of
/// floats is a BM × BN/4 tile of float4, and each thread moves whole float4 with one
/// 128-bit load or store instead of four 32-bit ones.
template <int BM, int BN>
__global__ void __launch_bounds__(kThreads) copy_vec128_kernel(int M, int N, const float* src, float* dst) {
  constexpr int BN4 = BN / 4;
  static_assert(BN % 4 == 0 && BM % size<0>(VecThreadLayout{}) == 0 && BN4 % size<1>(VecThreadLayout{}) == 0,
                "the vector thread layout tiles the block tile: BM % 32 == 0, (BN/4) % 8 == 0");
  __shared__ float4 smem[BM * BN4];
  const int N4 = N / 4;  // the launch guarantees N % 4 == 0, so every row starts 16-byte aligned

  auto mS = row_major(reinterpret_cast<const float4*>(src), M, N4);                // (M,N/4)
  auto mD = row_major(reinterpret_cast<float4*>(dst), M, N4);                      // (M,N/4)
  auto cM = make_identity_tensor(make_shape(M, N4));                               // (M,N/4) -> (m,n4)
  auto sS = make_tensor(make_smem_ptr(smem), SmemRowMajor<BM, BN4>{});             // (BM,BN/4)

  auto tiler = Shape<Int<BM>, Int<BN4>>{};
  auto blk = make_coord(int(blockIdx.y), int(blockIdx.x));
  auto tSgS = parallelize(tile(mS, tiler, blk), VecThreadLayout{}, int(threadIdx.x));  // (BM/32,BN/32)
  auto tSgD = parallelize(tile(mD, tiler, blk), VecThreadLayout{}, int(threadIdx.x));  // (BM/32,BN/32)
  auto tScS = parallelize(tile(cM, tiler, blk), VecThreadLayout{}, int(threadIdx.x));  // (BM/32,BN/32) -> (m,n4)
  auto tSsS = parallelize(sS, VecThreadLayout{}, int(threadIdx.x));                    // (BM/32,BN/32)
  auto tSp = make_predicate(tScS, make_shape(M, N4));                             // (BM/32,BN/32)

  auto tSrS = make_fragment_like(tSsS);                                           // (BM/32,BN/32) float4 registers
  clear(tSrS);
  copy_if(tSp, tSgS, tSrS);
  copy(tSrS, tSsS);
  copy_if(tSp, tSsS, tSgD);
}

// ---- Step 4: the transpose is a copy into a transposed view ----------------------------------

/// dst (N×M, row-major) = srcᵀ. The destination is viewed as an M×N matrix with strides
/// (1, M) — column-major — so the transpose is copy_smem's partition of the source tile
/// copied straight into that view: each warp reads 32 neighbours of a row of src
/// (coalesced) and writes them 32 rows apart in dst (strided).
template <int BM, int BN>
__global__ void __launch_bounds__(kThreads) transpose_naive_kernel(int M, int N, const float* src, float* dst) {
  auto mS = row_major(src, M, N);                                                          // (M,N)
  auto mDt = make_tensor(make_gmem_ptr(dst), make_shape(M, N), make_stride(_1{}, std::int64_t(M)));  // (M,N) = dstᵀ
  auto cM = make_identity_tensor(make_shape(M, N));                                        // (M,N) -> (m,n)

  auto tiler = Shape<Int<BM>, Int<BN>>{};
  auto blk = make_coord(int(blockIdx.y), int(blockIdx.x));
  auto tSgS = parallelize(tile(mS, tiler, blk), ThreadLayout{}, int(threadIdx.x));    // (BM/8,BN/32)
  auto tSgDt = parallelize(tile(mDt, tiler, blk), ThreadLayout{}, int(threadIdx.x));  // (BM/8,BN/32)
  auto tScS = parallelize(tile(cM, tiler, blk), ThreadLayout{}, int(threadIdx.x));    // (BM/8,BN/32) -> (m,n)
  auto tSp = make_predicate(tScS, make_shape(M, N));                             // (BM/8,BN/32)

  // Through registers: src and dst are both plain global pointers, so the compiler must assume
  // that a store to dst may change a later load from src and would issue load, store, load,
  // store... The register fragment states the order we want: all loads, then all stores.
  auto tSr = make_fragment_like(tSgS);                                           // (BM/8,BN/32) registers
  copy_if(tSp, tSgS, tSr);
  copy_if(tSp, tSr, tSgDt);
}

// ---- Step 5: transpose through shared memory ------------------------------------------------

/// dst (N×M, row-major) = srcᵀ through a shared tile. The block loads its BM×BN source tile
/// as copy_smem does, then stores the BN×BM destination tile with the same thread layout —
/// coalesced rows of dst — reading shared memory through the transposed view of the same
/// layout, `select<1,0>(SmemLayout)`. That view is the only new idea; with a row-major
/// SmemLayout its columns are one bank each (32-way conflicts), with SmemPadded they are not.
template <int BM, int BN, class SmemLayout>
__global__ void __launch_bounds__(kThreads) transpose_smem_kernel(int M, int N, const float* src, float* dst) {
  __shared__ float smem[cosize_v<SmemLayout>];

  auto mS = row_major(src, M, N);                                          // (M,N)
  auto mD = row_major(dst, N, M);                                          // (N,M)
  auto cMS = make_identity_tensor(make_shape(M, N));                       // (M,N) -> (m,n)
  auto cMD = make_identity_tensor(make_shape(N, M));                       // (N,M) -> (n,m)
  auto sS = make_tensor(make_smem_ptr(smem), SmemLayout{});                // (BM,BN) as loaded
  auto sD = make_tensor(make_smem_ptr(smem), select<1, 0>(SmemLayout{}));  // (BN,BM) the same floats, transposed

  // Block (by, bx) owns source tile (by, bx) and destination tile (bx, by).
  auto gS = tile(mS, Shape<Int<BM>, Int<BN>>{}, make_coord(int(blockIdx.y), int(blockIdx.x)));   // (BM,BN)
  auto cS = tile(cMS, Shape<Int<BM>, Int<BN>>{}, make_coord(int(blockIdx.y), int(blockIdx.x)));  // (BM,BN)
  auto gD = tile(mD, Shape<Int<BN>, Int<BM>>{}, make_coord(int(blockIdx.x), int(blockIdx.y)));   // (BN,BM)
  auto cD = tile(cMD, Shape<Int<BN>, Int<BM>>{}, make_coord(int(blockIdx.x), int(blockIdx.y)));  // (BN,BM)

  auto tSgS = parallelize(gS, ThreadLayout{}, int(threadIdx.x));  // (BM/8,BN/32)
  auto tSsS = parallelize(sS, ThreadLayout{}, int(threadIdx.x));  // (BM/8,BN/32)
  auto tSp = make_predicate(parallelize(cS, ThreadLayout{}, int(threadIdx.x)), make_shape(M, N));  // (BM/8,BN/32)
  auto tDsD = parallelize(sD, ThreadLayout{}, int(threadIdx.x));  // (BN/8,BM/32)
  auto tDgD = parallelize(gD, ThreadLayout{}, int(threadIdx.x));  // (BN/8,BM/32)
  auto tDp = make_predicate(parallelize(cD, ThreadLayout{}, int(threadIdx.x)), make_shape(N, M));  // (BN/8,BM/32)

  auto tSrS = make_fragment_like(tSsS);                     // (BM/8,BN/32) registers
  clear(tSrS);
  copy_if(tSp, tSgS, tSrS);                                 // all loads first, as in copy_smem
  copy(tSrS, tSsS);
  __syncthreads();  // a thread now reads elements that other threads (other warps) wrote
  copy_if(tDp, tDsD, tDgD);
}

// ---- Host launch functions (the CopyLaunch signature of the harness) --------------------------

namespace detail {
template <int BM>
void check_size(const char* name, std::int64_t m, std::int64_t n) {
  if (std::string why = tile_rejects<BM>(m, n); !why.empty()) throw std::invalid_argument(std::string(name) + ": " + why);
}
}  // namespace detail

/// Tile of the step-by-step kernels: 32×32 floats, 256 threads, 4 floats per thread.
inline constexpr int kTile = 32;
/// Tile of the tuned kernels: 64×64 floats, 256 threads, 16 floats per thread.
inline constexpr int kBigTile = 64;

/// copy_smem: 32×32 tile, row-major shared layout.
inline void launch_copy_smem(std::int64_t m, std::int64_t n, const float* src, float* dst, cudaStream_t s) {
  detail::check_size<kTile>("copy_smem", m, n);
  copy_smem_kernel<kTile, kTile, SmemRowMajor<kTile, kTile>>
      <<<tile_grid<kTile, kTile>(m, n), kThreads, 0, s>>>(int(m), int(n), src, dst);
}

/// copy_cp_async: copy_smem with cp.async for the global -> shared leg (sm_80+).
inline void launch_copy_cp_async(std::int64_t m, std::int64_t n, const float* src, float* dst, cudaStream_t s) {
  detail::check_size<kTile>("copy_cp_async", m, n);
  copy_cp_async_kernel<kTile, kTile, SmemRowMajor<kTile, kTile>>
      <<<tile_grid<kTile, kTile>(m, n), kThreads, 0, s>>>(int(m), int(n), src, dst);
}

/// True when the float4 view is legal: rows of a multiple of 4 floats and 16-byte aligned
/// pointers (cudaMalloc gives 256-byte alignment).
inline bool vec128_ok(std::int64_t n, const float* src, const float* dst) {
  return n % 4 == 0 && reinterpret_cast<std::uintptr_t>(src) % 16 == 0 && reinterpret_cast<std::uintptr_t>(dst) % 16 == 0;
}

/// copy_vec128 with a BT×BT tile; when N % 4 != 0 (rows not 16-byte aligned) it falls back
/// to copy_smem with the same tile, so that any N is copied correctly.
template <int BT>
void launch_copy_vec128_tile(const char* name, std::int64_t m, std::int64_t n, const float* src, float* dst,
                             cudaStream_t s) {
  detail::check_size<BT>(name, m, n);
  if (vec128_ok(n, src, dst))
    copy_vec128_kernel<BT, BT><<<tile_grid<BT, BT>(m, n), kThreads, 0, s>>>(int(m), int(n), src, dst);
  else
    copy_smem_kernel<BT, BT, SmemRowMajor<BT, BT>><<<tile_grid<BT, BT>(m, n), kThreads, 0, s>>>(int(m), int(n), src, dst);
}

/// copy_vec128: 32×32 tile moved as 32×8 float4, one float4 per thread.
inline void launch_copy_vec128(std::int64_t m, std::int64_t n, const float* src, float* dst, cudaStream_t s) {
  launch_copy_vec128_tile<kTile>("copy_vec128", m, n, src, dst, s);
}

/// copy_vec128_64x64: 64×64 tile moved as 64×16 float4, four float4 per thread.
inline void launch_copy_vec128_64x64(std::int64_t m, std::int64_t n, const float* src, float* dst, cudaStream_t s) {
  launch_copy_vec128_tile<kBigTile>("copy_vec128_64x64", m, n, src, dst, s);
}

/// transpose_naive: 32×32 tile, no shared memory.
inline void launch_transpose_naive(std::int64_t m, std::int64_t n, const float* src, float* dst, cudaStream_t s) {
  detail::check_size<kTile>("transpose_naive", m, n);
  transpose_naive_kernel<kTile, kTile><<<tile_grid<kTile, kTile>(m, n), kThreads, 0, s>>>(int(m), int(n), src, dst);
}

/// transpose_smem: 32×32 tile, row-major shared layout read transposed (bank conflicts).
inline void launch_transpose_smem(std::int64_t m, std::int64_t n, const float* src, float* dst, cudaStream_t s) {
  detail::check_size<kTile>("transpose_smem", m, n);
  transpose_smem_kernel<kTile, kTile, SmemRowMajor<kTile, kTile>>
      <<<tile_grid<kTile, kTile>(m, n), kThreads, 0, s>>>(int(m), int(n), src, dst);
}

/// transpose_smem_padded: 32×32 tile, padded shared layout (32,32):(33,1).
inline void launch_transpose_smem_padded(std::int64_t m, std::int64_t n, const float* src, float* dst, cudaStream_t s) {
  detail::check_size<kTile>("transpose_smem_padded", m, n);
  transpose_smem_kernel<kTile, kTile, SmemPadded<kTile, kTile>>
      <<<tile_grid<kTile, kTile>(m, n), kThreads, 0, s>>>(int(m), int(n), src, dst);
}

/// transpose_smem_padded_64x64: 64×64 tile, padded (64,64):(65,1), 16 floats per thread.
inline void launch_transpose_smem_padded_64x64(std::int64_t m, std::int64_t n, const float* src, float* dst,
                                               cudaStream_t s) {
  detail::check_size<kBigTile>("transpose_smem_padded_64x64", m, n);
  transpose_smem_kernel<kBigTile, kBigTile, SmemPadded<kBigTile, kBigTile>>
      <<<tile_grid<kBigTile, kBigTile>(m, n), kThreads, 0, s>>>(int(m), int(n), src, dst);
}

}  // namespace mm::ch04
