"""Finding and loading libgemm_ladder.so, its C functions through ctypes, its statuses as exceptions.

Where the library is looked for, first found wins:

1. ``$GEMM_LADDER_LIBRARY``: the path of the library file itself (an error if nothing is there);
2. next to this file: where ``pip install .`` puts it (scikit-build-core installs it into the package);
3. the build trees of the repository this package lies in: ``<repo>/build*/lib/libgemm_ladder.so``,
   the most recently built first (``PYTHONPATH=python`` from the repository root, no install step).

The library is loaded at the first call that needs it, not at import: importing the package needs
neither the library nor a GPU.
"""

from __future__ import annotations

import ctypes
import os
import pathlib
import threading

# gl_status (lib/include/gemm_ladder.h)
GL_OK = 0
GL_INVALID_ARGUMENT = 1
GL_UNSUPPORTED = 2
GL_NO_SM90A = 3
GL_CUDA_ERROR = 4
GL_INTERNAL = 5

# gl_dtype
GL_BF16 = 0
GL_TF32 = 1
GL_FP8_E4M3_PER_TENSOR = 2
GL_FP8_E4M3_BLOCK_SCALED = 3

# gl_layout
GL_RCR = 0
GL_RRR = 1

LIBRARY_NAME = "libgemm_ladder.so"


class GemmLadderError(Exception):
    """A call the library refused or could not run; ``status`` is its gl_status, the message its line."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class InvalidArgumentError(GemmLadderError, ValueError):
    """GL_INVALID_ARGUMENT: a size below 1, a null or misaligned pointer, a leading dimension too small."""


class UnsupportedError(GemmLadderError, ValueError):
    """GL_UNSUPPORTED: valid, but no kernel of the library takes it (its rule is the message)."""


class NoSm90aDeviceError(GemmLadderError, RuntimeError):
    """GL_NO_SM90A: no GPU, not an sm_90a GPU, or a library built without sm_90a code."""


class CudaError(GemmLadderError, RuntimeError):
    """GL_CUDA_ERROR: the CUDA runtime failed (an allocation, the launch)."""


class InternalError(GemmLadderError, RuntimeError):
    """GL_INTERNAL: anything else (a bug in the library, reported rather than thrown)."""


class LibraryNotFoundError(ImportError):
    """libgemm_ladder.so is in none of the places the package looks (the message lists them)."""


_ERRORS = {
    GL_INVALID_ARGUMENT: InvalidArgumentError,
    GL_UNSUPPORTED: UnsupportedError,
    GL_NO_SM90A: NoSm90aDeviceError,
    GL_CUDA_ERROR: CudaError,
    GL_INTERNAL: InternalError,
}


def _candidates() -> list[pathlib.Path]:
    here = pathlib.Path(__file__).resolve().parent
    found = [here / LIBRARY_NAME]
    repo = here.parent.parent  # <repo>/python/gemm_ladder
    if (repo / "lib" / "include" / "gemm_ladder.h").is_file():
        builds = [p for p in repo.glob("build*/lib/" + LIBRARY_NAME) if p.is_file()]
        found += sorted(builds, key=lambda p: p.stat().st_mtime, reverse=True)
    return found


def find_library() -> pathlib.Path:
    """The library file the package loads (see the module's docstring for the order)."""
    env = os.environ.get("GEMM_LADDER_LIBRARY")
    if env:
        path = pathlib.Path(env)
        if not path.is_file():
            raise LibraryNotFoundError(f"GEMM_LADDER_LIBRARY={env}: no such file")
        return path
    for path in _candidates():
        if path.is_file():
            return path
    looked = ", ".join(str(p) for p in _candidates())
    raise LibraryNotFoundError(
        f"{LIBRARY_NAME} not found (looked in: $GEMM_LADDER_LIBRARY, {looked}). Build it with "
        "`cmake --build build --target gemm_ladder`, install the package with `pip install .`, "
        "or point GEMM_LADDER_LIBRARY at the file")


class _Library:
    """The loaded library with its functions' signatures."""

    def __init__(self, path: pathlib.Path):
        self.path = path
        lib = ctypes.CDLL(str(path))
        i64, ptr = ctypes.c_int64, ctypes.c_void_p
        lib.gl_gemm.argtypes = [ctypes.c_int, ctypes.c_int, i64, i64, i64, ptr, i64, ptr, i64, ptr, i64, ptr, ptr, ptr]
        lib.gl_gemm.restype = ctypes.c_int
        lib.gl_grouped_gemm.argtypes = [i64, i64, i64, i64, ptr, ptr, ptr, ptr, ptr, i64, ptr]
        lib.gl_grouped_gemm.restype = ctypes.c_int
        # a library built before gl_grouped_swiglu still serves every other call (grouped_swiglu then says so)
        self.grouped_swiglu = getattr(lib, "gl_grouped_swiglu", None)
        if self.grouped_swiglu is not None:
            self.grouped_swiglu.argtypes = [i64, i64, i64, i64, ptr, ptr, ptr, ptr, ptr, i64, ptr]
            self.grouped_swiglu.restype = ctypes.c_int
        # likewise for gl_moe_permute (moe_permute then says so)
        self.moe_permute = getattr(lib, "gl_moe_permute", None)
        if self.moe_permute is not None:
            self.moe_permute.argtypes = [i64, i64, i64, i64, i64, ptr, i64, ptr, ptr, ptr, ptr, ptr, ptr, ptr]
            self.moe_permute.restype = ctypes.c_int
        for name in ("gl_last_error", "gl_last_path"):
            getattr(lib, name).argtypes = []
            getattr(lib, name).restype = ctypes.c_char_p
        lib.gl_status_name.argtypes = [ctypes.c_int]
        lib.gl_status_name.restype = ctypes.c_char_p
        lib.gl_device_status.argtypes = []
        lib.gl_device_status.restype = ctypes.c_int
        lib.gl_clear_cache.argtypes = []
        lib.gl_clear_cache.restype = None
        lib.gl_set_cache_capacity.argtypes = [i64]
        lib.gl_set_cache_capacity.restype = ctypes.c_int
        lib.gl_cache_stats.argtypes = [ctypes.POINTER(i64)] * 3
        lib.gl_cache_stats.restype = None
        lib.gl_cache_pinned.argtypes = []
        lib.gl_cache_pinned.restype = i64
        self.lib = lib
        self.gemm = lib.gl_gemm
        self.grouped_gemm = lib.gl_grouped_gemm

    def error(self, status: int) -> GemmLadderError:
        """The exception for a status this thread's last call returned, with the library's line."""
        message = self.lib.gl_last_error().decode(errors="replace")
        name = self.lib.gl_status_name(status).decode()
        return _ERRORS.get(status, InternalError)(status, message or name)


_lock = threading.Lock()
_loaded: _Library | None = None


def library() -> _Library:
    """The library, loaded on first use."""
    global _loaded
    if _loaded is None:
        with _lock:
            if _loaded is None:
                _loaded = _Library(find_library())
    return _loaded
