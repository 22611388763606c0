"""Reading any array that speaks DLPack (``__dlpack__``, ``__dlpack_device__``) with ctypes alone.

The capsule an array's ``__dlpack__`` returns holds a ``DLManagedTensorVersioned`` (DLPack 1.x, capsule
name "dltensor_versioned", when the producer accepts ``max_version``) or a ``DLManagedTensor``
(DLPack 0.x, "dltensor"). This module reads its ``DLTensor`` (pointer, shape, strides, dtype, device)
and *borrows* it: the capsule is not renamed to "used_...", so when the returned view is dropped the
capsule's own destructor gives the tensor back to its producer (DLPack's rule for an unconsumed
capsule). The view must therefore outlive every use of the pointer: the caller keeps it until the
kernel is queued. Structures from dlpack.h (v1.1).
"""

from __future__ import annotations

import ctypes
from typing import NamedTuple

# DLDeviceType
KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_CUDA_MANAGED = 13
DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal", 10: "rocm",
                13: "cuda_managed", 14: "oneapi"}

# (DLDataTypeCode, bits) -> the name this package uses (torch's spelling)
DTYPE_NAMES = {
    (0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
    (1, 8): "uint8", (2, 16): "float16", (2, 32): "float32", (2, 64): "float64",
    (4, 16): "bfloat16", (6, 8): "bool",
    (8, 8): "float8_e4m3", (10, 8): "float8_e4m3fn", (11, 8): "float8_e4m3fnuz", (12, 8): "float8_e5m2",
    (13, 8): "float8_e5m2fnuz", (14, 8): "float8_e8m0fnu",
}

READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))),
]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_get_pointer.restype = ctypes.c_void_p
_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.argtypes = [ctypes.py_object]
_get_name.restype = ctypes.c_char_p


class DLView(NamedTuple):
    """What a DLPack capsule says about an array; `capsule` keeps the memory alive while this lives."""

    data: int  # the first element's address (data + byte_offset)
    shape: tuple
    strides: tuple  # in elements (DLPack's NULL strides: the compact row-major ones)
    dtype: str  # torch's spelling: "bfloat16", "float32", "float8_e4m3fn", ... ("code:bits" if unknown)
    itemsize: int  # bytes per element
    device_type: int  # DLDeviceType
    device_id: int
    read_only: bool
    capsule: object

    @property
    def device(self) -> str:
        """"cuda:0", "cpu:0": the device as a string."""
        return f"{DEVICE_NAMES.get(self.device_type, f'device_type {self.device_type}')}:{self.device_id}"


def compact_strides(shape) -> tuple:
    """The strides (in elements) of a compact row-major array of `shape`."""
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(int(extent), 1)
    return tuple(reversed(strides))


def view_capsule(capsule) -> DLView:
    """Reads a DLPack capsule ("dltensor_versioned" or "dltensor") without consuming it."""
    name = _get_name(capsule)
    if name == b"dltensor_versioned":
        managed = DLManagedTensorVersioned.from_address(_get_pointer(capsule, name))
        if managed.version.major != 1:
            raise TypeError(f"DLPack {managed.version.major}.{managed.version.minor}: this package reads DLPack 1.x")
        tensor, read_only = managed.dl_tensor, bool(managed.flags & READ_ONLY)
    elif name == b"dltensor":
        tensor, read_only = DLManagedTensor.from_address(_get_pointer(capsule, name)).dl_tensor, False
    else:
        raise TypeError(f"not a DLPack capsule (its name is {name!r}; an unused one is 'dltensor' or 'dltensor_versioned')")
    ndim = int(tensor.ndim)
    shape = tuple(int(tensor.shape[i]) for i in range(ndim))
    strides = tuple(int(tensor.strides[i]) for i in range(ndim)) if tensor.strides else compact_strides(shape)
    code, bits, lanes = int(tensor.dtype.code), int(tensor.dtype.bits), int(tensor.dtype.lanes)
    dtype = DTYPE_NAMES.get((code, bits), f"{code}:{bits}") if lanes == 1 else f"{code}:{bits}x{lanes}"
    return DLView(
        data=(tensor.data or 0) + int(tensor.byte_offset),
        shape=shape,
        strides=strides,
        dtype=dtype,
        itemsize=(bits * lanes + 7) // 8,
        device_type=int(tensor.device.device_type),
        device_id=int(tensor.device.device_id),
        read_only=read_only,
        capsule=capsule,
    )


def dlpack_stream_argument(stream: int) -> int:
    """The `stream` argument of ``__dlpack__`` for a CUDA consumer queuing work on `stream` (a handle):
    1 stands for the legacy default stream (handle 0), which DLPack does not let a consumer pass as 0."""
    return 1 if stream == 0 else stream


def view(array, stream: int | None = None) -> DLView:
    """The DLPack view of `array` (anything with ``__dlpack__``). For an array on a CUDA device, `stream`
    (a cudaStream_t as an int, 0 for the legacy default stream) is the stream the consumer will use:
    the producer orders its pending work before it, as the protocol asks."""
    if not hasattr(array, "__dlpack__"):
        raise TypeError(f"{type(array).__name__} is not an array this package reads: it has no __dlpack__ "
                        "(pass a torch tensor or any array that speaks DLPack)")
    device_type = KDL_CPU
    if hasattr(array, "__dlpack_device__"):
        device_type = int(array.__dlpack_device__()[0])
    kwargs = {}
    if device_type in (KDL_CUDA, KDL_CUDA_MANAGED) and stream is not None:
        kwargs["stream"] = dlpack_stream_argument(stream)
    try:
        capsule = array.__dlpack__(max_version=(1, 1), **kwargs)
    except TypeError:  # a producer of DLPack 0.x: no max_version
        capsule = array.__dlpack__(**kwargs)
    return view_capsule(capsule)
