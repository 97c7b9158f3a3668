"""pytest setup for the Torch front end's tests (amp_mlir.torch).

They run in the virtual environment with PyPI's torch 2.x (``scripts/amp.sh``
creates it; Debian's torch 1.13 has no ``torch.export``), beside the
installed amp_mlir package. A torch without ``torch.export`` fails the run
instead of skipping it.
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
# The model builders (export_torch.py imports its siblings by name).
sys.path.insert(0, os.path.join(REPO, "test", "models", "amp_testmodels"))
sys.path.insert(0, os.path.dirname(HERE))  # xdist_groups

from xdist_groups import (  # noqa: E402
    check_groups_took_effect, group_modules_with_shared_fixtures)

try:
    import torch
    import torch.export  # noqa: F401
except ImportError as error:  # pragma: no cover - the environment is wrong
    pytest.exit(f"the Torch tests need PyPI's torch 2.x (scripts/amp.sh creates its "
                f"virtual environment): {error}", returncode=4)


@pytest.hookimpl(hookwrapper=True)
def pytest_collection_modifyitems(config, items):
    """Marks the groups before any plugin's hook runs, xdist's included
    (it reads the ``xdist_group`` marks there; xdist_groups.py)."""
    group_modules_with_shared_fixtures(items)
    yield


def pytest_collection_finish(session):
    check_groups_took_effect(session)
