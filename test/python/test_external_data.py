"""External tensor data: imported faithfully, and read only from safe places.

A model whose initializers live in a data file must import into the same IR
as the model with the weights inline. Then each attack edits one tensor's
``external_data`` entries (or the files beside the model) and must fail with
a clear message and no output file.
"""

import hashlib
import os
import re

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from amp_testmodels import build_onnx

MODEL = "external_data.onnx"
DATA = "external_data.onnx.data"
TENSOR = "ext_w"  # float32 [8, 16]: 512 bytes at offset 0 of DATA


def resource_blobs(mlir_text):
    """The ``dialect_resources`` blobs of ``mlir_text``: name -> bytes (alignment word dropped)."""
    return {
        name: bytes.fromhex(hex_data)[4:]
        for name, hex_data in re.findall(r'^\s*(\w+): "0x([0-9A-Fa-f]*)"', mlir_text, re.MULTILINE)
    }


def save_external(model, folder, name="model.onnx"):
    """Save ``model`` with every tensor in one external data file; return the path.

    ``onnx.save_model`` turns ``model``'s tensors into external references.
    """
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    onnx.save_model(
        model,
        path,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=name + ".data",
        size_threshold=0,
    )
    return path


@pytest.mark.parametrize("builder", ["mlp", "conv_block"])
def test_external_matches_inline(amp_opt, tmp_path, builder):
    """A builder model saved with external data imports exactly like the inline one."""
    model = build_onnx.BUILDERS[builder](17)
    arrays = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    (tmp_path / "inline").mkdir()
    inline = amp_opt.import_model(model, tmp_path / "inline" / "model.mlir")
    external_path = save_external(model, tmp_path / "external")
    assert os.path.getsize(str(external_path) + ".data") > 0
    assert all(
        t.data_location == onnx.TensorProto.EXTERNAL
        for t in onnx.load(external_path, load_external_data=False).graph.initializer
    )
    external = amp_opt.import_model(external_path, tmp_path / "external" / "model.mlir")
    assert external == inline
    large = {name: values for name, values in arrays.items() if values.size > 16}
    assert large
    blobs = resource_blobs(external)
    for name, values in large.items():
        assert blobs[name] == values.tobytes(), name


def test_external_data_model_weights(amp_opt, tmp_path):
    """build_onnx's external-data model imports with its weights byte for byte."""
    model = build_onnx.external_data_model(tmp_path / "ext")
    text = amp_opt.import_model(tmp_path / "ext" / MODEL, tmp_path / "ext.mlir")
    expected = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    blobs = resource_blobs(text)
    assert blobs[TENSOR] == expected[TENSOR].tobytes()
    assert "dense_resource<ext_w> : tensor<8x16xf32>" in text
    assert "dense<[0, 5, 10, 15]> : tensor<4xi64>" in text
    assert "tensor<16xf16>" in text


def test_external_data_one_file_per_tensor(amp_opt, tmp_path):
    """Each tensor in its own data file imports into the same IR as one shared file."""
    build_onnx.external_data_model(tmp_path / "one", all_tensors_to_one_file=True)
    build_onnx.external_data_model(tmp_path / "many", all_tensors_to_one_file=False)
    one = amp_opt.import_model(tmp_path / "one" / MODEL, tmp_path / "one.mlir")
    many = amp_opt.import_model(tmp_path / "many" / MODEL, tmp_path / "many.mlir")
    assert one == many
    assert resource_blobs(many)[TENSOR] == (tmp_path / "many" / TENSOR).read_bytes()


# --------------------------------------------------------------------------
# Attacks
# --------------------------------------------------------------------------


@pytest.fixture
def ext_model(tmp_path):
    """build_onnx's external-data model in ``tmp_path/model``; returns the model path."""
    build_onnx.external_data_model(tmp_path / "model")
    return tmp_path / "model" / MODEL


def set_entry(model_path, key, value, tensor=TENSOR):
    """Set (or add) ``key`` in ``tensor``'s external_data entries, in place."""
    model = onnx.load(model_path, load_external_data=False)
    (target,) = [t for t in model.graph.initializer if t.name == tensor]
    entries = {entry.key: entry for entry in target.external_data}
    if key in entries:
        entries[key].value = value
    else:
        target.external_data.add(key=key, value=value)
    model_path.write_bytes(model.SerializeToString())


def test_unchanged_model_imports(amp_opt, ext_model):
    """The model the attacks start from imports (so each failure is the attack's)."""
    text = amp_opt.import_model(ext_model, ext_model.parent / "ok.mlir")
    assert resource_blobs(text)[TENSOR] == (ext_model.parent / DATA).read_bytes()[:512]


@pytest.mark.parametrize("location", ["../x.bin", "sub/../../x.bin", "sub/../" + DATA])
def test_location_with_dotdot(amp_opt, tmp_path, ext_model, location):
    """Locations with '..' are refused before any file is opened."""
    (tmp_path / "x.bin").write_bytes(bytes(512))
    set_entry(ext_model, "location", location)
    amp_opt.expect_import_error(ext_model, f"location '{location}' contains '..'")


def test_absolute_location(amp_opt, ext_model):
    """An absolute location is refused."""
    set_entry(ext_model, "location", "/etc/passwd")
    amp_opt.expect_import_error(ext_model, "location '/etc/passwd' is absolute")


def test_symlink_data_file(amp_opt, ext_model):
    """A data file that is a symlink is refused, even one pointing inside the folder."""
    os.symlink(DATA, ext_model.parent / "link.bin")
    set_entry(ext_model, "location", "link.bin")
    amp_opt.expect_import_error(ext_model, "'link.bin' is a symbolic link")


def test_folder_symlink_leading_outside(amp_opt, tmp_path, ext_model):
    """A subfolder that is a symlink to a folder outside the model's folder is refused."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / DATA).write_bytes((ext_model.parent / DATA).read_bytes())
    os.symlink(outside, ext_model.parent / "sub")
    set_entry(ext_model, "location", f"sub/{DATA}")
    amp_opt.expect_import_error(ext_model, "resolves outside the model's folder")


def test_constant_node_data_outside(amp_opt, tmp_path, ext_model):
    """A Constant node's tensor attribute is checked like an initializer."""
    (tmp_path / "secret.bin").write_bytes(bytes(8))
    value = onnx.TensorProto(name="c", data_type=onnx.TensorProto.FLOAT, dims=[2])
    value.data_location = onnx.TensorProto.EXTERNAL
    value.external_data.add(key="location", value="../secret.bin")
    model = onnx.load(ext_model, load_external_data=False)
    constant = onnx.helper.make_node("Constant", [], ["c"], name="const", value=value)
    model.graph.node.insert(0, constant)
    ext_model.write_bytes(model.SerializeToString())
    amp_opt.expect_import_error(
        ext_model, "node 'const'", "tensor 'c'", "location '../secret.bin' contains '..'"
    )


def test_hard_linked_data_file(amp_opt, ext_model):
    """A data file with a second hard link is refused."""
    os.link(ext_model.parent / DATA, ext_model.parent / "second_link.bin")
    amp_opt.expect_import_error(ext_model, "has 2 hard links")


def test_unknown_key(amp_opt, ext_model):
    """An external_data key other than location/offset/length/checksum."""
    set_entry(ext_model, "foo", "bar")
    amp_opt.expect_import_error(ext_model, "unknown external_data key 'foo'")


def test_offset_past_end(amp_opt, ext_model):
    """An offset beyond the end of the data file."""
    set_entry(ext_model, "offset", "1000000")
    amp_opt.expect_import_error(ext_model, "offset 1000000 is past the end")


def test_offset_max_u64(amp_opt, ext_model):
    """offset = 2**64 - 1: offset + length would overflow."""
    set_entry(ext_model, "offset", "18446744073709551615")
    amp_opt.expect_import_error(ext_model, "offset 18446744073709551615 is past the end")


def test_length_max_u64(amp_opt, ext_model):
    """length = 2**64 - 1 after a valid offset: offset + length would overflow."""
    set_entry(ext_model, "offset", "64")
    set_entry(ext_model, "length", "18446744073709551615")
    amp_opt.expect_import_error(ext_model, "range [64, +18446744073709551615) exceeds")


def test_offset_beyond_u64(amp_opt, ext_model):
    """An offset that does not fit 64 bits."""
    set_entry(ext_model, "offset", "18446744073709551616")
    amp_opt.expect_import_error(ext_model, "'offset' is not a non-negative 64-bit decimal integer")


def test_length_mismatch(amp_opt, ext_model):
    """A length that is not the tensor's byte size (8*16 float32 = 512)."""
    set_entry(ext_model, "length", "12")
    amp_opt.expect_import_error(ext_model, "is 12 bytes but its shape and type need 512")


def test_range_shorter_than_tensor(amp_opt, ext_model):
    """Without a length, the bytes from the offset to the end must be the tensor's size."""
    model = onnx.load(ext_model, load_external_data=False)
    (target,) = [t for t in model.graph.initializer if t.name == TENSOR]
    kept = [(e.key, e.value) for e in target.external_data if e.key != "length"]
    del target.external_data[:]
    for key, value in kept:
        target.external_data.add(key=key, value=value)
    ext_model.write_bytes(model.SerializeToString())
    set_entry(ext_model, "offset", "600")
    amp_opt.expect_import_error(ext_model, "but its shape and type need 512")


@pytest.mark.parametrize("value", ["12abc", "-1", "", " 12", "0x10"])
def test_non_numeric_offset(amp_opt, ext_model, value):
    """Offsets that are not plain decimal numbers."""
    set_entry(ext_model, "offset", value)
    amp_opt.expect_import_error(
        ext_model, f"'offset' is not a non-negative 64-bit decimal integer: '{value}'"
    )


def test_missing_data_file(amp_opt, ext_model):
    """A location naming a file that does not exist."""
    set_entry(ext_model, "location", "nonexistent.bin")
    amp_opt.expect_import_error(ext_model, "cannot open external data file 'nonexistent.bin'")


def test_data_file_is_a_folder(amp_opt, ext_model):
    """A location naming a folder."""
    (ext_model.parent / "folder.bin").mkdir()
    set_entry(ext_model, "location", "folder.bin")
    amp_opt.expect_import_error(ext_model, "'folder.bin' is not a regular file")


def test_checksum_mismatch(amp_opt, ext_model):
    """A SHA-1 checksum that does not match the bytes read."""
    set_entry(ext_model, "checksum", "0" * 40)
    amp_opt.expect_import_error(ext_model, "checksum mismatch")


def test_checksum_match(amp_opt, ext_model):
    """The right SHA-1 checksum is accepted."""
    data = (ext_model.parent / DATA).read_bytes()[:512]
    set_entry(ext_model, "checksum", hashlib.sha1(data).hexdigest())
    text = amp_opt.import_model(ext_model, ext_model.parent / "ok.mlir")
    assert resource_blobs(text)[TENSOR] == data


def test_weights_change_with_data_file(amp_opt, ext_model):
    """The imported weights come from the data file: changing it changes the IR."""
    data_path = ext_model.parent / DATA
    before = resource_blobs(amp_opt.import_model(ext_model, ext_model.parent / "a.mlir"))[TENSOR]
    values = np.arange(128, dtype=np.float32)
    data = bytearray(data_path.read_bytes())
    data[:512] = values.tobytes()
    data_path.write_bytes(bytes(data))
    after = resource_blobs(amp_opt.import_model(ext_model, ext_model.parent / "b.mlir"))[TENSOR]
    assert after != before
    assert after == values.tobytes()
