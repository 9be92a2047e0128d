"""Which shared boards exist: a scan of the tier's keys through the engine seam.

A board exists while it holds a key, a cached answer or a document: a ``shared:m:{name}:k:…``,
``shared:c:{name}:e:…`` or ``shared:d:{name}:doc:…`` key (see :mod:`.storage`, :mod:`.cache`,
:mod:`.documents`); its change logs and counters alone do not make it exist. The scan reads key
names only; its cost grows with the number of shared keys of the engine.
"""

from __future__ import annotations

from typing import Final

from ...engines import Engine

__all__ = ["list_boards"]

_PREFIX: Final = "shared:"
_DATA: Final = {"m": "k:", "c": "e:", "d": "doc:"}
"""Each family's data keys, after ``shared:{family}:{name}:``."""


def list_boards(engine: Engine) -> list[str]:
    """The names of the boards of ``engine`` that hold anything, sorted.

    Raises:
        EngineUnavailable: the engine cannot be reached.

    >>> import memstack
    >>> with memstack.open("memory://") as mem:
    ...     mem.shared("team")["plan"] = ["research"]
    ...     list_boards(mem.engine)
    ['team']
    """
    found = set()
    for key in engine.scan(_PREFIX):
        family, _, rest = key[len(_PREFIX) :].partition(":")
        data = _DATA.get(family)
        if data is None:
            continue
        if engine.clustered and rest.startswith("{"):
            name, _, rest = rest[1:].partition("}:")
        else:
            name, _, rest = rest.partition(":")
        if name and rest.startswith(data):
            found.add(name)
    return sorted(found)
