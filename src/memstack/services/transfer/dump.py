"""Export and import every key of an engine (or of one tenant's view) as JSON lines.

One line per key: ``{"key", "type", "value", "pttl"}`` where ``value`` is a string, a dict
(hash), a sorted list (set), a list (list) or a list of ``[member, score]`` (zset) and ``pttl`` is
the remaining TTL in ms or null. The engine seam has no TYPE command, so the type is found by
asking the read commands in turn (each raises ``WrongType`` on a key of another type).

Keys of the :data:`DERIVED` families (of :mod:`memstack.foundation.keyspace`) are left out: they are caches
rebuilt from the rest, and a long-term scope's BM25 snapshot is megabytes of bytes that no import
limit would take.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final, TextIO

from ...engines import Engine, WrongType
from ...engines.base import Batch
from ...foundation.errors import InvalidValue
from ...foundation.jsontext import loads
from ...foundation.keyspace import family_of
from ...foundation.limits import check_json, check_text

__all__ = ["DERIVED", "dump_lines", "export_jsonl", "import_jsonl", "load_line", "read_key", "write_value"]

DERIVED: Final = frozenset(
    {
        "long_term.snapshot",
        "long_term.snapshot_version",
        "long_term.ann",
        "langgraph.snapshot",
        "langgraph.snapshot_version",
    }
)
"""The families an export leaves out (also under a tenant's prefix): BM25 snapshots
(memstack.tiers.longterm.snapshot), written again by the next writes of a big scope."""

_READERS: list[tuple[str, Callable[[Engine, str], Any]]] = [
    ("string", lambda e, k: e.get(k)),
    ("hash", lambda e, k: e.hgetall(k)),
    ("set", lambda e, k: sorted(e.smembers(k))),
    ("list", lambda e, k: e.lrange(k, 0, -1)),
    ("zset", lambda e, k: [[m, s] for m, s in e.zrange(k, 0, -1)]),
]


def read_key(engine: Engine, key: str) -> tuple[str, Any] | None:
    """``(type, value)`` of ``key`` in the export's shapes, or None when it does not exist."""
    for kind, reader in _READERS:
        try:
            value = reader(engine, key)
        except WrongType:
            continue
        if value is None or value == [] or value == {}:
            return None  # gone between the scan and the read
        return kind, value
    return None


def dump_lines(engine: Engine, prefix: str = "") -> Iterator[dict[str, Any]]:
    """One record per live key under ``prefix``, sorted by key."""
    for key in sorted(engine.scan(prefix)):
        family = family_of(key)[1]
        if family is not None and family[0].name in DERIVED:
            continue
        found = read_key(engine, key)
        if found is None:
            continue
        pttl = engine.pttl(key)
        yield {"key": key, "type": found[0], "value": found[1], "pttl": pttl if pttl > 0 else None}


def export_jsonl(
    engine: Engine, out: TextIO, prefix: str = "", progress: Callable[[], None] | None = None
) -> int:
    """Write every key under ``prefix`` to ``out``; returns the number of keys."""
    count = 0
    for record in dump_lines(engine, prefix):
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        count += 1
        if progress is not None:
            progress()
    return count


_MAX_PTTL = 100 * 365 * 24 * 3600 * 1000  # a century in ms: anything longer is not a TTL


def _strings(items: Any, what: str) -> list[str]:
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise InvalidValue(f"{what}: expected a list of strings")
    return items


def _zset(value: Any, what: str) -> dict[str, float]:
    if not isinstance(value, list):
        raise InvalidValue(f"{what}: expected a list of [member, score]")
    members: dict[str, float] = {}
    for pair in value:
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
            raise InvalidValue(f"{what}: expected a list of [member, score]")
        score = pair[1]
        if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
            raise InvalidValue(f"{what}: score {score!r} of {pair[0]!r} is not a finite number")
        members[pair[0]] = float(score)
    return members


def _checked(record: Any) -> tuple[str, str, Any, int | None]:
    """``(key, type, value, pttl)`` of an export record whose parts all have the export's shapes."""
    if not isinstance(record, dict) or not {"key", "type", "value"} <= record.keys():
        raise InvalidValue(f"not an export record: {str(record)[:80]!r}")
    key, kind, value, pttl = record["key"], record["type"], record["value"], record.get("pttl")
    if not isinstance(key, str) or not key:
        raise InvalidValue(f"not an export record: {str(record)[:80]!r}")
    check_text(key, "key")
    what = f"record for {key!r}"
    if pttl is not None and (
        isinstance(pttl, bool) or not isinstance(pttl, int) or not 0 < pttl <= _MAX_PTTL
    ):
        raise InvalidValue(f"{what}: pttl {pttl!r} is not null or a number of ms from 1 to {_MAX_PTTL}")
    if kind == "string" and isinstance(value, str):
        pass
    elif kind == "hash" and isinstance(value, dict):
        _strings(list(value.values()), what)
    elif kind in ("set", "list") and isinstance(value, list):
        _strings(value, what)
    elif kind == "zset":
        value = _zset(value, what)
    else:
        raise InvalidValue(f"{what}: type {kind!r} does not match its value")
    if kind != "string" and not value:
        raise InvalidValue(f"{what}: an empty {kind} (an export never holds one)")
    check_json(value, what)  # lone surrogates, from whichever parser the record came
    return key, kind, value, pttl


def load_line(engine: Engine, record: dict[str, Any]) -> None:
    """Write one exported record (replacing the key) in one atomic batch.

    Raises:
        InvalidValue: the record is not of the export format (wrong shapes, a TTL that is not a
            positive number of ms, a score that is not a finite number, a lone surrogate);
            nothing is written then.
    """
    key, kind, value, pttl = _checked(record)
    with engine.batch() as batch:
        batch.delete(key)
        write_value(batch, key, kind, value)
        if pttl:
            batch.pexpire(key, pttl)


def write_value(batch: Batch, key: str, kind: str, value: Any) -> None:
    """Add to ``batch`` the write of a value of :func:`read_key`'s shapes (a zset also as a dict)
    to the missing key ``key`` (a set is added to an existing one)."""
    if kind == "string":
        batch.set(key, value)
    elif kind == "hash":
        batch.hset(key, value)
    elif kind == "set":
        batch.sadd(key, *value)
    elif kind == "list":
        batch.rpush(key, *value)
    else:
        batch.zadd(key, value if isinstance(value, dict) else {m: float(s) for m, s in value})


def import_jsonl(engine: Engine, lines: Iterable[str], progress: Callable[[], None] | None = None) -> int:
    """Load exported lines (blank lines skipped); returns the number of keys written.

    Raises:
        InvalidValue: a line is not JSON, is nested too deep, or is not an export record (naming
            its line number); the lines before it are written.
    """
    count = 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            load_line(engine, loads(line, f"line {number}"))
        except InvalidValue as exc:
            message = str(exc)
            raise InvalidValue(
                message if message.startswith("line ") else f"line {number}: {message}"
            ) from None
        count += 1
        if progress is not None:
            progress()
    return count
