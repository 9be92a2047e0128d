"""The Lua interpreter of seam batches, run by the Redis engine as one script per ``execute``.

:data:`SCRIPT` is built at import from three parts: a prelude of per-command facts generated from
the command table (``engines.commands``), and two package resources, ``incr.lua``
(increments) and ``batch.lua`` (the interpreter).

Call: ``KEYS`` = every key the batch touches, then, when ``ARGV[4]`` is not empty, a dedupe key;
``ARGV`` = ``now_ms``, ``bias``, ``probe`` (``1``: purge logically expired keys first), dedupe
TTL in ms or ``''``, then the ops flat from ``ARGV[5]``: name, argument count, arguments (all
text; the codec in :mod:`.codec` writes them). Reply: JSON ``[applied, results]``, or an
error reply ``MSWRONGTYPE …`` / ``MSNAN …`` / ``MSGUARD <name>`` (a guard after a write).

How it keeps the seam's rules on a server that neither rolls back scripts nor knows our clock:

* Logical expiry: the physical expire-time is the logical one plus ``bias``. With ``probe`` every
  key is purged first if its logical expire-time has passed on the engine clock; without it
  (the system clock, bias -1) Redis' own expiry is already the seam's.
* Check before write: arguments were checked by ``engines._checks`` before the call. A read-only
  first pass then checks the guards' order and verdicts and every key type and stored number the
  batch meets (64-bit overflow exactly); a failure it can be sure of returns before any write.
  Ops whose outcome depends on earlier ops of the same batch (a container that may have been
  emptied, a counter written before) are marked risky: every key is dumped before its first
  write up to the last of them, and a failure restores the dumps.
* ``publish`` runs after every other op succeeded.
* Dedupe: with a dedupe key, a batch that ran before returns the stored reply of its first run
  and applies nothing; an applied batch with a write stores its reply there for ``ARGV[4]`` ms.

Why flat arguments and not a JSON payload: ``cjson.decode`` builds a table per op, and for a
session put that cost more than every Redis command the script runs (``bench/session_ops.py``).
"""

from __future__ import annotations

from importlib import resources
from typing import Final

from ..commands import COMMANDS, Command

__all__ = ["CODES", "SCRIPT", "code_of", "facts_prelude"]

RESOURCES: Final = ("incr.lua", "batch.lua")
_PACKAGE: Final = __name__.rpartition(".")[0]


CODES: Final = {
    "r": "reads",
    "g": "a guard",
    "w": "writes its keys",
    "c": "writes, creating its key",
    "n": "writes, creating its key, and does nothing without members",
    "s": "writes, and may empty its key",
    "p": "writes no key (publish)",
}
"""The one-letter kind of a command in the script (compared inline, never looked up)."""


def code_of(command: Command) -> str:
    """The script's one-letter kind of ``command`` (see :data:`CODES`)."""
    if command.kind != "write":
        return command.kind[0]
    if command.keys == "none":
        return "p"
    if command.creates:
        return "n" if command.empty_noop else "c"
    return "s" if command.shrinks else "w"


def _facts() -> str:
    """``facts(name)`` -> family (or nil), kind letter: branches on the first byte, then names.

    Branches, not a table: a table built on every script call cost more than these comparisons.
    """
    by_letter: dict[str, list[Command]] = {}
    for command in COMMANDS.values():
        by_letter.setdefault(command.name[0], []).append(command)
    lines = ["local function facts(name)", "  local b = string.byte(name, 1)"]
    keyword = "if"
    for letter, commands in sorted(by_letter.items()):
        lines.append(f"  {keyword} b == {ord(letter)} then  -- {letter}*")
        for command in commands:
            family = "nil" if command.family is None else f"'{command.family}'"
            lines.append(f"    if name == '{command.name}' then return {family}, '{code_of(command)}' end")
        keyword = "elseif"
    lines += ["  end", "  return nil, nil", "end"]
    return "\n".join(lines)


def facts_prelude() -> str:
    """The Lua prelude of per-command facts, generated from the command table."""
    return "-- Generated from memstack.engines.commands; do not edit.\n" + _facts() + "\n"


def _resource(name: str) -> str:
    return resources.files(_PACKAGE).joinpath(name).read_text(encoding="utf-8")


SCRIPT: Final[str] = facts_prelude() + "".join(_resource(name) for name in RESOURCES)
"""The whole script, as sent to ``SCRIPT LOAD`` / ``EVAL``."""
