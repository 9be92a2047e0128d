"""The long-term data model: :class:`MemoryEntry`, :class:`SearchHit`, and their JSON form.

One JSON form serves the engine and RockBot's file layout: camelCase fields
``id, content, category, tags, createdAt, updatedAt, metadata`` with ISO 8601 UTC times, and
``subject`` on a version labelled with the end user it is about. The validity fields
``validFrom, validTo, supersededBy, expiresAt`` are written only when set, so an entry that has
none keeps RockBot's file shape.

Validity: an entry holds from ``valid_from`` (its creation unless another start was given) until
``valid_to`` (set when another entry supersedes it, ``superseded_by`` naming that entry), and
lives until ``expires_at``. :func:`current_at` and :func:`valid_at` are the two rules every search,
listing and context uses.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Final

from ...foundation.errors import InvalidValue
from ...foundation.keyspace.subjects import LABEL, labelled
from ...foundation.limits import short_repr
from ...foundation.timefmt import iso_utc

__all__ = [
    "NO_CATEGORY",
    "MemoryEntry",
    "SearchHit",
    "current_at",
    "entry_from_dict",
    "entry_json",
    "entry_to_dict",
    "from_json",
    "on_grid",
    "to_json",
    "valid_at",
]


NO_CATEGORY = "uncategorized"
"""The one word every text (tools, context, dream prompts) shows for an entry without a category; not
"general", which a user may well use as a category of their own."""


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One long-term memory.

    Attributes:
        id: lower-case id (12 hex characters when generated).
        content: the fact or preference (non-blank).
        category: a slash-separated path such as ``user-preferences/music``, or None.
        tags: searchable labels, in the order given.
        created_at: timezone-aware UTC time of creation.
        updated_at: time of the last update, None if never updated.
        metadata: free JSON data (a fresh copy on every read).
        subject: the end user this version is about (None: unlabelled; see
            :mod:`memstack.foundation.keyspace.subjects`).
        given_valid_from: the start of validity given at save, or None when none was given (then
            the fact holds since ``created_at``). Stored apart so that "not given" stays known: an
            entry with no validity field of its own keeps RockBot's file shape and stays out of
            the validity index. Read :attr:`valid_from` for the start itself.
        valid_to: when it stopped being true (set by the entry superseding it), or None.
        superseded_by: the id of the entry that replaced this one, or None.
        expires_at: when the entry expires (hidden from searches, then deleted by the retention
            sweep), or None.
    """

    id: str
    content: str
    category: str | None = None
    tags: tuple[str, ...] = ()
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    updated_at: datetime | None = None
    metadata: dict[str, Any] | None = None
    subject: str | None = None
    given_valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: str | None = None
    expires_at: datetime | None = None

    @property
    def valid_from(self) -> datetime:
        """When the fact became true: the start given at save, else ``created_at``. The same value
        as ``valid_from`` in the JSON of every door."""
        return self.given_valid_from or self.created_at

    @property
    def valid_since(self) -> datetime:
        """The older name of :attr:`valid_from`, kept so existing code keeps working."""
        return self.valid_from

    @property
    def last_changed(self) -> datetime:
        """``updated_at`` or, never updated, ``created_at`` (what recency listing sorts by)."""
        return self.updated_at or self.created_at

    def copy(self) -> MemoryEntry:
        """This entry with its own copy of ``metadata`` (callers may mutate what they get)."""
        if self.metadata is None:
            return self
        return replace(self, metadata=_copied(self.metadata))


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One search result: the entry, its final score and what each retriever said.

    ``score`` ranks the hits (higher is better) and means what ranked them; it compares hits of one
    search, not of two searches:

    * hybrid search (the ``default`` search profile's ``evidence`` fusion): ``bm25_part +
      vector_part``, what BM25 explained of the query's IDF mass and the cosine's margin over the
      scope's background, each weighted (:mod:`memstack.search.evidence`; a scope of conversation
      turns uses the ``evidence-turns`` weights); comparable across searches, so ``min_score`` can be
      a fixed number. Searches that propagate along conversations (a scope holding conversation
      turns) then add a share of neighbouring turns' scores, and re-score their first 50 turns
      (:mod:`memstack.search.turn_rerank`): ``score - bm25_part - vector_part``.
      Other fusion profiles have their own scales (``default``: min-max normalised, in ``[0, 1]``).
    * BM25-alone search: the raw BM25 score (``>= 0``, unbounded, grows with rare query terms), except
      on a scope holding conversation turns with a propagating profile, where BM25-alone searches are
      fused too (as a hybrid search whose vectors found nothing; :mod:`memstack.search.retrieval`).
    * a reranked search: the reranker's score; a recency listing (no query): 0.

    ``bm25`` is the raw BM25 score (None when BM25 did not find it), ``vector`` the cosine
    similarity (None without a vector match); ``sources`` names the retrievers that found it
    (``"bm25"``, ``"vector"``), ``("neighbours",)`` for a turn that neither retriever found but whose
    conversation neighbour ranked (the ``neighbour_weight`` option of a search profile), or
    ``("recent",)`` for a query-less recency listing. ``bm25_part`` and ``vector_part`` are the two
    terms of an ``evidence`` fused score (None for other fusions, BM25-alone searches outside
    conversations and reranked hits); the inspector shows them.
    """

    entry: MemoryEntry
    score: float
    bm25: float | None = None
    vector: float | None = None
    sources: tuple[str, ...] = ()
    bm25_part: float | None = None
    vector_part: float | None = None


def on_grid(seconds: float) -> float:
    """``seconds`` on the microsecond grid of the stored times (a save's ``valid_to`` is the
    clock's time rounded to a microsecond: comparing it with the raw clock would miss by a hair)."""
    return datetime.fromtimestamp(seconds, UTC).timestamp()


def current_at(entry: MemoryEntry, at: float) -> bool:
    """Whether ``entry`` is current at ``at`` (epoch seconds): not superseded by then (no
    ``valid_to``, or a later one) and not expired by then. What searches show by default."""
    at = on_grid(at)
    if entry.valid_to is not None and entry.valid_to.timestamp() <= at:
        return False
    return entry.expires_at is None or entry.expires_at.timestamp() > at


def valid_at(entry: MemoryEntry, at: float) -> bool:
    """Whether the fact of ``entry`` held at ``at`` (epoch seconds): ``valid_from <= at <
    valid_to`` (what an ``as_of`` search shows, with the expiry checked at that time too)."""
    at = on_grid(at)
    if entry.valid_from.timestamp() > at:
        return False
    return entry.valid_to is None or at < entry.valid_to.timestamp()


_IMMUTABLE = (str, int, float, bool, type(None))


def _copied(value: Any) -> Any:
    """A deep copy of JSON-shaped ``value``; metadata is JSON, and ``copy.deepcopy`` walking it cost
    ~35 us a search hit (its memo and dispatch), most of a search's copying. Anything else is
    handed to ``copy.deepcopy``."""
    kind = type(value)
    if kind is dict:
        return {key: _copied(item) for key, item in value.items()}
    if kind is list:
        return [_copied(item) for item in value]
    if kind in _IMMUTABLE:
        return value
    return copy.deepcopy(value)


_COMPACT: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _time_to_str(value: datetime) -> str:
    return value.astimezone(UTC).isoformat()


def _time_from_str(value: object, name: str) -> datetime:
    if not isinstance(value, str):
        raise InvalidValue(f"{name} {short_repr(value)}: must be an ISO 8601 time string")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    except ValueError as exc:
        raise InvalidValue(f"{name} {short_repr(value)}: not an ISO 8601 time ({exc})") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def entry_to_dict(entry: MemoryEntry, *, copy_metadata: bool = True) -> dict[str, Any]:
    """The camelCase JSON object of ``entry`` (``subject`` only on a labelled version, so an
    unlabelled entry keeps RockBot's file shape). ``copy_metadata=False`` shares the metadata
    (for a caller that only encodes the object)."""
    data = {
        "id": entry.id,
        "content": entry.content,
        "category": entry.category,
        "tags": list(entry.tags),
        "createdAt": _time_to_str(entry.created_at),
        "updatedAt": None if entry.updated_at is None else _time_to_str(entry.updated_at),
        "metadata": copy.deepcopy(entry.metadata) if copy_metadata and entry.metadata else entry.metadata,
    }
    for name, when in (("validFrom", entry.given_valid_from), ("validTo", entry.valid_to)):
        if when is not None:
            data[name] = _time_to_str(when)
    if entry.superseded_by is not None:
        data["supersededBy"] = entry.superseded_by
    if entry.expires_at is not None:
        data["expiresAt"] = _time_to_str(entry.expires_at)
    return labelled(data, entry.subject)


def entry_from_dict(data: object) -> MemoryEntry:
    """Read a JSON object (field names case-insensitive, as RockBot reads its files).

    Only the shape is checked here; :mod:`.validate` checks the rules before a save.

    Raises:
        InvalidValue: not an object, a missing id/content/createdAt, or a field of the wrong type.
    """
    if not isinstance(data, dict):
        raise InvalidValue(f"memory entry {short_repr(data)}: must be a JSON object")
    fields = {str(k).lower(): v for k, v in data.items()}
    entry_id, content = fields.get("id"), fields.get("content")
    if not isinstance(entry_id, str) or not isinstance(content, str):
        raise InvalidValue(f"memory entry {short_repr(data)}: 'id' and 'content' must be strings")
    category = fields.get("category")
    if category is not None and not isinstance(category, str):
        raise InvalidValue(
            f"memory entry {short_repr(entry_id)}: category {short_repr(category)} must be a string or null"
        )
    tags = fields.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise InvalidValue(
            f"memory entry {short_repr(entry_id)}: tags {short_repr(tags)} must be a list of strings"
        )
    metadata = fields.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidValue(
            f"memory entry {short_repr(entry_id)}: metadata {short_repr(metadata)} must be an object or null"
        )
    subject = fields.get(LABEL)
    if subject is not None and not isinstance(subject, str):
        raise InvalidValue(
            f"memory entry {short_repr(entry_id)}: subject {short_repr(subject)} must be a string or null"
        )
    updated = fields.get("updatedat")
    superseded_by = fields.get("supersededby")
    if superseded_by is not None and not isinstance(superseded_by, str):
        raise InvalidValue(
            f"memory entry {short_repr(entry_id)}: supersededBy {short_repr(superseded_by)} "
            "must be a string or null"
        )
    return MemoryEntry(
        id=entry_id,
        content=content,
        category=category,
        tags=tuple(tags),
        created_at=_time_from_str(fields.get("createdat"), "createdAt"),
        updated_at=None if updated is None else _time_from_str(updated, "updatedAt"),
        metadata=metadata,
        subject=subject,
        given_valid_from=_optional_time(fields, "validfrom", "validFrom"),
        valid_to=_optional_time(fields, "validto", "validTo"),
        superseded_by=superseded_by,
        expires_at=_optional_time(fields, "expiresat", "expiresAt"),
    )


def _optional_time(fields: dict[str, Any], key: str, name: str) -> datetime | None:
    value = fields.get(key)
    return None if value is None else _time_from_str(value, name)


def entry_json(entry: MemoryEntry) -> dict[str, Any]:
    """The one JSON shape of an entry on every surface (:func:`memstack.ops.wire.memory_json`):
    snake_case fields, ISO-8601 UTC times ending in ``Z``; ``valid_from`` is always the time the
    fact became true (:attr:`MemoryEntry.valid_from`), the other validity fields null when unset."""
    return {
        "id": entry.id,
        "content": entry.content,
        "category": entry.category,
        "tags": list(entry.tags),
        "created_at": iso_utc(entry.created_at),
        "updated_at": iso_utc(entry.updated_at),
        "metadata": entry.metadata,
        "valid_from": iso_utc(entry.valid_from),
        "valid_to": iso_utc(entry.valid_to),
        "superseded_by": entry.superseded_by,
        "expires_at": iso_utc(entry.expires_at),
    }


def to_json(entry: MemoryEntry, *, indent: int | None = None) -> str:
    """``entry`` as a JSON string (compact unless ``indent``)."""
    if not indent:
        return _COMPACT.encode(entry_to_dict(entry, copy_metadata=False))
    return json.dumps(entry_to_dict(entry), ensure_ascii=False, indent=indent, separators=(",", ": "))


def from_json(text: str) -> MemoryEntry:
    """Parse :func:`to_json` output.

    Raises:
        InvalidValue: malformed JSON or entry shape.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidValue(f"memory entry JSON is malformed: {exc}") from None
    return entry_from_dict(data)
