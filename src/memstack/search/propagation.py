"""Score propagation along conversations: neighbour turns and sessions share their fused scores.

Each function takes the fused scores of one search (``id -> score``) and plain lookups of the
conversation structure, and return new scores; they are options of a
:class:`~memstack.search.SearchProfile` (``neighbour_*`` and ``session_weight``), applied after fusion
(BM25-alone searches are fused too, with no vector hit).

``propagate``
    ``s'(i) = s(i) + weight · max(s(j) for the neighbours j of i)`` (0 when no neighbour scored), for
    every scored id and every neighbour of one: a turn next to a strong hit is pulled up with it (the
    answer right after a question, the second half of a split statement), and a neighbour that neither
    retriever found enters the list below the hit that brought it.
``speaker_boost``
    ``s'(i) = s(i) + weight`` when the query names i's speaker: "What did Melanie paint?" prefers
    Melanie's turns.
``session_boost``
    ``s'(i) = s(i) + weight · max(s(j) for the scored j in i's session)``: turns of the sessions that hold
    the best hits move up together. Only scored ids are re-scored (a session is many turns).

Searches run the same three steps on arrays (:mod:`memstack.search.thread_table`, equal to the bit);
these functions state them and are what that module is tested against.

A search profile applies them in the order ``propagate``, ``speaker_boost``, ``session_boost``, each
reading the scores the previous one returned. Within one function, scores are read from its input only
(one step, not iterated), so the result does not depend on the
order of ids; ties keep the order of first appearance (scored ids first, then added neighbours).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Mapping, Sequence

from memstack.foundation.errors import InvalidInput

__all__ = ["named_words", "propagate", "session_boost", "speaker_boost"]

_WORD = re.compile(r"\w+")


def named_words(text: str) -> set[str]:
    """The casefolded words of ``text`` (what :func:`speaker_boost` matches speaker names against)."""
    return {w.casefold() for w in _WORD.findall(text)}


def _idle(weight: float) -> bool:
    """Whether a boost of ``weight`` leaves the scores as they are (weight 0), once checked."""
    if not weight >= 0 or weight == float("inf"):
        raise InvalidInput(f"weight={weight!r} must be a finite number >= 0")
    return weight == 0


def propagate(
    scores: Mapping[str, float],
    neighbours: Callable[[str], Sequence[str]],
    weight: float,
    *,
    allowed: Callable[[str], bool] | None = None,
) -> dict[str, float]:
    """Every scored id plus its neighbours, each with ``s + weight · max(0, best neighbour score)``.

    ``neighbours(id)`` lists an id's conversation neighbours (empty: none); ``allowed`` (None: all)
    says whether an id that was not scored may be added.

    Raises:
        InvalidInput: ``weight`` negative, infinite or NaN.
    """
    if _idle(weight):
        return dict(scores)
    near = {entry_id: neighbours(entry_id) for entry_id in scores}
    added: dict[str, Sequence[str]] = {}
    for found in near.values():
        for other in found:
            if other not in near and other not in added and (allowed is None or allowed(other)):
                added[other] = neighbours(other)
    near.update(added)
    get = scores.get
    out: dict[str, float] = {}
    for entry_id, around in near.items():
        best = 0.0
        for other in around:
            score = get(other, 0.0)
            if score > best:
                best = score
        out[entry_id] = get(entry_id, 0.0) + weight * best
    return out


def session_boost(
    scores: Mapping[str, float], session_of: Callable[[str], Hashable | None], weight: float
) -> dict[str, float]:
    """Every scored id with ``s + weight · max(0, best score of its session)`` (ids whose session is
    None keep their score).

    Raises:
        InvalidInput: ``weight`` negative, infinite or NaN.
    """
    if _idle(weight):
        return dict(scores)
    sessions = {entry_id: session_of(entry_id) for entry_id in scores}
    best: dict[Hashable, float] = {}
    for entry_id, session in sessions.items():
        if session is not None:
            best[session] = max(best.get(session, 0.0), scores[entry_id])
    return {
        entry_id: score + (0.0 if (s := sessions[entry_id]) is None else weight * best[s])
        for entry_id, score in scores.items()
    }


def speaker_boost(
    scores: Mapping[str, float], speaker_of: Callable[[str], str | None], query: str, weight: float
) -> dict[str, float]:
    """Every scored id with ``s + weight`` when its speaker is named in ``query`` (any word of the
    speaker's name, casefolded, among the query's words), its score unchanged otherwise.

    Raises:
        InvalidInput: ``weight`` negative, infinite or NaN.
    """
    if _idle(weight):
        return dict(scores)
    words = named_words(query)
    named: dict[str, bool] = {}
    out: dict[str, float] = {}
    for entry_id, score in scores.items():
        speaker = speaker_of(entry_id)
        if speaker is None:
            out[entry_id] = score
            continue
        hit = named.get(speaker)
        if hit is None:
            hit = named[speaker] = not named_words(speaker).isdisjoint(words)
        out[entry_id] = score + weight if hit else score
    return out
