"""Mutated models never crash amp-opt.

Seeded random mutations of the hand-built models (byte flips, attributes
of the wrong kind or value, rewired inputs, swapped op types) must end in
either a successful import or exit status 1 with an error message: no
signal, no abort, no silent failure. Bounded: a fixed number of cases.
"""

import random

import onnx
import pytest
from onnx import helper

from amp_testmodels import build_onnx

BUILDERS = ("mlp", "conv_block", "if_model", "loop_model", "scan_model",
            "shape_chain", "reduce_axes", "split_model")
OP_TYPES = ("Reshape", "Conv", "Split", "Gather", "Slice", "Concat", "Transpose",
            "If", "Loop", "Einsum", "TopK", "Pad", "Resize", "Cast", "Mul",
            "LayerNormalization", "Attention", "LSTM", "Range", "Expand")
ATTR_NAMES = ("axis", "perm", "kernel_shape", "to", "pads", "axes",
              "num_outputs", "value", "equation", "group")


def _mutate_structure(model, rng):
    """Applies one structural mutation to a random node."""
    nodes = list(model.graph.node)
    if not nodes:
        return
    node = rng.choice(nodes)
    choice = rng.random()
    if choice < 0.3 and node.attribute:
        attr = rng.choice(node.attribute)
        attr.type = rng.choice([1, 2, 3, 4, 6, 7, 8])
        attr.i = rng.randint(-5, 5)
        attr.f = rng.random()
        del attr.ints[:]
        attr.ints.extend(rng.randint(-3, 5) for _ in range(rng.randint(0, 5)))
    elif choice < 0.55 and node.input:
        names = ["", "undefined"] + [i.name for i in model.graph.input]
        names += [o for n in nodes for o in n.output]
        node.input[rng.randrange(len(node.input))] = rng.choice(names)
    elif choice < 0.75:
        value = rng.choice([rng.randint(-4, 8),
                            [rng.randint(-2, 4) for _ in range(rng.randint(1, 4))]])
        node.attribute.append(helper.make_attribute(rng.choice(ATTR_NAMES), value))
    elif choice < 0.9:
        node.op_type = rng.choice(OP_TYPES)
    elif node.input:
        del node.input[rng.randrange(len(node.input)):]


def check_mutations(amp_opt, tmp_path, rng, make_model, cases, label):
    """Imports ``cases`` mutations of ``make_model(rng)`` (byte flips or one
    structural change): each ends in an import or in exit status 1 with an
    error and no output file."""
    path = tmp_path / "m.onnx"
    out = tmp_path / "out.mlir"
    for case in range(cases):
        model = make_model(rng)
        if rng.random() < 0.4:
            data = bytearray(model.SerializeToString())
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            path.write_bytes(bytes(data))
        else:
            _mutate_structure(model, rng)
            path.write_bytes(model.SerializeToString())
        proc = amp_opt.run(path, "-o", out, timeout=60)
        context = f"{label} case {case}: exit {proc.returncode}\n{proc.stderr[-2000:]}"
        assert proc.returncode in (0, 1), context
        if proc.returncode == 1:
            assert "error:" in proc.stderr, context
            assert not out.exists(), context
        else:
            out.unlink()


@pytest.mark.parametrize("seed", range(4))
def test_mutated_models_fail_cleanly(amp_opt, tmp_path, seed):
    check_mutations(
        amp_opt, tmp_path, random.Random(seed),
        lambda rng: getattr(build_onnx, rng.choice(BUILDERS))(rng.choice((13, 17, 18))),
        40, f"seed {seed}")
