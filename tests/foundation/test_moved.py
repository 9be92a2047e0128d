"""Modules that moved when the package was laid out by layers still import from their old paths."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator

import pytest

import memstack
from memstack.foundation.moved import MOVED, new_name


@pytest.fixture
def forget_old_names() -> Iterator[None]:
    """Each test imports the old names afresh (the import system caches them in sys.modules)."""
    yield
    for name in [n for n in sys.modules if new_name(n) is not None and n != new_name(n)]:
        del sys.modules[name]


@pytest.mark.usefixtures("forget_old_names")
@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_is_the_new_module_with_a_warning(old: str) -> None:
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {MOVED[old]}"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])


@pytest.mark.usefixtures("forget_old_names")
def test_a_submodule_follows_its_package() -> None:
    with pytest.warns(
        DeprecationWarning, match=r"memstack\.longterm(\.entry)? moved to memstack\.tiers\.longterm"
    ):
        from memstack.longterm.entry import MemoryEntry  # type: ignore[import-not-found]
    from memstack.tiers.longterm.entry import MemoryEntry as Current

    assert MemoryEntry is Current


@pytest.mark.usefixtures("forget_old_names")
def test_the_readme_pipeline_node_path_still_imports() -> None:
    with pytest.warns(DeprecationWarning, match="memstack.nodes moved to memstack.compat.rocketride"):
        from memstack.nodes import PersistentMemoryNode  # type: ignore[import-not-found]
    assert PersistentMemoryNode is memstack.compat.rocketride.PersistentMemoryNode


def test_names_that_did_not_move_are_left_alone() -> None:
    assert new_name("memstack.engines.redis") is None
    assert new_name("memstack.errorsx") is None
    assert new_name("memstack.longterm.entry") == "memstack.tiers.longterm.entry"
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("memstack.not_a_module")


def test_memory_tools_still_answer_at_their_old_path() -> None:
    """MemoryTools moved above the agent tools, to the registry whose dispatcher it uses."""
    import memstack.agent.tools as old
    from memstack.ops.memory_tools import MemoryTools, dispatch

    with pytest.warns(DeprecationWarning, match=r"tools\.MemoryTools moved to memstack\.ops"):
        assert old.MemoryTools is MemoryTools
    with pytest.warns(DeprecationWarning, match="dispatch moved"):
        assert old.dispatch is dispatch
    with pytest.raises(AttributeError):
        _ = old.no_such_name
