"""The vector follower: entries written without a vector get one from any process with an embedder,
found through the scopes' change logs (rounds driven with an explicit ``now``: no thread, no sleep)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from _forked import held_by_a_thread, in_child
from memstack.engines import Engine
from memstack.engines.prefixed import tenant_engine
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.longterm import LongTermMemory
from memstack.tiers.longterm.backfill import VectorFollower, pending_vectors, stored_scopes
from memstack.tiers.longterm.vectors import decode_vector


class CountingEmbedder(FakeEmbedder):
    """A FakeEmbedder that counts the texts it embedded."""

    def __init__(self, dim: int = 32) -> None:
        super().__init__(dim=dim)
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.texts += list(texts)
        return super().embed(texts)


class FailingEmbedder(FakeEmbedder):
    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        raise RuntimeError("embedding endpoint down")


def _vector_models(engine: Engine, scope: str) -> dict[str, str]:
    lt = LongTermMemory(engine, scope)
    found = {}
    for entry_id, payload in engine.hgetall(lt.keys.vectors).items():
        stored = decode_vector(payload)
        assert stored is not None
        found[entry_id] = stored.model
    return found


def test_entries_written_without_an_embedder_get_a_vector_after_the_grace(engine: Engine) -> None:
    plain = LongTermMemory(engine, "alice")  # a writer with no embedder (BM25 only)
    first = plain.save(content="I drink green tea every morning")
    embedder = CountingEmbedder()
    follower = VectorFollower(engine, embedder, grace=2.0)
    assert follower.step(now=100.0) == 1  # found at the first discovery: nobody else is on it
    assert _vector_models(engine, "alice") == {first.id: embedder.model_id}
    second = plain.save(content="The car needs new winter tyres")
    assert follower.step(now=101.0) == 0  # seen through the change log; the writer may still embed it
    assert follower.pending == 1
    assert follower.step(now=103.5) == 1
    assert set(_vector_models(engine, "alice")) == {first.id, second.id}
    assert follower.pending == 0 and follower.settled
    hybrid = LongTermMemory(engine, "alice", embedder=embedder)
    assert hybrid.search("tea", mode="hybrid")[0].vector is not None


def test_a_writer_with_an_embedder_is_left_to_write_its_own_vectors(engine: Engine) -> None:
    follower_embedder = CountingEmbedder()
    follower = VectorFollower(engine, follower_embedder, grace=2.0)
    follower.step(now=0.0)
    writer = LongTermMemory(engine, "bob", embedder=FakeEmbedder(dim=32))
    writer.save(content="Bob plays chess")
    assert writer.flush_embeddings(10)
    follower.step(now=1.0)
    follower.step(now=10.0)
    assert follower_embedder.texts == [] and follower.pending == 0


def test_updates_deletes_and_every_tenant_are_followed(engine: Engine) -> None:
    acme = LongTermMemory(tenant_engine(engine, "acme"), "ops")
    raw = LongTermMemory(engine, "ops")
    kept = acme.save(content="deploys happen on Tuesday")
    gone = raw.save(content="the old pager number")
    follower = VectorFollower(engine, CountingEmbedder(), grace=0.0)
    assert stored_scopes(engine) == [(None, "ops"), ("acme", "ops")]
    assert follower.step(now=0.0) == 2
    acme.save(content="deploys happen on Wednesday", id=kept.id)  # new text: the old vector goes
    assert raw.delete(gone.id)
    assert follower.step(now=1.0) == 1
    [payload] = tenant_engine(engine, "acme").hgetall(acme.keys.vectors).values()
    stored = decode_vector(payload)
    assert stored is not None and stored.model == "fake:32"
    assert acme.search("Wednesday")[0].entry.id == kept.id
    assert engine.hgetall(raw.keys.vectors) == {}  # a deleted entry never gets its vector back


def test_another_models_vectors_are_reported_not_recomputed_unless_asked(engine: Engine) -> None:
    old = LongTermMemory(engine, "s", embedder=FakeEmbedder(dim=16))
    old.save(content="one")
    old.save(content="two")
    assert old.flush_embeddings(10)
    assert pending_vectors(engine, FakeEmbedder(dim=32)) == (0, 2)
    library = VectorFollower(engine, FakeEmbedder(dim=32))
    assert library.step(now=0.0) == 0 and library.stale == 2
    server = VectorFollower(engine, FakeEmbedder(dim=32), reembed_stale=True)
    assert server.step(now=0.0) == 2  # found by its first discovery: recomputed, as serve always did
    assert set(_vector_models(engine, "s").values()) == {"fake:32"}
    assert pending_vectors(engine, FakeEmbedder(dim=32)) == (0, 0)


def test_a_vector_never_lands_on_a_text_it_was_not_computed_from(engine: Engine) -> None:
    lt = LongTermMemory(engine, "race")
    entry = lt.save(content="first text")
    changed = False

    class RacingEmbedder(FakeEmbedder):
        def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
            nonlocal changed
            if not changed:  # the entry changes while its vector is computed
                changed = True
                lt.save(content="second text", id=entry.id)
            return super().embed(texts)

    follower = VectorFollower(engine, RacingEmbedder(dim=32), grace=0.0)
    assert follower.step(now=0.0) == 0
    assert engine.hgetall(lt.keys.vectors) == {}
    assert follower.step(now=1.0) == 1  # the change log brought it back; now for the second text
    searched = LongTermMemory(engine, "race", embedder=FakeEmbedder(dim=32))
    assert searched.search("second", mode="hybrid")[0].vector is not None


def test_a_failing_embedder_is_retried_later_and_the_round_goes_on(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    LongTermMemory(engine, "f").save(content="text")
    follower = VectorFollower(engine, FailingEmbedder(dim=8), grace=0.0)
    with caplog.at_level(logging.WARNING, "memstack.tiers.longterm"):
        assert follower.step(now=0.0) == 0
        assert follower.step(now=1.0) == 0  # within the retry delay: not tried again
    assert len([r for r in caplog.records if "retrying" in r.getMessage()]) == 1
    assert follower.pending == 1 and not follower.settled


def test_a_wiped_scope_is_dropped_and_found_again(engine: Engine) -> None:
    follower = VectorFollower(engine, FakeEmbedder(dim=8), grace=60.0, discover=5.0)
    follower.step(now=0.0)
    lt = LongTermMemory(engine, "w")
    lt.save(content="to be forgotten")
    follower.step(now=1.0)
    assert follower.pending == 0  # a scope new since the last discovery waits for the next one
    follower.step(now=10.0)
    assert follower.pending == 1  # found, and given the grace: its writer may be embedding it
    lt.delete_many([e.id for e in lt.entries()])
    follower.step(now=11.0)
    assert follower.pending == 0
    lt.save(content="new")
    follower.step(now=12.0)
    assert follower.pending == 1
    follower.step(now=100.0)
    assert follower.pending == 0 and len(engine.hgetall(lt.keys.vectors)) == 1


def test_progress_is_logged(engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    lt = LongTermMemory(engine, "p")
    for n in range(3):
        lt.save(content=f"entry {n}")
    with caplog.at_level(logging.INFO, "memstack.tiers.longterm"):
        VectorFollower(engine, FakeEmbedder(dim=8)).step(now=0.0)
    messages = [r.getMessage() for r in caplog.records]
    assert any("3 memory entries wait for a vector" in m for m in messages)
    assert any("every memory entry has one (3 written)" in m for m in messages)


def _threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "memstack-vectors"]


def test_the_thread_follows_and_stops(engine: Engine) -> None:
    follower = VectorFollower(engine, FakeEmbedder(dim=8), poll=0.01, grace=0.0)
    follower.start()
    try:
        assert len(_threads()) == 1
        lt = LongTermMemory(engine, "t")
        lt.save(content="written while the follower runs")
        pause = threading.Event()
        for _ in range(2000):  # a real thread's rounds: polled, bounded
            if engine.hgetall(lt.keys.vectors):
                break
            pause.wait(0.01)
        assert len(engine.hgetall(lt.keys.vectors)) == 1
    finally:
        assert follower.close() == 0
    assert _threads() == []


def test_a_busy_scope_is_followed_through_its_log_not_reread(engine: Engine) -> None:
    """While a scope changes fast, rounds come sooner, so each reads the changes from the log (a
    cost of the changes) before the log passes them (a re-read of the whole scope)."""
    plain = LongTermMemory(engine, "busy")
    plain.save_many([{"content": f"fact {n}"} for n in range(50)])
    follower = VectorFollower(engine, CountingEmbedder(), poll=1.0, grace=2.0)
    follower.step(now=0.0)
    assert follower._wait() == 1.0  # first sight of the scope: nothing moved yet
    plain.save_many([{"content": f"fact {n}"} for n in range(300)], batch_size=300)
    follower.step(now=0.5)
    assert 0.05 <= follower._wait() < 1.0  # 300 changes in one round: the next comes sooner
    plain.save(content="one more")
    follower.step(now=0.7)
    assert follower._wait() == 1.0


def test_counts_are_kept_per_tenant(engine: Engine) -> None:
    # /v1/info shows a tenant its own counts: another tenant's entries never add to them.
    for tenant, texts in (("acme", ["one", "two", "three"]), ("beta", ["four"])):
        plain = LongTermMemory(tenant_engine(engine, tenant), "notes")
        for text in texts:
            plain.save(content=f"{text} green tea")
    follower = VectorFollower(engine, CountingEmbedder(), grace=60.0)
    follower.step(now=100.0)  # found at the first discovery: embedded at once
    assert follower.counts("acme") == (0, 0, 3) and follower.counts("beta") == (0, 0, 1)
    LongTermMemory(tenant_engine(engine, "beta"), "notes").save(content="five green tea")
    follower.step(now=101.0)  # seen, still within its writer's grace
    assert follower.counts("beta") == (1, 0, 1) and follower.counts("acme") == (0, 0, 3)
    assert follower.counts("nobody") == (0, 0, 0)


class RacingEmbedder(FakeEmbedder):
    """While the follower embeds, the entry's writer stores its own vector (another model's)."""

    def __init__(self, race: LongTermMemory) -> None:
        super().__init__(dim=32)
        self.race = race

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        assert self.race.reembed() == 1  # between the follower's read and its write
        return super().embed(texts)


def test_a_vector_stored_while_the_follower_embeds_is_never_replaced(engine: Engine) -> None:
    plain = LongTermMemory(engine, "race")
    entry = plain.save(content="I drink green tea every morning")
    writer = LongTermMemory(engine, "race", embedder=FakeEmbedder(dim=16))
    follower = VectorFollower(engine, RacingEmbedder(writer), grace=0.0)
    assert follower.step(now=100.0) == 0
    assert _vector_models(engine, "race") == {entry.id: "fake:16"}  # the writer's, kept
    assert writer.stale_vectors() == 0
    writer.close()


def test_other_entries_changing_meanwhile_do_not_stop_the_follower(engine: Engine) -> None:
    plain = LongTermMemory(engine, "busy")
    first = plain.save(content="I drink green tea every morning")

    class Busy(FakeEmbedder):  # another entry is saved while the follower embeds: the version moves
        def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
            plain.save(content=f"meanwhile {len(texts)}")
            return super().embed(texts)

    follower = VectorFollower(engine, Busy(dim=32), grace=0.0)
    assert follower.step(now=100.0) == 1
    assert _vector_models(engine, "busy") == {first.id: "fake:32"}


def test_a_forked_child_runs_rounds_and_starts_its_own_thread(engine: Engine) -> None:
    LongTermMemory(engine, "alice").save(content="I drink green tea every morning")
    follower = VectorFollower(engine, FakeEmbedder(dim=8), grace=0.0, poll=60.0)
    follower.start()

    def child() -> bool:
        def following() -> bool:
            return any(t.name == "memstack-vectors" for t in threading.enumerate())

        inherited = following()  # the parent's thread does not run here
        follower.step(now=100.0)  # a round: the lock a parent round held is not the child's
        follower.start()
        started = following()
        follower.close()
        return not inherited and started and follower.pending == 0

    with held_by_a_thread(follower._lock):  # the parent's thread in the middle of a round
        assert in_child(child, deadline=60)
    follower.close()
