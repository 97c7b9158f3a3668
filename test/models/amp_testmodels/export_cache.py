"""The shared export cache's keys: which exports a test may reuse.

The exporters (``export_torch.py``, ``export_dynamic.py``) write models
into folders such as ``/tmp/amp-models/opset17`` that later test runs
reuse, because exporting takes minutes. A folder's ``manifest.json`` is
not evidence enough: a stale export, one made by an older exporter or
another torch, or a different file copied under the right name would be
tested in place of the model the test means. So every manifest entry the
exporters write carries

- ``exporter_key``: a hash of this package's sources (every ``*.py``
  beside this file: the model definitions, seeds and export code), the
  torch and torchvision versions that ran the export, the exporter's
  name, the model's name and the export options; and
- ``sha256``: the hash of the file written.

:func:`verified_entry` recomputes both and accepts an entry only when
they match. This module imports no torch (the tests call it from an
interpreter that may have none); the versions of the exporting
interpreter are read from its package metadata in a child process.

    python3 export_cache.py --versions   # what an exporter would record
"""

import functools
import hashlib
import json
import os
import subprocess
import sys

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
DEBIAN_PYTHON = "/usr/bin/python3"  # the interpreter the exporters run under
VERSIONED_PACKAGES = ("torch", "torchvision")


def installed_versions():
    """{package: version} of :data:`VERSIONED_PACKAGES` in this interpreter
    ("none" for a package that is not installed)."""
    import importlib.metadata as metadata

    versions = {}
    for package in VERSIONED_PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "none"
    return versions


@functools.lru_cache(maxsize=None)
def interpreter_versions(python=DEBIAN_PYTHON):
    """:func:`installed_versions` as ``python`` sees it (None when it cannot run)."""
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        return installed_versions()
    try:
        proc = subprocess.run([python, os.path.abspath(__file__), "--versions"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return json.loads(proc.stdout)


def sources_digest():
    """sha256 over the package's Python sources (names and contents)."""
    digest = hashlib.sha256()
    for name in sorted(os.listdir(PACKAGE_DIR)):
        if name.endswith(".py"):
            digest.update(name.encode() + b"\0")
            with open(os.path.join(PACKAGE_DIR, name), "rb") as f:
                digest.update(f.read() + b"\0")
    return digest.hexdigest()


def exporter_key(exporter, name, options, versions):
    """The key of an export of model ``name`` by ``exporter`` (a script
    name) with ``options`` (a JSON-serialisable dict) under ``versions``."""
    payload = json.dumps({"sources": sources_digest(), "versions": versions,
                          "exporter": exporter, "model": name, "options": options},
                         sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def file_digest(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def stamp(entry, path, exporter, name, options):
    """``entry`` with the keys :func:`verified_entry` checks (called by an
    exporter right after it wrote ``path``, in the exporting interpreter)."""
    entry = dict(entry)
    entry["options"] = options
    entry["exporter_key"] = exporter_key(exporter, name, options, installed_versions())
    entry["sha256"] = file_digest(path)
    return entry


def verified_entry(folder, name, exporter, options, python=DEBIAN_PYTHON):
    """``folder``'s manifest entry for ``name`` when it is an export by
    ``exporter`` with exactly ``options``, made from the current sources
    under ``python``'s torch, and the file is the one written; else None.
    The entry gains ``path``, the file's absolute path."""
    try:
        with open(os.path.join(folder, "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return None
    entry = manifest.get(name) if isinstance(manifest, dict) else None
    if not isinstance(entry, dict) or entry.get("options") != options:
        return None
    versions = interpreter_versions(python)
    if versions is None or entry.get("exporter_key") != exporter_key(
            exporter, name, options, versions):
        return None
    path = os.path.join(os.path.abspath(folder), str(entry.get("file", "")))
    try:
        if file_digest(path) != entry.get("sha256"):
            return None
    except OSError:
        return None
    return dict(entry, path=path)


if __name__ == "__main__":
    if sys.argv[1:] == ["--versions"]:
        print(json.dumps(installed_versions()))
        sys.exit(0)
    sys.exit(f"usage: {sys.argv[0]} --versions")
