// gl_moe_permute's kernel: a mixture-of-experts layer's routed tokens copied into grouped_mm's contiguous layout
// (chapter 13: each expert's rows from a multiple of 128), with the layout's offsets and each slot's row, in one
// launch. The same work as python/examples/llama_decoder.py's Triton kernel (_permute_kernel), whose launch cost
// ~50 µs of host time a call in eager mode (issue 39); this one is a plain <<<>>> launch behind the C interface.
//
// The idea. The router gives each token k experts: `flat` (tokens·k,) token-major (slot t·k + j is token t's j-th
// expert), `order` the slots sorted by expert (stable) and `counts` the slots per expert. Sorted row i belongs to
// expert flat[order[i]]; in the padded layout every expert g is preceded by the padding rows of the experts before
// it, pad[g'] = (128 - counts[g'] % 128) % 128 for g' < g. So sorted row i's place is
//
//     dest = i + pad_before[expert],   pad_before[g] = sum_{g' < g} pad[g']
//
// and offsets[g + 1] (where expert g ends) = counts_through[g] + pad_before[g]. Every block computes pad_before
// for all E experts from the counts itself (E = 128: four chunks of a warp's scan, far less than a row's copy),
// so that no second launch (a scan first) and no host sync is needed; block 0 also writes the offsets.
//
//   x (tokens, hidden) ──gather row slot / k──▶ a (rows, hidden)   a[dest] = x[order[i] / k]
//                                              place[order[i]] = dest,  offsets (E + 1)
#include "moe_permute.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>

namespace gl::detail {

namespace {

constexpr int kWarps = 4;                  // a block's warps: one sorted row each
constexpr int kThreads = 32 * kWarps;      // 128
constexpr int kRowsPerBlock = kWarps;      // 512 routed rows at decode batch 64: 128 blocks, about one per SM
constexpr unsigned kFullMask = 0xffffffffu;

/// pad_before[g] for g = 0 .. E (pad_before[E]: all the padding) into shared memory, by warp 0 in chunks of 32
/// experts (an inclusive scan by shuffles, the chunk's total carried to the next); block 0 also writes the
/// offsets (E + 1,). The other warps wait at the caller's __syncthreads.
__device__ void scan_padding(const MoePermute& p, long long* s_pad_before) {
  const int lane = int(threadIdx.x);
  const int experts = int(p.experts);
  long long pad_carry = 0, count_carry = 0;  // the padding and the rows of the experts of earlier chunks
  for (int g0 = 0; g0 < experts; g0 += 32) {
    const int g = g0 + lane;
    const long long count = g < experts ? p.counts[g] : 0;
    const long long pad = g < experts ? (kPermuteAlignRows - count % kPermuteAlignRows) % kPermuteAlignRows : 0;
    long long pad_through = pad, count_through = count;  // inclusive over the chunk's lanes 0 .. lane
    for (int d = 1; d < 32; d *= 2) {
      const long long pad_up = __shfl_up_sync(kFullMask, pad_through, d);
      const long long count_up = __shfl_up_sync(kFullMask, count_through, d);
      if (lane >= d) pad_through += pad_up, count_through += count_up;
    }
    if (g < experts) {
      const long long pad_before = pad_carry + pad_through - pad;
      s_pad_before[g] = pad_before;
      if (blockIdx.x == 0) p.offsets[g + 1] = count_carry + count_through + pad_before;  // expert g's end
    }
    pad_carry += __shfl_sync(kFullMask, pad_through, 31);
    count_carry += __shfl_sync(kFullMask, count_through, 31);
  }
  if (lane == 0) {
    s_pad_before[experts] = pad_carry;
    if (blockIdx.x == 0) p.offsets[0] = 0;
  }
}

/// Block b: sorted rows b·kRowsPerBlock .., one a warp. `Chunk` is what a lane copies at a time: uint4 (8 bf16,
/// where x, a, hidden and x's pitch allow it) or one bf16 (unsigned short).
///
/// Device data the host never checked (the router's) stays inside the buffers: a slot outside 0 .. tokens·k is
/// skipped, an expert below 0 or above E - 1 is clamped to 0 or E (all the padding before it), and a row whose
/// place falls outside a's rows is not copied (its place is still written). Such inputs give wrong rows, never a
/// stray write.
template <class Chunk>
__global__ void __launch_bounds__(kThreads) moe_permute_kernel(const MoePermute p) {
  extern __shared__ long long s_pad_before[];  // (E + 1,)
  if (threadIdx.x < 32) scan_padding(p, s_pad_before);
  __syncthreads();

  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  const long long routed = p.tokens * p.k;
  const long long i = (long long)blockIdx.x * kRowsPerBlock + warp;  // this warp's sorted row
  if (i >= routed) return;
  const long long slot = p.order[i];  // token-major t·k + j
  if (slot < 0 || slot >= routed) return;
  const long long chosen = p.flat[slot];
  const long long expert = chosen < 0 ? 0 : chosen > p.experts ? p.experts : chosen;
  const long long dest = i + s_pad_before[expert];  // the sorted row's place in a
  if (lane == 0) p.place[slot] = dest;
  if (dest < 0 || dest >= p.rows) return;

  constexpr int kPerChunk = int(sizeof(Chunk) / sizeof(__nv_bfloat16));
  const long long chunks = p.hidden / kPerChunk;                                   // hidden % kPerChunk == 0
  const auto* src = reinterpret_cast<const Chunk*>(static_cast<const __nv_bfloat16*>(p.x) + (slot / p.k) * p.ldx);
  auto* dst = reinterpret_cast<Chunk*>(static_cast<__nv_bfloat16*>(p.a) + dest * p.hidden);
  for (long long c = lane; c < chunks; c += 32) dst[c] = src[c];  // a warp reads 512 contiguous bytes a step
}

}  // namespace

bool moe_permute_vectorized(const MoePermute& p) {
  constexpr std::int64_t kPer = 8;  // bf16 in 16 bytes
  auto aligned = [](const void* q) { return reinterpret_cast<std::uintptr_t>(q) % 16 == 0; };
  return p.hidden % kPer == 0 && (p.tokens <= 1 || p.ldx % kPer == 0) && aligned(p.x) && aligned(p.a);
}

cudaError_t launch_moe_permute(const MoePermute& p, cudaStream_t stream) {
  const std::int64_t routed = p.tokens * p.k;
  // at least one block: it writes the offsets even when no token is routed
  const unsigned blocks = unsigned(std::max<std::int64_t>(1, (routed + kRowsPerBlock - 1) / kRowsPerBlock));
  const std::size_t shared = std::size_t(p.experts + 1) * sizeof(long long);
  if (moe_permute_vectorized(p))
    moe_permute_kernel<uint4><<<blocks, kThreads, shared, stream>>>(p);
  else
    moe_permute_kernel<unsigned short><<<blocks, kThreads, shared, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace gl::detail
