"""A command line that forgives: root options after the command, "did you mean", hints naming the fix.

* **Root options anywhere.** ``--url``, ``--tenant``, ``--embedder``, ``--create`` and ``--json`` are
  options of ``memstack`` itself; given after the command (``memstack serve --url …``) they are moved
  before it, unless that command has an option of the same name of its own (``sessions put --create``
  creates the session, ``keys create --tenant`` names the key's tenant): then the command's wins.
* **Did you mean.** A mistyped command or option is answered with the nearest names.
* **Hints.** An error a command can foresee (a missing session for ``sessions put``, a memory looked
  for in the default scope) names the option that fixes it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

__all__ = ["ROOT_FLAGS", "ROOT_VALUED", "hint", "hoist_root_options", "suggest"]

ROOT_VALUED: Final = frozenset({"--url", "--tenant", "--embedder"})
"""Root options that take a value."""
ROOT_FLAGS: Final = frozenset({"--create", "--json"})
"""Root options that are flags."""


def suggest(word: str, choices: Iterable[str]) -> str:
    """`` Did you mean 'x'?`` (or ``'x' or 'y'``): the choices nearest ``word``; empty when none is."""
    near = difflib.get_close_matches(word, sorted(set(choices)), n=2, cutoff=0.6)
    if not near:
        return ""
    return " Did you mean " + " or ".join(repr(n) for n in near) + "?"


def _leaf(root: Any, argv: Sequence[str]) -> tuple[int, Any]:
    """Where the command path of ``argv`` ends, and its last command (None when there is none)."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in ROOT_VALUED else 1
    command = root
    while i < len(argv) and hasattr(command, "get_command") and not argv[i].startswith("-"):
        found = command.get_command(None, argv[i])
        if found is None:
            return i, None
        command, i = found, i + 1
    return i, (None if command is root else command)


def _own_options(command: Any) -> set[str]:
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}


def hoist_root_options(root: Any, argv: list[str]) -> list[str]:
    """``argv`` with the root options given after the command moved before it (see the module)."""
    start, leaf = _leaf(root, argv)
    if leaf is None:
        return argv
    own = _own_options(leaf)
    end = argv.index("--") if "--" in argv[start:] else len(argv)
    moved: list[str] = []
    kept: list[str] = []
    i = start
    while i < end:
        token = argv[i]
        name = token.split("=", 1)[0]
        if name in own or name not in ROOT_VALUED | ROOT_FLAGS:
            kept.append(token)
            i += 1
        elif name in ROOT_VALUED and "=" not in token and i + 1 < end:
            moved += [token, argv[i + 1]]
            i += 2
        else:
            moved.append(token)
            i += 1
    if not moved:
        return argv
    return [*moved, *argv[:start], *kept, *argv[end:]]


_HINTS: Final[Mapping[tuple[str, str], str]] = {
    ("sessions.put", "SessionNotFound"): "add --create to create the session with this key",
    ("sessions.increment", "SessionNotFound"): "create it first: sessions create SESSION_ID",
    ("memories.get", "EntryNotFound"): "name its scope with --scope SCOPE (memories scopes lists them)",
    ("memories.history", "EntryNotFound"): "name its scope with --scope SCOPE (memories scopes lists them)",
    ("memories.delete", "EntryNotFound"): "name its scope with --scope SCOPE (memories scopes lists them)",
}


def hint(operation: str, error: BaseException, given: Mapping[str, Any]) -> str:
    """The fix of ``error`` raised by ``operation`` when the command line foresees one, as
    ``; HINT``; empty otherwise. A ``--scope`` hint is given only when no scope was named."""
    text = _HINTS.get((operation, type(error).__name__))
    if text is None or ("--scope" in text and given.get("scope")):
        return ""
    return f"; {text}"
