"""Export and import every key of an engine (or of one tenant's view) as JSON lines.

One line per key: ``{"key", "type", "value", "pttl"}`` where ``value`` is a string, a dict
(hash), a sorted list (set), a list (list) or a list of ``[member, score]`` (zset) and ``pttl`` is
the remaining TTL in ms or null. The engine seam has no TYPE command, so the type is found by
asking the read commands in turn (each raises ``WrongType`` on a key of another type).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

from .engines import Engine, WrongType
from .errors import InvalidValue

__all__ = ["dump_lines", "export_jsonl", "import_jsonl", "load_line"]

_READERS: list[tuple[str, Callable[[Engine, str], Any]]] = [
    ("string", lambda e, k: e.get(k)),
    ("hash", lambda e, k: e.hgetall(k)),
    ("set", lambda e, k: sorted(e.smembers(k))),
    ("list", lambda e, k: e.lrange(k, 0, -1)),
    ("zset", lambda e, k: [[m, s] for m, s in e.zrange(k, 0, -1)]),
]


def _read(engine: Engine, key: str) -> tuple[str, Any] | None:
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
        found = _read(engine, key)
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


def load_line(engine: Engine, record: dict[str, Any]) -> None:
    """Write one exported record (replacing the key) in one atomic batch.

    Raises:
        InvalidValue: the record is not of the export format.
    """
    try:
        key, kind, value, pttl = record["key"], record["type"], record["value"], record.get("pttl")
    except (KeyError, TypeError) as exc:
        raise InvalidValue(f"not an export record: {str(record)[:80]!r}") from exc
    if not isinstance(key, str) or (pttl is not None and not isinstance(pttl, int)):
        raise InvalidValue(f"not an export record: {str(record)[:80]!r}")
    with engine.batch() as batch:
        batch.delete(key)
        if kind == "string" and isinstance(value, str):
            batch.set(key, value)
        elif kind == "hash" and isinstance(value, dict):
            batch.hset(key, {str(f): str(v) for f, v in value.items()})
        elif kind == "set" and isinstance(value, list):
            batch.sadd(key, *map(str, value))
        elif kind == "list" and isinstance(value, list):
            batch.rpush(key, *map(str, value))
        elif kind == "zset" and isinstance(value, list):
            batch.zadd(key, {str(m): float(s) for m, s in value})
        else:
            raise InvalidValue(f"record for {key!r}: type {kind!r} does not match its value")
        if pttl:
            batch.pexpire(key, pttl)


def import_jsonl(engine: Engine, lines: Iterable[str], progress: Callable[[], None] | None = None) -> int:
    """Load exported lines (blank lines skipped); returns the number of keys written.

    Raises:
        InvalidValue: a line is not JSON or not an export record (naming its line number); the
            lines before it are written.
    """
    count = 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidValue(f"line {number}: not JSON ({exc.msg})") from exc
        try:
            load_line(engine, record)
        except InvalidValue as exc:
            raise InvalidValue(f"line {number}: {exc}") from exc
        count += 1
        if progress is not None:
            progress()
    return count
