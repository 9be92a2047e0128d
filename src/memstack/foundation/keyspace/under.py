"""``KeyUnder``: a key of one family under an object's stem, declared once as a class attribute.

Key-layout classes (``ScopeKeys``, ``DreamKeys``) hold the stem of one scope in ``base``; each of
their whole-scope keys is that stem plus a family's tail from the registry. ``KeyUnder`` says so
in one line per key instead of one property each.
"""

from __future__ import annotations

from typing import Protocol, overload

from .classify import family_named

__all__ = ["KeyUnder"]


class _Based(Protocol):
    @property
    def base(self) -> str: ...


class KeyUnder:
    """``obj.base`` plus the tail of the family ``name`` (its literal start with ``prefix``: the
    prefix of ``e:{id}`` keys), read on an instance.

    Raises:
        KeyError: no family called ``name`` (when the class is defined).
    """

    __slots__ = ("tail",)

    def __init__(self, name: str, *, prefix: bool = False) -> None:
        family = family_named(name)
        self.tail = family.tail_prefix if prefix else family.tail

    @overload
    def __get__(self, obj: None, owner: type) -> KeyUnder: ...

    @overload
    def __get__(self, obj: _Based, owner: type) -> str: ...

    def __get__(self, obj: _Based | None, owner: type) -> KeyUnder | str:
        return self if obj is None else obj.base + self.tail
