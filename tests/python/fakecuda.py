"""A small array framework over the fake CUDA driver, for the Python tests.

The fake driver (tests/runtime/fake_cuda) keeps "device" memory on the
host and runs host twins of pkc's sample kernels. `FakeArray` is a CUDA
array in that memory that speaks DLPack, the way PyTorch, CuPy or JAX
arrays do: `__dlpack_device__` says (kDLCUDA, device) and `__dlpack__`
hands out a "dltensor" capsule, recording the stream its consumer asked
for. Memory comes from the runtime's C API (libpk_runtime.so through
ctypes, not the package under test), as do copies to and from NumPy.
`FakeFramework` is the framework pkc allocates outputs with.

The environment (set by tests/python/CMakeLists.txt): PK_CUDA_DRIVER (the
fake), PK_RUNTIME_LIBRARY (libpk_runtime.so), PK_FAKE_SAMPLE_TWINS.
"""

import ctypes
import os

import numpy as np

KDLCUDA = 2

DTYPES = {  # NumPy name -> (DLPack code, bits)
    "bool": (6, 8), "int8": (0, 8), "int16": (0, 16), "int32": (0, 32), "int64": (0, 64),
    "uint8": (1, 8), "uint16": (1, 16), "uint32": (1, 32), "uint64": (1, 64),
    "float16": (2, 16), "float32": (2, 32), "float64": (2, 64), "bfloat16": (4, 16),
}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", DELETER)]

_runtime = ctypes.CDLL(os.environ["PK_RUNTIME_LIBRARY"])
_runtime.pk_last_error.restype = ctypes.c_char_p
_runtime.pk_device_alloc.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
_runtime.pk_device_free.argtypes = [ctypes.c_int, ctypes.c_void_p]
_runtime.pk_memcpy_to_device.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                         ctypes.c_size_t]
_runtime.pk_memcpy_to_host.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                       ctypes.c_size_t]
_runtime.pk_stream_create.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]

# The fake driver the runtime opened: its log of launches, counters, failures.
fake = ctypes.CDLL(os.environ["PK_CUDA_DRIVER"])


class FakeLaunch(ctypes.Structure):
    _fields_ = [("kernel", ctypes.c_char * 64), ("device", ctypes.c_int),
                ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("cluster", ctypes.c_uint * 3), ("shared_memory", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("num_params", ctypes.c_int),
                ("params", ctypes.c_uint64 * 8), ("used_launch_ex", ctypes.c_int)]


fake.fake_cuda_num_launches.restype = ctypes.c_size_t
fake.fake_cuda_get_launch.argtypes = [ctypes.c_size_t, ctypes.POINTER(FakeLaunch)]
fake.fake_cuda_fail.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
fake.fake_cuda_counter.argtypes = [ctypes.c_char_p]
fake.fake_cuda_counter.restype = ctypes.c_long


def launches():
    """Every launch the fake ran since the last reset."""
    out = []
    for i in range(fake.fake_cuda_num_launches()):
        record = FakeLaunch()
        fake.fake_cuda_get_launch(i, ctypes.byref(record))
        out.append(record)
    return out


def reset():
    fake.fake_cuda_reset()


def fail_next(entry, result, count=1):
    """Makes the next `count` calls of driver entry point `entry` fail."""
    fake.fake_cuda_fail(entry.encode(), result, count)


def check(status, what):
    if status != 0:
        raise RuntimeError(f"{what}: {_runtime.pk_last_error().decode()}")


def new_stream(device=0):
    stream = ctypes.c_void_p()
    check(_runtime.pk_stream_create(device, ctypes.byref(stream)), "pk_stream_create")
    return stream.value


# DLManagedTensors handed out and not yet deleted: a test checks that every
# capsule the package consumed was released.
live_tensors = {}


@DELETER
def _delete(managed):
    live_tensors.pop(ctypes.addressof(managed.contents), None)


class _PyCapsule:
    PyCapsule_New = ctypes.pythonapi.PyCapsule_New
    PyCapsule_New.restype = ctypes.py_object
    PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class FakeArray:
    """A C-ordered array in fake device memory."""

    def __init__(self, shape, dtype="float32", device=0, strides=None, byte_offset=0):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype
        self.device_id = device
        self.strides = strides
        self.byte_offset = byte_offset
        itemsize = DTYPES[dtype][1] // 8
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * itemsize
        pointer = ctypes.c_void_p()
        check(_runtime.pk_device_alloc(device, max(self.nbytes + byte_offset, 1),
                                       ctypes.byref(pointer)), "pk_device_alloc")
        self.pointer = pointer.value
        self.dlpack_streams = []  # the stream= of each __dlpack__ call

    @classmethod
    def of(cls, host, device=0):
        host = np.ascontiguousarray(host)
        name = "bfloat16" if host.dtype.name == "bfloat16" else host.dtype.name
        a = cls(host.shape, name, device)
        if a.nbytes:
            check(_runtime.pk_memcpy_to_device(device, a.pointer, host.ctypes.data, a.nbytes),
                  "pk_memcpy_to_device")
        return a

    def numpy(self):
        dtype = np.dtype("bfloat16") if self.dtype == "bfloat16" else np.dtype(self.dtype)
        host = np.empty(self.shape, dtype)
        if self.nbytes:
            check(_runtime.pk_memcpy_to_host(self.device_id, host.ctypes.data,
                                             self.pointer + self.byte_offset, self.nbytes),
                  "pk_memcpy_to_host")
        return host

    def __dlpack_device__(self):
        return (KDLCUDA, self.device_id)

    def __dlpack__(self, stream=None):
        self.dlpack_streams.append(stream)
        managed = DLManagedTensor()
        shape = (ctypes.c_int64 * len(self.shape))(*self.shape)
        strides = None if self.strides is None else (ctypes.c_int64 * len(self.strides))(*self.strides)
        t = managed.dl_tensor
        t.data = self.pointer
        t.device = DLDevice(KDLCUDA, self.device_id)
        t.ndim = len(self.shape)
        code, bits = DTYPES[self.dtype]
        t.dtype = DLDataType(code, bits, 1)
        t.shape = shape
        t.strides = strides
        t.byte_offset = self.byte_offset
        managed.deleter = _delete
        live_tensors[ctypes.addressof(managed)] = (managed, shape, strides, self)
        # No capsule destructor: a consumer that takes the tensor calls its
        # deleter; one that does not would leave it in live_tensors.
        return _PyCapsule.PyCapsule_New(ctypes.addressof(managed), b"dltensor", None)

    def free(self):
        if self.pointer is not None:
            check(_runtime.pk_device_free(self.device_id, self.pointer), "pk_device_free")
            self.pointer = None


class FakeFramework:
    """Allocates FakeArrays; launches go to `current_stream`."""

    def __init__(self):
        self.current_stream = 0
        self.allocated = []

    def stream(self, like):
        return self.current_stream

    def empty(self, shape, dtype, like):
        a = FakeArray(shape, dtype, like.device_id)
        self.allocated.append((shape, dtype, like.device_id))
        return a
