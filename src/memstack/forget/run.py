"""``forget``: remove every trace of one session, conversation, long-term scope, working-memory
namespace or shared board, then prove it with a verification scan.

Each selector is a row of :data:`PLANS`: the steps that remove its tiers' data (a step returns
``{tier: count}``) and the prefixes and index references the verification scan checks afterwards.
Every step is bounded and idempotent (:mod:`memstack.forget.sweep`), so a forget interrupted by a
crash finishes when run again; the report's ``remaining`` is then 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ..engines import Engine
from ..errors import Conflict, InvalidValue
from ..limits import short_repr
from ..longterm.layout import PREFIX as LT_PREFIX
from ..longterm.layout import ScopeKeys, injected_key
from ..longterm.validate import check_scope
from ..session.layout import PREFIX as SESSION_PREFIX
from ..session.layout import SESSIONS_KEY
from .report import ForgetReport
from .subjects import check_subject, subject_key
from .sweep import BATCH_KEYS, delete_keys, delete_prefix
from .turn_log import forget_session_turns

if TYPE_CHECKING:
    from .._memory import Memory

__all__ = ["PLANS", "SELECTORS", "forget"]

SELECTORS: Final = ("subject", "session", "conversation", "scope", "namespace", "board")
"""The selectors of :func:`forget`, one per call."""

Counts = dict[str, int]

MAX_ROUNDS: Final = 20
"""Rounds a step makes while writers keep adding to what it forgets, before it gives up (Conflict)."""


@dataclass(frozen=True, slots=True)
class Plan:
    """How one selector forgets: ``steps`` remove, ``leftovers`` counts what a scan still finds."""

    check: Callable[[str], str]
    steps: tuple[Callable[[Memory, str], Counts], ...]
    leftovers: Callable[[Memory, str], int]


# -- long-term scope -----------------------------------------------------------------------------
def _scope_entries(mem: Memory, scope: str) -> Counts:
    """Entries leave with their id-set member and vector in one batch each (never a half-object,
    even next to writers); the index keys go last, only once the id set is empty."""
    engine = mem.engine
    keys = ScopeKeys.of(engine, scope)
    removed = untracked = 0
    for _ in range(MAX_ROUNDS):
        ids = sorted(engine.smembers(keys.ids))
        if ids:  # injection trackers first: while the ids exist, a re-run finds them again
            for key in sorted(engine.scan(f"{LT_PREFIX}~inj:")):
                untracked += int(engine.srem(key, *ids))
        # every process's cache rebuilds instead of serving what goes; no snapshot keeps its terms
        engine.delete(keys.epoch, keys.snapshot, keys.snapshot_version)
        for start in range(0, len(ids), BATCH_KEYS):
            chunk = ids[start : start + BATCH_KEYS]
            with engine.batch() as batch:
                batch.delete(*[keys.entry(i) for i in chunk])
                batch.srem(keys.ids, *chunk)
                batch.hdel(keys.vectors, *chunk)
            assert batch.result is not None
            removed += int(batch.result.results[0])
        done, count = _guarded_sweep(
            engine,
            keys.ids,
            sorted(engine.scan(keys.entry_prefix)),
            (
                keys.epoch,
                keys.vectors,
                keys.version,
                keys.log,
                keys.snapshot,
                keys.snapshot_version,
                keys.deletions,
            ),
        )
        removed += count
        if done:
            return {"long_term": removed, "subject_index": untracked}
    raise Conflict(f"scope {short_repr(scope)}: writers kept adding entries; forget it again")


def _guarded_sweep(engine: Engine, index: str, orphans: list[str], last: tuple[str, ...]) -> tuple[bool, int]:
    """Delete ``orphans`` and then ``last`` in bounded batches, each guarded by ``index`` (a set)
    being gone: while it is, no key under the prefix is reachable, so nothing deleted here can be
    a writer's fresh value. False when a writer re-created the index (go round again)."""
    removed = 0
    chunks = [orphans[i : i + BATCH_KEYS] for i in range(0, len(orphans), BATCH_KEYS)] or [[]]
    for n, chunk in enumerate(chunks):
        doomed = [*chunk, *last] if n == len(chunks) - 1 else chunk
        with engine.batch() as batch:
            batch.require_missing(index)
            batch.delete(*doomed)
        assert batch.result is not None
        if not batch.result.applied:
            return False, removed
        removed += int(batch.result.results[-1])
    return True, removed


def _scope_dream(mem: Memory, scope: str) -> Counts:
    from ..dream.keys import DreamKeys

    keys = DreamKeys.of(mem.engine, scope)
    return {"dream": delete_prefix(mem.engine, keys.base, (keys.records,))}


def _scope_leftovers(mem: Memory, scope: str) -> int:
    from ..dream.keys import DreamKeys

    engine = mem.engine
    base = ScopeKeys.of(engine, scope).base
    left = sum(1 for _ in engine.scan(base)) + sum(1 for _ in engine.scan(DreamKeys.of(engine, scope).base))
    removed_ids = {key[len(base) + 2 :] for key in engine.scan(base + "e:")}  # none once complete
    if removed_ids:
        left += sum(
            1 for key in engine.scan(f"{LT_PREFIX}~inj:") for i in engine.smembers(key) if i in removed_ids
        )
    return left


# -- session -------------------------------------------------------------------------------------
def _session_base(mem: Memory, session_id: str) -> str:
    return f"{SESSION_PREFIX}{mem.engine.tag(session_id)}:"


def _session_state(mem: Memory, session_id: str) -> Counts:
    """Values leave with their key-set member in one batch each; the structure goes last, once the
    key set is empty (a racing ``put`` sends it round again)."""
    from ..session.layout import Layout

    engine = mem.engine
    layout = Layout(engine.tag(session_id))
    removed = int(engine.srem(SESSIONS_KEY, session_id))
    for _ in range(MAX_ROUNDS):
        members = sorted(engine.smembers(layout.keys))
        for start in range(0, len(members), BATCH_KEYS):
            chunk = members[start : start + BATCH_KEYS]
            with engine.batch() as batch:
                batch.delete(*[layout.data(k) for k in chunk])
                batch.srem(layout.keys, *chunk)
            assert batch.result is not None
            removed += int(batch.result.results[0])
        leftovers = [k for k in engine.scan(_session_base(mem, session_id)) if k != layout.keys]
        done, count = _guarded_sweep(engine, layout.keys, sorted(leftovers), layout.structural())
        removed += count
        if done:
            return {"sessions": removed}
    raise Conflict(f"session {short_repr(session_id)}: writers kept adding keys; forget it again")


def _session_traces(mem: Memory, session_id: str) -> Counts:
    working = 0
    namespace = f"session/{session_id.lower()}"
    if _valid_namespace(namespace):
        working = _forget_namespace(mem, namespace)["working"]
    return {
        "turn_log": forget_session_turns(mem.turns, session_id)
        if _valid_turn_session(mem, session_id)
        else 0,
        "subject_index": delete_keys(mem.engine, [injected_key(mem.engine, session_id)]),
        "working": working,
        "conversations": _session_windows(mem, session_id),
    }


def _session_windows(mem: Memory, session_id: str) -> int:
    """The sliding windows (``win:``) of every workflow and node kept for the session."""
    doomed = [key for key in mem.engine.scan("win:") if _window_session(key) == session_id]
    return delete_keys(mem.engine, sorted(doomed))


def _window_session(key: str) -> str | None:
    body = key[len("win:") :]
    body = body[2:] if body.startswith("n:") else body
    tag = body.split(":", 1)[0].strip("{}") if not body.startswith("{") else body[1 : body.find("}")]
    return tag.rsplit("__", 1)[-1] if "__" in tag else None


def _session_leftovers(mem: Memory, session_id: str) -> int:
    engine = mem.engine
    left = sum(1 for _ in engine.scan(_session_base(mem, session_id)))
    left += int(engine.sismember(SESSIONS_KEY, session_id))
    left += int(engine.exists(injected_key(engine, session_id)))
    if _valid_turn_session(mem, session_id):
        left += int(engine.exists(mem.turns.session_key(session_id)))
        left += sum(1 for line in engine.lrange(mem.turns.log_key, 0, -1) if f'"{session_id}"' in line)
    left += sum(1 for key in engine.scan("win:") if _window_session(key) == session_id)
    namespace = f"session/{session_id.lower()}"
    return left + (_namespace_leftovers(mem, namespace) if _valid_namespace(namespace) else 0)


def _valid_turn_session(mem: Memory, session_id: str) -> bool:
    from ..errors import InvalidSessionId

    try:
        mem.turns.session_key(session_id)
    except InvalidSessionId:
        return False
    return True


def _check_session(session_id: str) -> str:
    from ..session.validate import check_session_id

    return check_session_id(session_id)


# -- conversation --------------------------------------------------------------------------------
def _conversation_base(mem: Memory, conversation_id: str) -> str:
    from ..conversation.store import PREFIX

    return f"{PREFIX}{mem.engine.tag(conversation_id)}:"


def _conversation(mem: Memory, conversation_id: str) -> Counts:
    """The count and the log go first, in one batch (the conversation is then gone for every
    reader), then the message-id index seen before it."""
    engine = mem.engine
    base = _conversation_base(mem, conversation_id)
    index = sorted(key for key in engine.scan(base) if key not in (base + "n", base + "log"))
    removed = int(engine.delete(base + "n", base + "log"))
    return {"conversations": removed + delete_keys(engine, index)}


def _conversation_leftovers(mem: Memory, conversation_id: str) -> int:
    return sum(1 for _ in mem.engine.scan(_conversation_base(mem, conversation_id)))


def _check_conversation(conversation_id: str) -> str:
    from ..conversation.message import check_conversation_id

    return check_conversation_id(conversation_id)


# -- working memory ------------------------------------------------------------------------------
def _valid_namespace(namespace: str) -> bool:
    from ..errors import InvalidKey
    from ..working import keys as wkeys

    try:
        wkeys.normalize_prefix(namespace)
    except InvalidKey:
        return False
    return True


def _namespaces_under(mem: Memory, prefix: str) -> list[str]:
    from ..working import keys as wkeys

    top = prefix.split("/", 1)[0]
    registry = f"wm:{mem.engine.tag('wm')}:ns:{top}"
    return sorted(ns for ns in mem.engine.smembers(registry) if wkeys.covers(prefix, ns))


def _forget_namespace(mem: Memory, prefix: str) -> Counts:
    """Every entry under ``prefix`` (segment-aware): whole namespaces, or part of one."""
    from ..working import keys as wkeys

    removed = 0
    if prefix.count("/") >= 2:  # inside one namespace: its entries under the prefix
        removed += mem.working(wkeys.namespace_of(prefix)).clear(prefix)
        return {"working": removed}
    for namespace in _namespaces_under(mem, prefix):
        removed += mem.working(namespace).clear()
    return {"working": removed}


def _namespace_leftovers(mem: Memory, prefix: str) -> int:
    from ..working import keys as wkeys

    if prefix.count("/") >= 2:
        namespace = wkeys.namespace_of(prefix)
        return sum(1 for e in mem.working(namespace).list(prefix) if wkeys.covers(prefix, e.key))
    return sum(len(mem.working(ns).list()) for ns in _namespaces_under(mem, prefix))


def _check_namespace(prefix: str) -> str:
    from ..working import keys as wkeys

    return wkeys.normalize_prefix(prefix)


# -- shared board --------------------------------------------------------------------------------
def _board_bases(mem: Memory, board: str) -> tuple[str, ...]:
    tag = mem.engine.tag(board)
    return (f"shared:m:{tag}:", f"shared:c:{tag}:", f"shared:d:{tag}:")


def _board(mem: Memory, board: str) -> Counts:
    from ..shared import SharedMemory

    shared = SharedMemory(mem.engine, board)
    try:
        shared.clear()  # publishes the deletions: every process's mirror of the board empties
    finally:
        shared.close()
    data, cache, documents = _board_bases(mem, board)
    return {
        "shared": delete_prefix(mem.engine, data) + delete_prefix(mem.engine, documents),
        "semantic_cache": delete_prefix(mem.engine, cache),
    }


def _board_leftovers(mem: Memory, board: str) -> int:
    return sum(1 for base in _board_bases(mem, board) for _ in mem.engine.scan(base))


def _check_board(board: str) -> str:
    from ..shared.serialize import check_name

    return check_name(board)


# -- subject -------------------------------------------------------------------------------------
def _subject(mem: Memory, subject: str) -> Counts:
    """Every object registered for the subject (:mod:`memstack.forget.subjects`); each member
    leaves the set once its object is gone, so a re-run goes on where a crash stopped."""
    from ..dream.record import RecordStore
    from ..shared import SharedMemory

    engine = mem.engine
    key = subject_key(engine, subject)
    counts: Counts = {}

    def add(more: Mapping[str, int]) -> None:
        for tier, count in more.items():
            counts[tier] = counts.get(tier, 0) + count

    entries: dict[str, list[str]] = {}
    for member in sorted(engine.smembers(key)):
        tier, *parts = member.split("\t")
        if tier in ("session", "conversation") and len(parts) == 1:
            whole = forget(mem, session=parts[0]) if tier == "session" else forget(mem, conversation=parts[0])
            add(whole.deleted)
        elif tier == "long_term" and len(parts) == 2:
            entries.setdefault(parts[0], []).append(parts[1])
            continue  # removed below, scope by scope, with their traces
        elif tier == "working" and len(parts) == 2:
            add({"working": int(mem.working(parts[0]).delete(parts[1]))})
        elif tier == "shared" and len(parts) == 2:
            board = SharedMemory(engine, parts[0])
            try:
                add({"shared": int(board.delete(parts[1]) is not None)})
            finally:
                board.close()
        add({"subject_index": int(engine.srem(key, member))})
    for scope, ids in sorted(entries.items()):
        memories = mem.long_term(scope, embedder=None)
        for key_name in sorted(engine.scan(f"{LT_PREFIX}~inj:")):
            add({"subject_index": int(engine.srem(key_name, *ids))})
        records = RecordStore(engine, scope)
        for record in records.history(limit=1 << 30):  # records holding a copy of a forgotten entry
            held = {a.entry.id for a in record.retired} | {c.entry.id for c in record.created}
            if held & set(ids):
                add({"dream": int(engine.delete(records.keys.record(record.id)))})
                engine.zrem(records.keys.records, record.id)
        # One batch per chunk of entries, then their subject-index members in one call (another
        # slot on a cluster): bench/forget.py's forget_p50_ms is mostly these round trips.
        add({"long_term": memories.delete_many(ids)})
        members = [f"long_term\t{scope}\t{i}" for i in ids]
        for start in range(0, len(members), BATCH_KEYS):
            add({"subject_index": int(engine.srem(key, *members[start : start + BATCH_KEYS]))})
    return counts


def _subject_leftovers(mem: Memory, subject: str) -> int:
    return int(mem.engine.scard(subject_key(mem.engine, subject)))


PLANS: Final[Mapping[str, Plan]] = {
    "session": Plan(_check_session, (_session_state, _session_traces), _session_leftovers),
    "conversation": Plan(_check_conversation, (_conversation,), _conversation_leftovers),
    "scope": Plan(check_scope, (_scope_entries, _scope_dream), _scope_leftovers),
    "namespace": Plan(_check_namespace, (_forget_namespace,), _namespace_leftovers),
    "board": Plan(_check_board, (_board,), _board_leftovers),
    "subject": Plan(check_subject, (_subject,), _subject_leftovers),
}


def forget(mem: Memory, *, vacuum: bool = False, **selector: str | None) -> ForgetReport:
    """Remove every trace of exactly one selector (see :data:`SELECTORS`), then verify.

    The engine is compacted afterwards (SQLite: WAL checkpointed); ``vacuum`` also rebuilds a
    SQLite file so no stale copy survives in unused page space (slow on large files).

    Raises:
        InvalidValue: no selector, more than one, or an unknown one (the message lists them).
        InvalidKey: a value that breaks its tier's id rule (the tier's own error).
        Conflict: another forget holds the turn log (run again).
        EngineUnavailable: the engine went away (run again: the forget resumes).
    """
    given = {k: v for k, v in selector.items() if v is not None}
    unknown = sorted(set(given) - set(SELECTORS))
    if unknown or len(given) != 1:
        raise InvalidValue(
            f"forget {short_repr(given)}: give exactly one of {', '.join(SELECTORS)}"
            + (f" (unknown: {', '.join(unknown)})" if unknown else "")
        )
    ((kind, raw),) = given.items()
    plan = PLANS[kind]
    value = plan.check(raw)
    deleted: Counts = {}
    for step in plan.steps:
        for tier, count in step(mem, value).items():
            deleted[tier] = deleted.get(tier, 0) + count
    mem.engine.compact(vacuum=vacuum)
    return ForgetReport({kind: value}, deleted, plan.leftovers(mem, value))
