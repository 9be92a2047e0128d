"""The seam's command vocabulary as one typed table: every other list of commands derives from it.

One :class:`Command` per name says what the command is (read, write or guard), which of its
arguments are keys, what each argument must be, which key type it needs, what it does to its key
(creates it, may empty it), how the Redis codec encodes its arguments and decodes its reply, and
which errors it can raise. From this table come:

* :data:`READS`, :data:`WRITES`, :data:`GUARDS`, :data:`OPS` (re-exported by ``engines.base``);
* the argument checks every engine runs before its first write (``engines._checks``);
* the handler maps of the memory and SQLite engines (:func:`handler_map`, complete at import);
* the key rewriting of the tenant view (``engines.prefixed``);
* the Redis codec's encoders and decoders, and the per-command facts of the Lua script.

The conformance suite asserts that every engine implements exactly this table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..foundation.errors import InvalidInput, InvalidValue, MemstackError, NotANumber, WrongType

__all__ = [
    "COMMANDS",
    "GUARDS",
    "OPS",
    "READS",
    "WRITES",
    "Command",
    "handler_map",
]

Kind = Literal["read", "write", "guard"]
KeyArgs = Literal["first", "all", "none"]
Family = Literal["string", "hash", "set", "list", "zset"]

ARG_KINDS: Final = frozenset(
    {"key", "text", "text?", "int", "int?", "bool", "px?", "ms", "amount", "score", "fields", "scores"}
)
"""What an argument may be (see ``engines._checks``); a trailing ``*`` repeats the last kind."""


@dataclass(frozen=True, slots=True)
class Command:
    """One command of the seam.

    Attributes:
        name: the op name (``Op[0]``).
        kind: ``read`` (writes nothing), ``write`` or ``guard`` (aborts the batch when false).
        args: the kind of each positional argument; a last kind ending in ``*`` takes any number.
        keys: which arguments are keys: the ``first``, ``all`` of them, or ``none``.
        channel: the first argument is a pub/sub channel (prefixed like a key, hashed to no slot).
        family: the key type the command needs (WrongType on another), None when any type goes.
        creates: may create its key (as ``family``).
        shrinks: may remove elements, so its key may vanish when it becomes empty.
        empty_noop: with no members/fields it does nothing at all, not even a type check.
        encoder: name of the Redis codec's argument encoder (None: the arguments as text).
        reply: name of the Redis codec's reply decoder (None: the script's value as it is).
        failures: the errors the command can raise inside ``execute``.
    """

    name: str
    kind: Kind
    args: tuple[str, ...]
    keys: KeyArgs = "first"
    channel: bool = False
    family: Family | None = None
    creates: bool = False
    shrinks: bool = False
    empty_noop: bool = False
    encoder: str | None = None
    reply: str | None = None
    failures: tuple[type[MemstackError], ...] = ()

    @property
    def variadic(self) -> bool:
        """True when the last argument kind repeats."""
        return bool(self.args) and self.args[-1].endswith("*")


def _cmd(
    name: str,
    kind: Kind,
    *args: str,
    extra: tuple[type[MemstackError], ...] = (),
    **facts: Any,
) -> Command:
    # Every command can meet malformed arguments (InvalidInput) and text that is not valid
    # Unicode (InvalidValue); a typed one can meet a key of another type.
    failures: tuple[type[MemstackError], ...] = (InvalidInput, InvalidValue)
    if facts.get("family") is not None:
        failures += (WrongType,)
    return Command(name, kind, args, failures=failures + extra, **facts)


_TABLE: Final = (
    # keys
    _cmd("exists", "read", "key"),
    _cmd("delete", "write", "key*", keys="all"),
    _cmd("pexpire", "write", "key", "ms", encoder="ints"),
    _cmd("persist", "write", "key"),
    _cmd("pttl", "read", "key"),
    _cmd("copy_ttl", "write", "key", "key*", keys="all"),
    # strings
    _cmd("get", "read", "key", family="string"),
    _cmd("mget", "read", "key*", keys="all", reply="strings"),
    _cmd("set", "write", "key", "text", "px?", "bool", "bool", "bool", encoder="set"),
    _cmd(
        "incr", "write", "key", "amount",
        family="string", creates=True, encoder="incr", reply="number", extra=(NotANumber,),
    ),
    # hashes
    _cmd("hset", "write", "key", "fields", family="hash", creates=True, empty_noop=True, encoder="hset"),
    _cmd("hget", "read", "key", "text", family="hash"),
    _cmd("hmget", "read", "key", "text*", family="hash", reply="strings"),
    _cmd("hgetall", "read", "key", family="hash", reply="hash"),
    _cmd("hkeys", "read", "key", family="hash", reply="strings"),
    _cmd("hlen", "read", "key", family="hash"),
    _cmd("hdel", "write", "key", "text*", family="hash", shrinks=True),
    _cmd(
        "hincr", "write", "key", "text", "amount",
        family="hash", creates=True, encoder="hincr", reply="number", extra=(NotANumber,),
    ),
    # sets
    _cmd("sadd", "write", "key", "text*", family="set", creates=True, empty_noop=True),
    _cmd("srem", "write", "key", "text*", family="set", shrinks=True),
    _cmd("smembers", "read", "key", family="set", reply="set"),
    _cmd("sismember", "read", "key", "text", family="set"),
    _cmd("scard", "read", "key", family="set"),
    # lists
    _cmd("rpush", "write", "key", "text*", family="list", creates=True),
    _cmd("lpush", "write", "key", "text*", family="list", creates=True),
    _cmd("lrange", "read", "key", "int", "int", family="list", encoder="ints", reply="strings"),
    _cmd("llen", "read", "key", family="list"),
    _cmd("lindex", "read", "key", "int", family="list", encoder="ints"),
    _cmd("ltrim", "write", "key", "int", "int", family="list", shrinks=True, encoder="ints"),
    _cmd("lpop", "write", "key", family="list", shrinks=True),
    _cmd("rpop", "write", "key", family="list", shrinks=True),
    # sorted sets
    _cmd("zadd", "write", "key", "scores", family="zset", creates=True, empty_noop=True, encoder="zadd"),
    _cmd("zrem", "write", "key", "text*", family="zset", shrinks=True),
    _cmd("zscore", "read", "key", "text", family="zset", reply="score"),
    _cmd("zcard", "read", "key", family="zset"),
    _cmd("zrange", "read", "key", "int", "int", "bool", family="zset", encoder="zrange", reply="pairs"),
    _cmd(
        "zrangebyscore", "read", "key", "score", "score", "bool", "int", "int?",
        family="zset", encoder="zrangebyscore", reply="paged_pairs",
    ),
    # notifications
    _cmd("publish", "write", "text", "text", keys="none", channel=True),
    # guards
    _cmd("require_exists", "guard", "key"),
    _cmd("require_missing", "guard", "key"),
    _cmd("require_equal", "guard", "key", "text?", encoder="require_equal"),
)  # fmt: skip

COMMANDS: Final[Mapping[str, Command]] = {c.name: c for c in _TABLE}
"""Every command of the seam, by name, in the table's order."""

READS: Final = frozenset(n for n, c in COMMANDS.items() if c.kind == "read")
"""Commands that only read; a batch of reads needs no write lock."""
WRITES: Final = frozenset(n for n, c in COMMANDS.items() if c.kind == "write")
"""Commands that write (``publish`` counts: it is delivered only if its batch applies)."""
GUARDS: Final = frozenset(n for n, c in COMMANDS.items() if c.kind == "guard")
"""Commands that abort their batch (``applied=False``) when false; they come before any write."""
OPS: Final = READS | GUARDS | WRITES
"""Every command name an engine must execute."""


def _validate_table() -> None:
    for command in _TABLE:
        kinds = [a.removesuffix("*") for a in command.args]
        unknown = [a for a in kinds if a not in ARG_KINDS]
        if unknown or any(a.endswith("*") for a in command.args[:-1]):
            raise AssertionError(f"command table: {command.name!r} has bad argument kinds {command.args}")
        if command.kind == "read" and (command.creates or command.shrinks):
            raise AssertionError(f"command table: read {command.name!r} cannot create or shrink")
    if len(COMMANDS) != len(_TABLE):
        raise AssertionError("command table: a name appears twice")


_validate_table()


def handler_map(namespace: Mapping[str, Any], prefix: str, owner: str) -> dict[str, Callable[..., Any]]:
    """``{name: namespace[prefix + name]}`` for every command of the table.

    Raises:
        AssertionError: (at the importing engine's import) a command has no handler in
            ``namespace``, or ``namespace`` has a ``prefix``-named handler the table does not know.
    """
    missing = [n for n in COMMANDS if not callable(namespace.get(prefix + n))]
    extra = sorted(
        n[len(prefix) :]
        for n, v in namespace.items()
        if n.startswith(prefix) and callable(v) and n[len(prefix) :] not in COMMANDS
    )
    if missing or extra:
        raise AssertionError(f"{owner}: handlers missing for {missing}, unknown handlers {extra}")
    return {n: namespace[prefix + n] for n in COMMANDS}
