"""What needs no GPU and no torch: importing, DLPack parsing, the checks before a launch (TypeError,
ValueError with one clear line), and the library's refusals as exceptions. numpy, where importable,
stands in for a real DLPack producer (a CPU one)."""

import subprocess
import sys
import textwrap

import pytest

import gemm_ladder
from gemm_ladder import _core, _dlpack
from gemm_ladder._library import GL_RCR, GL_RRR
from support import BF16, E4M3FN, F16, F32, FakeCudaArray, library_missing, no_sm90a

E4M3 = "float8_e4m3fn"
ADDR = 0x7F0000000000  # 256-byte aligned: an address no call below reaches the GPU with


PYTHONPATH = str(__import__("pathlib").Path(gemm_ladder.__file__).resolve().parents[1])


def run_python(code, env=None, no_site=False):
    """`code` in a fresh interpreter that imports the package from this checkout; `no_site`: without
    site-packages (python -S), so that neither torch nor numpy can be imported."""
    import os

    full_env = dict(os.environ, PYTHONPATH=PYTHONPATH, **(env or {}))
    args = [sys.executable] + (["-S"] if no_site else []) + ["-c", textwrap.dedent(code)]
    return subprocess.run(args, capture_output=True, text=True, env=full_env)


def test_import_needs_neither_torch_nor_the_library():
    r = run_python("""
        import sys
        import gemm_ladder, gemm_ladder._library as L
        assert "torch" not in sys.modules and "numpy" not in sys.modules, "torch or numpy was imported"
        assert L._loaded is None, "the library was loaded at import"
        try:
            import torch
            print("torch is importable without site-packages: the test proves nothing")
        except ImportError:
            print("ok")
    """, no_site=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_library_env_that_names_no_file():
    r = run_python("""
        import gemm_ladder
        try:
            gemm_ladder.library_path()
        except ImportError as e:
            print(type(e).__name__, e)
    """, env={"GEMM_LADDER_LIBRARY": "/nonexistent/libgemm_ladder.so"})
    assert r.stdout.strip() == "LibraryNotFoundError GEMM_LADDER_LIBRARY=/nonexistent/libgemm_ladder.so: no such file", r.stderr


# ---- layouts from strides ----

@pytest.mark.parametrize("k,n,strides,want", [
    (64, 32, (32, 1), (GL_RRR, 32)),     # row-major K×N
    (64, 32, (1, 64), (GL_RCR, 64)),     # weight.t() of a row-major 32×64
    (64, 1, (1, 999), (GL_RCR, 64)),     # one column: both describe it, RCR preferred
    (1, 32, (777, 1), (GL_RCR, 1)),      # one row: the same
    (64, 32, (64, 1), None),             # a slice of a wider row-major matrix: not dense
    (64, 32, (1, 128), None),            # a slice of a longer weight: not dense
    (64, 32, (2, 128), None),            # nothing
])
def test_b_layout(k, n, strides, want):
    assert _core.b_layout(k, n, strides) == want


def test_plan_refuses_with_one_line():
    def refused(exc, words, *args, **kw):
        with pytest.raises(exc) as e:
            _core.plan(*args, **kw)
        assert words in str(e.value) and "\n" not in str(e.value), str(e.value)

    refused(ValueError, "shape mismatch: a is 4x8 and b is 9x16", "bfloat16", "bfloat16", (4, 8), (8, 1), (9, 16), (16, 1))
    refused(ValueError, "must be matrices (2-D)", "bfloat16", "bfloat16", (4, 8, 2), (16, 2, 1), (8, 16), (16, 1))
    refused(TypeError, "dtype float16 is not supported", "float16", "float16", (4, 8), (8, 1), (8, 16), (16, 1))
    refused(TypeError, "a is bfloat16 but b is float32", "bfloat16", "float32", (4, 8), (8, 1), (8, 16), (16, 1))
    refused(ValueError, "a: strides (1, 4) for a 4x8 matrix", "bfloat16", "bfloat16", (4, 8), (1, 4), (8, 16), (16, 1))
    refused(ValueError, "b: strides (32, 1) for a 8x16 matrix", "bfloat16", "bfloat16", (4, 8), (8, 1), (8, 16), (32, 1))
    refused(TypeError, "mm_fp8 takes float8_e4m3fn", "bfloat16", "bfloat16", (4, 16), (16, 1), (16, 8), (1, 16), fp8=True)
    refused(ValueError, "mm_fp8 takes b as the transpose", E4M3, E4M3, (4, 16), (16, 1), (16, 8), (8, 1), fp8=True)



def test_plan_ignores_strides_of_extent_one():
    # a single row of A with any row stride, and C's problem as the library gets it
    assert _core.plan("bfloat16", "bfloat16", (1, 8), (12345, 1), (8, 16), (1, 8)) == (0, GL_RCR, 1, 16, 8, 8, "bfloat16")
    assert _core.plan("float32", "float32", (3, 1), (1, 7), (1, 5), (5, 1))[:2] == (1, GL_RCR)


def test_fp8_scale_layouts():
    m, n, k = 5, 136, 256  # Kb = 2, Kb4 = 4, Nb = 2
    assert _core.fp8_mode(m, n, k, (1,), (1,), (), (), None) == 2  # per tensor
    assert _core.fp8_mode(m, n, k, (m, 2), (1, m), (2, 2), (4, 1), None) == 3  # block
    assert _core.fp8_mode(m, n, k, (m, 2), (1, m), (2, 4), (4, 1), None) == 3  # block, scale_b's padded buffer
    assert _core.fp8_mode(1, 1, 16, (1, 1), (1, 1), (1, 1), (1, 1), True) == 3  # one block each: strides unread
    with pytest.raises(ValueError, match=r"scale_a: block scales of a are float32 of shape \(5, 2\)"):
        _core.fp8_mode(m, n, k, (m, 2), (2, 1), (2, 2), (4, 1), None)  # row-major scale_a
    with pytest.raises(ValueError, match=r"rows 4 apart"):
        _core.fp8_mode(m, n, k, (m, 2), (1, m), (2, 2), (2, 1), None)  # unpadded scale_b
    with pytest.raises(ValueError, match="per-tensor scales are one float32 each"):
        _core.fp8_mode(m, n, k, (1,), (1,), (2,), (1,), False)


# ---- DLPack ----

@pytest.mark.parametrize("versioned", [True, False])
def test_dlpack_view_of_a_producer(versioned):
    x = FakeCudaArray(ADDR, (3, 5), BF16, strides=(1, 3), device_id=1, versioned=versioned, byte_offset=32)
    v = _dlpack.view(x, stream=0)
    assert (v.data, v.shape, v.strides, v.dtype, v.itemsize, v.device) == (ADDR + 32, (3, 5), (1, 3), "bfloat16", 2, "cuda:1")
    assert x.streams == [1], "the legacy default stream is passed as 1"
    assert _dlpack.view(FakeCudaArray(ADDR, (3, 5), F32), stream=1234).strides == (5, 1)  # NULL strides: compact


def test_dlpack_read_only_and_unknown_types():
    assert _dlpack.view(FakeCudaArray(ADDR, (2, 2), read_only=True)).read_only
    assert _dlpack.view(FakeCudaArray(ADDR, (2, 2), dtype=(5, 64))).dtype == "5:64"
    with pytest.raises(TypeError, match="has no __dlpack__"):
        _dlpack.view([[1.0]])


def test_numpy_arrays_are_read_and_refused_for_their_device():
    np = pytest.importorskip("numpy", reason="numpy is not importable (scripts/test.sh installs it into .venv)")
    a = np.zeros((4, 6), dtype=np.float32)
    v = _dlpack.view(a.T)
    assert (v.shape, v.strides, v.dtype, v.device_type) == ((6, 4), (1, 6), "float32", _dlpack.KDL_CPU)
    with pytest.raises(TypeError, match=r"a is on cpu:0: gemm_ladder runs on CUDA arrays"):
        gemm_ladder.mm(a, a.T.copy(), out=np.zeros((4, 4), np.float32))


def test_mm_checks_before_the_library():
    a = FakeCudaArray(ADDR, (4, 8), BF16)
    b = FakeCudaArray(ADDR + 4096, (8, 16), BF16)
    with pytest.raises(TypeError, match="out= is needed for arrays that are not torch tensors"):
        gemm_ladder.mm(a, b)
    with pytest.raises(TypeError, match="out is float32: the result is bfloat16"):
        gemm_ladder.mm(a, b, out=FakeCudaArray(ADDR + 8192, (4, 16), F32))
    with pytest.raises(ValueError, match=r"out has shape \(16, 4\): the result is 4x16"):
        gemm_ladder.mm(a, b, out=FakeCudaArray(ADDR + 8192, (16, 4), BF16))
    with pytest.raises(ValueError, match="out overlaps a"):
        gemm_ladder.mm(a, b, out=FakeCudaArray(ADDR + 32, (4, 16), BF16))
    with pytest.raises(ValueError, match="out is read-only"):
        gemm_ladder.mm(a, b, out=FakeCudaArray(ADDR + 8192, (4, 16), BF16, read_only=True))
    with pytest.raises(TypeError, match="b is on cuda:1 but a is on cuda:0"):
        gemm_ladder.mm(a, FakeCudaArray(ADDR, (8, 16), BF16, device_id=1), out=FakeCudaArray(ADDR + 8192, (4, 16), BF16))
    with pytest.raises(TypeError, match="dtype float16 is not supported"):
        gemm_ladder.mm(FakeCudaArray(ADDR, (4, 8), F16), FakeCudaArray(ADDR, (8, 16), F16), out=None)
    with pytest.raises(TypeError, match="stream: an int"):
        gemm_ladder.mm(a, b, out=FakeCudaArray(ADDR + 8192, (4, 16), BF16), stream="default")
    with pytest.raises(TypeError, match="linear takes torch tensors"):
        gemm_ladder.linear(a, b)


@pytest.mark.skipif(bool(library_missing()), reason=library_missing() or "-")
def test_library_refusals_are_exceptions_with_its_line():
    out = FakeCudaArray(ADDR + 8192, (4, 16), BF16)
    # a bf16 operand one byte off its element: the library's GL_INVALID_ARGUMENT, a ValueError
    with pytest.raises(gemm_ladder.InvalidArgumentError) as e:
        gemm_ladder.mm(FakeCudaArray(ADDR + 1, (4, 8), BF16), FakeCudaArray(ADDR + 4096, (8, 16), BF16), out=out)
    assert isinstance(e.value, ValueError) and e.value.status == 1
    assert str(e.value) == "gl_gemm(bf16, RRR, 4x16x8): A starts 1 bytes past a 2-byte boundary: not aligned to its element"
    # tf32 takes K % 4 == 0 only (chapter 12's rule, applied before the GPU): GL_UNSUPPORTED
    with pytest.raises(gemm_ladder.UnsupportedError, match=r"tf32_wgmma: needs K % 4 == 0"):
        gemm_ladder.mm(FakeCudaArray(ADDR, (4, 6), F32), FakeCudaArray(ADDR + 4096, (6, 16), F32, strides=(1, 6)),
                       out=FakeCudaArray(ADDR + 8192, (4, 16), F32))
    # fp8 scales: the library's rule too (K % 16)
    s = FakeCudaArray(ADDR + 65536, (1,), F32)
    with pytest.raises(gemm_ladder.UnsupportedError, match=r"fp8_per_tensor: fp8 needs K % 16 == 0"):
        gemm_ladder.mm_fp8(FakeCudaArray(ADDR, (4, 8), E4M3FN), FakeCudaArray(ADDR + 4096, (8, 16), E4M3FN, strides=(1, 8)),
                           s, s, out=out)


@pytest.mark.skipif(not no_sm90a().startswith("needs a CUDA GPU"), reason="this machine has a GPU: without one, a call "
                    "that passes every check is refused with GL_NO_SM90A (checked on machines without)")
def test_no_gpu_is_a_runtime_error_with_the_reason():
    with pytest.raises(gemm_ladder.NoSm90aDeviceError, match=r"no CUDA GPU") as e:
        gemm_ladder.mm(FakeCudaArray(ADDR, (4, 8), BF16), FakeCudaArray(ADDR + 4096, (8, 16), BF16),
                       out=FakeCudaArray(ADDR + 8192, (4, 16), BF16))
    assert isinstance(e.value, RuntimeError)
    assert gemm_ladder.device_status().startswith("no CUDA GPU")


@pytest.mark.skipif(bool(library_missing()), reason=library_missing() or "-")
def test_cache_controls():
    with pytest.raises(gemm_ladder.InvalidArgumentError, match="a capacity is at least 0"):
        gemm_ladder.set_cache_capacity(-1)
    gemm_ladder.set_cache_capacity(1024)
    stats = gemm_ladder.cache_stats()
    assert set(stats) == {"entries", "hits", "misses", "pinned"} and all(v >= 0 for v in stats.values())
    gemm_ladder.clear_cache()
    after = gemm_ladder.cache_stats()
    assert after["entries"] == after["pinned"]  # what a CUDA graph captured stays
