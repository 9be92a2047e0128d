"""The state of a :class:`~memstack.search.Bm25Index` as plain arrays, and its byte form.

What a snapshot of an index holds (live documents only, renumbered ``0..n-1`` in slot order):
their ids, lengths and insertion sequence numbers, and per term the slots that contain it with
their term frequencies (CSR: term ``t`` owns ``slots[offsets[t]:offsets[t+1]]``). No pickle: the
bytes may come from a shared store, so decoding only ever builds arrays and checks every bound.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from ..foundation.errors import InvalidValue

__all__ = ["Bm25State", "decode_state", "encode_state"]

_MAGIC: Final = b"memstack-bm25/1\n"


@dataclass(frozen=True, slots=True, eq=False)
class Bm25State:
    """An index's live documents and postings (see the module docstring for the layout)."""

    profile: str
    ids: list[str]
    lengths: npt.NDArray[np.float64]
    seq: npt.NDArray[np.int64]
    terms: list[str]
    offsets: npt.NDArray[np.int64]
    slots: npt.NDArray[np.int32]
    tfs: npt.NDArray[np.int32]

    def check(self) -> None:
        """Raise :class:`InvalidValue` unless every array agrees with the others."""
        n, t = len(self.ids), len(self.terms)
        postings = len(self.slots)
        problems = [
            (len(self.lengths) != n or len(self.seq) != n, "lengths/seq do not match ids"),
            (len(self.offsets) != t + 1, "offsets do not match terms"),
            (len(self.tfs) != postings, "tfs do not match slots"),
            (
                t and (self.offsets[0] != 0 or self.offsets[-1] != postings),
                "offsets do not span the postings",
            ),
            (t and bool(np.any(np.diff(self.offsets) < 0)), "offsets go backwards"),
            (
                postings and (int(self.slots.min()) < 0 or int(self.slots.max()) >= n),
                "a slot is out of range",
            ),
            (postings and int(self.tfs.min()) < 1, "a term frequency is below 1"),
            (n and (not np.all(np.isfinite(self.lengths)) or float(self.lengths.min()) < 0), "a bad length"),
            (len(set(self.ids)) != n, "duplicate ids"),
        ]
        for failed, what in problems:
            if failed:
                raise InvalidValue(f"BM25 snapshot: {what}")


def encode_state(state: Bm25State, meta: dict[str, object]) -> bytes:
    """``state`` and a JSON-able ``meta`` dict as bytes (a JSON header line, then raw arrays)."""
    header = {
        **meta,
        "profile": state.profile,
        "ids": state.ids,
        "terms": state.terms,
        "postings": len(state.slots),
    }
    head = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode()
    parts = [
        state.lengths.astype("<f8").tobytes(),
        state.seq.astype("<i8").tobytes(),
        state.offsets.astype("<i8").tobytes(),
        state.slots.astype("<i4").tobytes(),
        state.tfs.astype("<i4").tobytes(),
    ]
    return b"".join([_MAGIC, head, b"\n", *parts])


def decode_state(data: bytes) -> tuple[Bm25State, dict[str, object]]:
    """The state and meta dict that :func:`encode_state` wrote.

    The arrays are sized as the header says; whether they agree with each other is
    :meth:`Bm25State.check`'s to say (run by :meth:`~memstack.search.Bm25Index.from_state`).

    Raises:
        InvalidValue: not a snapshot, a bad header, truncated or trailing bytes.
    """
    if not data.startswith(_MAGIC):
        raise InvalidValue("BM25 snapshot: unknown format")
    end = data.find(b"\n", len(_MAGIC))
    try:
        header = json.loads(data[len(_MAGIC) : end])
        ids, terms, postings = header.pop("ids"), header.pop("terms"), int(header.pop("postings"))
        profile = header.pop("profile")
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise InvalidValue(f"BM25 snapshot: bad header ({exc})") from None
    if not (isinstance(ids, list) and isinstance(terms, list) and isinstance(profile, str)) or end < 0:
        raise InvalidValue("BM25 snapshot: bad header")
    meta: dict[str, object] = header
    n, t = len(ids), len(terms)
    sizes = [("<f8", n), ("<i8", n), ("<i8", t + 1), ("<i4", postings), ("<i4", postings)]
    arrays = []
    at = end + 1
    for dtype, count in sizes:
        width = np.dtype(dtype).itemsize * count
        if count < 0 or at + width > len(data):
            raise InvalidValue("BM25 snapshot: truncated")
        arrays.append(np.frombuffer(data, dtype=dtype, count=count, offset=at))
        at += width
    if at != len(data):
        raise InvalidValue("BM25 snapshot: trailing bytes")
    state = Bm25State(
        profile=profile,
        ids=ids if all(type(i) is str for i in ids) else [str(i) for i in ids],
        lengths=arrays[0].astype(np.float64),
        seq=arrays[1].astype(np.int64),
        terms=terms if all(type(t) is str for t in terms) else [str(t) for t in terms],
        offsets=arrays[2].astype(np.int64),
        slots=arrays[3].astype(np.int32),
        tfs=arrays[4].astype(np.int32),
    )
    return state, meta  # Bm25Index.from_state runs state.check() before using it
