"""A model whose single initializer is just over 2 GiB, stored as external data.

Protobuf cannot hold it inline, so this checks that amp-opt reads large
external tensors and writes them as bytecode. The data file is sparse
(created by ``np.memmap``, with a few values written at both ends), so it
costs neither RAM nor disk in this process; amp-opt itself holds the 2 GiB.
"""

import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from amp_test_utils import MLIR_BYTECODE_MAGIC, limit_memory

NUM_ELEMENTS = 536870912 + 1024  # float32: 2 GiB + 4 KiB
BYTES = NUM_ELEMENTS * 4


@pytest.fixture
def large_model(tmp_path):
    """``tmp_path/large.onnx``: y = x + w with w float32[1, NUM_ELEMENTS] in ``large.bin``.

    The data file is removed afterwards (pytest keeps recent tmp folders).
    """
    data_path = tmp_path / "large.bin"
    weights = np.memmap(data_path, dtype=np.float32, mode="w+", shape=(NUM_ELEMENTS,))
    weights[:4] = [1.0, 2.0, 3.0, 4.0]
    weights[-4:] = [-1.0, -2.0, -3.0, -4.0]
    weights.flush()
    del weights

    tensor = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1, NUM_ELEMENTS])
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "large.bin"), ("offset", "0"), ("length", str(BYTES))):
        tensor.external_data.add(key=key, value=value)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        "large",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, NUM_ELEMENTS])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, NUM_ELEMENTS])],
        [tensor],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    model_path = tmp_path / "large.onnx"
    model_path.write_bytes(model.SerializeToString())
    try:
        yield model_path
    finally:
        os.remove(data_path)


@pytest.mark.slow
def test_initializer_over_2gib(amp_opt, large_model):
    """The > 2 GiB initializer imports and is written as bytecode."""
    assert os.path.getsize(large_model.parent / "large.bin") == BYTES > 2**31
    onnx.checker.check_model(str(large_model))
    proc = amp_opt.run(large_model, "--emit-bytecode", "-o", os.devnull, timeout=600)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
def test_initializer_over_2gib_bytecode_header(amp_opt, large_model, tmp_path):
    """The bytecode written for the > 2 GiB model starts with the MLIR magic.

    Only the head of the output is kept: amp-opt writes into a pipe that is
    read 4 bytes at a time and then drained without storing.
    """
    with subprocess.Popen(
        [amp_opt.path, str(large_model), "--emit-bytecode", "-o", "-"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=limit_memory,
    ) as proc:
        head = proc.stdout.read(4)
        size = len(head)
        while chunk := proc.stdout.read(1 << 20):
            size += len(chunk)
        stderr = proc.stderr.read().decode()
    assert proc.returncode == 0, stderr
    assert head == MLIR_BYTECODE_MAGIC
    assert size > BYTES


@pytest.mark.slow
def test_export_over_2gib_uses_external_data(amp_opt, large_model, tmp_path):
    """Written back as ONNX (fp32, no autocast), the > 2 GiB weight goes to
    ``OUT.data`` automatically: the model file stays small, the tensor's
    external-data entry points at the right bytes, and the checker accepts
    the model."""
    out = tmp_path / "out.onnx"
    proc = amp_opt.run(large_model, "--amp-opt-level=0", "-o", out, timeout=600)
    assert proc.returncode == 0, proc.stderr
    data = tmp_path / "out.onnx.data"
    try:
        assert out.stat().st_size < 4096
        model = onnx.load(str(out), load_external_data=False)
        (tensor,) = model.graph.initializer
        assert tensor.data_location == TensorProto.EXTERNAL
        entries = {e.key: e.value for e in tensor.external_data}
        assert entries["location"] == "out.onnx.data"
        offset, length = int(entries["offset"]), int(entries["length"])
        assert length == BYTES and data.stat().st_size == offset + length
        with open(data, "rb") as f:
            f.seek(offset)
            head = np.frombuffer(f.read(16), dtype=np.float32)
            f.seek(offset + length - 16)
            tail = np.frombuffer(f.read(16), dtype=np.float32)
        np.testing.assert_array_equal(head, [1.0, 2.0, 3.0, 4.0])
        np.testing.assert_array_equal(tail, [-1.0, -2.0, -3.0, -4.0])
        onnx.checker.check_model(str(out))
    finally:
        if data.exists():
            os.remove(data)
