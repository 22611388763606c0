"""torch.ops.gemm_ladder.mm, .linear, .grouped_mm, .grouped_swiglu and .moe_permute as C++ kernels (csrc/torch_ops.cpp), built when
torch imports them.

A ``torch.library.custom_op`` whose kernel is Python costs 45-70 µs of host time per call (the
``custom_op`` rows of plots/data/h200/lib_ops.csv): more than a decode GEMM runs, and the whole gap of a
compiled decode step at batch 1 to torch's own (docs/use_the_kernels.md). The C++ kernels call the
library with no Python between the dispatcher and ``gl_gemm``. They are compiled by
``torch.utils.cpp_extension.load`` against the torch that imports them and linked to the library the
package found (_library.find_library): the first import on a machine compiles for about a minute, later
ones load torch's cached build. Where that cannot happen (no library yet, no compiler or ninja, or
``GEMM_LADDER_CPP_OPS=0``), _torch_ops.py registers the Python operators instead, with the same schemas,
checks and messages.

The built library is also a Python module (gemm_ladder_torch_ops) whose linear, mm, grouped_mm, grouped_swiglu and
moe_permute are the eager calls' fast path: gemm_ladder.linear, .mm, .grouped_mm, .grouped_swiglu and .moe_permute call them before the operator,
with no dispatcher between Python and the library (csrc/torch_ops.cpp says which calls they take and why).
"""

from __future__ import annotations

import os
import pathlib
import warnings


def load():
    """The module gemm_ladder_torch_ops when the C++ operators are registered (torch.ops.gemm_ladder.mm, .linear,
    .grouped_mm, .grouped_swiglu and .moe_permute; its functions of the same names are the eager fast path), else None."""
    if os.environ.get("GEMM_LADDER_CPP_OPS", "1") == "0":
        return None
    from ._library import LibraryNotFoundError, find_library
    try:
        library = find_library().resolve()
    except LibraryNotFoundError:
        return None  # importing the package needs no library: the Python operators stand in
    here = pathlib.Path(__file__).resolve().parent
    headers = [p for p in (here / "include", here.parent.parent / "lib" / "include") if (p / "gemm_ladder.h").is_file()]
    try:
        if not headers:
            raise FileNotFoundError("gemm_ladder.h is neither in the package nor in the repository's lib/include")
        from torch.utils import cpp_extension
        # A C++ source only, no device code: the architecture list is never used, but cpp_extension asks the
        # GPU for one when it is unset (and fails on a machine without a GPU).
        unset = "TORCH_CUDA_ARCH_LIST" not in os.environ
        if unset:
            os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"
        try:
            return cpp_extension.load(name="gemm_ladder_torch_ops", sources=[str(here / "csrc" / "torch_ops.cpp")],
                                      extra_include_paths=[str(headers[0])],
                                      extra_ldflags=[str(library), f"-Wl,-rpath,{library.parent}"],
                                      with_cuda=True, is_python_module=True, verbose=False)
        finally:
            if unset:
                del os.environ["TORCH_CUDA_ARCH_LIST"]
    except Exception as e:  # noqa: BLE001 (any failure to build leaves the Python operators, which work)
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        warnings.warn(f"gemm_ladder: the C++ operators could not be built ({first}); the Python ones run instead, "
                      "at 45-70 µs more host time per call (GEMM_LADDER_CPP_OPS=0 skips the attempt)", stacklevel=2)
        return None
