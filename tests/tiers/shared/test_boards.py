"""Every shared board holding anything (keys, a cached answer, a document) is listed, on every
engine, sorted, each tenant's own."""

from __future__ import annotations

from memstack import Memory
from memstack.engines.prefixed import tenant_engine
from memstack.tiers.shared import list_boards
from memstack.tiers.shared.cache import SemanticCache, default_embedder
from memstack.tiers.shared.documents import DocumentStore


def test_boards_with_keys_cache_or_documents_are_listed(mem: Memory) -> None:
    assert list_boards(mem.engine) == []
    with mem.shared("team") as board:
        board["plan"] = ["research"]
    SemanticCache(mem.engine, "bot", embedder=default_embedder()).store("Who wrote Dune?", "Frank Herbert")
    DocumentStore(mem.engine, "kb.v2").store("readme", "Set REDIS_URL.")
    assert list_boards(mem.engine) == ["bot", "kb.v2", "team"]


def test_a_board_with_nothing_left_is_not_listed(mem: Memory) -> None:
    with mem.shared("temp") as board:
        board["k"] = 1
        board.clear()
    DocumentStore(mem.engine, "docs").store("a", "text")
    DocumentStore(mem.engine, "docs").delete("a")
    assert "temp" not in list_boards(mem.engine)
    assert "docs" not in list_boards(mem.engine)


def test_each_tenant_lists_its_own(mem: Memory) -> None:
    acme = Memory(tenant_engine(mem.engine, "acme"))
    with acme.shared("acme-board") as board:
        board["k"] = 1
    assert list_boards(acme.engine) == ["acme-board"]
    assert list_boards(mem.engine) == []
