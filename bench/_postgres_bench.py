"""What the benches say about the PostgreSQL server they ran on, and a durable server of their own.

A PostgreSQL figure means little without the server's durability: with ``fsync=off`` or
``synchronous_commit=off`` a commit returns before its WAL is on disk, so a bare one-statement
write costs a few tens of microseconds where a production server (both on, PostgreSQL's defaults)
waits for the disk. Benches that run on PostgreSQL print the settings and add ``durable=1`` (both
on) or ``durable=0`` to their ``RESULT`` line; ``--postgres`` runs them on a throwaway server of
their own with PostgreSQL's defaults (``tests/_postgres_server.py``: ``initdb`` and ``pg_ctl`` on a
free loopback port; as root, as the ``postgres`` user).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["add_postgres", "describe", "durable", "server_settings", "target_url"]

_SHOWN = ("server_version", "fsync", "synchronous_commit", "full_page_writes", "wal_sync_method")
_SYNCHRONOUS = ("on", "local", "remote_write", "remote_apply")
"""``synchronous_commit`` values that wait for the local WAL flush."""


def add_postgres(parser: argparse.ArgumentParser) -> None:
    """Add ``--postgres`` (start a durable server of the bench's own) to a bench's options."""
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="start a throwaway PostgreSQL server (PostgreSQL's defaults: fsync and synchronous "
        "commit on) and run on it",
    )


@contextlib.contextmanager
def target_url(args: argparse.Namespace) -> Iterator[str | None]:
    """``args.url``, or with ``--postgres`` the URL of a durable server started for the run."""
    if not getattr(args, "postgres", False):
        yield args.url
        return
    if args.url:
        raise SystemExit("--postgres starts its own server: give it or --url, not both")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from _postgres_server import postgres_server, wait_ready

    with postgres_server(settings=()) as server:  # PostgreSQL's defaults: durable
        wait_ready(server.url)
        yield server.url


def server_settings(url: str) -> dict[str, str]:
    """The settings of the server at memstack URL ``url`` that decide what a commit costs."""
    import psycopg

    from memstack.engines.postgres.url import parse

    target = parse(url, statement_timeout=30, tcp_timeout=10, connect_timeout=5)
    with psycopg.connect(target.conninfo, autocommit=True) as conn:
        return {name: str(conn.execute(f"SHOW {name}").fetchone()[0]) for name in _SHOWN}  # type: ignore[index]  # SHOW always returns a row


def durable(settings: dict[str, str]) -> bool:
    """True when a commit waits until its WAL is flushed to disk (production's setting)."""
    return settings.get("fsync") == "on" and settings.get("synchronous_commit") in _SYNCHRONOUS


def describe(settings: dict[str, str]) -> str:
    """One line naming the server's version, durability and the settings behind it."""
    kind = "durable" if durable(settings) else "NOT durable (commits do not wait for the disk)"
    shown = " ".join(f"{name}={settings[name]}" for name in _SHOWN[1:])
    return f"PostgreSQL {settings['server_version']}, {kind}: {shown}"
