#!/usr/bin/env python3
"""Convert an ONNX model to another default-domain opset with onnx's version converter.

Runs under the interpreter that has PyPI ``onnx`` (>= 1.18, whose converter
keeps external-data references). Used to derive opset >= 18 variants of the
models written by ``export_torch.py`` (torch 1.13 stops at opset 17): ReduceMean
with ``axes`` as an input, Split with ``num_outputs``, and so on.

The model is converted without loading its external data, so inputs of any
size work. The result is saved inline, or, when the input (with its external
data) is larger than ``--external-data-threshold``, with its tensors in one
external file ``OUT.data`` beside ``OUT``. Finally the saved file is checked
with ``onnx.checker.check_model(OUT, full_check=True)``.

Example::

    python3 test/models/amp_testmodels/upgrade_opset.py \
        /tmp/amp-models/opset17/resnet18.onnx /tmp/amp-models/opset18/resnet18.onnx --opset 18
"""

import argparse
import os
import sys

import onnx
from onnx import external_data_helper, version_converter

DEFAULT_EXTERNAL_DATA_THRESHOLD = int(1.5 * 2**30)


def _tensors(graph):
    """Yield every TensorProto of ``graph``: initializers and attribute tensors,
    including those of nested subgraphs."""
    yield from graph.initializer
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            subgraphs = list(attr.graphs) + ([attr.g] if attr.HasField("g") else [])
            for subgraph in subgraphs:
                yield from _tensors(subgraph)


def _external_data_files(model, base_dir):
    """Return the set of external data files referenced by ``model``."""
    return {
        os.path.join(base_dir, external_data_helper.ExternalDataInfo(tensor).location)
        for tensor in _tensors(model.graph)
        if external_data_helper.uses_external_data(tensor)
    }


def upgrade(in_path, out_path, opset, external_data_threshold=DEFAULT_EXTERNAL_DATA_THRESHOLD):
    """Convert ``in_path`` to ``opset``, save it to ``out_path`` and check it.

    Returns True if the result was saved with external data.
    """
    in_dir = os.path.dirname(os.path.abspath(in_path))
    model = onnx.load(in_path, load_external_data=False)
    data_files = _external_data_files(model, in_dir)
    total_bytes = os.path.getsize(in_path) + sum(os.path.getsize(f) for f in data_files)

    converted = version_converter.convert_version(model, opset)
    if data_files:
        external_data_helper.load_external_data_for_model(converted, in_dir)

    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    use_external = total_bytes > external_data_threshold
    if use_external:
        location = os.path.basename(out_path) + ".data"
        data_path = os.path.join(os.path.dirname(os.path.abspath(out_path)), location)
        if os.path.exists(data_path):
            os.remove(data_path)  # onnx appends to an existing data file.
        onnx.save_model(
            converted,
            out_path,
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location=location,
            size_threshold=1024,
        )
    else:
        onnx.save_model(converted, out_path)
    onnx.checker.check_model(out_path, full_check=True)
    return use_external


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input", help="input .onnx file")
    parser.add_argument("output", help="output .onnx file")
    parser.add_argument("--opset", type=int, required=True, help="target default-domain opset")
    parser.add_argument(
        "--external-data-threshold",
        type=int,
        default=DEFAULT_EXTERNAL_DATA_THRESHOLD,
        metavar="BYTES",
        help="save with external data above this input size (default 1.5 GiB)",
    )
    args = parser.parse_args(argv)
    try:
        external = upgrade(args.input, args.output, args.opset, args.external_data_threshold)
    except Exception as err:  # Converter/checker errors: one clear line, exit 1.
        print(f"{args.input} -> opset {args.opset}: FAILED: {type(err).__name__}: {err}",
              file=sys.stderr)
        return 1
    suffix = " (external data)" if external else ""
    print(f"{args.input} -> {args.output} opset {args.opset}: ok{suffix}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
