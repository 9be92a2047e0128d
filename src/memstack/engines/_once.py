"""Each key once from a scan whose pages may repeat keys (Redis' ``SCAN``), in bounded memory.

Redis documents two guarantees of a full ``SCAN`` iteration and no more: every key present from its
start to its end is returned, and a key may be returned several times (when the server resizes its
table during the iteration, its cursor walks part of the table again, however far back the
smaller table reaches). Nothing bounds how far back a repeat comes from, so giving each key once
means remembering what was given. Remembering every key of a scan is unbounded memory; here at most
``limit`` keys are remembered at a time:

* One pass remembers the keys it gives. A scan of at most ``limit`` keys ends there (every tenant
  but the largest: one pass, as before).
* When the pass would remember more, it stops; what it gave stays remembered (``limit`` keys). A
  counting pass (nothing remembered) sizes ``parts`` so each holds about ``limit`` keys, and then
  one full pass per part gives the keys whose hash falls in that part and that the first pass did
  not give, each once (the part's own memory). A key present throughout is in every pass, so it is
  given by the first pass or by its part's; a key written or deleted during the scan may or may not
  be given, as the engine's own guarantee says.

At most about twice ``limit`` keys are held, at the price of ``parts + 2`` passes for a scan over
more keys than ``limit``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Final

__all__ = ["SCAN_SEEN", "scan_once"]

SCAN_SEEN: Final = 1_000_000
"""The most keys a scan of an engine that repeats keys remembers in one pass: about 95 MB of key
strings (``bench/scan_memory.py``). A smaller bound makes every larger scan several passes (a quarter
of the keys: 6.5 times the time at a million), which the engine-wide scans of a big Redis database
(the scopes it stores, the dream scheduler) would pay on every call."""

Pages = Callable[[], Iterator[list[str]]]
"""A full scan, page by page, started anew at each call."""


def scan_once(pages: Pages, limit: int = SCAN_SEEN) -> Iterator[str]:
    """Every key of ``pages()`` once; ``pages`` is called for each pass, the first one now (so a
    scan that cannot start raises at the call) and the others as the caller iterates."""
    return _first_pass(pages(), pages, limit)


def _first_pass(first: Iterator[list[str]], pages: Pages, limit: int) -> Iterator[str]:
    given: set[str] = set()
    for key in _keys(first):
        if key in given:
            continue
        if len(given) >= limit:
            yield from _by_parts(pages, given, limit)
            return
        given.add(key)
        yield key


def _by_parts(pages: Pages, given: set[str], limit: int) -> Iterator[str]:
    # An overcount where keys repeat, which only makes more, smaller parts.
    parts = sum(len(page) for page in pages()) // limit + 1
    given_by_part: list[set[str]] = [set() for _ in range(parts)]
    for key in given:
        given_by_part[hash(key) % parts].add(key)
    given.clear()
    for part in range(parts):
        skip, seen = given_by_part[part], set()
        for key in _keys(pages()):
            if hash(key) % parts == part and key not in skip and key not in seen:
                seen.add(key)
                yield key
        given_by_part[part] = set()  # this part is done: its keys are never met again


def _keys(pages: Iterable[list[str]]) -> Iterator[str]:
    for page in pages:
        yield from page
