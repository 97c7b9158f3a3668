"""Import the hand-made models of ``amp_testmodels.build_onnx`` with amp-opt.

Every builder at every opset must import, and its output must parse back;
then the IR of the interesting models is checked: shape arithmetic folded,
control flow as regions, opset-dependent signatures unified.
"""

import onnx
import pytest
from amp_test_utils import (
    MLIR_BYTECODE_MAGIC,
    defined_values,
    op_names,
    op_regions,
    outer_values_used,
)

from amp_testmodels import build_onnx

OPSETS = (11, 13, 17, 18, 21)
SHAPE_OPS = ("amp.shape", "amp.gather", "amp.concat", "amp.constant_of_shape", "amp.range")


def build(name, opset):
    """The ``name`` model at ``opset``; skips opsets the builder does not take."""
    if opset < build_onnx.MIN_OPSET:
        pytest.skip(f"{name} needs opset >= {build_onnx.MIN_OPSET}")
    return build_onnx.BUILDERS[name](opset)


def static_shape_chain(opset, batch=2):
    """``shape_chain`` with its dynamic batch dimension ``N`` fixed to ``batch``."""
    model = build("shape_chain", opset)
    for value in list(model.graph.input) + list(model.graph.output):
        for dim in value.type.tensor_type.shape.dim:
            if dim.dim_param == "N":
                dim.dim_value = batch
    onnx.checker.check_model(model, full_check=True)
    return model


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", sorted(build_onnx.BUILDERS))
def test_builder_imports_and_roundtrips(amp_opt, tmp_path, name, opset):
    """Each builder imports at each opset into IR that parses back."""
    text = amp_opt.import_model(build(name, opset), tmp_path / f"{name}.mlir")
    assert "func.func @main" in text
    assert f"ai.onnx = {opset} : i64" in text


@pytest.mark.parametrize("opset", OPSETS)
def test_shape_chain_folds_static_shapes(amp_opt, tmp_path, opset):
    """With static shapes the Shape/Gather/Concat/... arithmetic folds away."""
    text = amp_opt.import_model(static_shape_chain(opset), tmp_path / "folded.mlir")
    left = sorted(set(op_names(text)) & set(SHAPE_OPS))
    assert not left, f"shape ops left after import: {left}\n{text}"
    assert "-> (tensor<2x12xf32>" in text, text


@pytest.mark.parametrize("opset", OPSETS)
def test_shape_chain_kept_without_folding(amp_opt, tmp_path, opset):
    """``--amp-import-only --amp-no-import-folding`` keeps every shape op."""
    text = amp_opt.import_model(
        static_shape_chain(opset),
        tmp_path / "unfolded.mlir",
        "--amp-import-only",
        "--amp-no-import-folding",
    )
    missing = [op for op in SHAPE_OPS if op not in op_names(text)]
    assert not missing, f"missing {missing}:\n{text}"


def test_shape_chain_cleanup_without_import_folding(amp_opt, tmp_path):
    """With only ``--amp-no-import-folding`` the canonicalize + cse cleanup still
    runs: it must finish quickly and fold the static Shape/Gather/Concat arithmetic."""
    text = amp_opt.import_model(
        static_shape_chain(17), tmp_path / "cleaned.mlir", "--amp-no-import-folding", timeout=20
    )
    left = sorted(set(op_names(text)) & {"amp.shape", "amp.gather", "amp.concat"})
    assert not left, f"shape ops left after cleanup: {left}\n{text}"


@pytest.mark.parametrize("opset", OPSETS)
def test_if_has_two_regions_using_outer_values(amp_opt, tmp_path, opset):
    """``If`` becomes ``amp.if`` whose branches read values defined outside it."""
    text = amp_opt.import_model(build("if_model", opset), tmp_path / "if.mlir")
    before, regions = op_regions(text, "amp.if")
    assert len(regions) == 2, text
    outer = outer_values_used(regions[0]) | outer_values_used(regions[1])
    assert outer, f"no branch uses an outer value:\n{text}"
    undefined = outer - defined_values(before)
    assert not undefined, f"{sorted(undefined)} are not defined before amp.if:\n{text}"


@pytest.mark.parametrize("opset", OPSETS)
def test_loop_becomes_amp_loop(amp_opt, tmp_path, opset):
    """``Loop`` becomes ``amp.loop`` with a body region."""
    text = amp_opt.import_model(build("loop_model", opset), tmp_path / "loop.mlir")
    _, regions = op_regions(text, "amp.loop")
    assert len(regions) == 1, text


@pytest.mark.parametrize("opset", OPSETS)
def test_scan_becomes_amp_scan(amp_opt, tmp_path, opset):
    """``Scan`` becomes ``amp.scan`` with a body region."""
    text = amp_opt.import_model(build("scan_model", opset), tmp_path / "scan.mlir")
    _, regions = op_regions(text, "amp.scan")
    assert len(regions) == 1, text


def test_reduce_axes_attribute_and_input_forms_match(amp_opt, tmp_path):
    """Opset 13 (axes attributes) and 18 (axes inputs) give the same reductions.

    In both, every reduction takes its axes as a second operand.
    """
    texts = {
        opset: amp_opt.import_model(build("reduce_axes", opset), tmp_path / f"r{opset}.mlir")
        for opset in (13, 18)
    }
    sequences = {
        opset: [name for name in op_names(text) if name.startswith("amp.reduce")]
        for opset, text in texts.items()
    }
    assert sequences[13] == sequences[18]
    assert sequences[13] == [
        "amp.reduce_mean",
        "amp.reduce_sum",
        "amp.reduce_max",
        "amp.reduce_sum",
    ]
    for text in texts.values():
        reductions = [line for line in text.splitlines() if "= amp.reduce_" in line]
        assert len(reductions) == 4
        for line in reductions:
            operands = line.split("amp.reduce_", 1)[1].split(":")[0]
            assert operands.count("%") == 2, f"axes not an operand: {line}"
    assert "axes =" not in texts[13] and "axes =" not in texts[18]


@pytest.mark.parametrize("opset", OPSETS)
def test_split_becomes_amp_split(amp_opt, tmp_path, opset):
    """Both Split nodes become ``amp.split`` (sized and even)."""
    text = amp_opt.import_model(build("split_model", opset), tmp_path / "split.mlir")
    assert op_names(text).count("amp.split") == 2, text


def test_emit_bytecode(amp_opt, tmp_path):
    """``--emit-bytecode`` writes MLIR bytecode that amp-opt reads back."""
    model_path = tmp_path / "mlp.onnx"
    onnx.save_model(build("mlp", 17), model_path)
    out = tmp_path / "mlp.mlirbc"
    proc = amp_opt.run(model_path, "--emit-bytecode", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes().startswith(MLIR_BYTECODE_MAGIC)
    text = amp_opt.run(out, "-o", "-")
    assert text.returncode == 0, text.stderr
    assert "amp.gemm" in text.stdout
