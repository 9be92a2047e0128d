"""On SQLite, forgotten bytes do not linger: with ``secure_delete``, the WAL checkpointed and
truncated, and the file rebuilt (``vacuum=True``), neither the database file nor its WAL holds the
marker any more. Without the rebuild a stale copy of a cell, left in a live page's unused space by
a page split before the delete, survived in 5 of 12 trials: hence the option."""

from __future__ import annotations

import secrets
from pathlib import Path

import memstack


def file_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def test_the_database_file_no_longer_contains_what_was_forgotten(tmp_path: Path) -> None:
    path = tmp_path / "forget.db"
    gone, kept = secrets.token_hex(8), secrets.token_hex(8)
    with memstack.open(f"sqlite:///{path}") as mem:
        for marker in (gone, kept):
            scope = mem.long_term(f"u{marker}")
            for n in range(200):  # enough rows to fill and free whole pages
                scope.save(content=f"secret {n} {marker} " + "x" * 200)
            mem.sessions.create(f"s{marker}")
            mem.sessions.put(f"s{marker}", "v", marker * 20)
        mem.engine.compact()
        assert gone.encode() in file_bytes(path)
        mem.forget(scope=f"u{gone}")
        mem.forget(session=f"s{gone}", vacuum=True)
        assert gone.encode() not in file_bytes(path)
        assert kept.encode() in file_bytes(path)
        assert len(mem.long_term(f"u{kept}").entries()) == 200
