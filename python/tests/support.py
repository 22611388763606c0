"""What the test files share: why a test cannot run here (no torch, no library, no sm_90a GPU), and a
DLPack producer made of ctypes alone (a "CUDA array" at any address, for the checks before a launch)."""

from __future__ import annotations

import ctypes
import importlib.util

from gemm_ladder import _dlpack


def torch_missing() -> str:
    """"" when torch is importable, else the reason a torch test is skipped."""
    return "" if importlib.util.find_spec("torch") else "needs torch: torch is not importable by this Python"


def library_missing() -> str:
    """"" when libgemm_ladder.so is found, else why not."""
    import gemm_ladder

    try:
        gemm_ladder.library_path()
    except ImportError as e:
        return f"needs libgemm_ladder.so: {e}"
    return ""


def no_sm90a() -> str:
    """"" on a machine whose current GPU runs the library's kernels; else the reason, in the words the
    test summary groups by ("needs a CUDA GPU: ..." without one)."""
    why = library_missing()
    if why:
        return why
    import gemm_ladder

    status = gemm_ladder.device_status()
    if not status:
        return ""
    if status.startswith("no CUDA GPU"):
        return f"needs a CUDA GPU: {status}"
    return f"needs an sm_90a GPU: {status}"


def gpu_and_torch_missing() -> str:
    """"" where the GPU tests run (a GPU the library runs on, and torch to make tensors); else why not."""
    return no_sm90a() or torch_missing()


class FakeCudaArray:
    """An array that speaks DLPack and claims to live on CUDA device `device_id` at `address`: shape,
    strides (elements; None for DLPack's NULL) and dtype (code, bits) as given. Nothing is allocated;
    use it only where the call is refused before a launch. `versioned` chooses the DLPack 1.x capsule
    ("dltensor_versioned") or the 0.x one ("dltensor"); `read_only` sets DLPack 1.x's flag."""

    def __init__(self, address, shape, dtype=(4, 16), strides=None, device_id=0, device_type=_dlpack.KDL_CUDA,
                 versioned=True, read_only=False, byte_offset=0):
        ndim = len(shape)
        self._shape = (ctypes.c_int64 * ndim)(*shape)
        self._strides = (ctypes.c_int64 * ndim)(*strides) if strides is not None else None
        tensor = _dlpack.DLTensor(
            data=address, device=_dlpack.DLDevice(device_type, device_id), ndim=ndim,
            dtype=_dlpack.DLDataType(dtype[0], dtype[1], 1), shape=self._shape,
            strides=self._strides if self._strides is not None else None, byte_offset=byte_offset)
        if versioned:
            self._managed = _dlpack.DLManagedTensorVersioned(version=_dlpack.DLPackVersion(1, 1), flags=int(read_only),
                                                             dl_tensor=tensor)
            self._name = b"dltensor_versioned"
        else:
            self._managed = _dlpack.DLManagedTensor(dl_tensor=tensor)
            self._name = b"dltensor"
        self.device = (device_type, device_id)
        self.streams = []  # the stream argument of each __dlpack__ call
        self.versioned = versioned

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None):
        if max_version is not None and not self.versioned:
            raise TypeError("a DLPack 0.x producer takes no max_version")
        self.streams.append(stream)
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self._managed), self._name, None)


BF16 = (4, 16)
F32 = (2, 32)
F16 = (2, 16)
E4M3FN = (10, 8)


class DLPackOnly:
    """A torch tensor seen only through DLPack: the path any other array library takes."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, **kwargs):
        return self.t.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def rerun_with_python_ops(test_file: str, exclude: str) -> None:
    """Runs `test_file` again in a process where the C++ operators are not built (GEMM_LADDER_CPP_OPS=0: the
    Python custom_ops stand in, with the same schemas, fakes and refusals), leaving out the tests matching
    `exclude` (the caller itself); asserts that it passed."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, GEMM_LADDER_CPP_OPS="0")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_file, "-k",
                        f"not {exclude}"], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and " failed" not in r.stdout, r.stdout[-3000:]
