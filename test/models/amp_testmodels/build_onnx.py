#!/usr/bin/env python3
"""Small hand-made ONNX models for importer tests, built with ``onnx.helper``.

Every builder takes the default-domain opset (11 or later) and returns an
``onnx.ModelProto`` that passes ``onnx.checker.check_model(full_check=True)``.
Where an operator's signature changed between opsets the builder emits the
form that opset requires (e.g. ``axes``/``split`` as attributes before 13 or
18 and as inputs from then on, ``Split(num_outputs=...)`` from 18). The IR
version is the lowest one that allows the opset, as exporters write it.
Weights are random but seeded, so every run writes identical files.

Run as a script to write every model at a set of opsets::

    python3 test/models/amp_testmodels/build_onnx.py /tmp/amp-models/handmade

which writes ``OUT/opset<N>/<builder>.onnx`` for opsets 13, 17, 18 and 21,
plus ``OUT/opset<N>/external_data/`` (one data file) and
``OUT/opset<N>/external_data_per_tensor/`` (one file per tensor).
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MIN_OPSET = 11
DEFAULT_OPSETS = (13, 17, 18, 21)

FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
BOOL = TensorProto.BOOL


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def _rand(name, shape, seed, dtype=np.float32):
    """A seeded random-normal initializer."""
    values = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return numpy_helper.from_array(values, name)


def _const(name, values, dtype=None):
    """An initializer holding ``values`` (a list or array)."""
    return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)


def _const_node(output, values, dtype=None):
    """A ``Constant`` node producing ``values``."""
    tensor = numpy_helper.from_array(np.asarray(values, dtype=dtype), output)
    return helper.make_node("Constant", [], [output], value=tensor)


def _vi(name, elem_type, shape):
    """A typed value_info (graph input or output)."""
    return helper.make_tensor_value_info(name, elem_type, shape)


def _finish(graph, opset):
    """Wrap ``graph`` in a model for ``opset`` and run the full checker."""
    if opset < MIN_OPSET:
        raise ValueError(f"opset {opset} is below the supported minimum {MIN_OPSET}")
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(
        graph,
        opset_imports=opsets,
        ir_version=helper.find_min_ir_version_for(opsets),
        producer_name="amp_testmodels.build_onnx",
    )
    onnx.checker.check_model(model, full_check=True)
    return model


def _axes(node_inputs, axes, as_input, initializers, name):
    """Return ``(inputs, attrs)`` passing ``axes`` as an input or an attribute."""
    if as_input:
        initializers.append(_const(name, axes, np.int64))
        return node_inputs + [name], {}
    return node_inputs, {"axes": axes}


# --------------------------------------------------------------------------
# Builders
# --------------------------------------------------------------------------


def mlp(opset):
    """Two-layer MLP: MatMul+Add, Relu, Gemm(transB=1), Softmax. X[4,64] -> Y[4,10]."""
    inits = [
        _rand("w1", (64, 32), 1),
        _rand("b1", (32,), 2),
        _rand("w2", (10, 32), 3),
        _rand("b2", (10,), 4),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["mm1"]),
        helper.make_node("Add", ["mm1", "b1"], ["fc1"]),
        helper.make_node("Relu", ["fc1"], ["act1"]),
        helper.make_node("Gemm", ["act1", "w2", "b2"], ["fc2"], transB=1),
        helper.make_node("Softmax", ["fc2"], ["y"], axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "mlp", [_vi("x", FLOAT, [4, 64])], [_vi("y", FLOAT, [4, 10])], inits
    )
    return _finish(graph, opset)


def conv_block(opset):
    """Conv-BatchNorm-Relu-MaxPool, a depthwise Conv, then a pooled Gemm head.

    X[1,3,32,32] -> Y[1,10].
    """
    inits = [
        _rand("conv1_w", (8, 3, 3, 3), 10),
        _rand("conv1_b", (8,), 11),
        _rand("bn_scale", (8,), 12),
        _rand("bn_bias", (8,), 13),
        _rand("bn_mean", (8,), 14),
        _const("bn_var", np.linspace(0.5, 1.5, 8), np.float32),
        _rand("dw_w", (8, 1, 3, 3), 15),
        _rand("fc_w", (10, 8), 16),
        _rand("fc_b", (10,), 17),
    ]
    nodes = [
        helper.make_node(
            "Conv", ["x", "conv1_w", "conv1_b"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]
        ),
        helper.make_node(
            "BatchNormalization",
            ["c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
            ["bn"],
            epsilon=1e-5,
        ),
        helper.make_node("Relu", ["bn"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node(
            "Conv",
            ["p1", "dw_w"],
            ["dw"],
            group=8,
            kernel_shape=[3, 3],
            strides=[2, 2],
            pads=[1, 1, 1, 1],
        ),
        helper.make_node("GlobalAveragePool", ["dw"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"], axis=1),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "conv_block",
        [_vi("x", FLOAT, [1, 3, 32, 32])],
        [_vi("y", FLOAT, [1, 10])],
        inits,
    )
    return _finish(graph, opset)


def wide_conv_net(opset, batch=4):
    """Conv-BatchNorm-Relu-MaxPool-Softmax on 48x48 maps, big enough that the
    CPU backend runs its loops in parallel (every op has > 16384 points),
    then GlobalAveragePool and a Gemm head. X[batch,16,48,48] -> Y[batch,10].
    Not in BUILDERS: the thread-count determinism tests use it.
    """
    inits = [
        _rand("conv_w", (16, 16, 3, 3), 30),
        _rand("conv_b", (16,), 31),
        _rand("bn_scale", (16,), 32),
        _rand("bn_bias", (16,), 33),
        _rand("bn_mean", (16,), 34),
        _const("bn_var", np.linspace(0.5, 1.5, 16), np.float32),
        _rand("fc_w", (10, 16), 35),
        _rand("fc_b", (10,), 36),
    ]
    nodes = [
        helper.make_node(
            "Conv", ["x", "conv_w", "conv_b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]
        ),
        helper.make_node(
            "BatchNormalization",
            ["c", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
            ["bn"],
            epsilon=1e-5,
        ),
        helper.make_node("Relu", ["bn"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Softmax", ["p"], ["s"], axis=-1),
        helper.make_node("GlobalAveragePool", ["s"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"], axis=1),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "wide_conv_net",
        [_vi("x", FLOAT, [batch, 16, 48, 48])],
        [_vi("y", FLOAT, [batch, 10])],
        inits,
    )
    return _finish(graph, opset)


def if_model(opset):
    """``If`` whose branches read the outer-scope values ``scaled`` and ``bias``.

    Inputs: cond bool[], x float[4]. Output: y float[4] =
    cond ? scaled + bias : -scaled, where scaled = 2 * x.
    """
    then_branch = helper.make_graph(
        [helper.make_node("Add", ["scaled", "bias"], ["then_out"])],
        "then_branch",
        [],
        [_vi("then_out", FLOAT, [4])],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Neg", ["scaled"], ["else_out"])],
        "else_branch",
        [],
        [_vi("else_out", FLOAT, [4])],
    )
    nodes = [
        helper.make_node("Mul", ["x", "two"], ["scaled"]),
        helper.make_node(
            "If", ["cond"], ["y"], then_branch=then_branch, else_branch=else_branch
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "if_model",
        [_vi("cond", BOOL, []), _vi("x", FLOAT, [4])],
        [_vi("y", FLOAT, [4])],
        [_const("two", 2.0, np.float32), _rand("bias", (4,), 20)],
    )
    return _finish(graph, opset)


def loop_model(opset):
    """``Loop`` with two loop-carried values, a scan output and an outer-scope read.

    Input x float[4]; the trip count is the initializer ``trip_count`` (5) and
    the body keeps going while ``step < limit`` (outer-scope initializer, 100).
    Body: acc += x * step (``x`` read from the outer scope); step *= 2;
    the scan output collects acc + iteration number.
    Outputs: acc float[4], step float[], history float[iterations, 4].
    """
    body = helper.make_graph(
        [
            helper.make_node("Mul", ["x", "step_in"], ["scaled"]),
            helper.make_node("Add", ["acc_in", "scaled"], ["acc_out"]),
            helper.make_node("Add", ["step_in", "step_in"], ["step_out"]),
            helper.make_node("Less", ["step_out", "limit"], ["cond_out"]),
            helper.make_node("Cast", ["iter"], ["iter_f"], to=FLOAT),
            helper.make_node("Add", ["acc_out", "iter_f"], ["scan_out"]),
        ],
        "loop_body",
        [
            _vi("iter", INT64, []),
            _vi("cond_in", BOOL, []),
            _vi("acc_in", FLOAT, [4]),
            _vi("step_in", FLOAT, []),
        ],
        [
            _vi("cond_out", BOOL, []),
            _vi("acc_out", FLOAT, [4]),
            _vi("step_out", FLOAT, []),
            _vi("scan_out", FLOAT, [4]),
        ],
    )
    nodes = [
        helper.make_node(
            "Loop",
            ["trip_count", "keep_going", "acc_init", "step_init"],
            ["acc", "step", "history"],
            body=body,
        )
    ]
    inits = [
        _const("trip_count", 5, np.int64),
        _const("keep_going", True, np.bool_),
        _const("acc_init", np.zeros(4), np.float32),
        _const("step_init", 1.0, np.float32),
        _const("limit", 100.0, np.float32),
    ]
    graph = helper.make_graph(
        nodes,
        "loop_model",
        [_vi("x", FLOAT, [4])],
        [
            _vi("acc", FLOAT, [4]),
            _vi("step", FLOAT, []),
            _vi("history", FLOAT, ["iterations", 4]),
        ],
        inits,
    )
    return _finish(graph, opset)


def scan_model(opset):
    """``Scan`` computing a running sum over axis 0, plus a reversed scan input.

    Inputs: init float[3], xs float[5,3]. Body: sum += x_t * w (``w`` from the
    outer scope); emits sum and (sum - rev_t) where rev_t walks xs backwards.
    Outputs: total float[3], cumsum float[5,3], diff float[5,3].
    """
    body = helper.make_graph(
        [
            helper.make_node("Mul", ["x_t", "w"], ["weighted"]),
            helper.make_node("Add", ["sum_in", "weighted"], ["sum_out"]),
            helper.make_node("Identity", ["sum_out"], ["cumsum_t"]),
            helper.make_node("Sub", ["sum_out", "rev_t"], ["diff_t"]),
        ],
        "scan_body",
        [_vi("sum_in", FLOAT, [3]), _vi("x_t", FLOAT, [3]), _vi("rev_t", FLOAT, [3])],
        [_vi("sum_out", FLOAT, [3]), _vi("cumsum_t", FLOAT, [3]), _vi("diff_t", FLOAT, [3])],
    )
    nodes = [
        helper.make_node(
            "Scan",
            ["init", "xs", "xs"],
            ["total", "cumsum", "diff"],
            body=body,
            num_scan_inputs=2,
            scan_input_directions=[0, 1],
        )
    ]
    graph = helper.make_graph(
        nodes,
        "scan_model",
        [_vi("init", FLOAT, [3]), _vi("xs", FLOAT, [5, 3])],
        [
            _vi("total", FLOAT, [3]),
            _vi("cumsum", FLOAT, [5, 3]),
            _vi("diff", FLOAT, [5, 3]),
        ],
        [_rand("w", (3,), 30)],
    )
    return _finish(graph, opset)


def shape_chain(opset):
    """Shape arithmetic on a dynamic batch dimension.

    Input x float[N,3,4]. Outputs:
      flat  float[N,12]  Shape -> Gather -> Unsqueeze -> Concat -> Reshape
      ones  float[N,3,4] ConstantOfShape(Shape(x)) + x, through Identity
      index float[N]     Range(0, N, 1) on int64, Cast to float
    """
    inits = []
    unsqueeze_inputs, unsqueeze_attrs = _axes(["n"], [0], opset >= 13, inits, "unsqueeze_axes")
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        _const_node("zero_idx", 0, np.int64),
        helper.make_node("Gather", ["shape", "zero_idx"], ["n"], axis=0),
        helper.make_node("Unsqueeze", unsqueeze_inputs, ["n_1d"], **unsqueeze_attrs),
        _const_node("minus_one", [-1], np.int64),
        helper.make_node("Concat", ["n_1d", "minus_one"], ["new_shape"], axis=0),
        helper.make_node("Reshape", ["x", "new_shape"], ["flat"]),
        helper.make_node(
            "ConstantOfShape",
            ["shape"],
            ["filled"],
            value=numpy_helper.from_array(np.array([1.0], np.float32)),
        ),
        helper.make_node("Add", ["x", "filled"], ["plus_one"]),
        helper.make_node("Identity", ["plus_one"], ["ones"]),
        _const_node("range_start", 0, np.int64),
        _const_node("range_delta", 1, np.int64),
        helper.make_node("Range", ["range_start", "n", "range_delta"], ["range"]),
        helper.make_node("Cast", ["range"], ["index"], to=FLOAT),
    ]
    graph = helper.make_graph(
        nodes,
        "shape_chain",
        [_vi("x", FLOAT, ["N", 3, 4])],
        [
            _vi("flat", FLOAT, ["N", 12]),
            _vi("ones", FLOAT, ["N", 3, 4]),
            _vi("index", FLOAT, ["N"]),
        ],
        inits,
    )
    return _finish(graph, opset)


def reduce_axes(opset):
    """Reductions whose ``axes`` moved from attribute to input.

    ReduceSum takes ``axes`` as an input from opset 13, ReduceMean and
    ReduceMax from opset 18. Input x float[2,3,4]. Outputs:
      mean  float[2,1,4] ReduceMean(axes=[1], keepdims=1)
      sum   float[3]     ReduceSum(axes=[0,2], keepdims=0)
      max   float[1,1,4] ReduceMax(axes=[-3,-2], keepdims=1)
      total float[]      ReduceSum with no axes (all), keepdims=0
    """
    inits = []
    mean_in, mean_attr = _axes(["x"], [1], opset >= 18, inits, "mean_axes")
    sum_in, sum_attr = _axes(["x"], [0, 2], opset >= 13, inits, "sum_axes")
    max_in, max_attr = _axes(["x"], [-3, -2], opset >= 18, inits, "max_axes")
    nodes = [
        helper.make_node("ReduceMean", mean_in, ["mean"], keepdims=1, **mean_attr),
        helper.make_node("ReduceSum", sum_in, ["sum"], keepdims=0, **sum_attr),
        helper.make_node("ReduceMax", max_in, ["max"], keepdims=1, **max_attr),
        helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "reduce_axes",
        [_vi("x", FLOAT, [2, 3, 4])],
        [
            _vi("mean", FLOAT, [2, 1, 4]),
            _vi("sum", FLOAT, [3]),
            _vi("max", FLOAT, [1, 1, 4]),
            _vi("total", FLOAT, []),
        ],
        inits,
    )
    return _finish(graph, opset)


def split_model(opset):
    """Split in the forms each opset allows. Input x float[2,6].

    Outputs a float[2,2], b float[2,4]: explicit sizes [2,4] on axis 1
    (``split`` attribute before 13, input from 13). Outputs p, q, r float[2,2]:
    an even three-way split, from 18 with ``num_outputs=3``, before that
    implied by the output count.
    """
    inits = []
    if opset >= 13:
        inits.append(_const("split_sizes", [2, 4], np.int64))
        sized = helper.make_node("Split", ["x", "split_sizes"], ["a", "b"], axis=1)
    else:
        sized = helper.make_node("Split", ["x"], ["a", "b"], axis=1, split=[2, 4])
    even_attrs = {"num_outputs": 3} if opset >= 18 else {}
    even = helper.make_node("Split", ["x"], ["p", "q", "r"], axis=1, **even_attrs)
    graph = helper.make_graph(
        [sized, even],
        "split_model",
        [_vi("x", FLOAT, [2, 6])],
        [_vi("a", FLOAT, [2, 2]), _vi("b", FLOAT, [2, 4])]
        + [_vi(name, FLOAT, [2, 2]) for name in ("p", "q", "r")],
        inits,
    )
    return _finish(graph, opset)


def external_data_model(dirpath, opset=17, all_tensors_to_one_file=True):
    """Write ``dirpath/external_data.onnx`` with every initializer stored externally.

    The graph (x float[2,8] -> y float[2,4], y16 float16[2,16]) has float32,
    int64 and float16 initializers. (The int64 one feeds Gather indices, not a
    Reshape shape: shape inference, in the checker and in onnxruntime, cannot
    read an external shape tensor.) With ``all_tensors_to_one_file`` they share
    ``external_data.onnx.data`` (at distinct offsets); otherwise each tensor
    gets its own file named after it. Returns the model loaded back from disk
    with its data, after checking the saved file with the full checker.
    """
    inits = [
        _rand("ext_w", (8, 16), 40),
        _rand("ext_b", (16,), 41),
        _const("ext_index", [0, 5, 10, 15], np.int64),
        _rand("ext_scale16", (16,), 42, np.float16),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "ext_w"], ["mm"]),
        helper.make_node("Add", ["mm", "ext_b"], ["fc"]),
        helper.make_node("Gather", ["fc", "ext_index"], ["y"], axis=1),
        helper.make_node("Cast", ["fc"], ["fc16"], to=TensorProto.FLOAT16),
        helper.make_node("Mul", ["fc16", "ext_scale16"], ["y16"]),
    ]
    graph = helper.make_graph(
        nodes,
        "external_data_model",
        [_vi("x", FLOAT, [2, 8])],
        [_vi("y", FLOAT, [2, 4]), _vi("y16", TensorProto.FLOAT16, [2, 16])],
        inits,
    )
    model = _finish(graph, opset)

    os.makedirs(dirpath, exist_ok=True)
    path = os.path.join(dirpath, "external_data.onnx")
    location = "external_data.onnx.data"
    stale = [location] if all_tensors_to_one_file else [t.name for t in inits]
    for name in stale:  # onnx appends to existing data files.
        if os.path.exists(os.path.join(dirpath, name)):
            os.remove(os.path.join(dirpath, name))
    onnx.save_model(
        model,
        path,
        save_as_external_data=True,
        all_tensors_to_one_file=all_tensors_to_one_file,
        location=location,
        size_threshold=0,
    )
    onnx.checker.check_model(path, full_check=True)
    return onnx.load(path)


def train_bn_dropout(opset=17, batch=4):
    """A model for training tests with every kind of train-step state: Gemm
    -> BatchNormalization (training: running statistics are buffers) ->
    Relu -> Dropout (training: the step's counters) -> Gemm.
    X[batch,8] -> Y[batch,4]. Not in BUILDERS (training only)."""
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array((rng.standard_normal((8, 16)) * 0.3).astype(np.float32), "w1"),
        _const("b1", np.zeros(16), np.float32),
        _const("bn_scale", np.ones(16), np.float32),
        _const("bn_bias", np.zeros(16), np.float32),
        _const("bn_mean", np.zeros(16), np.float32),
        _const("bn_var", np.ones(16), np.float32),
        numpy_helper.from_array((rng.standard_normal((16, 4)) * 0.3).astype(np.float32), "w2"),
        _const("b2", np.zeros(4), np.float32),
        _const("ratio", 0.25, np.float32),
        _const("train", True, np.bool_),
    ]
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"]),
        helper.make_node("BatchNormalization", ["h", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
                         ["hb", "running_mean", "running_var"], training_mode=1),
        helper.make_node("Relu", ["hb"], ["hr"]),
        helper.make_node("Dropout", ["hr", "ratio", "train"], ["hd"], seed=1),
        helper.make_node("Gemm", ["hd", "w2", "b2"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "train_bn_dropout", [_vi("x", FLOAT, [batch, 8])],
                              [_vi("y", FLOAT, [batch, 4])], inits)
    return _finish(graph, opset)


BUILDERS = {
    "mlp": mlp,
    "conv_block": conv_block,
    "if_model": if_model,
    "loop_model": loop_model,
    "scan_model": scan_model,
    "shape_chain": shape_chain,
    "reduce_axes": reduce_axes,
    "split_model": split_model,
}


def write_all(out_dir, opsets=DEFAULT_OPSETS):
    """Write every model at every opset under ``out_dir/opset<N>/``; return the paths."""
    written = []
    for opset in opsets:
        opset_dir = os.path.join(out_dir, f"opset{opset}")
        os.makedirs(opset_dir, exist_ok=True)
        for name, build in BUILDERS.items():
            path = os.path.join(opset_dir, f"{name}.onnx")
            onnx.save_model(build(opset), path)
            written.append(path)
        for subdir, one_file in (("external_data", True), ("external_data_per_tensor", False)):
            ext_dir = os.path.join(opset_dir, subdir)
            external_data_model(ext_dir, opset, all_tensors_to_one_file=one_file)
            written.append(os.path.join(ext_dir, "external_data.onnx"))
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="output folder")
    parser.add_argument(
        "--opsets",
        default=",".join(map(str, DEFAULT_OPSETS)),
        help="comma-separated opsets (default %(default)s)",
    )
    args = parser.parse_args(argv)
    opsets = [int(o) for o in args.opsets.split(",")]
    for path in write_all(args.out, opsets):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
