#!/usr/bin/env python3
"""Prints an ONNX model for lit tests: `onnx-print.py MODEL [--check]`.

Writes the header (ir_version, opset_import, producer, metadata), then the
graph in ONNX's textual syntax with initializers listed by name, type and
shape only (not their values). With --check the model must pass
onnx.checker.check_model(full_check=True) first.
"""

import sys

import onnx
import onnx.checker
import onnx.printer


def main() -> int:
    path = sys.argv[1]
    model = onnx.load(path)
    if "--check" in sys.argv[2:]:
        onnx.checker.check_model(model, full_check=True)
        print("checker: ok")
    print(f"ir_version: {model.ir_version}")
    for opset in model.opset_import:
        print(f"opset_import: '{opset.domain}' {opset.version}")
    print(f"producer: {model.producer_name} {model.producer_version}")
    for prop in model.metadata_props:
        print(f"metadata: {prop.key} = {prop.value}")
    for tensor in model.graph.initializer:
        dtype = onnx.helper.tensor_dtype_to_string(tensor.data_type)
        location = " external" if tensor.data_location == onnx.TensorProto.EXTERNAL else ""
        print(f"initializer: {tensor.name} {dtype} {list(tensor.dims)}{location}")
    graph = onnx.GraphProto()
    graph.CopyFrom(model.graph)
    del graph.initializer[:]
    print(onnx.printer.to_text(graph))
    return 0


if __name__ == "__main__":
    sys.exit(main())
