"""The shared export cache (/tmp/amp-models) is reused only on checked keys.

test/models/amp_testmodels/export_cache.py: a manifest entry counts when
its exporter key (exporter sources, torch version, options) and the
file's sha256 match. Each case below is a way a wrong model could be
tested in place of the right one; before the keys, a different model under
the right name with the right manifest passed.
"""

import json
import os
import shutil
import sys

import pytest

from amp_test_utils import MODELS_DIR, _export_cache, cached_export

cache = _export_cache()
OPTIONS = {"opset": 17, "dynamic_batch": False, "fp16_range": False}


def write_export(folder, name, payload, options=OPTIONS, exporter="export_torch"):
    """An export as an exporter writes it: the file, then its stamped entry."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{name}.onnx")
    with open(path, "wb") as f:
        f.write(payload)
    entry = cache.stamp({"file": f"{name}.onnx", **options}, path, exporter, name, options)
    manifest_path = os.path.join(folder, "manifest.json")
    manifest = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    manifest[name] = entry
    with open(manifest_path, "w") as f:
        json.dump(manifest, f)
    return path


def verified(folder, name, options=OPTIONS, exporter="export_torch"):
    return cache.verified_entry(str(folder), name, exporter, options, python=sys.executable)


def test_a_stamped_export_is_reused(tmp_path):
    path = write_export(tmp_path, "resnet18", b"model bytes")
    entry = verified(tmp_path, "resnet18")
    assert entry is not None and entry["path"] == str(path)


def test_another_file_under_the_right_name_is_refused(tmp_path):
    write_export(tmp_path, "resnet18", b"resnet18 bytes")
    write_export(tmp_path, "mobilenet_v2", b"mobilenet bytes")
    # The planted substitution: mobilenet_v2's file copied over resnet18's,
    # the manifest untouched.
    shutil.copy(tmp_path / "mobilenet_v2.onnx", tmp_path / "resnet18.onnx")
    assert verified(tmp_path, "resnet18") is None
    assert verified(tmp_path, "mobilenet_v2") is not None


def test_other_options_are_refused(tmp_path):
    write_export(tmp_path, "resnet18", b"x", options=dict(OPTIONS, dynamic_batch=True))
    assert verified(tmp_path, "resnet18") is None
    assert verified(tmp_path, "resnet18", options=dict(OPTIONS, dynamic_batch=True))


def test_another_exporter_is_refused(tmp_path):
    write_export(tmp_path, "bert_dyn", b"x", options={"opset": 17}, exporter="export_dynamic")
    assert verified(tmp_path, "bert_dyn", options={"opset": 17}, exporter="export_torch") is None


def test_an_entry_from_other_sources_or_torch_is_refused(tmp_path):
    write_export(tmp_path, "resnet18", b"x")
    manifest_path = tmp_path / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    # As if written by another torch: the key covers the versions.
    manifest["resnet18"]["exporter_key"] = cache.exporter_key(
        "export_torch", "resnet18", OPTIONS, {"torch": "0.0", "torchvision": "0.0"})
    manifest_path.write_text(json.dumps(manifest))
    assert verified(tmp_path, "resnet18") is None


def test_the_key_covers_the_exporter_sources(monkeypatch, tmp_path):
    write_export(tmp_path, "resnet18", b"x")
    # A copy of the package with one changed line in the model definitions.
    changed = tmp_path / "pkg"
    shutil.copytree(MODELS_DIR, changed, ignore=shutil.ignore_patterns("__pycache__"))
    with open(changed / "export_torch.py", "a") as f:
        f.write("\n# a changed model definition\n")
    monkeypatch.setattr(cache, "PACKAGE_DIR", str(changed))
    assert verified(tmp_path, "resnet18") is None


def test_an_old_manifest_without_keys_is_refused(tmp_path):
    (tmp_path / "resnet18.onnx").write_bytes(b"x")
    (tmp_path / "manifest.json").write_text(json.dumps(
        {"resnet18": {"file": "resnet18.onnx", **OPTIONS}}))
    assert verified(tmp_path, "resnet18") is None
    assert cached_export(str(tmp_path), "resnet18") is None


@pytest.mark.parametrize("text", ["", "{", "[]", '{"resnet18": 3}',
                                  '{"resnet18": {"file": "../../etc/passwd"}}'])
def test_a_broken_manifest_is_refused(tmp_path, text):
    (tmp_path / "manifest.json").write_text(text)
    assert verified(tmp_path, "resnet18") is None
