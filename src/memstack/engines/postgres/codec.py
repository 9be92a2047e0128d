"""Pure encoding of seam batches for the PostgreSQL batch functions, and decoding of their replies.

The batch functions take the ops flat in one ``text[]`` exactly as the Redis script takes its
``ARGV`` (name, argument count, arguments) and answer the JSON the Redis script answers, so the
encoders and reply decoders are the Redis codec's, written once (:mod:`.codec`).

PostgreSQL text cannot hold NUL, which the seam allows anywhere in text. Text holding NUL or
``\\x01`` travels escaped with a prefix code that keeps byte order (``\\x00`` → ``\\x01\\x01``,
``\\x01`` → ``\\x01\\x02``): sorted-set ties, prefix scans and equality behave as on the original
text, and everything read back is unescaped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from hashlib import sha256
from typing import Any, Final

from ...foundation.errors import EngineError, MemstackError, NotANumber
from ..base import BatchResult, Op, WrongType
from ..redis import codec as _redis_codec

__all__ = ["decode", "encode", "error_of", "escape", "lock_ids", "unescape"]

_ESCAPED: Final = re.compile("\x01(.)", re.DOTALL)


def escape(text: str) -> str:
    """``text`` as PostgreSQL stores it (unchanged unless it holds NUL or ``\\x01``)."""
    if "\x00" in text or "\x01" in text:
        return text.replace("\x01", "\x01\x02").replace("\x00", "\x01\x01")
    return text


def unescape(text: str) -> str:
    """The original of stored ``text`` (see :func:`escape`)."""
    if "\x01" not in text:
        return text
    return _ESCAPED.sub(lambda m: "\x00" if m.group(1) == "\x01" else "\x01", text)


def _unescape_all(value: Any) -> Any:
    if isinstance(value, str):
        return unescape(value)
    if isinstance(value, list):
        return [_unescape_all(v) for v in value]
    return value


def encode(ops: Sequence[Op], *, write: bool) -> tuple[bytes, bool]:
    """The batch functions' ``argv`` for checked ``ops`` as a ``text[]`` literal (see
    ``batch.sql``: lock ids of a ``write`` batch, the keys, the ops), and whether no
    reply needs converting."""
    keys, argv, plain = _redis_codec.encode(ops, (), checked=True)
    flat = "".join(argv)
    if "\x00" in flat or "\x01" in flat:
        argv = [escape(a) for a in argv]
        keys = [escape(k) for k in keys]
    locks = ",".join(map(str, lock_ids(keys))) if write else ""
    # Every element quoted, so the literal reads back exactly. Escaped text holds no NUL: it
    # separates the elements while the whole is quoted in a few passes over one string (an
    # element at a time was the largest part of a batch's client time, bench/session_ops.py).
    joined = "\x00".join((locks, str(len(keys)), *keys, *argv))
    if '"' in joined or "\\" in joined:
        joined = joined.replace("\\", "\\\\").replace('"', '\\"')
    return ('{"' + joined.replace("\x00", '","') + '"}').encode(), plain


def lock_ids(keys: Sequence[str]) -> list[int]:
    """The advisory lock ids of stored ``keys``, sorted, each once: a batch locks them in this
    order, so two batches never deadlock. The first four bytes of the SHA-256 of the key's UTF-8,
    as a signed integer: ``_lock_id`` in ``helpers.sql`` computes the same on the
    server (the sweep), so both lock one key alike."""
    return sorted({int.from_bytes(sha256(k.encode()).digest()[:4], "big", signed=True) for k in keys})


def decode(ops: Sequence[Op], reply: str, plain: bool) -> BatchResult:
    """The :class:`BatchResult` of a batch function's JSON ``reply`` to ``ops``.

    Raises:
        EngineUnavailable: as :func:`.codec.decode` (a withdrawn reply is the Redis one).
    """
    if "\\u0001" in reply:  # escaped text came back: unescape every string first
        reply = json.dumps(_unescape_all(json.loads(reply)))
    return _redis_codec.decode(ops, reply, plain)


def error_of(sqlstate: str | None, message: str) -> MemstackError | None:
    """The memstack error a batch function raised (SQLSTATE ``MS…``), or None for another error."""
    if sqlstate == "MSWRT":
        key, actual, wanted = json.loads(message)
        return WrongType(f"key {unescape(key)!r} holds a {actual}, not a {wanted}")
    if sqlstate == "MSNAN":
        key, field, why = json.loads(message)
        label = unescape(key) if field is None else f"{unescape(key)}.{unescape(field)}"
        return NotANumber(f"cannot increment {label!r}: {unescape(why)}")
    if sqlstate == "MSBAD":
        return EngineError(f"PostgreSQL batch function refused the batch: {message}")
    return None
