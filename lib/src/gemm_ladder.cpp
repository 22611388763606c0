// The C interface of include/gemm_ladder.h: the checks that need no GPU, the device check, the
// cache of prepared GEMMs, and the launch. It holds no kernel: prepare_steps.cpp and prepare_grouped.cu
// reach the chapters'.
//
// One call, in order, each step returning at the first refusal:
//   1. the arguments: the dtype and layout exist, sizes >= 1, pointers non-null and aligned to their
//      element, dense leading dimensions, scales where (and only where) fp8 needs them;
//   2. chapter 12's kernels' own rules (pure functions of the problem and the pointers); every_shape's
//      are its own to apply, in its preparation;
//   3. the device: an sm_90a GPU, and sm_90a code in this build (once per device);
//   4. the cache: a prepared GEMM for this key, or a new one (the chapter's prepare_*);
//   5. the launch on the caller's stream, and its error.
// The grouped calls (gl_grouped_gemm, gl_grouped_gemm_masked, gl_grouped_swiglu: chapter 13) take the same
// steps in grouped_call: their arguments, chapter 13's rules and TMA's alignment, the host's copy of the
// layout when given, then the device, the cache (keyed by the layout's device pointer, the tile and the
// epilogue too) and the launch.
// gl_moe_permute (the MoE permute into chapter 13's layout, moe_permute.cu) takes steps 1, 3 and 5: its arguments,
// the device, the launch; it prepares nothing.
// Exceptions stop at this file's boundary: std::invalid_argument (a kernel refusing the problem) is
// GL_UNSUPPORTED, std::runtime_error (the CUDA runtime) GL_CUDA_ERROR, anything else GL_INTERNAL.
#include "gemm_ladder.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <list>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gemm/launch.hpp"  // tma_pointer_rejects
#include "gemm/prepared_gemm.hpp"
#include "gemm/problem.hpp"
#include "gemm/watchdog.hpp"  // watchdog_seconds_valid
#include "13_grouped_moe/grouped_rule.hpp"  // choose_grouped_tile, kDecodeTileRows
#include "moe_permute.hpp"
#include "prepare.hpp"

#ifndef GEMM_LADDER_SM90A
#define GEMM_LADDER_SM90A 0
#endif
#ifndef GEMM_LADDER_CUDA_ARCHITECTURES
#define GEMM_LADDER_CUDA_ARCHITECTURES "unknown"
#endif

namespace {

thread_local std::string t_last_error;
thread_local std::string t_last_path;

/// A status and its message: what every step below returns.
struct Outcome {
  gl_status status = GL_OK;
  std::string why;
  bool ok() const { return status == GL_OK; }
};

Outcome fail(gl_status s, std::string why) { return {s, std::move(why)}; }

const char* dtype_name(gl_dtype d) {
  switch (d) {
    case GL_BF16: return "bf16";
    case GL_TF32: return "tf32";
    case GL_FP8_E4M3_PER_TENSOR: return "fp8_e4m3_per_tensor";
    case GL_FP8_E4M3_BLOCK_SCALED: return "fp8_e4m3_block_scaled";
  }
  return "?";
}

/// Bytes of one element of A and B, and of C.
int in_bytes(gl_dtype d) { return d == GL_BF16 ? 2 : d == GL_TF32 ? 4 : 1; }
int out_bytes(gl_dtype d) { return d == GL_TF32 ? 4 : 2; }
bool is_fp8(gl_dtype d) { return d == GL_FP8_E4M3_PER_TENSOR || d == GL_FP8_E4M3_BLOCK_SCALED; }

/// A non-null pointer aligned to `bytes`, or why not.
Outcome check_pointer(const char* name, const void* p, int bytes) {
  if (p == nullptr) return fail(GL_INVALID_ARGUMENT, std::string(name) + " is NULL");
  const auto off = reinterpret_cast<std::uintptr_t>(p) % std::uintptr_t(bytes);
  if (off != 0)
    return fail(GL_INVALID_ARGUMENT, std::string(name) + " starts " + std::to_string(off) + " bytes past a " +
                                         std::to_string(bytes) + "-byte boundary: not aligned to its element");
  return {};
}

/// The row pitch `ld` of a rows × cols row-major matrix: at least cols, and cols (dense) unless it
/// has a single row, whose pitch nothing reads.
Outcome check_ld(const char* ld_name, std::int64_t ld, const char* matrix, std::int64_t rows, std::int64_t cols) {
  const std::string shape = std::string(matrix) + " is " + std::to_string(rows) + "x" + std::to_string(cols) + " row-major";
  if (ld < cols)
    return fail(GL_INVALID_ARGUMENT, std::string(ld_name) + " = " + std::to_string(ld) + " but " + shape +
                                         ": a row pitch below its row's length");
  if (ld != cols && rows > 1)
    return fail(GL_UNSUPPORTED, std::string(ld_name) + " = " + std::to_string(ld) + " but " + shape +
                                    ": only dense operands are taken for now (" + ld_name + " = " +
                                    std::to_string(cols) + ")");
  return {};
}

/// Step 1: what any GEMM call must satisfy, and what the library itself takes.
Outcome check_arguments(gl_dtype dtype, gl_layout layout, std::int64_t m, std::int64_t n, std::int64_t k, const void* a,
                        std::int64_t lda, const void* b, std::int64_t ldb, const void* c, std::int64_t ldc,
                        const float* scale_a, const float* scale_b) {
  if (m < 1 || n < 1 || k < 1)
    return fail(GL_INVALID_ARGUMENT, "M = " + std::to_string(m) + ", N = " + std::to_string(n) + ", K = " +
                                         std::to_string(k) + ": every size must be at least 1");
  if (Outcome o = check_pointer("A", a, in_bytes(dtype)); !o.ok()) return o;
  if (Outcome o = check_pointer("B", b, in_bytes(dtype)); !o.ok()) return o;
  if (Outcome o = check_pointer("C", c, out_bytes(dtype)); !o.ok()) return o;
  if (Outcome o = check_ld("lda", lda, "A", m, k); !o.ok()) return o;
  if (layout == GL_RCR) {
    if (Outcome o = check_ld("ldb", ldb, "B (RCR: stored N×K)", n, k); !o.ok()) return o;
  } else if (Outcome o = check_ld("ldb", ldb, "B (RRR: stored K×N)", k, n); !o.ok()) {
    return o;
  }
  if (Outcome o = check_ld("ldc", ldc, "C", m, n); !o.ok()) return o;
  if (is_fp8(dtype)) {
    if (Outcome o = check_pointer("scale_a", scale_a, 4); !o.ok())
      return fail(o.status, o.why + " (fp8 needs the scales of A and B, in device memory)");
    if (Outcome o = check_pointer("scale_b", scale_b, 4); !o.ok())
      return fail(o.status, o.why + " (fp8 needs the scales of A and B, in device memory)");
  } else if (scale_a != nullptr || scale_b != nullptr) {
    return fail(GL_INVALID_ARGUMENT, "scale_a and scale_b are for the fp8 dtypes only: pass NULL");
  }
  return {};
}

/// Step 2: chapter 12's kernels' rules (every_shape applies its own when it is prepared). The TMA
/// descriptors of these kernels need 16-byte aligned operands.
Outcome check_kernel_rules(gl_dtype dtype, const mm::GemmProblem& p, const void* a, const void* b, const void* c) {
  std::string why;
  switch (dtype) {
    case GL_BF16: return {};
    case GL_TF32: why = gl::detail::tf32_rejects(p); break;
    case GL_FP8_E4M3_PER_TENSOR: why = gl::detail::fp8_per_tensor_rejects(p); break;
    case GL_FP8_E4M3_BLOCK_SCALED: why = gl::detail::fp8_block_scaled_rejects(p); break;
  }
  if (why.empty()) why = mm::launch::tma_pointer_rejects({{"A", a}, {"B", b}, {"C", c}});
  return why.empty() ? Outcome{} : fail(GL_UNSUPPORTED, why);
}

/// Step 3: whether `device` runs sm_90a code of this build. Computed once per device.
Outcome device_verdict(int device) {
  int major = 0, minor = 0;
  cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return fail(GL_NO_SM90A, std::string("cannot read GPU ") + std::to_string(device) + "'s architecture: " + cudaGetErrorString(e));
  }
  if (major != 9 || minor != 0)
    return fail(GL_NO_SM90A, "needs an sm_90a GPU (H100, H200): GPU " + std::to_string(device) + " is sm_" +
                                 std::to_string(major) + std::to_string(minor));
  if (!GEMM_LADDER_SM90A)
    return fail(GL_NO_SM90A, "this build of the library has no sm_90a code (CMAKE_CUDA_ARCHITECTURES=" GEMM_LADDER_CUDA_ARCHITECTURES
                             "): configure with 90a among them");
  return {};
}

/// The current device, and whether it runs the library (cached per device; no GPU is asked again
/// each time, since a driver may appear: cudaGetDevice fails fast then).
Outcome check_device(int& device) {
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) {
    (void)cudaGetLastError();
    return fail(GL_NO_SM90A, std::string("no CUDA GPU: ") + cudaGetErrorString(e));
  }
  constexpr int kDevices = 64;
  struct Verdict {
    std::once_flag once;
    Outcome outcome;
  };
  static Verdict verdicts[kDevices];
  if (device < 0 || device >= kDevices) return device_verdict(device);
  Verdict& v = verdicts[device];
  std::call_once(v.once, [&] { v.outcome = device_verdict(device); });
  return v.outcome;
}

// ---- Step 4: the cache of prepared GEMMs ----

/// Everything a prepared GEMM depends on: its tensor maps hold the pointers and sizes, its grid the
/// device's SMs, its workspace (split-K partial sums, tf32's transposed B) belongs to one stream.
struct Key {
  int device;
  gl_dtype dtype;
  gl_layout layout;
  std::int64_t m, n, k;
  const void *a, *b, *c, *scale_a, *scale_b;
  void* stream;
  // Grouped GEMMs (gl_grouped_gemm*, gl_grouped_swiglu): which layout and epilogue (0 for gl_gemm; 1
  // contiguous, 2 masked, 3 contiguous with SiLU(gate)·up), E, the masked capacity, the tile's rows, and the
  // device offsets or counts the kernel reads (m is A's rows, n the GEMM's N: 2I for SwiGLU).
  int grouped = 0;
  std::int64_t groups = 0, capacity = 0;
  int tile_rows = 0;
  const void* layout_data = nullptr;
  bool operator==(const Key&) const = default;
};

struct KeyHash {
  std::size_t operator()(const Key& key) const {
    std::uint64_t h = 0x9e3779b97f4a7c15ull;
    auto mix = [&h](std::uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    mix(std::uint64_t(key.device) << 8 | std::uint64_t(key.dtype) << 4 | std::uint64_t(key.layout));
    mix(std::uint64_t(key.m)), mix(std::uint64_t(key.n)), mix(std::uint64_t(key.k));
    for (const void* p : {key.a, key.b, key.c, key.scale_a, key.scale_b, static_cast<const void*>(key.stream), key.layout_data})
      mix(reinterpret_cast<std::uintptr_t>(p));
    mix(std::uint64_t(key.grouped) << 16 | std::uint64_t(key.tile_rows)), mix(std::uint64_t(key.groups)), mix(std::uint64_t(key.capacity));
    return std::size_t(h);
  }
};

std::int64_t initial_capacity() {
  const char* env = std::getenv("GEMM_LADDER_CACHE_CAPACITY");
  if (env == nullptr || *env == '\0') return 1024;
  char* end = nullptr;
  const long long v = std::strtoll(env, &end, 10);
  return (end != nullptr && *end == '\0' && v >= 0) ? std::int64_t(v) : 1024;
}

/// A bounded LRU of prepared GEMMs. Lookups and insertions hold the mutex; preparing and launching
/// do not (a shared_ptr keeps an entry alive while its launch is queued, even if another thread
/// evicts it meanwhile).
///
/// A launch captured into a CUDA graph bakes the prepared GEMM's workspace into the graph, which may
/// replay it any time later: an entry found or made while its stream captures is pinned, never
/// evicted nor cleared (gemm_ladder.h, "CUDA graphs"), and nothing is evicted during a capture
/// (cudaFree is not allowed then).
class Cache {
 public:
  using Entry = std::shared_ptr<const mm::PreparedGemm>;

  Entry find(const Key& key, bool capturing) {
    std::lock_guard lock(mutex_);
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    ++hits_;
    order_.splice(order_.begin(), order_, it->second.place);  // most recently used first
    pin(it->second, capturing);
    return it->second.entry;
  }

  /// Keeps `entry` for `key` (or the one another thread inserted meanwhile, which it returns).
  Entry insert(const Key& key, Entry entry, bool capturing) {
    std::list<Entry> evicted;  // freed after the lock is released (cudaFree waits for the device)
    std::lock_guard lock(mutex_);
    ++misses_;
    if (auto it = map_.find(key); it != map_.end()) {
      pin(it->second, capturing);
      return it->second.entry;
    }
    if (capacity_ == 0 && !capturing) return entry;
    order_.push_front(key);
    Slot& slot = map_.emplace(key, Slot{entry, order_.begin(), false}).first->second;
    pin(slot, capturing);
    if (!capturing) trim(evicted);
    return entry;
  }

  /// Forgets every entry but the pinned ones.
  void clear() {
    std::list<Entry> freed;
    std::lock_guard lock(mutex_);
    for (auto it = map_.begin(); it != map_.end();) {
      if (it->second.pinned) {
        ++it;
        continue;
      }
      freed.push_back(std::move(it->second.entry));
      order_.erase(it->second.place);
      it = map_.erase(it);
    }
  }

  void set_capacity(std::int64_t entries) {
    std::list<Entry> evicted;
    std::lock_guard lock(mutex_);
    capacity_ = entries;
    trim(evicted);
  }

  void stats(std::int64_t* entries, std::int64_t* hits, std::int64_t* misses, std::int64_t* pinned) {
    std::lock_guard lock(mutex_);
    if (entries) *entries = std::int64_t(map_.size());
    if (hits) *hits = hits_;
    if (misses) *misses = misses_;
    if (pinned) *pinned = pinned_;
  }

 private:
  struct Slot {
    Entry entry;
    std::list<Key>::iterator place;  // in order_
    bool pinned;                     // a CUDA graph captured a launch of it
  };

  void pin(Slot& slot, bool capturing) {
    if (capturing && !slot.pinned) slot.pinned = true, ++pinned_;
  }

  /// Evicts the least recently used unpinned entries until at most capacity_ unpinned remain.
  void trim(std::list<Entry>& evicted) {
    for (auto place = order_.end(); std::int64_t(map_.size()) - pinned_ > capacity_ && place != order_.begin();) {
      --place;
      auto it = map_.find(*place);
      if (it->second.pinned) continue;
      evicted.push_back(std::move(it->second.entry));
      map_.erase(it);
      place = order_.erase(place);
    }
  }

  std::mutex mutex_;
  std::list<Key> order_;  // most recently used first
  std::unordered_map<Key, Slot, KeyHash> map_;
  std::int64_t capacity_ = initial_capacity();
  std::int64_t hits_ = 0, misses_ = 0, pinned_ = 0;
};

/// True when `stream` is capturing a CUDA graph now. A query that fails (the legacy stream while
/// another stream captures in global mode) counts as capturing: then no cudaFree, and the preparation
/// runs as a capture's would.
bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    (void)cudaGetLastError();
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

/// The calling thread's stream-capture mode, relaxed for a scope (as PyTorch's allocator does around
/// its cudaMalloc): a preparation during a capture allocates its workspace with cudaMalloc and zeroes
/// its counters on a stream of its own and waits for them (gemm/workspace.hpp), which the global and
/// thread-local modes forbid.
class RelaxedCaptureMode {
 public:
  explicit RelaxedCaptureMode(bool on) : on_(on) {
    if (on_) (void)cudaThreadExchangeStreamCaptureMode(&mode_);
  }
  ~RelaxedCaptureMode() {
    if (on_) (void)cudaThreadExchangeStreamCaptureMode(&mode_);
  }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  bool on_;
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

Cache& cache() {
  // Never destroyed: at exit the CUDA runtime may already be gone, and freeing workspaces then is
  // at best useless (the process's memory goes with it).
  static Cache* c = new Cache;
  return *c;
}

mm::PreparedGemm prepare(gl_dtype dtype, const mm::GemmProblem& p, const void* a, const void* b, void* c) {
  using bf16 = __nv_bfloat16;
  using e4m3 = __nv_fp8_e4m3;
  switch (dtype) {
    case GL_BF16:
      return gl::detail::prepare_bf16(p, static_cast<const bf16*>(a), static_cast<const bf16*>(b), static_cast<bf16*>(c));
    case GL_TF32:
      return gl::detail::prepare_tf32(p, static_cast<const float*>(a), static_cast<const float*>(b), static_cast<float*>(c));
    case GL_FP8_E4M3_PER_TENSOR:
      return gl::detail::prepare_fp8_per_tensor(p, static_cast<const e4m3*>(a), static_cast<const e4m3*>(b),
                                                static_cast<bf16*>(c));
    case GL_FP8_E4M3_BLOCK_SCALED:
      return gl::detail::prepare_fp8_block_scaled(p, static_cast<const e4m3*>(a), static_cast<const e4m3*>(b),
                                                  static_cast<bf16*>(c));
  }
  throw std::logic_error("unknown dtype");
}

/// Steps 4 and 5 (step 3's device given): the prepared GEMM for `key`, found or made (by `make`, which
/// may throw as the chapters' preparations do), then launched.
template <class Make>
Outcome prepare_and_run(const Key& key, Make&& make, cudaStream_t stream) {
  const bool capture = capturing(stream);
  Cache::Entry gemm = cache().find(key, capture);
  if (!gemm) {
    // host_watchdog() exits the process on a malformed MM_WATCHDOG_SECONDS: refuse it here instead.
    if (const char* env = std::getenv("MM_WATCHDOG_SECONDS"); !mm::watchdog_seconds_valid(env))
      return fail(GL_INVALID_ARGUMENT, std::string("MM_WATCHDOG_SECONDS=") + env +
                                           " is not a positive number of seconds below 1e9: unset it or fix it");
    try {
      const RelaxedCaptureMode relaxed(capture);
      auto made = std::make_shared<const mm::PreparedGemm>(make());
      gemm = cache().insert(key, std::move(made), capture);
    } catch (const std::invalid_argument& e) {
      return fail(GL_UNSUPPORTED, e.what());
    } catch (const std::bad_alloc&) {
      return fail(GL_INTERNAL, "out of host memory while preparing the GEMM");
    } catch (const std::runtime_error& e) {
      (void)cudaGetLastError();
      return fail(GL_CUDA_ERROR, e.what());
    } catch (const std::exception& e) {
      return fail(GL_INTERNAL, std::string("while preparing the GEMM: ") + e.what());
    } catch (...) {
      return fail(GL_INTERNAL, "while preparing the GEMM: an exception that is not a std::exception");
    }
  }
  try {
    gemm->run(stream);
  } catch (const std::exception& e) {
    return fail(GL_INTERNAL, std::string("while launching: ") + e.what());
  } catch (...) {
    return fail(GL_INTERNAL, "while launching: an exception that is not a std::exception");
  }
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    return fail(GL_CUDA_ERROR, std::string("the launch failed: ") + cudaGetErrorString(e));
  t_last_path = gemm->path;
  return {};
}

gl_status finish(const Outcome& o, const char* prefix) {
  if (o.ok()) {
    t_last_error.clear();
  } else {
    try {
      t_last_error = std::string(prefix) + o.why;
    } catch (...) {
      t_last_error.clear();  // out of memory for the message: the status still says what happened
    }
  }
  return o.status;
}

// ---- Grouped GEMMs (chapter 13) ----

/// The tile a grouped call runs (gemm_ladder.h, gl_grouped_gemm's "The tile"): `forced` when 16, 64 or
/// 128; else chapter 13's rule (choose_grouped_tile) on the device's SMs, from the host's copy of the
/// layout when given, else from the buffer; for SwiGLU (g.swiglu, no decode tile) 64 where it says 16.
int choose_tile(std::int64_t forced, const gl::detail::Grouped& g, const std::int64_t* host_offsets,
                const int* host_counts, int device) {
  if (forced != 0) return int(forced);
  static std::atomic<int> sms_of[64] = {};  // the SM count of each device, read once
  int sms = device >= 0 && device < 64 ? sms_of[device].load(std::memory_order_relaxed) : 0;
  if (sms == 0) {
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms < 1) sms = 132;
    if (device >= 0 && device < 64) sms_of[device].store(sms, std::memory_order_relaxed);
  }
  std::vector<std::int64_t> rows;
  if (host_offsets != nullptr || host_counts != nullptr) {
    constexpr std::int64_t kAlign = mm::ch13::kGroupAlignmentRows;
    for (int e = 0; e < g.groups; ++e)
      rows.push_back(host_offsets ? std::max<std::int64_t>(0, host_offsets[e + 1] - (host_offsets[e] + kAlign - 1) / kAlign * kAlign)
                                  : std::int64_t(host_counts[e]));
  }
  const int tile = mm::ch13::choose_grouped_tile(g.groups, g.n, g.k, g.rows, g.counts != nullptr,
                                                 rows.empty() ? nullptr : rows.data(), sms);
  return g.swiglu && tile == mm::ch13::kDecodeTileRows ? 64 : tile;
}

/// gl_grouped_gemm, gl_grouped_gemm_masked and gl_grouped_swiglu: steps 1 to 5 of gl_gemm for a grouped
/// problem. `rows` is A's and C's (masked: E·capacity, computed here); exactly one of `offsets` and `counts`
/// is the layout. `swiglu` (contiguous only): C = SiLU(gate)·up, and `n` is C's columns, I (the GEMM's N
/// is 2I).
gl_status grouped_call(const char* fn, std::int64_t experts, std::int64_t rows, std::int64_t capacity, std::int64_t n,
                       std::int64_t k, const void* a, const void* b, void* c, const std::int64_t* offsets,
                       const int* counts, const std::int64_t* host_offsets, const int* host_counts,
                       std::int64_t tile_rows, void* stream, bool swiglu = false) {
  const bool masked = offsets == nullptr && counts != nullptr;
  const char* n_name = swiglu ? "I" : "N";
  auto refuse = [&](const Outcome& o) {
    const std::string prefix = std::string(fn) + "(E = " + std::to_string(experts) +
                               (masked ? ", capacity = " + std::to_string(capacity) : ", rows = " + std::to_string(rows)) +
                               ", " + n_name + " = " + std::to_string(n) + ", K = " + std::to_string(k) + "): ";
    return finish(o, prefix.c_str());
  };
  // Step 1: the arguments.
  if (experts < 1) return refuse(fail(GL_INVALID_ARGUMENT, "needs at least one expert"));
  if ((masked ? capacity : rows) < 1 || n < 1 || k < 1)
    return refuse(fail(GL_INVALID_ARGUMENT, std::string(masked ? "capacity" : "rows") + ", " + n_name +
                                                " and K must be at least 1"));
  if (swiglu && tile_rows == mm::ch13::kDecodeTileRows)
    return refuse(fail(GL_UNSUPPORTED, "tile_rows = 16: grouped_swiglu has no decode tile (chapter 13's step 6 is the "
                                       "plain GEMM only): 0 (the library chooses), 64 or 128"));
  if (tile_rows != 0 && tile_rows != mm::ch13::kDecodeTileRows && tile_rows != 64 && tile_rows != 128)
    return refuse(fail(GL_INVALID_ARGUMENT, "tile_rows = " + std::to_string(tile_rows) +
                                                (swiglu ? ": 0 (the library chooses), 64 or 128" : ": 0 (the library chooses), 16, 64 or 128")));
  constexpr std::int64_t kIntMax = INT32_MAX;
  if (experts > kIntMax || n > (swiglu ? kIntMax / 2 : kIntMax) || k > kIntMax || (masked && capacity > INT64_MAX / experts))
    return refuse(fail(GL_UNSUPPORTED, std::string("needs E, ") + (swiglu ? "2I" : "N") +
                                           ", K and the rows below 2^31 (TMA's int coordinates)"));
  if (masked) rows = experts * capacity;
  if (Outcome o = check_pointer("A", a, 2); !o.ok()) return refuse(o);
  if (Outcome o = check_pointer("B", b, 2); !o.ok()) return refuse(o);
  const char* c_name = swiglu ? "H" : "C";
  if (Outcome o = check_pointer(c_name, c, 2); !o.ok()) return refuse(o);
  if (Outcome o = masked ? check_pointer("counts", counts, 4) : check_pointer("offsets", offsets, 8); !o.ok())
    return refuse(fail(o.status, o.why + (masked ? " (the E int32 counts, in device memory)" : " (the E + 1 int64 offsets, in device memory)")));
  gl::detail::Grouped g;
  g.groups = int(experts), g.n = int(swiglu ? 2 * n : n), g.k = int(k), g.rows = rows;
  g.offsets = offsets, g.counts = counts, g.capacity = masked ? capacity : 0, g.swiglu = swiglu;
  // Step 2: the chapter's rules, TMA's alignment, and the host's copy of the layout where given. SwiGLU's
  // own rule first: with it, the chapter's N % 256 == 0 (N = 2I) holds.
  if (swiglu && n % 128 != 0)
    return refuse(fail(GL_UNSUPPORTED, "grouped_swiglu: needs I % 128 == 0: each 256-column tile holds 128 gate and the "
                                       "same 128 up columns (the weights interleaved by 128 rows)"));
  if (std::string why = gl::detail::grouped_rejects(g); !why.empty()) return refuse(fail(GL_UNSUPPORTED, why));
  if (std::string why = mm::launch::tma_pointer_rejects({{"A", a}, {"B", b}, {c_name, c}}); !why.empty())
    return refuse(fail(GL_UNSUPPORTED, why));
  if (host_offsets != nullptr || host_counts != nullptr)
    if (std::string why = gl::detail::grouped_layout_rejects(g, host_offsets, host_counts); !why.empty())
      return refuse(fail(GL_INVALID_ARGUMENT, why + " (in the host's copy of the layout)"));
  // Steps 3 to 5: the device, the cache, the launch.
  int device = 0;
  if (Outcome o = check_device(device); !o.ok()) return refuse(o);
  const int tile = choose_tile(tile_rows, g, host_offsets, host_counts, device);
  Key key{device, GL_BF16, GL_RCR, rows, g.n, k, a, b, c, nullptr, nullptr, stream};
  key.grouped = swiglu ? 3 : masked ? 2 : 1, key.groups = experts, key.capacity = g.capacity, key.tile_rows = tile;
  key.layout_data = masked ? static_cast<const void*>(counts) : static_cast<const void*>(offsets);
  using bf16 = __nv_bfloat16;
  auto make = [&] {
    return gl::detail::prepare_grouped(g, static_cast<const bf16*>(a), static_cast<const bf16*>(b), static_cast<bf16*>(c), tile);
  };
  if (Outcome o = prepare_and_run(key, make, static_cast<cudaStream_t>(stream)); !o.ok()) return refuse(o);
  return finish({}, "");
}

/// gl_moe_permute's step 1: the sizes, then each pointer that reaches at least one element (a pointer to none is
/// not read and may be NULL, as an empty tensor's is).
Outcome check_permute(const gl::detail::MoePermute& p) {
  using gl::detail::kPermuteMaxExperts;
  if (p.tokens < 0 || p.hidden < 0)
    return fail(GL_INVALID_ARGUMENT, "tokens and hidden must be at least 0");
  if (p.k < 1) return fail(GL_INVALID_ARGUMENT, "k (each token's experts) must be at least 1");
  if (p.experts < 1) return fail(GL_INVALID_ARGUMENT, "needs at least one expert");
  if (p.experts > kPermuteMaxExperts)
    return fail(GL_UNSUPPORTED, "E above " + std::to_string(kPermuteMaxExperts) +
                                    ": each block keeps the padding before every expert in shared memory");
  if (p.tokens > INT32_MAX / p.k)
    return fail(GL_UNSUPPORTED, "tokens·k = " + std::to_string(p.tokens) + "·" + std::to_string(p.k) +
                                    ": the routed rows must be below 2^31");
  const std::int64_t routed = p.tokens * p.k;
  if (p.rows < routed)
    return fail(GL_INVALID_ARGUMENT, "rows = " + std::to_string(p.rows) + " is below the tokens·k = " +
                                         std::to_string(routed) + " routed rows: A holds every one of them");
  if (p.tokens > 1 && p.ldx < p.hidden)
    return fail(GL_INVALID_ARGUMENT, "ldx = " + std::to_string(p.ldx) + " is below hidden = " + std::to_string(p.hidden) +
                                         ": x's rows would overlap");
  if (p.tokens > 0 && p.hidden > 0)
    if (Outcome o = check_pointer("x", p.x, 2); !o.ok()) return o;
  if (routed > 0) {
    if (Outcome o = check_pointer("flat", p.flat, 8); !o.ok()) return o;
    if (Outcome o = check_pointer("order", p.order, 8); !o.ok()) return o;
    if (Outcome o = check_pointer("place", p.place, 8); !o.ok()) return o;
  }
  if (Outcome o = check_pointer("counts", p.counts, 8); !o.ok()) return o;
  if (Outcome o = check_pointer("offsets", p.offsets, 8); !o.ok()) return o;
  if (p.rows > 0 && p.hidden > 0)
    if (Outcome o = check_pointer("A", p.a, 2); !o.ok()) return o;
  return {};
}

}  // namespace

extern "C" {

gl_status gl_gemm(gl_dtype dtype, gl_layout layout, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
                  const void* b, int64_t ldb, void* c, int64_t ldc, const float* scale_a, const float* scale_b,
                  void* stream) {
  try {
    if (dtype != GL_BF16 && dtype != GL_TF32 && dtype != GL_FP8_E4M3_PER_TENSOR && dtype != GL_FP8_E4M3_BLOCK_SCALED)
      return finish(fail(GL_UNSUPPORTED, "unsupported dtype " + std::to_string(int(dtype)) +
                                             ": GL_BF16, GL_TF32, GL_FP8_E4M3_PER_TENSOR or GL_FP8_E4M3_BLOCK_SCALED"),
                    "gl_gemm: ");
    if (layout != GL_RCR && layout != GL_RRR)
      return finish(fail(GL_UNSUPPORTED, "unsupported layout " + std::to_string(int(layout)) + ": GL_RCR or GL_RRR"),
                    "gl_gemm: ");
    // The problem named in every message, built only for one (a launch is a few microseconds).
    auto refuse = [&](const Outcome& o) {
      const std::string prefix = std::string("gl_gemm(") + dtype_name(dtype) + ", " + (layout == GL_RCR ? "RCR" : "RRR") +
                                 ", " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + "): ";
      return finish(o, prefix.c_str());
    };
    if (Outcome o = check_arguments(dtype, layout, m, n, k, a, lda, b, ldb, c, ldc, scale_a, scale_b); !o.ok())
      return refuse(o);
    mm::GemmProblem p;
    p.m = m, p.n = n, p.k = k;
    p.b = layout == GL_RCR ? mm::Order::col : mm::Order::row;  // B as K×N: column-major is N×K row-major
    p.scale_a = scale_a, p.scale_b = scale_b;
    if (Outcome o = check_kernel_rules(dtype, p, a, b, c); !o.ok()) return refuse(o);
    int device = 0;
    if (Outcome o = check_device(device); !o.ok()) return refuse(o);
    const Key key{device, dtype, layout, m, n, k, a, b, c, scale_a, scale_b, stream};
    auto make = [&] { return prepare(dtype, p, a, b, c); };
    if (Outcome o = prepare_and_run(key, make, static_cast<cudaStream_t>(stream)); !o.ok()) return refuse(o);
    return finish({}, "");
  } catch (...) {
    // Only the allocation of a message can get here; nothing may cross the C boundary.
    t_last_error.clear();
    return GL_INTERNAL;
  }
}

gl_status gl_grouped_gemm(int64_t experts, int64_t rows, int64_t n, int64_t k, const void* a, const void* b, void* c,
                          const int64_t* offsets, const int64_t* host_offsets, int64_t tile_rows, void* stream) {
  try {
    if (offsets == nullptr)
      return finish(fail(GL_INVALID_ARGUMENT, "offsets is NULL (the E + 1 int64 offsets, in device memory)"),
                    "gl_grouped_gemm: ");
    return grouped_call("gl_grouped_gemm", experts, rows, 0, n, k, a, b, c, offsets, nullptr, host_offsets, nullptr,
                        tile_rows, stream);
  } catch (...) {
    t_last_error.clear();
    return GL_INTERNAL;
  }
}

gl_status gl_grouped_gemm_masked(int64_t experts, int64_t capacity, int64_t n, int64_t k, const void* a, const void* b,
                                 void* c, const int32_t* counts, const int32_t* host_counts, int64_t tile_rows,
                                 void* stream) {
  try {
    if (counts == nullptr)
      return finish(fail(GL_INVALID_ARGUMENT, "counts is NULL (the E int32 counts, in device memory)"),
                    "gl_grouped_gemm_masked: ");
    return grouped_call("gl_grouped_gemm_masked", experts, 0, capacity, n, k, a, b, c, nullptr, counts, nullptr,
                        host_counts, tile_rows, stream);
  } catch (...) {
    t_last_error.clear();
    return GL_INTERNAL;
  }
}

gl_status gl_grouped_swiglu(int64_t experts, int64_t rows, int64_t intermediate, int64_t k, const void* a, const void* b,
                            void* h, const int64_t* offsets, const int64_t* host_offsets, int64_t tile_rows, void* stream) {
  try {
    if (offsets == nullptr)
      return finish(fail(GL_INVALID_ARGUMENT, "offsets is NULL (the E + 1 int64 offsets, in device memory)"),
                    "gl_grouped_swiglu: ");
    return grouped_call("gl_grouped_swiglu", experts, rows, 0, intermediate, k, a, b, h, offsets, nullptr, host_offsets,
                        nullptr, tile_rows, stream, /*swiglu=*/true);
  } catch (...) {
    t_last_error.clear();
    return GL_INTERNAL;
  }
}

gl_status gl_moe_permute(int64_t tokens, int64_t hidden, int64_t k, int64_t experts, int64_t rows, const void* x,
                         int64_t ldx, const int64_t* flat, const int64_t* order, const int64_t* counts, void* a,
                         int64_t* offsets, int64_t* place, void* stream) {
  try {
    gl::detail::MoePermute p;
    p.tokens = tokens, p.hidden = hidden, p.k = k, p.experts = experts, p.rows = rows;
    p.x = x, p.ldx = ldx, p.flat = flat, p.order = order, p.counts = counts;
    p.a = a, p.offsets = offsets, p.place = place;
    auto refuse = [&](const Outcome& o) {
      const std::string prefix = "gl_moe_permute(tokens = " + std::to_string(tokens) + ", hidden = " + std::to_string(hidden) +
                                 ", k = " + std::to_string(k) + ", E = " + std::to_string(experts) + ", rows = " +
                                 std::to_string(rows) + "): ";
      return finish(o, prefix.c_str());
    };
    if (Outcome o = check_permute(p); !o.ok()) return refuse(o);
    int device = 0;
    if (Outcome o = check_device(device); !o.ok()) return refuse(o);
    if (cudaError_t e = gl::detail::launch_moe_permute(p, static_cast<cudaStream_t>(stream)); e != cudaSuccess)
      return refuse(fail(GL_CUDA_ERROR, std::string("the launch failed: ") + cudaGetErrorString(e)));
    t_last_path = gl::detail::moe_permute_vectorized(p) ? "moe_permute 16-byte" : "moe_permute 2-byte";
    return finish({}, "");
  } catch (...) {
    t_last_error.clear();
    return GL_INTERNAL;
  }
}

gl_status gl_device_status(void) {
  try {
    int device = 0;
    return finish(check_device(device), "");
  } catch (...) {
    return GL_INTERNAL;
  }
}

const char* gl_last_error(void) { return t_last_error.c_str(); }

const char* gl_last_path(void) { return t_last_path.c_str(); }

const char* gl_status_name(gl_status status) {
  switch (status) {
    case GL_OK: return "GL_OK";
    case GL_INVALID_ARGUMENT: return "GL_INVALID_ARGUMENT";
    case GL_UNSUPPORTED: return "GL_UNSUPPORTED";
    case GL_NO_SM90A: return "GL_NO_SM90A";
    case GL_CUDA_ERROR: return "GL_CUDA_ERROR";
    case GL_INTERNAL: return "GL_INTERNAL";
  }
  return "unknown status";
}

void gl_clear_cache(void) {
  try {
    cache().clear();
  } catch (...) {
  }
}

gl_status gl_set_cache_capacity(int64_t entries) {
  try {
    if (entries < 0)
      return finish(fail(GL_INVALID_ARGUMENT, "entries = " + std::to_string(entries) + ": a capacity is at least 0"),
                    "gl_set_cache_capacity: ");
    cache().set_capacity(entries);
    return finish({}, "");
  } catch (...) {
    return GL_INTERNAL;
  }
}

void gl_cache_stats(int64_t* entries, int64_t* hits, int64_t* misses) {
  try {
    cache().stats(entries, hits, misses, nullptr);
  } catch (...) {
  }
}

int64_t gl_cache_pinned(void) {
  try {
    std::int64_t pinned = 0;
    cache().stats(nullptr, nullptr, nullptr, &pinned);
    return pinned;
  } catch (...) {
    return 0;
  }
}

}  // extern "C"
