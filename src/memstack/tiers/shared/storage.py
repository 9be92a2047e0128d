"""The engine I/O of one shared memory: key layout, atomic writes, change publication.

Layout, from the keyspace registry (``T`` = ``engine.tag(name)``, so every key of one memory
shares one Cluster slot)::

    shared:m:T:k:{key}   string  {"value", "version", "writer", "ts" (+ "subject")}   shared.entry
    shared:m:T:keys      zset    custom keys, scored by creation time (engine ms)       shared.keys
    shared:m:T:changes   channel one JSON message per notifying write                  shared.changes

A change message carries the subject labels of the new and of the previous version (``s``,
``ps``), so a forget finds the messages an engine keeps (SQLite's event table) that hold a
forgotten subject's values.

Every write is one batch: ``require_equal`` guards on the entries as read (so versions move by
exactly one and ``previous`` is exact), the new entries, the key index, and ``publish`` of the
change (delivered only if the batch applied). A lost guard means another writer got there
first: the write is re-read and retried.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ...engines import Engine
from ...foundation.errors import InvalidValue
from ...foundation.keyspace import KeyUnder, label_of, register
from ...foundation.keyspace.families import SHARED
from ...foundation.limits import MAX_VALUE_BYTES
from .serialize import decode_entry, dumps, encode_entry

__all__ = ["PREFIX", "Entry", "SharedStorage", "Write"]

PREFIX: Final = SHARED.lead
_ENVELOPE_BYTES: Final = 2048
"""Room for an entry's version, writer and time around its value."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One stored key as read: its raw text (for the guard) and the decoded parts."""

    raw: str | None
    value: Any = None
    version: int = 0
    subject: str | None = None

    @property
    def exists(self) -> bool:
        return self.raw is not None


@dataclass(frozen=True, slots=True)
class Write:
    """One key to write in a batch: new value computed from the entry as read."""

    key: str
    make: Callable[[Entry], Any]
    custom: bool = True
    notify: bool = True


def _entry(raw: str | None) -> Entry:
    decoded = decode_entry(raw)
    if decoded is None:
        return Entry(None)
    return Entry(raw, decoded.get("value"), int(decoded.get("version", 0)), label_of(decoded))


class SharedStorage:
    """Reads and atomic writes of one named shared memory on ``engine``."""

    _entry_prefix = KeyUnder("shared.entry", prefix=True)
    index = KeyUnder("shared.keys")
    channel = KeyUnder("shared.changes")

    def __init__(self, engine: Engine, name: str, network_name: str | None) -> None:
        self.engine = engine
        self.name = name
        self.network_name = network_name
        self.base = SHARED.render(engine.tag, board=name)

    def entry_key(self, key: str) -> str:
        return self._entry_prefix + key

    # -- reads -------------------------------------------------------------------------------
    def read(self, key: str) -> Entry:
        return _entry(self.engine.get(self.entry_key(key)))

    def read_many(self, keys: Sequence[str]) -> list[Entry]:
        if not keys:
            return []
        return [_entry(raw) for raw in self.engine.mget([self.entry_key(k) for k in keys])]

    def custom_keys(self) -> list[str]:
        """Custom keys in creation order."""
        return [member for member, _ in self.engine.zrange(self.index, 0, -1)]

    # -- writes ------------------------------------------------------------------------------
    def write(
        self,
        writes: Sequence[Write],
        *,
        writer: str | None,
        correlation_id: str | None = None,
        expect: Callable[[list[Entry]], None] | None = None,
        subject: str | None = None,
    ) -> list[tuple[Entry, Any]]:
        """Apply ``writes`` in one batch (retrying on a lost race); returns (old entry, new value).

        ``expect(entries)`` may raise to refuse the write after reading (compare-and-set); it is
        re-checked on each retry. ``subject``: the end user the written versions are about
        (:mod:`memstack.foundation.keyspace.subjects`), stored in each version and registered.

        Raises:
            InvalidValue: a new value would exceed 1 MiB of JSON (a list grown by appends);
                nothing is written.
        """
        keys = [w.key for w in writes]
        while True:
            entries = self.read_many(keys)
            if expect is not None:
                expect(entries)
            now = self.engine.now_ms()
            values = [w.make(e) for w, e in zip(writes, entries, strict=True)]
            texts = [
                _sized(w.key, encode_entry(value, entry.version + 1, writer, now, subject))
                for w, entry, value in zip(writes, entries, values, strict=True)
            ]
            batch = self.engine.batch()
            for key, entry in zip(keys, entries, strict=True):
                batch.require_equal(self.entry_key(key), entry.raw)
            for w, entry, value, text in zip(writes, entries, values, texts, strict=True):
                version = entry.version + 1
                batch.set(self.entry_key(w.key), text)
                register(self.engine, batch, subject, "shared", self.name, w.key)
                if w.custom and not entry.exists:
                    batch.zadd(self.index, {w.key: float(now)})
                if w.notify:
                    message = self._message(
                        w.key, value, entry, version, writer, now, correlation_id, subject
                    )
                    batch.publish(self.channel, message)
            if batch.execute().applied:
                return list(zip(entries, values, strict=True))

    def _message(
        self,
        key: str,
        value: Any,
        old: Entry,
        version: int,
        writer: str | None,
        now: int,
        correlation_id: str | None,
        subject: str | None,
    ) -> str:
        return dumps(
            {
                "k": key,
                "v": value,
                "p": old.value,
                "w": writer,
                "n": self.network_name,
                "t": now,
                "ver": version,
                "c": correlation_id,
                "s": subject,
                "ps": old.subject,
            }
        )

    def delete(self, key: str, *, custom: bool, subject: str | None = None) -> Entry:
        """Remove ``key`` atomically; returns what it held. With ``subject``, only a version
        labelled with it goes (a version someone else wrote over it stays, and is returned)."""
        while True:
            entry = self.read(key)
            if not entry.exists or (subject is not None and entry.subject != subject):
                return entry
            batch = self.engine.batch()
            batch.require_equal(self.entry_key(key), entry.raw)
            batch.delete(self.entry_key(key))
            if custom:
                batch.zrem(self.index, key)
            if batch.execute().applied:
                return entry

    def drop(self, keys: Sequence[str], *, also: Sequence[str] = ()) -> None:
        """Delete custom ``keys`` (entries and index) and the entries of ``also``, in one batch."""
        batch = self.engine.batch()
        entry_keys = [self.entry_key(k) for k in [*keys, *also]]
        if entry_keys:
            batch.delete(*entry_keys)
        if keys:
            batch.zrem(self.index, *keys)
        if batch.ops:
            batch.execute()


def _sized(key: str, text: str) -> str:
    """``text`` if the entry it stores keeps its value within the value size limit."""
    limit = MAX_VALUE_BYTES + _ENVELOPE_BYTES
    if len(text) * 4 > limit and len(text.encode("utf-8")) > limit:
        raise InvalidValue(f"{key}: the value would exceed the limit of {MAX_VALUE_BYTES} bytes of JSON")
    return text


def parse_message(text: str) -> dict[str, Any]:
    """A change message as published by :meth:`SharedStorage.write`."""
    message: dict[str, Any] = json.loads(text)
    return message
