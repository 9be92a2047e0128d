"""MemoryEntry.copy: a copy of the metadata that callers may change without touching the cache."""

from __future__ import annotations

from memstack.tiers.longterm.entry import MemoryEntry


def test_copy_shares_no_mutable_metadata() -> None:
    meta = {"conversation": {"id": "c", "turn": 3, "speaker": None}, "tags": [1, [2.5, "x"]], "ok": True}
    entry = MemoryEntry(id="e", content="text", metadata=meta)
    copied = entry.copy()
    assert copied == entry
    assert copied.metadata is not None and copied.metadata is not meta
    copied.metadata["conversation"]["turn"] = 4
    copied.metadata["tags"][1].append("y")
    assert meta == {
        "conversation": {"id": "c", "turn": 3, "speaker": None},
        "tags": [1, [2.5, "x"]],
        "ok": True,
    }


def test_copy_deep_copies_values_that_are_not_json_too() -> None:
    inner = [1]
    entry = MemoryEntry(id="e", content="text", metadata={"odd": (inner, {2})})
    copied = entry.copy()
    assert copied == entry
    assert copied.metadata is not None and copied.metadata["odd"][0] is not inner


def test_an_entry_without_metadata_is_its_own_copy() -> None:
    entry = MemoryEntry(id="e", content="text")
    assert entry.copy() is entry
