"""Key patterns: how one family spells its keys, written once and used both ways (build and parse).

A pattern is literal text with three kinds of holes:

* ``<name>``: a scope part (a session id, a long-term scope, a board name...). On a clustered
  engine it is written as a hash tag (``engine.tag``: ``{value}``), so every key of one scope
  lands in one Redis Cluster slot; parsing accepts both forms and gives the bare value.
* ``<=text>``: a constant hash tag (``<=wm>`` is ``wm`` or ``{wm}``): keys of a registry that
  must share one slot whatever they hold.
* ``{name}``: a plain part (an entry id, a user's key), written as given.

Parts match the rules of :data:`PART_RULES` when they have one, so parsing a key is exact where
the ids are; the rest match any text (anchored at both ends, so a fixed suffix still decides).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

__all__ = ["PART_RULES", "Pattern", "Tag", "hash_tag", "no_tag"]

Tag = Callable[[str], str]
"""What writes a scope part into a key: ``engine.tag`` (``{value}`` on clustered engines)."""

PART_RULES: Final[Mapping[str, str]] = {
    "session": r"[A-Za-z0-9_-]{1,128}",
    "conversation": r"[A-Za-z0-9_-]{1,128}",
    "scope": r"[A-Za-z0-9_.@-]{1,128}",
    "board": r"[A-Za-z0-9_.-]{1,128}",
    "subject": r"[A-Za-z0-9_.@:+-]{1,256}",
    "namespace": r"[a-z0-9_.:@+=-]+/[A-Za-z0-9_.:@+=-]+",  # a session id keeps its case
    "top": r"[a-z0-9_.:@+=-]+",
    "turn_session": r"[A-Za-z0-9_./@:-]{1,256}",
    "code": r"\[.*\]",
    "window": r"[A-Za-z0-9.-]+(?:_[A-Za-z0-9.-]+)*__[A-Za-z0-9_.:@-]{1,128}",
    "node_window": r"(?:[A-Za-z0-9.-]+(?:_[A-Za-z0-9.-]+)*__){2}[A-Za-z0-9_.:@-]{1,128}",
    "batch": r"[0-9a-f]{16}",
    "batch_row": r"[0-9]+",
    "event": r"[0-9]+",
    "key_id": r"[0-9a-f]{12}",
    "minute": r"-?[0-9]+",
}
"""The characters a part may hold (the id rules of the tiers that write them), where it matters
for parsing: a part without a rule matches any text."""

_HOLE: Final = re.compile(r"<=([^<>]+)>|<([a-z_]+)>|\{([a-z_]+)\}")


def no_tag(value: str) -> str:
    """The tag of a non-clustered engine: the value as it is."""
    return value


def hash_tag(key: str) -> str | None:
    """The hash tag of ``key`` as Redis Cluster reads it (the text between the first ``{`` and the
    first ``}`` after it, when not empty), or None: keys with one tag share one slot."""
    start = key.find("{")
    if start < 0:
        return None
    end = key.find("}", start + 1)
    if end <= start + 1:
        return None
    return key[start + 1 : end]


@dataclass(frozen=True, slots=True)
class _Part:
    kind: str  # "lit", "tag" (a scope part), "const" (a constant tag) or "plain"
    text: str  # the literal, the part's name, or the constant


def _parts(pattern: str) -> tuple[_Part, ...]:
    out: list[_Part] = []
    at = 0
    for hole in _HOLE.finditer(pattern):
        if hole.start() > at:
            out.append(_Part("lit", pattern[at : hole.start()]))
        const, tagged, plain = hole.groups()
        if const is not None:
            out.append(_Part("const", const))
        elif tagged is not None:
            out.append(_Part("tag", tagged))
        else:
            out.append(_Part("plain", plain))
        at = hole.end()
    if at < len(pattern):
        out.append(_Part("lit", pattern[at:]))
    return tuple(out)


def _regex(parts: tuple[_Part, ...]) -> re.Pattern[str]:
    pieces = []
    for part in parts:
        if part.kind == "lit":
            pieces.append(re.escape(part.text))
        elif part.kind == "const":
            text = re.escape(part.text)
            pieces.append(rf"(?:\{{{text}\}}|{text})")
        else:
            rule = PART_RULES.get(part.text, r".+?")
            # A scope part is either one hash tag or the bare value; a plain part is never tagged.
            tag = rf"\{{(?P<{part.text}__t>{rule})\}}|" if part.kind == "tag" else ""
            pieces.append(rf"(?:{tag}(?P<{part.text}>{rule}))")
    return re.compile("".join(pieces) + r"\Z", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Pattern:
    """One key pattern (see the module docstring)."""

    text: str
    parts: tuple[_Part, ...] = field(init=False, repr=False, compare=False)
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts = _parts(self.text)
        object.__setattr__(self, "parts", parts)
        object.__setattr__(self, "regex", _regex(parts))

    @property
    def names(self) -> tuple[str, ...]:
        """The names of the pattern's parts, in order."""
        return tuple(p.text for p in self.parts if p.kind in ("tag", "plain"))

    @property
    def scope(self) -> str | None:
        """The name of the first scope part (``<name>``): whose data the key is; None: global."""
        return next((p.text for p in self.parts if p.kind == "tag"), None)

    @property
    def lead(self) -> str:
        """The literal text before the first part: what every key of the pattern starts with."""
        first = self.parts[0] if self.parts else None
        return first.text if first is not None and first.kind == "lit" else ""

    def render(self, tag: Tag, **values: str) -> str:
        """The key with every part filled in.

        Raises:
            KeyError: a part without a value (a programming error, never user input).
        """
        return "".join(self._pieces(tag, values, whole=True))

    def prefix(self, tag: Tag, **values: str) -> str:
        """The key text up to the first part without a value: what every key of those values
        starts with (a stem to append ids to, or a prefix to scan)."""
        return "".join(self._pieces(tag, values, whole=False))

    def _pieces(self, tag: Tag, values: Mapping[str, str], *, whole: bool) -> list[str]:
        out = []
        for part in self.parts:
            if part.kind == "lit":
                out.append(part.text)
            elif part.kind == "const":
                out.append(tag(part.text))
            elif part.text in values or whole:
                value = values[part.text]
                out.append(tag(value) if part.kind == "tag" else value)
            else:
                break
        return out

    def match(self, key: str) -> dict[str, str] | None:
        """The parts of ``key`` when it has this pattern (hash tags unwrapped), else None."""
        found = self.regex.match(key)
        if found is None:
            return None
        groups = found.groupdict()
        return {name: groups.get(f"{name}__t") or groups[name] for name in self.names}
