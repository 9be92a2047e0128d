"""Bulk saves: many entries written in batches of one engine transaction each.

Each item is checked exactly as a single save checks it (:mod:`.plan`, the core both share), and
each stored version gets the same history item and change-log line. A batch is one guarded engine
batch: it applies whole or not at all (an item that fails its checks, a missing superseded entry,
a concurrent writer that keeps winning: nothing of that batch is written). Batches before it stay
written; the error says how many items they held. Vectors are computed in the background in the
embedder's batches, as for a single save.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, Protocol

from ...engines import Engine
from ...foundation.errors import Conflict, InvalidValue, MemstackError
from ...foundation.limits import short_repr
from . import writes
from .entry import MemoryEntry, from_json, to_json
from .history import check_actor
from .layout import ScopeKeys
from .plan import SavePlan, guard_version, now_of, plan_save
from .query import document_text
from .snapshotter import snapshotter
from .supersede import superseded_versions

__all__ = ["BATCH_ITEMS", "FIELDS", "MAX_BATCH_ITEMS", "save_many"]

BATCH_ITEMS: Final = 500
"""Items per engine transaction by default: large enough that a transaction's fixed cost is
spread thin, small enough that one holds a write lock for only milliseconds."""
MAX_BATCH_ITEMS: Final = 10_000
FIELDS: Final = frozenset(
    {"content", "category", "tags", "metadata", "id", "created_at", "subject", "supersedes"}
    | {"valid_from", "expires_at", "ttl"}
)
"""The fields an item (a mapping) may give: those of ``LongTermMemory.save``."""
ATTEMPTS: Final = 16
"""Optimistic retries of one batch racing other writers of its ids."""


class LongTermMemory(Protocol):
    """What a bulk save needs of the store (the store itself imports this module, so the type is
    named by what it offers, not imported: no import circle, tests/test_import_graph.py)."""

    @property
    def engine(self) -> Engine: ...

    @property
    def keys(self) -> ScopeKeys: ...

    @property
    def scope(self) -> str: ...

    def embed_later(self, entry_id: str, text: str) -> None: ...


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _named(exc: MemstackError, at: int) -> MemstackError:
    """``exc`` again (same type), its message naming the item: ``items[3]: content: ...``."""
    named = type(exc)(f"items[{at}]: {exc}")
    named.__notes__ = list(getattr(exc, "__notes__", []))
    return named


def _plan(item: object, at: int, now: float) -> SavePlan:
    try:
        if isinstance(item, MemoryEntry):
            return plan_save(now=now, entry=item)
        if not isinstance(item, Mapping):
            raise InvalidValue(f"{short_repr(item)}: must be a MemoryEntry or a mapping of save()'s fields")
        unknown = sorted(str(k) for k in item if k not in FIELDS)
        if unknown:
            raise InvalidValue(f"unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(FIELDS))}")
        return plan_save(now=now, **item)
    except MemstackError as exc:
        raise _named(exc, at) from exc


def _check_batch(plans: Sequence[SavePlan], first: int) -> None:
    """One batch may not write an id twice (the second would silently win over the first)."""
    seen: dict[str, int] = {}
    for offset, plan in enumerate(plans):
        for entry_id in (plan.id, *plan.superseded):
            earlier = seen.setdefault(entry_id, offset)
            if earlier != offset:
                raise InvalidValue(
                    f"items[{first + offset}]: memory {entry_id!r} is already saved or superseded by "
                    f"items[{first + earlier}] of the same batch; save them in separate calls"
                )


def _write_batch(
    memory: LongTermMemory, plans: Sequence[SavePlan], first: int, actor: str
) -> list[MemoryEntry]:
    engine, keys = memory.engine, memory.keys
    wanted = [keys.entry(p.id) for p in plans]
    wanted += [keys.entry(i) for p in plans for i in p.superseded]
    for _ in range(ATTEMPTS):
        raws = engine.mget(wanted)
        now, at = now_of(engine), engine.clock.now()
        batch = engine.batch()
        versions = []
        cursor = len(plans)
        for offset, (plan, old_raw) in enumerate(zip(plans, raws, strict=False)):
            old = from_json(old_raw) if old_raw is not None else None
            new = plan.version(old, now)
            found = list(zip(plan.superseded, raws[cursor : cursor + len(plan.superseded)], strict=True))
            cursor += len(plan.superseded)
            try:
                closed = superseded_versions(new, found, now, memory.scope)
            except MemstackError as exc:
                raise _named(exc, first + offset) from exc
            guard_version(batch, keys, new.id, old_raw, closed)
            versions.append((plan, new, old_raw, old, closed))
        rows: list[writes.Put] = []
        embed: list[tuple[str, str]] = []
        for plan, new, old_raw, old, closed in versions:
            op = "create" if old is None else "update"
            rows.append((new, to_json(new), old_raw, op, plan.superseded, plan.generated and old is None))
            rows += [(v, to_json(v), raw, "supersede", (new.id,), False) for _, raw, v in closed]
            text = document_text(new)
            if old is None or document_text(old) != text:
                embed.append((new.id, text))
        writes.put_many(engine, batch, keys, memory.scope, rows, actor=actor, at=at)
        if embed:  # a vector computed from the old text must not stay
            batch.hdel(keys.vectors, *(entry_id for entry_id, _ in embed))
        saved = [new for _, new, _, _, _ in versions]
        if batch.execute().applied:
            for entry_id, text in embed:
                memory.embed_later(entry_id, text)
            return saved
    raise Conflict(
        f"a batch of {len(plans)} memories: changed concurrently {ATTEMPTS} times; batch abandoned"
    )


def save_many(
    memory: LongTermMemory,
    items: Iterable[MemoryEntry | Mapping[str, Any]],
    *,
    batch_size: int = BATCH_ITEMS,
    actor: str = "api",
    progress: Callable[[int], None] | None = None,
    collect: list[MemoryEntry] | None = None,
) -> int:
    """Save ``items`` into ``memory`` in batches of ``batch_size``; returns how many were saved,
    and appends them as stored to ``collect`` (an import of millions keeps none of them).

    ``progress(n)`` is called after each batch with the number of items it wrote.

    Raises:
        InvalidValue: a bad ``batch_size``; an item that breaks a rule of ``save`` (the message
            starts with ``items[i]``), or one id saved or superseded twice in one batch.
        InvalidCategory, InvalidKey, EntryNotFound, Conflict: as ``save``, for ``items[i]``.
        MemstackError: whatever the engine raised; in every case the failing batch wrote nothing,
            the earlier ones (``items[0]`` to the failing batch's first) are saved.
    """
    check_actor(actor)
    if type(batch_size) is not int or not 0 < batch_size <= MAX_BATCH_ITEMS:
        raise InvalidValue(
            f"batch_size {short_repr(batch_size)}: must be an integer from 1 to {MAX_BATCH_ITEMS}"
        )
    done = 0
    for chunk in _chunks(items, batch_size):
        now = memory.engine.clock.now()
        try:
            plans = [_plan(item, done + i, now) for i, item in enumerate(chunk)]
            _check_batch(plans, done)
            saved = _write_batch(memory, plans, done, actor)
        except MemstackError as exc:
            if done:
                exc.add_note(f"the {done} items before items[{done}] were saved")
            raise
        done += len(saved)
        if collect is not None:
            collect += [entry.copy() for entry in saved]
        if progress is not None:
            progress(len(saved))
    if done:
        snapshotter(memory.engine, memory.scope).touch()
    return done
