"""Glob patterns for key subscriptions, translated to anchored regular expressions (pure).

Real glob semantics, matched against the whole key:

* ``*`` any run of characters (including none and ``:``),
* ``?`` exactly one character,
* ``[abc]``, ``[a-z]`` one character of the class; ``[!abc]`` or ``[^abc]`` one character not in it;
  ``]`` first in a class is literal (``[]a]``); an unclosed ``[`` is a literal ``[``; an inverted
  range (``[z-a]``) matches nothing, as in :mod:`fnmatch`,
* ``\\`` makes the next character literal,
* every other character is literal (``.``, ``+``, ``(``, ``$``, ``|`` ... have no regex meaning).
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["compile_glob", "glob_match", "glob_to_regex"]


def _class(pattern: str, start: int) -> tuple[str, int] | None:
    """The regex of the class opening at ``pattern[start] == '['`` and the index after it."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    if negate:
        i += 1
    items: list[str] = []
    first = True
    while i < len(pattern):
        c = pattern[i]
        if c == "]" and not first:
            body = "".join(items)
            if not body:  # only inverted ranges: no character matches, or any does when negated
                return ("." if negate else "(?!)"), i + 1
            return ("[^" if negate else "[") + body + "]", i + 1
        first = False
        if c == "\\" and i + 1 < len(pattern):
            items.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if i + 2 < len(pattern) and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            low, high = c, pattern[i + 2]
            if low <= high:  # an inverted range matches nothing (as fnmatch); in a regex it is an error
                items.append(re.escape(low) + "-" + re.escape(high))
            i += 3
            continue
        items.append(re.escape(c))
        i += 1
    return None


def glob_to_regex(pattern: str) -> str:
    """The anchored regex source equivalent to glob ``pattern``."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append(".*")
            i += 1
        elif c == "?":
            out.append(".")
            i += 1
        elif c == "[":
            parsed = _class(pattern, i)
            if parsed is None:
                out.append(re.escape(c))
                i += 1
            else:
                out.append(parsed[0])
                i = parsed[1]
        elif c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return r"\A(?s:" + "".join(out) + r")\Z"


@lru_cache(maxsize=1024)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """The compiled matcher of ``pattern``."""
    return re.compile(glob_to_regex(pattern))


def glob_match(pattern: str, key: str) -> bool:
    """True if the whole ``key`` matches glob ``pattern``."""
    return compile_glob(pattern).match(key) is not None
