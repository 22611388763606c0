// torch.ops.gemm_ladder.mm, .linear, .grouped_mm, .grouped_swiglu and .moe_permute as C++ kernels: the dispatcher calls
// the library (gl_gemm, gl_grouped_gemm, gl_grouped_swiglu, gl_moe_permute) directly, with no Python between a compiled graph (or an eager call of
// the op) and the library.
//
// Why: a torch.library.custom_op whose kernel is Python costs about 45-70 µs of host time per call
// (plots/data/h200/lib_ops.csv, variant custom_op), where a decode GEMM runs for 10 µs; a model's decode
// step at batch 1 makes 17 such calls, and a compiled step that takes 1.06 ms on torch's matmul took
// 2.41 ms on the Python operator (plots/data/h200/lib_model.csv). Here a call is a few checks on the
// tensors' sizes and strides, an empty result, and gl_gemm.
//
// The checks and their messages are _core.py's (plan, check_shapes, b_layout, linear_rows, grouped_plan,
// grouped_swiglu_plan), in the same order, so that an operator called directly refuses what the Python one
// refused with the same line. The fake implementations (for torch.compile's tracing) stay in Python (_torch_ops.py).
//
// Built by torch.utils.cpp_extension when the package is imported with torch (_cpp_ops.py): the
// kernels are registered for CUDA and CPU tensors (a CPU tensor is refused with a TypeError).
//
// The same file is also a Python module, gemm_ladder_torch_ops, of five functions: linear(x, weight), mm(a, b),
// grouped_mm(a, b, offsets, tile_rows, zero_fill), grouped_swiglu(a, w_gate_up_interleaved, offsets, tile_rows,
// zero_fill) and moe_permute(xf, flat, order, counts, k, rows), the eager calls' fast path (gemm_ladder.linear, .mm,
// .grouped_mm, .grouped_swiglu and .moe_permute without out= or stream=). An operator called from
// Python passes the packet's __call__, the schema's parsing of the arguments into a boxed stack, the
// Autograd kernel and the unboxing (about 6 µs of host time a call on the H200 machine, against
// F.linear's own path: profiles/session_2026-11-30s_issue39.txt); these functions take the two tensors
// from Python's arguments, allocate C with at::detail::empty_cuda and call gl_gemm, nothing else. They take
// only the plain case: two torch.Tensor (or nn.Parameter) objects, no __torch_function__ or
// __torch_dispatch__ mode, no dispatch key in the thread's include set (functorch, functionalization),
// CUDA tensors of one dtype (bf16 or float32) on one device, contiguous x and weight, no empty size. For
// anything else, and for a refusal of the library, they return None and the caller takes the operator
// (and, on its refusal, the ctypes path), whose checks raise the TypeError or ValueError. Nor an input that
// needs a gradient under grad mode: that call goes through the operator, which autograd sees.
#include <Python.h>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/cuda/EmptyTensor.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/library.h>

#include <chrono>
#include <string>
#include <tuple>
#include <utility>

#include "gemm_ladder.h"

namespace {

/// A message of strings, integers and devices, joined without an ostream: an integer streamed into one
/// (c10::str, std::ostringstream) crashed the process on the H200 machine's torch 2.11 (SIGSEGV in every
/// check whose message held an integer; those of strings alone were raised), so integers go through
/// std::to_string and the checks below get one string.
std::string piece(const char* s) { return s; }
std::string piece(const std::string& s) { return s; }
std::string piece(int64_t v) { return std::to_string(v); }
std::string piece(int v) { return std::to_string(v); }
std::string piece(const c10::Device& d) { return d.str(); }
template <class... Pieces>
std::string text(const Pieces&... pieces) {
  std::string s;
  ((s += piece(pieces)), ...);
  return s;
}

/// Python's tuple of these values: "(3, 4)", "(3,)".
std::string tuple_of(c10::IntArrayRef values) {
  std::string s = "(";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + (values.size() == 1 ? ",)" : ")");
}
std::string dims(const at::Tensor& t) { return tuple_of(t.sizes()); }
std::string strides(const at::Tensor& t) { return tuple_of(t.strides()); }

std::string dtype_name(const at::Tensor& t) {
  std::string name = c10::toString(t.scalar_type());  // "BFloat16", "Float", ...
  switch (t.scalar_type()) {
    case at::kBFloat16: return "bfloat16";
    case at::kFloat: return "float32";
    case at::kHalf: return "float16";
    case at::kDouble: return "float64";
    case at::kInt: return "int32";
    case at::kLong: return "int64";
    default: return name;
  }
}

bool dense(int64_t rows, int64_t cols, const at::Tensor& t) {
  return (rows == 1 || t.stride(0) == cols) && (cols == 1 || t.stride(1) == 1);
}

/// a (M×K) @ b (K×N) into a new row-major C on the current stream of a's device.
at::Tensor mm_impl(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK_VALUE(a.dim() == 2 && b.dim() == 2, text("a and b must be matrices (2-D): got shapes ", dims(a), " and ", dims(b)));
  const int64_t m = a.size(0), k = a.size(1), k2 = b.size(0), n = b.size(1);
  TORCH_CHECK_VALUE(k == k2, text("shape mismatch: a is ", m, "x", k, " and b is ", k2, "x", n, ": a's columns (", k,
                    ") must equal b's rows (", k2, ")"));
  const bool bf16 = a.scalar_type() == at::kBFloat16, f32 = a.scalar_type() == at::kFloat;
  TORCH_CHECK_TYPE(bf16 || f32, text("dtype ", dtype_name(a), " is not supported: mm takes bfloat16 (a bf16 GEMM, bf16 C) or ",
                   "float32 (tf32, fp32 C); fp8 goes through mm_fp8"));
  TORCH_CHECK_TYPE(b.scalar_type() == a.scalar_type(), text("a is ", dtype_name(a), " but b is ", dtype_name(b),
                   ": both must have the same dtype"));
  TORCH_CHECK_VALUE(dense(m, k, a), text("a: strides ", strides(a), " for a ", m, "x", k, " matrix: gemm_ladder takes a row-major a ",
                    "(strides (", k, ", 1)) and copies nothing; call .contiguous() on it"));
  gl_layout layout;
  int64_t ldb;
  if ((k == 1 || b.stride(0) == 1) && (n == 1 || b.stride(1) == k)) {
    layout = GL_RCR, ldb = k;
  } else if ((n == 1 || b.stride(1) == 1) && (k == 1 || b.stride(0) == n)) {
    layout = GL_RRR, ldb = n;
  } else {
    TORCH_CHECK_VALUE(false, text("b: strides ", strides(b), " for a ", k, "x", n, " matrix: gemm_ladder takes b row-major ",
                      "(strides (", n, ", 1), RRR) or as the transpose of a row-major ", n, "x", k, " matrix (strides (1, ",
                      k, "), RCR: weight.t()), and copies nothing; call .contiguous() on it"));
  }
  TORCH_CHECK_TYPE(a.is_cuda(), text("a is on ", a.device(), ": gemm_ladder runs on CUDA tensors"));
  TORCH_CHECK_TYPE(b.is_cuda(), text("b is on ", b.device(), ": gemm_ladder runs on CUDA tensors"));
  TORCH_CHECK_TYPE(b.get_device() == a.get_device(), text("b is on cuda:", b.get_device(), " but a is on cuda:", a.get_device(),
                   ": all operands on one device"));
  at::Tensor c = at::empty({m, n}, a.options());
  if (m == 0 || n == 0) return c;
  if (k == 0) return c.zero_();
  const c10::cuda::CUDAGuard guard(a.device());
  const gl_status status = gl_gemm(bf16 ? GL_BF16 : GL_TF32, layout, m, n, k, a.data_ptr(), k, b.data_ptr(), ldb,
                                   c.data_ptr(), n, nullptr, nullptr, c10::cuda::getCurrentCUDAStream(a.get_device()).stream());
  TORCH_CHECK_VALUE(status != GL_INVALID_ARGUMENT && status != GL_UNSUPPORTED, text(gl_last_error()));
  TORCH_CHECK(status == GL_OK, text(gl_status_name(status), ": ", gl_last_error()));
  return c;
}

/// x (..., K) @ weight (N, K)ᵀ: x's rows as a view, the weight read in place (RCR).
at::Tensor linear_impl(const at::Tensor& x, const at::Tensor& weight) {
  TORCH_CHECK_VALUE(weight.dim() == 2, text("weight must be a matrix (N, K): got shape ", dims(weight)));
  TORCH_CHECK_VALUE(x.dim() >= 1, text("x must have at least one dimension (..., K)"));
  const int64_t n = weight.size(0), k = weight.size(1);
  TORCH_CHECK_VALUE(x.size(-1) == k, text("shape mismatch: x has ", x.size(-1), " features (its last dimension) but weight is ", n,
                    "x", k));
  at::Tensor rows;
  try {
    rows = x.view({-1, k});
  } catch (const c10::Error&) {  // torch's "view size is not compatible with input tensor's size and stride"
    TORCH_CHECK_VALUE(false, text("x: shape ", dims(x), " with strides ", strides(x), " is not rows of ", k,
                      " elements a view can flatten; gemm_ladder copies nothing: call .contiguous() on it"));
  }
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end() - 1);
  shape.push_back(n);
  return mm_impl(rows, weight.t()).view(shape);
}

/// The sizes of a grouped call `op` (grouped_mm, grouped_swiglu) whose weights are the argument named `w`, of shape
/// `w_shape`, and whose result is `out`: the checks both share, in _core.py's order (_grouped_operands) and words.
struct GroupedSizes {
  int64_t rows, k, e, n;
};
GroupedSizes grouped_operands(const char* op, const char* w, const char* out, const char* w_shape, const at::Tensor& a,
                              const at::Tensor& b, const at::Tensor& offsets) {
  TORCH_CHECK_TYPE(a.scalar_type() == at::kBFloat16 && b.scalar_type() == at::kBFloat16, text(op, " takes bfloat16 a and ", w,
                   " (a bf16 grouped GEMM, bf16 ", out, "): got ", dtype_name(a), " and ", dtype_name(b)));
  TORCH_CHECK_TYPE(offsets.scalar_type() == at::kLong, text("offsets is ", dtype_name(offsets), ": ", op,
                   " takes int64 offsets (E + 1 of them, offsets[0] = 0; call .to(torch.int64))"));
  TORCH_CHECK_VALUE(a.dim() == 2 && b.dim() == 3, text("a must be a matrix (rows, K) and ", w, " the experts' weights ", w_shape,
                    ": got shapes ", dims(a), " and ", dims(b)));
  const int64_t rows = a.size(0), k = a.size(1), e = b.size(0), n = b.size(1), k2 = b.size(2);
  TORCH_CHECK_VALUE(k == k2, text("shape mismatch: a is ", rows, "x", k, " and ", w, " is ", e, "x", n, "x", k2, ": a's columns (", k,
                    ") must equal the weights' K (", k2, ")"));
  TORCH_CHECK_VALUE(e >= 1, text(w, " has no experts (E = 0): ", op, " needs at least one"));
  TORCH_CHECK_VALUE(offsets.dim() == 1 && offsets.size(0) == e + 1, text("offsets has shape ", dims(offsets), ": it must hold E + 1 = ",
                    e + 1, " int64 (offsets[0] = 0, offsets[g + 1] where expert g ends)"));
  TORCH_CHECK_VALUE(e + 1 == 1 || offsets.stride(0) == 1, text("offsets: stride ", strides(offsets), ": ", op,
                    " takes contiguous offsets and copies nothing; call .contiguous() on it"));
  TORCH_CHECK_VALUE(dense(rows, k, a), text("a: strides ", strides(a), " for a ", rows, "x", k, " matrix: ", op,
                    " takes a row-major a (strides (", k, ", 1)) and copies nothing; call .contiguous() on it"));
  TORCH_CHECK_VALUE((e == 1 || b.stride(0) == n * k) && (n == 1 || b.stride(1) == k) && (k == 1 || b.stride(2) == 1), text(w, ": strides ",
                    strides(b), " for ", e, " weights of ", n, "x", k, ": ", op, " takes them contiguous (strides (", n * k, ", ", k,
                    ", 1): nn.Linear weights stacked) and copies nothing; call .contiguous() on it"));
  return {rows, k, e, n};
}

/// Every operand a CUDA tensor on a's device.
void check_grouped_devices(const at::Tensor& a, const at::Tensor& b, const char* b_name, const at::Tensor& offsets) {
  const std::pair<const at::Tensor*, const char*> operands[] = {{&a, "a"}, {&b, b_name}, {&offsets, "offsets"}};
  for (const auto& [t, name] : operands) {
    TORCH_CHECK_TYPE(t->is_cuda(), text(name, " is on ", t->device(), ": gemm_ladder runs on CUDA tensors"));
    TORCH_CHECK_TYPE(t->get_device() == a.get_device(), text(name, " is on cuda:", t->get_device(), " but a is on cuda:",
                     a.get_device(), ": all operands on one device"));
  }
}

/// Every expert's a_g @ b[g]ᵀ (chapter 13's grouped kernel): a (rows, K) in the contiguous layout, b (E, N, K),
/// offsets (E + 1) int64 on the device; a new (rows, N) C, each expert's rows written, the others zero-filled
/// first (zero_fill) or left as the allocator gave them.
at::Tensor grouped_mm_impl(const at::Tensor& a, const at::Tensor& b, const at::Tensor& offsets, int64_t tile_rows,
                           bool zero_fill) {
  const auto [rows, k, e, n] = grouped_operands("grouped_mm", "b", "C", "(E, N, K)", a, b, offsets);
  TORCH_CHECK_VALUE(n % 256 == 0, text("N = ", n, ": grouped_mm needs N % 256 == 0 (chapter 13's 256-column tile must stay inside one ",
                    "expert's weight)"));
  TORCH_CHECK_VALUE(k % 8 == 0, text("K = ", k, ": grouped_mm needs K % 8 == 0 (TMA reads rows whose pitch is a multiple of 16 bytes)"));
  TORCH_CHECK_VALUE(tile_rows == 0 || tile_rows == 16 || tile_rows == 64 || tile_rows == 128, text("tile_rows = ", tile_rows,
                    ": 0 (the library chooses), 16, 64 or 128"));
  check_grouped_devices(a, b, "b", offsets);
  at::Tensor c = zero_fill ? at::zeros({rows, n}, a.options()) : at::empty({rows, n}, a.options());
  if (rows == 0 || n == 0) return c;
  if (k == 0) return c.zero_();
  const c10::cuda::CUDAGuard guard(a.device());
  const gl_status status = gl_grouped_gemm(e, rows, n, k, a.data_ptr(), b.data_ptr(), c.data_ptr(),
                                           offsets.const_data_ptr<int64_t>(), nullptr, tile_rows,
                                           c10::cuda::getCurrentCUDAStream(a.get_device()).stream());
  TORCH_CHECK_VALUE(status != GL_INVALID_ARGUMENT && status != GL_UNSUPPORTED, text(gl_last_error()));
  TORCH_CHECK(status == GL_OK, text(gl_status_name(status), ": ", gl_last_error()));
  return c;
}

/// Every expert's SiLU(a_g @ W_gate[g]ᵀ) · (a_g @ W_up[g]ᵀ) (chapter 13's step 3, grouped_swiglu): a as grouped_mm's,
/// w (E, 2I, K) each expert's gate and up rows interleaved by 128; a new (rows, I) H, each expert's rows written,
/// the others zero-filled first (zero_fill) or left as the allocator gave them.
at::Tensor grouped_swiglu_impl(const at::Tensor& a, const at::Tensor& w, const at::Tensor& offsets, int64_t tile_rows,
                               bool zero_fill) {
  const char* w_name = "w_gate_up_interleaved";
  const auto [rows, k, e, n] = grouped_operands("grouped_swiglu", w_name, "H", "(E, 2I, K)", a, w, offsets);
  TORCH_CHECK_VALUE(n % 256 == 0, text(w_name, " has 2I = ", n, " rows per expert: grouped_swiglu needs I % 128 == 0 (each ",
                    "256-row block holds 128 rows of W_gate, then the same outputs' 128 rows of W_up)"));
  TORCH_CHECK_VALUE(k % 8 == 0, text("K = ", k, ": grouped_swiglu needs K % 8 == 0 (TMA reads rows whose pitch is a multiple of 16 bytes)"));
  TORCH_CHECK_VALUE(tile_rows == 0 || tile_rows == 64 || tile_rows == 128, text("tile_rows = ", tile_rows,
                    ": 0 (the library chooses), 64 or 128 (grouped_swiglu has no decode tile)"));
  check_grouped_devices(a, w, w_name, offsets);
  const int64_t inter = n / 2;
  at::Tensor h = zero_fill ? at::zeros({rows, inter}, a.options()) : at::empty({rows, inter}, a.options());
  if (rows == 0 || inter == 0) return h;
  if (k == 0) return h.zero_();  // SiLU(0)·0
  const c10::cuda::CUDAGuard guard(a.device());
  const gl_status status = gl_grouped_swiglu(e, rows, inter, k, a.data_ptr(), w.data_ptr(), h.data_ptr(),
                                             offsets.const_data_ptr<int64_t>(), nullptr, tile_rows,
                                             c10::cuda::getCurrentCUDAStream(a.get_device()).stream());
  TORCH_CHECK_VALUE(status != GL_INVALID_ARGUMENT && status != GL_UNSUPPORTED, text(gl_last_error()));
  TORCH_CHECK(status == GL_OK, text(gl_status_name(status), ": ", gl_last_error()));
  return h;
}

/// The routed tokens into grouped_mm's contiguous layout (the library's gl_moe_permute): xf (tokens, hidden) bf16
/// rows, flat and order (tokens·k) and counts (E) int64 on the device -> (a (rows, hidden), offsets (E + 1), place
/// (tokens·k)), new tensors. The checks are _core.moe_permute_plan's, in its order and words; then the devices.
std::tuple<at::Tensor, at::Tensor, at::Tensor> moe_permute_impl(const at::Tensor& xf, const at::Tensor& flat,
                                                                const at::Tensor& order, const at::Tensor& counts,
                                                                int64_t k, int64_t rows) {
  TORCH_CHECK_TYPE(xf.scalar_type() == at::kBFloat16, text("moe_permute takes bfloat16 xf (the tokens' rows): got ", dtype_name(xf)));
  const std::pair<const at::Tensor*, const char*> routing[] = {{&flat, "flat"}, {&order, "order"}, {&counts, "counts"}};
  for (const auto& [t, name] : routing)
    TORCH_CHECK_TYPE(t->scalar_type() == at::kLong, text(name, " is ", dtype_name(*t),
                     ": moe_permute takes int64 flat, order and counts (call .to(torch.int64))"));
  TORCH_CHECK_VALUE(xf.dim() == 2, text("xf must be a matrix (tokens, hidden): got shape ", dims(xf)));
  const int64_t tokens = xf.size(0), hidden = xf.size(1);
  TORCH_CHECK_VALUE(k >= 1, text("k = ", k, ": each token picks at least one expert"));
  const int64_t routed = tokens * k;
  TORCH_CHECK_VALUE(flat.dim() == 1 && flat.size(0) == routed, text("flat has shape ", dims(flat), ": it must hold tokens·k = ",
                    routed, " experts (token t's j-th at t·k + j)"));
  TORCH_CHECK_VALUE(order.dim() == 1 && order.size(0) == routed, text("order has shape ", dims(order),
                    ": it must hold the tokens·k = ", routed, " slots sorted by expert"));
  TORCH_CHECK_VALUE(counts.dim() == 1 && counts.size(0) >= 1, text("counts has shape ", dims(counts),
                    ": it must hold E >= 1 counts (one per expert)"));
  const int64_t experts = counts.size(0);
  TORCH_CHECK_VALUE(experts <= 4096, text("E = ", experts, ": moe_permute takes at most 4096 experts"));
  TORCH_CHECK_VALUE(rows >= routed, text("rows = ", rows, " is below the tokens·k = ", routed,
                    " routed rows: a holds every one of them"));
  TORCH_CHECK_VALUE((hidden <= 1 || xf.stride(1) == 1) && (tokens <= 1 || xf.stride(0) >= hidden), text("xf: strides ",
                    strides(xf), " for a ", tokens, "x", hidden, " matrix: moe_permute takes rows of contiguous elements ",
                    "(strides (P, 1), P >= ", hidden, ") and copies nothing; call .contiguous() on it"));
  const std::tuple<const at::Tensor*, const char*, int64_t> lengths[] = {{&flat, "flat", routed}, {&order, "order", routed},
                                                                        {&counts, "counts", experts}};
  for (const auto& [t, name, n] : lengths)
    TORCH_CHECK_VALUE(n <= 1 || t->stride(0) == 1, text(name, ": stride ", strides(*t), ": moe_permute takes contiguous ",
                      name, " and copies nothing; call .contiguous() on it"));
  const std::pair<const at::Tensor*, const char*> operands[] = {{&xf, "xf"}, {&flat, "flat"}, {&order, "order"}, {&counts, "counts"}};
  for (const auto& [t, name] : operands) {
    TORCH_CHECK_TYPE(t->is_cuda(), text(name, " is on ", t->device(), ": gemm_ladder runs on CUDA tensors"));
    TORCH_CHECK_TYPE(t->get_device() == xf.get_device(), text(name, " is on cuda:", t->get_device(), " but xf is on cuda:",
                     xf.get_device(), ": all operands on one device"));
  }
  const c10::cuda::CUDAGuard guard(xf.device());
  at::Tensor a = at::empty({rows, hidden}, xf.options());
  at::Tensor offsets = at::empty({experts + 1}, counts.options());
  at::Tensor place = at::empty({routed}, counts.options());
  const gl_status status = gl_moe_permute(tokens, hidden, k, experts, rows, xf.data_ptr(), tokens > 1 ? xf.stride(0) : hidden,
                                          flat.const_data_ptr<int64_t>(), order.const_data_ptr<int64_t>(),
                                          counts.const_data_ptr<int64_t>(), a.data_ptr(), offsets.mutable_data_ptr<int64_t>(),
                                          place.mutable_data_ptr<int64_t>(), c10::cuda::getCurrentCUDAStream(xf.get_device()).stream());
  TORCH_CHECK_VALUE(status != GL_INVALID_ARGUMENT && status != GL_UNSUPPORTED, text(gl_last_error()));
  TORCH_CHECK(status == GL_OK, text(gl_status_name(status), ": ", gl_last_error()));
  return {a, offsets, place};
}

// ---- The eager fast path (the Python module's functions) ----

/// The tensor behind `obj` when the fast path may take it: a torch.Tensor or nn.Parameter (no subclass:
/// one may override __torch_function__ or __torch_dispatch__), a strided, contiguous CUDA tensor with no
/// negative or conjugate bit. nullptr otherwise.
const at::Tensor* plain_cuda(PyObject* obj) {
  if (!THPVariable_CheckExact(obj)) return nullptr;
  const at::Tensor& t = THPVariable_Unpack(obj);
  if (!t.is_cuda() || t.layout() != at::kStrided || t.is_neg() || t.is_conj() || !t.is_contiguous()) return nullptr;
  return &t;
}

/// Neither input asks for a gradient. Through the operators, an input that needs one ties C to a node whose
/// backward raises (the Autograd kernel registered below); a C made here would not be tied to the graph at all,
/// and a backward would give the inputs no gradient without a word. With this check the fast path never changes
/// what autograd sees.
bool no_grad_needed(const at::Tensor& a, const at::Tensor& b) {
  return !at::GradMode::is_enabled() || (!a.requires_grad() && !b.requires_grad());
}

/// No mode or transform stands between Python and the kernel: no __torch_function__ mode, and nothing in
/// the thread's include set beyond its defaults, BackendSelect and ADInplaceOrView (a __torch_dispatch__ mode
/// adds Python, vmap and grad FuncTorch keys, functionalization Functionalize).
bool plain_context() {
  return !at::impl::torch_function_mode_enabled() &&
         (c10::impl::tls_local_dispatch_key_set().included_ - c10::default_included_set).empty();
}

/// gemm_ladder_torch_ops._context(): why plain_context() holds or not, for python/bench_linear_host.py.
PyObject* py_context(PyObject* /*module*/, PyObject* const* /*args*/, Py_ssize_t /*nargs*/) {
  HANDLE_TH_ERRORS
  const std::string s = text("torch_function_mode ", int(at::impl::torch_function_mode_enabled()), ", included beyond the defaults ",
                             c10::toString(c10::impl::tls_local_dispatch_key_set().included_ - c10::default_included_set),
                             ", plain ", int(plain_context()));
  return PyUnicode_FromString(s.c_str());
  END_HANDLE_TH_ERRORS
}

/// C (`shape`, the dtype of a and b) = A (m×k, lda = k) · B on the current stream of a's device, or an
/// undefined tensor where the library refused (the caller then takes the checked path, which raises).
at::Tensor fast_gemm(const at::Tensor& a, const at::Tensor& b, gl_layout layout, int64_t m, int64_t n, int64_t k,
                     int64_t ldb, c10::IntArrayRef shape) {
  const c10::Device device = a.device();
  const c10::cuda::CUDAGuard guard(device);
  at::Tensor c = at::detail::empty_cuda(shape, a.scalar_type(), device, std::nullopt);
  const gl_status status = gl_gemm(a.scalar_type() == at::kBFloat16 ? GL_BF16 : GL_TF32, layout, m, n, k,
                                   a.data_ptr(), k, b.data_ptr(), ldb, c.data_ptr(), n, nullptr, nullptr,
                                   c10::cuda::getCurrentCUDAStream(device.index()).stream());
  return status == GL_OK ? c : at::Tensor();
}

bool same_kind(const at::Tensor& a, const at::Tensor& b) {
  const auto dtype = a.scalar_type();
  return (dtype == at::kBFloat16 || dtype == at::kFloat) && b.scalar_type() == dtype && b.get_device() == a.get_device();
}

PyObject* wrap_or_none(at::Tensor c) {
  if (!c.defined()) Py_RETURN_NONE;
  return THPVariable_Wrap(std::move(c));
}

/// gemm_ladder_torch_ops.linear(x, weight): x (..., K) @ weight (N, K)ᵀ as a new (..., N) tensor, or None.
PyObject* py_linear(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 2 || !plain_context()) Py_RETURN_NONE;
  const at::Tensor* x = plain_cuda(args[0]);
  const at::Tensor* w = plain_cuda(args[1]);
  if (x == nullptr || w == nullptr || !same_kind(*x, *w) || !no_grad_needed(*x, *w) || w->dim() != 2 || x->dim() < 1)
    Py_RETURN_NONE;
  const int64_t n = w->size(0), k = w->size(1);
  if (x->size(-1) != k || n == 0 || k == 0 || x->numel() == 0) Py_RETURN_NONE;
  c10::SmallVector<int64_t, 6> shape(x->sizes().begin(), x->sizes().end());
  shape.back() = n;
  return wrap_or_none(fast_gemm(*x, *w, GL_RCR, x->numel() / k, n, k, k, shape));
  END_HANDLE_TH_ERRORS
}

/// gemm_ladder_torch_ops.mm(a, b): a (M×K, contiguous) @ b (K×N: row-major, or the transpose of a contiguous
/// N×K weight) as a new M×N tensor, or None.
PyObject* py_mm(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 2 || !plain_context()) Py_RETURN_NONE;
  const at::Tensor* a = plain_cuda(args[0]);
  if (a == nullptr || !THPVariable_CheckExact(args[1])) Py_RETURN_NONE;
  const at::Tensor& b = THPVariable_Unpack(args[1]);
  if (!b.is_cuda() || b.layout() != at::kStrided || b.is_neg() || b.is_conj() || !same_kind(*a, b) ||
      !no_grad_needed(*a, b) || a->dim() != 2 || b.dim() != 2)
    Py_RETURN_NONE;
  const int64_t m = a->size(0), k = a->size(1), n = b.size(1);
  if (b.size(0) != k || m == 0 || n == 0 || k == 0) Py_RETURN_NONE;
  gl_layout layout;
  int64_t ldb;
  if (b.stride(0) == 1 && b.stride(1) == k) {  // weight.t(): RCR
    layout = GL_RCR, ldb = k;
  } else if (b.stride(1) == 1 && b.stride(0) == n) {
    layout = GL_RRR, ldb = n;
  } else {
    Py_RETURN_NONE;
  }
  const int64_t shape[2] = {m, n};
  return wrap_or_none(fast_gemm(*a, b, layout, m, n, k, ldb, shape));
  END_HANDLE_TH_ERRORS
}

/// gemm_ladder_torch_ops.grouped_mm(a, b, offsets, tile_rows, zero_fill): grouped_mm_impl's product as a new
/// (rows, N) tensor, or None. The plain call only, as linear and mm: contiguous CUDA a (rows, K) and b (E, N, K) in
/// bf16, contiguous int64 offsets (E + 1) on their device, N % 256 == 0, K % 8 == 0, no empty size, tile_rows a Python
/// int of 0, 16, 64 or 128 and zero_fill a bool; anything else (and a refusal of the library) goes to the checked path.
PyObject* py_grouped_mm(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 5 || !plain_context() || !PyLong_CheckExact(args[3]) || !PyBool_Check(args[4])) Py_RETURN_NONE;
  const at::Tensor* a = plain_cuda(args[0]);
  const at::Tensor* b = plain_cuda(args[1]);
  const at::Tensor* offsets = plain_cuda(args[2]);
  if (a == nullptr || b == nullptr || offsets == nullptr || a->scalar_type() != at::kBFloat16 ||
      b->scalar_type() != at::kBFloat16 || offsets->scalar_type() != at::kLong || a->dim() != 2 || b->dim() != 3 ||
      offsets->dim() != 1 || !no_grad_needed(*a, *b) || b->get_device() != a->get_device() ||
      offsets->get_device() != a->get_device())
    Py_RETURN_NONE;
  int overflow = 0;
  const long long tile_rows = PyLong_AsLongLongAndOverflow(args[3], &overflow);
  if (overflow != 0 || (tile_rows != 0 && tile_rows != 16 && tile_rows != 64 && tile_rows != 128)) Py_RETURN_NONE;
  const int64_t rows = a->size(0), k = a->size(1), e = b->size(0), n = b->size(1);
  if (b->size(2) != k || e < 1 || offsets->size(0) != e + 1 || n % 256 != 0 || k % 8 != 0 || rows == 0 || n == 0 ||
      k == 0)
    Py_RETURN_NONE;
  const c10::Device device = a->device();
  const c10::cuda::CUDAGuard guard(device);
  at::Tensor c = at::detail::empty_cuda({rows, n}, at::kBFloat16, device, std::nullopt);
  if (args[4] == Py_True) c.zero_();
  const gl_status status = gl_grouped_gemm(e, rows, n, k, a->data_ptr(), b->data_ptr(), c.data_ptr(),
                                           offsets->const_data_ptr<int64_t>(), nullptr, tile_rows,
                                           c10::cuda::getCurrentCUDAStream(device.index()).stream());
  return wrap_or_none(status == GL_OK ? std::move(c) : at::Tensor());
  END_HANDLE_TH_ERRORS
}

/// gemm_ladder_torch_ops.grouped_swiglu(a, w_gate_up_interleaved, offsets, tile_rows, zero_fill): grouped_swiglu_impl's
/// activation as a new (rows, I) tensor, or None. The plain call only, as grouped_mm: contiguous CUDA bf16 a (rows, K)
/// and w (E, 2I, K), contiguous int64 offsets (E + 1) on their device, 2I % 256 == 0, K % 8 == 0, no empty size,
/// tile_rows a Python int of 0, 64 or 128 and zero_fill a bool; anything else (and a refusal of the library) goes
/// to the checked path.
PyObject* py_grouped_swiglu(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 5 || !plain_context() || !PyLong_CheckExact(args[3]) || !PyBool_Check(args[4])) Py_RETURN_NONE;
  const at::Tensor* a = plain_cuda(args[0]);
  const at::Tensor* w = plain_cuda(args[1]);
  const at::Tensor* offsets = plain_cuda(args[2]);
  if (a == nullptr || w == nullptr || offsets == nullptr || a->scalar_type() != at::kBFloat16 ||
      w->scalar_type() != at::kBFloat16 || offsets->scalar_type() != at::kLong || a->dim() != 2 || w->dim() != 3 ||
      offsets->dim() != 1 || !no_grad_needed(*a, *w) || w->get_device() != a->get_device() ||
      offsets->get_device() != a->get_device())
    Py_RETURN_NONE;
  int overflow = 0;
  const long long tile_rows = PyLong_AsLongLongAndOverflow(args[3], &overflow);
  if (overflow != 0 || (tile_rows != 0 && tile_rows != 64 && tile_rows != 128)) Py_RETURN_NONE;
  const int64_t rows = a->size(0), k = a->size(1), e = w->size(0), n = w->size(1);
  if (w->size(2) != k || e < 1 || offsets->size(0) != e + 1 || n % 256 != 0 || k % 8 != 0 || rows == 0 || n == 0 ||
      k == 0)
    Py_RETURN_NONE;
  const c10::Device device = a->device();
  const c10::cuda::CUDAGuard guard(device);
  at::Tensor h = at::detail::empty_cuda({rows, n / 2}, at::kBFloat16, device, std::nullopt);
  if (args[4] == Py_True) h.zero_();
  const gl_status status = gl_grouped_swiglu(e, rows, n / 2, k, a->data_ptr(), w->data_ptr(), h.data_ptr(),
                                             offsets->const_data_ptr<int64_t>(), nullptr, tile_rows,
                                             c10::cuda::getCurrentCUDAStream(device.index()).stream());
  return wrap_or_none(status == GL_OK ? std::move(h) : at::Tensor());
  END_HANDLE_TH_ERRORS
}

/// gemm_ladder_torch_ops.moe_permute(xf, flat, order, counts, k, rows): moe_permute_impl's (a, offsets, place) as a
/// tuple, or None. The plain call only: contiguous CUDA bf16 xf (tokens, hidden) and int64 flat, order (tokens·k) and
/// counts (E, 1 to 4096) on its device, k and rows Python ints with k >= 1 and rows >= tokens·k; anything else (and a
/// refusal of the library) goes to the checked path. The routing carries no gradient; xf may (the result is not tied
/// to it through here): then the operator runs.
PyObject* py_moe_permute(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 6 || !plain_context() || !PyLong_CheckExact(args[4]) || !PyLong_CheckExact(args[5])) Py_RETURN_NONE;
  const at::Tensor* xf = plain_cuda(args[0]);
  const at::Tensor* flat = plain_cuda(args[1]);
  const at::Tensor* order = plain_cuda(args[2]);
  const at::Tensor* counts = plain_cuda(args[3]);
  if (xf == nullptr || flat == nullptr || order == nullptr || counts == nullptr || xf->scalar_type() != at::kBFloat16 ||
      flat->scalar_type() != at::kLong || order->scalar_type() != at::kLong || counts->scalar_type() != at::kLong ||
      xf->dim() != 2 || flat->dim() != 1 || order->dim() != 1 || counts->dim() != 1 || !no_grad_needed(*xf, *xf))
    Py_RETURN_NONE;
  const int device = xf->get_device();
  if (flat->get_device() != device || order->get_device() != device || counts->get_device() != device) Py_RETURN_NONE;
  int overflow_k = 0, overflow_rows = 0;
  const long long k = PyLong_AsLongLongAndOverflow(args[4], &overflow_k);
  const long long rows = PyLong_AsLongLongAndOverflow(args[5], &overflow_rows);
  const int64_t tokens = xf->size(0), hidden = xf->size(1), experts = counts->size(0);
  if (overflow_k != 0 || overflow_rows != 0 || k < 1 || k > (int64_t(1) << 31) || tokens * k != flat->size(0) ||
      order->size(0) != flat->size(0) || experts < 1 || experts > 4096 || rows < flat->size(0))
    Py_RETURN_NONE;
  const c10::Device where = xf->device();
  const c10::cuda::CUDAGuard guard(where);
  at::Tensor a = at::detail::empty_cuda({rows, hidden}, at::kBFloat16, where, std::nullopt);
  at::Tensor offsets = at::detail::empty_cuda({experts + 1}, at::kLong, where, std::nullopt);
  at::Tensor place = at::detail::empty_cuda({flat->size(0)}, at::kLong, where, std::nullopt);
  const gl_status status = gl_moe_permute(tokens, hidden, k, experts, rows, xf->data_ptr(), hidden,
                                          flat->const_data_ptr<int64_t>(), order->const_data_ptr<int64_t>(),
                                          counts->const_data_ptr<int64_t>(), a.data_ptr(), offsets.mutable_data_ptr<int64_t>(),
                                          place.mutable_data_ptr<int64_t>(), c10::cuda::getCurrentCUDAStream(device).stream());
  if (status != GL_OK) Py_RETURN_NONE;
  PyObject* result = PyTuple_New(3);
  if (result == nullptr) return nullptr;
  PyTuple_SET_ITEM(result, 0, THPVariable_Wrap(std::move(a)));
  PyTuple_SET_ITEM(result, 1, THPVariable_Wrap(std::move(offsets)));
  PyTuple_SET_ITEM(result, 2, THPVariable_Wrap(std::move(place)));
  return result;
  END_HANDLE_TH_ERRORS
}

/// gemm_ladder_torch_ops._host_loop_us(x, weight, what, reps): the host time of one call, in µs, over `reps` calls
/// made from C++ (no Python between them), for python/bench_linear_host.py. what: 0 gl_gemm into one C
/// allocated once, 1 an empty C from torch's allocator and gl_gemm (the fast path's work), 2 at::linear (torch's
/// own path from the dispatcher down), 3 the empty C alone. x contiguous (..., K), weight (N, K), both CUDA bf16.
PyObject* py_host_loop_us(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  TORCH_CHECK_VALUE(nargs == 4, "_host_loop_us(x, weight, what, reps)");
  const at::Tensor* x = plain_cuda(args[0]);
  const at::Tensor* w = plain_cuda(args[1]);
  TORCH_CHECK_VALUE(x != nullptr && w != nullptr && same_kind(*x, *w) && w->dim() == 2 && x->size(-1) == w->size(1),
                    "x and weight: contiguous CUDA tensors, weight (N, K), x (..., K)");
  const long what = PyLong_AsLong(args[2]), reps = PyLong_AsLong(args[3]);
  TORCH_CHECK_VALUE(what >= 0 && what <= 3 && reps >= 1, "what in 0..3, reps >= 1");
  const int64_t n = w->size(0), k = w->size(1), m = x->numel() / k;
  c10::SmallVector<int64_t, 6> shape(x->sizes().begin(), x->sizes().end());
  shape.back() = n;
  const c10::cuda::CUDAGuard guard(x->device());
  const at::Tensor fixed = at::detail::empty_cuda(shape, x->scalar_type(), x->device(), std::nullopt);
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(x->get_device()).stream();
  const gl_dtype dtype = x->scalar_type() == at::kBFloat16 ? GL_BF16 : GL_TF32;
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < reps; ++i) {
    if (what == 0) {
      gl_gemm(dtype, GL_RCR, m, n, k, x->data_ptr(), k, w->data_ptr(), k, fixed.data_ptr(), n, nullptr, nullptr, stream);
    } else if (what == 1) {
      at::Tensor c = fast_gemm(*x, *w, GL_RCR, m, n, k, k, shape);
    } else if (what == 2) {
      at::Tensor c = at::linear(*x, *w);
    } else {
      at::Tensor c = at::detail::empty_cuda(shape, x->scalar_type(), x->device(), std::nullopt);
    }
  }
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / reps;
  return PyFloat_FromDouble(us);
  END_HANDLE_TH_ERRORS
}

PyMethodDef methods[] = {
    {"linear", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&py_linear)), METH_FASTCALL,
     "linear(x, weight): x @ weight.T on the library, or None where the checked path must run"},
    {"mm", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&py_mm)), METH_FASTCALL,
     "mm(a, b): a @ b on the library, or None where the checked path must run"},
    {"grouped_mm", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&py_grouped_mm)), METH_FASTCALL,
     "grouped_mm(a, b, offsets, tile_rows, zero_fill): every expert's product on the library, or None where the "
     "checked path must run"},
    {"grouped_swiglu", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&py_grouped_swiglu)), METH_FASTCALL,
     "grouped_swiglu(a, w_gate_up_interleaved, offsets, tile_rows, zero_fill): every expert's SiLU(gate)·up on the "
     "library, or None where the checked path must run"},
    {"moe_permute", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&py_moe_permute)), METH_FASTCALL,
     "moe_permute(xf, flat, order, counts, k, rows): the routed tokens in the grouped layout on the library, or None "
     "where the checked path must run"},
    {"_context", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&py_context)), METH_FASTCALL,
     "_context(): whether the fast path sees no mode (python/bench_linear_host.py)"},
    {"_host_loop_us", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&py_host_loop_us)), METH_FASTCALL,
     "_host_loop_us(x, weight, what, reps): µs of host time per call made from C++ (python/bench_linear_host.py)"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "gemm_ladder_torch_ops",
                          "gemm_ladder's torch operators (registered on import) and the eager fast path", -1, methods};

}  // namespace

// torch.utils.cpp_extension.load(name="gemm_ladder_torch_ops", is_python_module=True) imports this.
PyMODINIT_FUNC PyInit_gemm_ladder_torch_ops(void) { return PyModule_Create(&module_def); }

TORCH_LIBRARY_FRAGMENT(gemm_ladder, m) {
  m.def("mm(Tensor a, Tensor b) -> Tensor");
  m.def("linear(Tensor x, Tensor weight) -> Tensor");
  m.def("grouped_mm(Tensor a, Tensor b, Tensor offsets, int tile_rows=0, bool zero_fill=True) -> Tensor");
  m.def("grouped_swiglu(Tensor a, Tensor w_gate_up_interleaved, Tensor offsets, int tile_rows=0, bool zero_fill=True) -> Tensor");
  m.def("moe_permute(Tensor xf, Tensor flat, Tensor order, Tensor counts, int k, int rows) -> (Tensor, Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(gemm_ladder, CUDA, m) {
  m.impl("mm", &mm_impl);
  m.impl("linear", &linear_impl);
  m.impl("grouped_mm", &grouped_mm_impl);
  m.impl("grouped_swiglu", &grouped_swiglu_impl);
  m.impl("moe_permute", &moe_permute_impl);
}

// No derivative is implemented: autograd's kernel for custom operators would tie C to the graph and, at a backward,
// only warn and give the inputs no gradient (measured on the H200, torch 2.11). This one ties C to a node whose
// backward raises ("derivative for gemm_ladder::linear is not implemented"), so loss.backward() fails loudly.
TORCH_LIBRARY_IMPL(gemm_ladder, Autograd, m) {
  m.impl("mm", torch::autograd::autogradNotImplementedFallback());
  m.impl("linear", torch::autograd::autogradNotImplementedFallback());
  m.impl("grouped_mm", torch::autograd::autogradNotImplementedFallback());
  m.impl("grouped_swiglu", torch::autograd::autogradNotImplementedFallback());
  m.impl("moe_permute", torch::autograd::autogradNotImplementedFallback());
}

TORCH_LIBRARY_IMPL(gemm_ladder, CPU, m) {  // refused with the Python operator's TypeError ("a is on cpu: ...")
  m.impl("mm", &mm_impl);
  m.impl("linear", &linear_impl);
  m.impl("grouped_mm", &grouped_mm_impl);
  m.impl("grouped_swiglu", &grouped_swiglu_impl);
  m.impl("moe_permute", &moe_permute_impl);
}
