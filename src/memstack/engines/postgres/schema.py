"""The PostgreSQL engine's schema: its SQL resources, rendered from the command table, and the
version table that lets a memstack create, migrate, or refuse a schema.

The tables (``schema.sql``), helpers (``helpers.sql``) and the batch
interpreter (``batch.sql``, created twice: a write function and a read-only one) are
package resources with placeholders; :func:`render` fills them with the schema's quoted name and
facts of :data:`~memstack.engines.commands.COMMANDS` (each command's key type, which commands name
all their arguments as keys, which are guards), so the interpreter cannot drift from the table.

``{schema}.meta`` holds ``schema_version`` (the layout of the tables, :data:`SCHEMA_VERSION`) and
``functions`` (a digest of the rendered functions). :func:`ensure_schema`, under a transaction-level
advisory lock so concurrent first opens create the schema once:

* no ``meta`` table: creates everything;
* an older ``schema_version``: runs each step of :data:`MIGRATIONS` from it to ours;
* a newer one: refuses (:class:`~memstack.foundation.errors.EngineError`): an old memstack never writes a
  schema it does not know;
* the same version with another ``functions`` digest: replaces the functions (code, not data).

Every step runs in one transaction: another session sees the old schema or the new one.
"""

from __future__ import annotations

import hashlib
import json
import re
import zlib
from functools import cache
from importlib.resources import files
from typing import Any, Final

from ...foundation.errors import EngineError, InvalidUrl
from ..commands import COMMANDS, Command

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Names", "ensure_schema", "render"]

SCHEMA_VERSION: Final = 1
"""The table layout this memstack reads and writes."""

MIGRATIONS: Final[dict[int, str]] = {}
"""``{from_version: SQL}``: the step that brings a schema of ``from_version`` to the next one
(rendered like the resources). Empty while there is only version 1."""

_IDENT: Final = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_PLACEHOLDER: Final = re.compile(r"\{(\w+)\}")
_CREATE_LOCK: Final = 0x6D656D73  # "mems": the advisory lock class of schema creation


class Names:
    """The names a schema's SQL uses: the quoted schema, its advisory lock class, its channel.

    Raises:
        InvalidUrl: ``schema`` is not a lower-case SQL identifier (1-63 of ``[a-z0-9_]``).
    """

    def __init__(self, schema: str) -> None:
        if _IDENT.fullmatch(schema) is None:
            raise InvalidUrl(
                f"schema {schema!r}: must be 1-63 characters of a-z, 0-9 and '_', not starting with a digit"
            )
        self.schema = schema
        self.quoted = f'"{schema}"'
        # Keys of two schemas never contend for one lock; crc32 is stable across processes.
        self.lock = zlib.crc32(schema.encode()) & 0x7FFFFFFF
        channel = f"memstack.{schema}"
        if len(channel) > 63:  # NOTIFY channels are identifiers: 63 bytes at most
            channel = f"memstack.{schema[:44]}.{self.lock:08x}"
        self.channel = channel
        """The one NOTIFY channel of the schema (memstack channels travel in the payload)."""


_FAMILIES: Final = ("string", "hash", "set", "list", "zset")
"""Family codes of ``{meta}`` (1-based): the batch function spells the same tuple."""


def _bits(command: Command) -> int:
    """``command``'s facts as the batch function reads them (see ``batch.sql``)."""
    bits = _FAMILIES.index(command.family) + 1 if command.family else 0
    if command.keys == "first":
        bits |= 8  # checks its one key's type (liveness too)
    if command.empty_noop:
        bits |= 16
    if command.kind == "write":
        bits |= 32 if command.keys == "all" else 64 if command.keys == "first" else 0
    if command.kind == "guard":
        bits |= 128
    return bits


def _facts() -> dict[str, str]:
    meta = json.dumps({n: _bits(c) for n, c in COMMANDS.items()}, separators=(",", ":"))
    return {"meta": "'" + meta.replace("'", "''") + "'"}


@cache
def _resource(name: str) -> str:
    return files(__package__).joinpath(name).read_text(encoding="utf-8")


def render(text: str, names: Names, **extra: str) -> str:
    """``text`` with ``{s}``, ``{lock}``, ``{channel}``, the command-table facts and ``extra``
    filled in (other braces, e.g. ``'{}'`` literals, stay as they are)."""
    values = {
        "s": names.quoted,
        "lock": str(names.lock),
        "channel": "'" + names.channel.replace("'", "''") + "'",
        **_facts(),
        **extra,
    }
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def tables_sql(names: Names) -> str:
    """The statements that create the tables (idempotent)."""
    return render(_resource("schema.sql"), names)


def functions_sql(names: Names) -> str:
    """The statements that (re)create every function."""
    batch = _resource("batch.sql")
    return "\n".join(
        [
            render(_resource("helpers.sql"), names),
            render(batch, names, fn="batch_write", volatility="VOLATILE"),
            render(batch, names, fn="batch_read", volatility="STABLE"),
        ]
    )


def _digest(sql: str) -> str:
    return hashlib.sha256(sql.encode()).hexdigest()[:16]


def ensure_schema(conn: Any, names: Names) -> int:
    """Create, migrate or accept the schema of ``names`` on ``conn`` (autocommit); returns the
    schema version found (0 when it was created).

    Raises:
        EngineError: the schema was written by a newer memstack (a higher ``schema_version``).
        psycopg.Error: the server refused a statement (the engine maps it).
    """
    s = names.quoted
    functions = functions_sql(names)
    digest = _digest(functions)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (_CREATE_LOCK, names.lock))
        found = conn.execute("SELECT to_regclass(%s)", (f"{s}.meta",)).fetchone()[0]
        stored: dict[str, str] = {}
        if found is not None:
            stored = dict(conn.execute(f"SELECT name, value FROM {s}.meta").fetchall())
        version = int(stored.get("schema_version", "0"))
        if version > SCHEMA_VERSION:
            raise EngineError(
                f"PostgreSQL schema {names.schema!r} has schema version {version}, written by a newer "
                f"memstack; this one knows versions up to {SCHEMA_VERSION} and will not write it: "
                "upgrade memstack (or use another schema)"
            )
        if version == SCHEMA_VERSION and stored.get("functions") == digest:
            return version
        if version == 0:
            conn.execute(tables_sql(names))
        for step in range(version or SCHEMA_VERSION, SCHEMA_VERSION):
            conn.execute(render(MIGRATIONS[step], names))
        # Functions are code: the old ones go whole (a signature may have changed), the new ones
        # come in the same transaction, so no other session ever sees the schema without them.
        old = conn.execute(
            "SELECT oid::regprocedure::text FROM pg_proc WHERE pronamespace = %s::regnamespace", (s,)
        ).fetchall()
        for (signature,) in old:
            conn.execute(f"DROP FUNCTION {signature}")
        conn.execute(functions)
        conn.execute(
            f"INSERT INTO {s}.meta (name, value) VALUES ('schema_version', %s), ('functions', %s) "
            "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            (str(SCHEMA_VERSION), digest),
        )
    return version
