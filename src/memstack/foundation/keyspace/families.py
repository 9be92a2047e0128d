"""Every family of records memstack writes, primary and derived, in one table (:data:`FAMILIES`).

Tiers build their keys from these rows (through :mod:`memstack.foundation.keyspace.layouts`); nothing else
spells a key prefix. Under a tenant's view every key is prefixed ``t:{tenant}:`` (see
:mod:`memstack.foundation.keyspace.tenants`), which is not part of the patterns.
"""

from __future__ import annotations

from typing import Final

from .family import Family, Stem

__all__ = ["CHANGE_LOG", "FAMILIES", "KEY_PREFIXES", "STEMS"]

GLOBAL: Final = Stem("")
SESSION: Final = Stem("rr:memory:<session>:")
CONVERSATION: Final = Stem("conv:<conversation>:")
WINDOW: Final = Stem("win:<window>:")
NODE_WINDOW: Final = Stem("win:n:<node_window>:")
TURNS: Final = Stem("turns:<=turns>:")
LONG_TERM: Final = Stem("lt:<scope>:")
INJECTED: Final = Stem("lt:~inj:<session>")
DREAM: Final = Stem("dream:<scope>:")
WORKING: Final = Stem("wm:<namespace>:")
WORKING_REGISTRY: Final = Stem("wm:<=wm>:")
SHARED: Final = Stem("shared:m:<board>:")
CACHE: Final = Stem("shared:c:<board>:")
DOCUMENTS: Final = Stem("shared:d:<board>:")
SUBJECT: Final = Stem("subj:<subject>:")
LANGGRAPH: Final = Stem("lg:<code>:")
LANGGRAPH_REGISTRY: Final = Stem("lg:<=~lg>:")
BATCH: Final = Stem("ms:batch:")

STEMS: Final = {
    "global": GLOBAL,
    "session": SESSION,
    "conversation": CONVERSATION,
    "window": WINDOW,
    "node_window": NODE_WINDOW,
    "turns": TURNS,
    "long_term": LONG_TERM,
    "injected": INJECTED,
    "dream": DREAM,
    "working": WORKING,
    "working_registry": WORKING_REGISTRY,
    "shared": SHARED,
    "cache": CACHE,
    "documents": DOCUMENTS,
    "subject": SUBJECT,
    "langgraph": LANGGRAPH,
    "langgraph_registry": LANGGRAPH_REGISTRY,
    "batch": BATCH,
}
"""The stems by name: the key prefix of one scope of one tier."""


CHANGE_LOG: Final = {"version": "ver", "log": "log", "epoch": "epoch", "ids": "ids"}
"""The tails of a change log's four records (:mod:`memstack.index.changelog`)."""


def _change_log(owner: str, stem: Stem, what: str, ids: str) -> tuple[Family, ...]:
    """The four records of a change log under ``stem``."""
    tails = CHANGE_LOG
    return (
        Family(
            f"{what}.version",
            owner,
            stem,
            tails["version"],
            "string",
            "counter",
            "scope",
            doc="+1 per change",
        ),
        Family(
            f"{what}.log", owner, stem, tails["log"], "list", "log", "scope", doc=f"'put|del {ids}' lines"
        ),
        Family(
            f"{what}.epoch", owner, stem, tails["epoch"], "string", "counter", "scope", doc="random token"
        ),
        Family(f"{what}.ids", owner, stem, tails["ids"], "set", "index", "scope", doc=f"every {ids}"),
    )


FAMILIES: Final[tuple[Family, ...]] = (
    # -- session state (RocketRide's layout): specific tails before the user's keys ----------
    Family("session.keys", "sessions", SESSION, "__keys__", "set", "index", "scope", doc="the keys"),
    Family("session.history", "sessions", SESSION, "__history__", "list", "log", "scope", doc="JSON entries"),
    Family("session.meta", "sessions", SESSION, "__meta__", "hash", "index", "scope", doc="created, TTL"),
    Family("session.generation", "sessions", SESSION, "#summary", "string", "counter", "scope"),
    Family("session.value", "sessions", SESSION, "{key}", "string", "value", "scope", doc="a JSON value"),
    Family(
        "session.registry",
        "sessions",
        GLOBAL,
        "rr:memory:__sessions__",
        "set",
        "registry",
        "members",
        members="session",
        doc="every session id",
    ),
    # -- conversations, node memory, sliding windows ----------------------------------------
    Family("conversation.count", "conversations", CONVERSATION, "n", "string", "counter", "scope"),
    Family(
        "conversation.log", "conversations", CONVERSATION, "log", "list", "value", "scope", doc="messages"
    ),
    Family("conversation.message", "conversations", CONVERSATION, "id:{message}", "string", "index", "scope"),
    Family(
        "conversation.owner",
        "conversations",
        CONVERSATION,
        "owner",
        "string",
        "index",
        "scope",
        doc="the user whose turns it holds",
    ),
    Family("conversation.node", "conversations", CONVERSATION, "node:{app}:{node}", "hash", "value", "scope"),
    Family("window.node_buffer", "conversations", NODE_WINDOW, "buf", "list", "value", "scope"),
    Family("window.node_seen", "conversations", NODE_WINDOW, "seen", "string", "counter", "scope"),
    Family("window.node_meta", "conversations", NODE_WINDOW, "meta", "hash", "index", "scope"),
    Family("window.buffer", "conversations", WINDOW, "buf", "list", "value", "scope", doc="messages"),
    Family("window.seen", "conversations", WINDOW, "seen", "string", "counter", "scope", doc="last access"),
    Family("window.meta", "conversations", WINDOW, "meta", "hash", "index", "scope", doc="ids, expiry"),
    # -- the turn log: one constant tag, the session inside the key -------------------------
    Family(
        "turns.session", "turn_log", TURNS, "s:{turn_session}", "list", "value", "scope", part="turn_session"
    ),
    Family("turns.sessions", "turn_log", TURNS, "sessions", "set", "registry", "members", members="session"),
    Family(
        "turns.lease", "turn_log", TURNS, "log:forget-lease", "string", "lease", "lease", doc="rewrite lock"
    ),
    Family("turns.log", "turn_log", TURNS, "log", "list", "log", "members", members="session"),
    # -- long-term memory --------------------------------------------------------------------
    Family("long_term.entry", "long_term", LONG_TERM, "e:{id}", "string", "value", "scope", labelled=True),
    Family("long_term.vectors", "long_term", LONG_TERM, "vec", "hash", "vector", "scope", doc="id -> vector"),
    Family("long_term.snapshot", "long_term", LONG_TERM, "snap", "string", "snapshot", "scope", doc="BM25"),
    Family("long_term.snapshot_version", "long_term", LONG_TERM, "snapver", "string", "counter", "scope"),
    Family("long_term.ann", "long_term", LONG_TERM, "ann", "string", "snapshot", "scope", doc="ANN graph"),
    Family("long_term.deletions", "long_term", LONG_TERM, "dels", "string", "counter", "scope"),
    Family(
        "long_term.history",
        "long_term",
        LONG_TERM,
        "h:{id}",
        "list",
        "log",
        "scope",
        labelled=True,
        doc="every change of one entry: old and new version, actor",
    ),
    Family(
        "long_term.expiry", "long_term", LONG_TERM, "exp", "zset", "index", "scope", doc="id -> expires_at"
    ),
    *_change_log("long_term", LONG_TERM, "long_term", "entry id"),
    Family(
        "long_term.injected",
        "long_term",
        INJECTED,
        "",
        "set",
        "index",
        "scope",
        members="entry",
        doc="memory ids injected in one session",
    ),
    # -- dream records (the archive), feedback, the pass lease -------------------------------
    Family("dream.record", "dream", DREAM, "rec:{record}", "string", "archive", "scope", labelled=True),
    Family("dream.records", "dream", DREAM, "recs", "zset", "index", "scope", doc="record id -> time"),
    Family("dream.feedback", "dream", DREAM, "fb", "list", "feedback", "scope", labelled=True),
    Family("dream.feedback_version", "dream", DREAM, "fbver", "string", "counter", "scope"),
    Family("dream.lease", "dream", DREAM, "lease", "string", "lease", "lease", doc="the running pass"),
    Family(
        "dream.cursor", "dream", DREAM, "cursor", "string", "index", "scope", doc="turns extracted so far"
    ),
    Family(
        "dream.pref_cursor",
        "dream",
        DREAM,
        "pcursor",
        "string",
        "index",
        "scope",
        doc="turns read so far",
    ),
    # -- working memory ----------------------------------------------------------------------
    Family(
        "working.meta", "working", WORKING, "m", "hash", "index", "scope", labelled=True, doc="key -> meta"
    ),
    Family("working.data", "working", WORKING, "d", "hash", "value", "scope", doc="key -> value"),
    Family("working.version", "working", WORKING, "v", "string", "counter", "scope"),
    Family(
        "working.namespaces",
        "working",
        WORKING_REGISTRY,
        "ns:{top}",
        "set",
        "registry",
        "members",
        members="namespace",
    ),
    Family("working.tops", "working", WORKING_REGISTRY, "tops", "set", "registry", "members", members="top"),
    # -- shared memory, its semantic cache and its documents ---------------------------------
    Family("shared.entry", "shared", SHARED, "k:{key}", "string", "value", "scope", labelled=True),
    Family("shared.keys", "shared", SHARED, "keys", "zset", "index", "scope", doc="custom keys"),
    Family("shared.changes", "shared", SHARED, "changes", "channel", "event", "scope", doc="change messages"),
    Family("cache.entry", "semantic_cache", CACHE, "e:{id}", "string", "cache", "scope", labelled=True),
    Family("cache.stats", "semantic_cache", CACHE, "stats", "hash", "statistics", "scope"),
    Family("cache.expiry", "semantic_cache", CACHE, "exp", "zset", "index", "scope"),
    *_change_log("semantic_cache", CACHE, "cache", "entry id"),
    Family("documents.doc", "shared", DOCUMENTS, "doc:{key}", "string", "document", "scope", labelled=True),
    *_change_log("shared", DOCUMENTS, "documents", "document key"),
    # -- subjects ------------------------------------------------------------------------------
    Family(
        "subject.objects",
        "subject_index",
        SUBJECT,
        "objs",
        "set",
        "index",
        "scope",
        members="object",
        doc="what a subject's writes reached",
    ),
    Family(
        "subject.turns",
        "subject_index",
        SUBJECT,
        "turns",
        "hash",
        "index",
        "scope",
        doc="conversation id -> time of its newest message",
    ),
    Family(
        "subject.pending",
        "subject_index",
        SUBJECT,
        "pending",
        "hash",
        "index",
        "scope",
        doc="remembered turns not yet searchable",
    ),
    # -- the LangGraph store (integrations): no selector reaches it ---------------------------
    Family("langgraph.item", "langgraph", LANGGRAPH, "e:{key}", "string", "value", "tenant"),
    Family("langgraph.vectors", "langgraph", LANGGRAPH, "vec", "hash", "vector", "tenant"),
    Family("langgraph.expiry", "langgraph", LANGGRAPH, "exp", "zset", "index", "tenant"),
    Family("langgraph.version", "langgraph", LANGGRAPH, "ver", "string", "counter", "tenant"),
    Family("langgraph.log", "langgraph", LANGGRAPH, "log", "list", "log", "tenant"),
    Family("langgraph.epoch", "langgraph", LANGGRAPH, "epoch", "string", "counter", "tenant"),
    Family("langgraph.ids", "langgraph", LANGGRAPH, "ids", "set", "index", "tenant"),
    Family("langgraph.snapshot", "langgraph", LANGGRAPH, "snap", "string", "snapshot", "tenant"),
    Family("langgraph.snapshot_version", "langgraph", LANGGRAPH, "snapver", "string", "counter", "tenant"),
    Family("langgraph.deletions", "langgraph", LANGGRAPH, "dels", "string", "counter", "tenant"),
    Family("langgraph.names", "langgraph", LANGGRAPH_REGISTRY, "ns", "set", "registry", "tenant"),
    Family("langgraph.ttls", "langgraph", LANGGRAPH_REGISTRY, "ttl", "set", "registry", "tenant"),
    Family(
        "langgraph.names_version", "langgraph", LANGGRAPH_REGISTRY, "nsver", "string", "counter", "tenant"
    ),
    Family(
        "langgraph.names_epoch", "langgraph", LANGGRAPH_REGISTRY, "nsepoch", "string", "counter", "tenant"
    ),
    # -- the service's API keys (outside every tenant prefix) --------------------------------
    Family(
        "auth.keys", "api_keys", GLOBAL, "auth:keys", "hash", "registry", "tenant", doc="key id -> record"
    ),
    Family(
        "auth.rate",
        "api_keys",
        GLOBAL,
        "auth:rate:<key_id>:{minute}",
        "string",
        "counter",
        "tenant",
        doc="requests of one API key in one minute (expires after two; a tenant purge drops its keys')",
    ),
    # -- the engines' own records ------------------------------------------------------------
    Family(
        "engine.batch_reply",
        "engine",
        BATCH,
        "<slot>:{batch}",
        "string",
        "reply",
        "carrier",
        doc="Redis: the first reply of a write batch, for a safe retry",
    ),
    Family("engine.batch_reply_untagged", "engine", BATCH, "{batch}", "string", "reply", "carrier"),
    Family(
        "engine.event",
        "engine",
        GLOBAL,
        "events:{event}",
        "row",
        "event",
        "carrier",
        doc="SQLite, PostgreSQL: a published message, kept for listeners in other processes",
    ),
    Family(
        "engine.batch_row",
        "engine",
        GLOBAL,
        "batches:{batch_row}",
        "row",
        "reply",
        "carrier",
        doc="PostgreSQL: the first reply of a write batch and its keys, for a safe retry",
    ),
    Family("engine.sequence", "engine", GLOBAL, "sqlite_sequence:{table}", "row", "counter", "keep"),
    Family(
        "engine.meta",
        "engine",
        GLOBAL,
        "meta:{name}",
        "row",
        "registry",
        "keep",
        doc="PostgreSQL: the schema's version and function digest",
    ),
    Family(
        "engine.sync",
        "engine",
        GLOBAL,
        "__memstack_sync__:{token}",
        "channel",
        "event",
        "keep",
        doc="Redis: a listener's barrier channel (never stored)",
    ),
)
"""Every family, in the order :func:`memstack.foundation.keyspace.classify.family_of` tries them."""


def _lead_segment(family: Family) -> str:
    text = family.stem.lead or family.pattern.lead
    return text if family.stem.lead else text.split(":", 1)[0] + ":"


KEY_PREFIXES: Final = tuple(sorted({_lead_segment(f) for f in FAMILIES}, key=lambda p: (-len(p), p)))
"""The literal start of every family's keys (``rr:memory:``, ``lt:``, ``auth:``...), longest first:
what marks a text as an internal key (error details never show one)."""
