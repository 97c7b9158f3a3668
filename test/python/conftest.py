"""pytest setup for amp's Python tests.

- amp-opt is ``$AMP_OPT`` if set, else ``<repo>/build/bin/amp-opt``; the
  ``amp_opt`` fixture wraps it (see ``amp_test_utils.AmpOpt``).
- ``<repo>/test/models`` goes on ``sys.path`` so tests can import the
  ``amp_testmodels`` package (model builders and exporters), and
  ``<repo>/test/conformance`` so they can import the ONNX backend-test
  runners (``backend_import``, ``backend_run``, ``backend_export``).
- The ``slow`` marker tags long tests; they run by default
  (``-m "not slow"`` leaves them out).
- Under pytest-xdist (``-n 2 --dist loadgroup``, as ``scripts/amp.sh test``
  runs them) a module whose tests share a module-scoped fixture runs on one
  worker (``xdist_groups.py``).
"""

import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "test", "conformance"))
sys.path.insert(0, os.path.join(REPO, "test", "models"))

from amp_test_utils import AmpOpt  # noqa: E402  (needs the path above)
# The hooks that keep tests sharing a module fixture on one xdist worker.
from xdist_groups import (  # noqa: E402,F401
    pytest_collection_finish, pytest_collection_modifyitems)


def pytest_configure(config):
    """Register the ``slow`` marker."""
    config.addinivalue_line("markers", "slow: takes a minute or more (still runs by default)")


@pytest.fixture(scope="session")
def amp_opt():
    """The amp-opt binary under test, as an :class:`AmpOpt`."""
    path = os.environ.get("AMP_OPT") or os.path.join(REPO, "build", "bin", "amp-opt")
    if not os.access(path, os.X_OK):
        pytest.fail(f"amp-opt not found at {path}; build it or set AMP_OPT")
    return AmpOpt(path)


@pytest.fixture(scope="session")
def amp_run():
    """Path of the amp-run binary under test (``$AMP_RUN`` or the build tree)."""
    path = os.environ.get("AMP_RUN") or os.path.join(REPO, "build", "bin", "amp-run")
    if not os.access(path, os.X_OK):
        pytest.fail(f"amp-run not found at {path}; build it or set AMP_RUN")
    return path
