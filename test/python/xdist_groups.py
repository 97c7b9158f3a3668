"""Which tests must share a pytest-xdist worker.

``scripts/amp.sh test`` runs pytest with ``-n 2 --dist loadgroup`` (two
workers on a two-core machine: one compiles while the other runs). Tests
are handed out one by one, except those in an ``xdist_group``, which run
on one worker in collection order. A module is one group when any of its
tests uses a module-, class- or package-scoped fixture: such a fixture is
an export or a compiled model that must be built once, not once per
worker, and the modules that keep measurements in module state (a summary
test that prints them, a peer check that reads an earlier measurement)
are the same modules. A module can also name itself a group with
``pytestmark = pytest.mark.xdist_group(...)``.

Without xdist (plain ``pytest``) the marks do nothing. The conftests
import the two hooks at the end of this file.
"""

import pytest

SHARED_SCOPES = ("module", "class", "package", "session")


def _uses_shared_fixture(item):
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    for name in info.names_closure:
        definitions = info.name2fixturedefs.get(name) or ()
        # Session fixtures from a conftest (amp_opt, amp_run) are cheap
        # lookups; a session fixture defined in the test module is not.
        for definition in definitions:
            if definition.scope == "session" and not definition.baseid.endswith(".py"):
                continue
            if definition.scope in SHARED_SCOPES:
                return True
    return False


def group_modules_with_shared_fixtures(items):
    """Marks every test of a module that has a shared fixture with
    ``xdist_group(<module>)``. Call it from ``pytest_collection_modifyitems``
    before xdist reads the marks (a hook wrapper)."""
    grouped = {item.module.__name__ for item in items
               if getattr(item, "module", None) is not None and _uses_shared_fixture(item)}
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and module.__name__ in grouped \
                and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(module.__name__))


def check_groups_took_effect(session):
    """On an xdist worker under ``--dist loadgroup``: xdist appends
    ``@<group>`` to the node id of each grouped test, and the scheduler reads
    the group from there. Some pytest releases ignore that (9.2 with xdist
    3.8, pytest-dev/pytest-xdist#1386) and the groups silently split; fail
    the run instead."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    lost = [item.nodeid for item in session.items
            if item.get_closest_marker("xdist_group") is not None and "@" not in item.nodeid]
    if lost:
        raise pytest.UsageError(
            f"pytest-xdist's --dist loadgroup does not group with this pytest "
            f"({pytest.__version__}): {len(lost)} grouped tests lost their group, e.g. "
            f"{lost[0]}. Install the versions scripts/amp.sh pins.")


@pytest.hookimpl(hookwrapper=True)
def pytest_collection_modifyitems(config, items):
    """Marks the groups before any plugin's hook runs, xdist's included
    (it reads the ``xdist_group`` marks in this hook)."""
    group_modules_with_shared_fixtures(items)
    yield


def pytest_collection_finish(session):
    check_groups_took_effect(session)
