"""ctypes bindings of amp's CUDA runtime (runtime/cuda/include/amp_gpu/amp_gpu.h).

    from amp_gpu import Runtime
    rt = Runtime("build-gpu/lib/libamp_gpu.so")
    program = rt.load("model.ampgpu")
    outputs = program.run([x])                  # numpy in, numpy out
    ms = program.benchmark(iterations=100, cuda_graph=True)

Needs only numpy and the shared library; no MLIR, no torch.
"""

import ctypes
import os

import numpy as np

# amp_gpu::DType codes -> numpy dtypes (bf16 travels as uint16 bits).
DTYPES = {1: np.float32, 2: np.float16, 3: np.uint16, 4: np.float64, 5: np.int64,
          6: np.int32, 7: np.int16, 8: np.int8, 9: np.uint64, 10: np.uint32,
          11: np.uint16, 12: np.uint8, 13: np.bool_}
BF16 = 3


class AmpGpuError(RuntimeError):
    """A failed runtime call; the message is the runtime's."""


class Runtime:
    """The loaded library and one context (a stream, cuBLASLt) on `device`."""

    def __init__(self, library, device=0):
        self.lib = ctypes.CDLL(os.path.abspath(library))
        lib = self.lib
        lib.ampGetLastError.restype = ctypes.c_char_p
        lib.ampCreateContext.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
        lib.ampDestroyContext.argtypes = [ctypes.c_void_p]
        lib.ampLoad.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                ctypes.POINTER(ctypes.c_void_p)]
        lib.ampUnload.argtypes = [ctypes.c_void_p]
        lib.ampGetNumInputs.argtypes = [ctypes.c_void_p]
        lib.ampGetNumOutputs.argtypes = [ctypes.c_void_p]
        lib.ampGetTensorInfo.argtypes = [
            ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
            ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int),
            ctypes.POINTER(ctypes.POINTER(ctypes.c_int64)), ctypes.POINTER(ctypes.c_uint64)]
        lib.ampSetInput.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
        lib.ampGetOutput.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
        lib.ampExecute.argtypes = [ctypes.c_void_p]
        lib.ampSynchronize.argtypes = [ctypes.c_void_p]
        lib.ampSetGraphCapture.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.ampBenchmark.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                     ctypes.POINTER(ctypes.c_double)]
        self.context = ctypes.c_void_p()
        self.check(lib.ampCreateContext(device, ctypes.byref(self.context)))

    def check(self, status):
        if status != 0:
            message = self.lib.ampGetLastError().decode()
            raise AmpGpuError(message)

    def load(self, path):
        return Program(self, path)

    def close(self):
        if self.context:
            self.lib.ampDestroyContext(self.context)
            self.context = ctypes.c_void_p()


class Program:
    """A loaded artifact: its signature, runs and timings."""

    def __init__(self, runtime, path):
        self.rt = runtime
        self.handle = ctypes.c_void_p()
        runtime.check(runtime.lib.ampLoad(runtime.context, os.fsencode(path),
                                          ctypes.byref(self.handle)))
        self.inputs = [self._info(0, i) for i in range(runtime.lib.ampGetNumInputs(self.handle))]
        self.outputs = [self._info(1, i)
                        for i in range(runtime.lib.ampGetNumOutputs(self.handle))]

    def _info(self, is_output, index):
        name, dtype, rank = ctypes.c_char_p(), ctypes.c_int(), ctypes.c_int()
        shape, size = ctypes.POINTER(ctypes.c_int64)(), ctypes.c_uint64()
        self.rt.check(self.rt.lib.ampGetTensorInfo(
            self.handle, is_output, index, ctypes.byref(name), ctypes.byref(dtype),
            ctypes.byref(rank), ctypes.byref(shape), ctypes.byref(size)))
        return {"name": name.value.decode(), "dtype": dtype.value,
                "shape": tuple(shape[i] for i in range(rank.value)), "bytes": size.value}

    def set_inputs(self, arrays):
        if len(arrays) != len(self.inputs):
            raise ValueError(f"{len(self.inputs)} inputs expected, {len(arrays)} given")
        self._keep = []
        for i, (array, info) in enumerate(zip(arrays, self.inputs)):
            array = np.ascontiguousarray(array, dtype=DTYPES[info["dtype"]])
            if array.shape != info["shape"]:
                raise ValueError(f"input '{info['name']}': shape {array.shape}, "
                                 f"expected {info['shape']}")
            self._keep.append(array)
            self.rt.check(self.rt.lib.ampSetInput(self.handle, i, array.ctypes.data))

    def outputs_now(self):
        results = []
        for i, info in enumerate(self.outputs):
            out = np.empty(info["shape"], dtype=DTYPES[info["dtype"]])
            self.rt.check(self.rt.lib.ampGetOutput(self.handle, i, out.ctypes.data))
            if info["dtype"] == BF16:  # bf16 bits -> float32
                out = (out.astype(np.uint32) << 16).view(np.float32)
            results.append(out)
        return results

    def run(self, arrays):
        self.set_inputs(arrays)
        self.rt.check(self.rt.lib.ampExecute(self.handle))
        return self.outputs_now()

    def random_inputs(self, seed=0):
        rng = np.random.default_rng(seed)
        arrays = []
        for info in self.inputs:
            dtype = DTYPES[info["dtype"]]
            if np.issubdtype(dtype, np.floating):
                arrays.append(rng.standard_normal(info["shape"]).astype(dtype))
            else:
                arrays.append(rng.integers(0, 10, info["shape"]).astype(dtype))
        return arrays

    def benchmark(self, warmup=10, iterations=100, cuda_graph=False):
        """Device milliseconds per execution (CUDA events)."""
        self.rt.check(self.rt.lib.ampSetGraphCapture(self.handle, int(cuda_graph)))
        ms = ctypes.c_double()
        self.rt.check(self.rt.lib.ampBenchmark(self.handle, warmup, iterations,
                                               ctypes.byref(ms)))
        return ms.value

    def close(self):
        if self.handle:
            self.rt.lib.ampUnload(self.handle)
            self.handle = ctypes.c_void_p()
