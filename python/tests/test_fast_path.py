"""On an sm_90a GPU with torch: the eager fast path (csrc/torch_ops.cpp's module functions linear and mm, no
dispatcher between Python and the library) takes the plain call and gives torch's result, and declines every
other call (it returns None, and gemm_ladder.linear / .mm then take the checked operator): a non-contiguous
or CPU tensor, a tensor subclass, a dispatch mode, a FakeTensorMode, a vmap (grouped_mm's too), an input that
needs a gradient under grad mode (test_grouped_gpu.py tests grouped_mm's other cases). Skipped,
with the reason, without such a GPU, without torch, or where the C++ module could not be built."""

import pytest

from support import gpu_and_torch_missing

pytestmark = pytest.mark.skipif(bool(gpu_and_torch_missing()), reason=gpu_and_torch_missing() or "-")

if not gpu_and_torch_missing():
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    import gemm_ladder


@pytest.fixture
def fast():
    if gemm_ladder._fast_linear is None or gemm_ladder._fast_mm is None:
        pytest.skip("the C++ module (csrc/torch_ops.cpp) is not built here: no fast path to test")
    return gemm_ladder._fast_linear, gemm_ladder._fast_mm


def operands(m=33, n=264, k=80, dtype=None):
    g = torch.Generator(device="cuda").manual_seed(3)
    dtype = dtype or torch.bfloat16
    x = torch.rand(m, k, device="cuda", generator=g).sub_(0.5).to(dtype)
    w = torch.rand(n, k, device="cuda", generator=g).sub_(0.5).to(dtype)
    return x, w


def expect_close(got, x, w):
    ref = x.double() @ w.double().t()
    bound = 8e-3 * (x.double().abs() @ w.double().abs().t()) + 1e-6
    assert got.shape == ref.shape and got.dtype == x.dtype
    assert ((got.double() - ref).abs() <= bound).all()


def test_takes_the_plain_call(fast):
    linear, mm = fast
    x, w = operands()
    c = linear(x, w)
    assert c is not None, "the plain call (contiguous CUDA bf16, no mode, no grad) must take the fast path"
    expect_close(c, x, w)
    x3 = x.reshape(3, 11, 80)
    c3 = linear(x3, w)
    assert c3 is not None and c3.shape == (3, 11, 264)
    expect_close(c3.reshape(33, 264), x, w)
    for b in (w.t(), w.t().contiguous()):  # RCR (a weight's .t()) and RRR
        c = mm(x, b)
        assert c is not None
        expect_close(c, x, w)


def test_takes_parameters_without_grad_and_any_tensor_under_no_grad(fast):
    linear, _ = fast
    x, w = operands()
    assert linear(x, torch.nn.Parameter(w, requires_grad=False)) is not None
    with torch.no_grad():
        assert linear(x, torch.nn.Parameter(w.clone())) is not None


def test_declines_what_it_must_not_take(fast):
    linear, mm = fast
    x, w = operands()
    assert linear(x.t().contiguous().t(), w) is None, "non-contiguous x"
    assert linear(x, w.t().contiguous().t()) is None, "non-contiguous weight"
    assert linear(x.cpu(), w.cpu()) is None, "CPU tensors"
    assert linear(x, w.float()) is None, "two dtypes"
    assert linear(x.to(torch.float16), w.to(torch.float16)) is None, "fp16"
    assert mm(x, x) is None, "K of b is not K of a"
    assert mm(x, w.t()[:, ::2]) is None, "b neither row- nor column-major"

    class Sub(torch.Tensor):
        pass

    assert linear(x.as_subclass(Sub), w) is None, "a tensor subclass (it may override __torch_function__)"

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Mode():
        assert linear(x, w) is None, "a __torch_dispatch__ mode"


def test_an_input_that_needs_a_gradient_takes_the_operator(fast):
    linear, mm = fast
    x, w = operands()
    wp = torch.nn.Parameter(w.clone())  # requires_grad=True
    with torch.enable_grad():
        assert linear(x, wp) is None
        assert linear(x.clone().requires_grad_(), w) is None
        assert mm(x, wp.t()) is None
        # The public call: the operator, which autograd sees (its output is tied to the graph), rather than
        # an untracked tensor from the fast path.
        y = gemm_ladder.linear(x, wp)
        assert y.requires_grad
        expect_close(y.detach(), x, w)


def test_declines_under_fake_tensors_and_vmap(fast):
    """A FakeTensorMode (torch.compile's tracing, opcheck) and a vmap put their keys in the thread's dispatch
    state: the fast path declines every call under them, fake or real tensors alike, and the public call then
    takes the operator (its fake under FakeTensorMode)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    linear, mm = fast
    x, w = operands()
    with FakeTensorMode() as mode:
        fx, fw = mode.from_tensor(x), mode.from_tensor(w)
        assert linear(fx, fw) is None and mm(fx, fw.t()) is None, "fake tensors"
        assert linear(x, w) is None, "real tensors under a FakeTensorMode"
        y = gemm_ladder.linear(fx, fw)
        assert y.shape == (33, 264) and y.dtype == torch.bfloat16
    declined = []

    def per_row(xi):
        declined.append((linear(xi, w) is None, mm(xi.unsqueeze(0), w.t()) is None))
        return xi * 2

    torch.vmap(per_row)(x)
    assert declined == [(True, True)], declined
    grouped = gemm_ladder._fast_grouped_mm
    if grouped is not None:
        offsets = torch.tensor([0, 33], device="cuda")
        w3 = torch.cat([w, w]).unsqueeze(0)[:, :256]  # (1, 256, 80)
        w3 = w3.contiguous()
        assert grouped(x, w3, offsets, 0, True) is not None, "the plain grouped call"
        with FakeTensorMode():
            assert grouped(x, w3, offsets, 0, True) is None, "grouped_mm under a FakeTensorMode"
        seen = []
        torch.vmap(lambda xi: (seen.append(grouped(x, w3, offsets, 0, True) is None), xi * 2)[1])(x)
        assert seen == [True], "grouped_mm under vmap"
