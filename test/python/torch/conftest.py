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

# The hooks that keep tests sharing a module fixture on one xdist worker.
from xdist_groups import (  # noqa: E402,F401
    pytest_collection_finish, pytest_collection_modifyitems)

try:
    import torch
    import torch.export  # noqa: F401
except ImportError as error:  # pragma: no cover - the environment is wrong
    pytest.exit(f"the Torch tests need PyPI's torch 2.x (scripts/amp.sh creates its "
                f"virtual environment): {error}", returncode=4)
