"""``memstack doctor``: checks the installation, the engine and the settings ``serve`` would use."""

from __future__ import annotations

import importlib.metadata
import sys

import typer

from ...foundation.errors import InvalidConfiguration
from ...foundation.redact import redact, redact_url
from ...services.lifecycle.retention import parse_retention
from ...services.memory import Memory
from ._common import EmbedderOption, emit_table, memory, state

__all__ = ["doctor"]

EXTRAS: dict[str, list[str]] = {
    "server": ["fastapi", "uvicorn", "mcp"],
    "postgres": ["psycopg"],
    "embeddings": ["onnxruntime", "tokenizers"],
    "langgraph": ["langgraph"],
    "llamaindex": ["llama-index-core"],
    "openai-agents": ["openai-agents"],
    "adk": ["google-adk"],
    "crewai": ["crewai"],
    "autogen": ["autogen-core"],
}


def doctor(
    embedder: EmbedderOption = None,
) -> None:
    """Check the engine, print versions, the optional extras installed, the retrieval setting
    ``serve`` would use (mode, model, dimensions, entries still waiting for a vector) and the data
    stored without a tenant (``memstack tenants adopt`` moves it)."""
    rows = [{"check": "python", "result": sys.version.split()[0]}]
    for dist in ("memstack", "redis"):
        rows.append({"check": dist, "result": _version(dist)})
    for extra, dists in EXTRAS.items():
        found = {d: _version(d) for d in dists}
        ok = all(v != "missing" for v in found.values())
        listed = ", ".join(f"{d} {v}" for d, v in found.items())
        rows.append({"check": f"extra {extra}", "result": f"{'installed' if ok else 'missing'} ({listed})"})
    code = 0
    try:
        with memory() as mem:
            mem.engine.ping()
            rows.append(
                {"check": "engine", "result": f"{mem.engine.name} reachable at {redact_url(mem.engine.url)}"}
            )
            rows.extend(_engine_details(mem.engine))
            rows.append({"check": "retrieval", "result": _retrieval(mem, embedder or state.embedder)})
            rows.append({"check": "untenanted data", "result": _untenanted(mem)})
            rows.append({"check": "index caches", "result": _caches()})
            rows.extend(_policies())
    except typer.Exit as exc:
        rows.append({"check": "engine", "result": "unreachable"})
        code = exc.exit_code
    for row in rows:  # a setting or an endpoint's error may quote a key
        row["result"] = redact(row["result"])
    emit_table(rows, ["check", "result"], title="memstack doctor")
    if code:
        raise typer.Exit(code)


def _engine_details(engine: object) -> list[dict[str, str]]:
    """The lines an engine reports about itself through ``details()`` (PostgreSQL: server
    version, schema version, pool), looking through tenant and metrics views."""
    while getattr(engine, "inner", None) is not None:
        engine = engine.inner  # type: ignore[attr-defined]  # checked just above
    details = getattr(engine, "details", None)
    if not callable(details):
        return []
    return [{"check": f"engine {name}", "result": str(value)} for name, value in details().items()]


def _caches() -> str:
    """The in-process index caches against their bound (``MEMSTACK_INDEX_MEMORY_MB``); a doctor
    process holds none, so this is mostly the bound it would apply."""
    from ...index import registry

    held = registry.stats()
    return (
        f"{held.bytes / 2**20:.1f} MB in {held.entries} index(es) of {held.bound / 2**20:.0f} MB "
        f"(MEMSTACK_INDEX_MEMORY_MB), {held.evictions} evicted"
    )


def _retrieval(mem: Memory, setting: str | None) -> str:
    """``mode model (dims d), N entries waiting for a vector`` (what ``GET /v1/info`` reports)."""
    from ...search.embedders.setting import describe_embedder, resolve_embedder, resolve_setting
    from ...tiers.longterm.backfill import pending_vectors

    try:
        vectors = resolve_embedder(setting)
        described = describe_embedder(vectors)
    except Exception as exc:  # a diagnosis reports a bad setting or an unreachable endpoint, never dies
        return f"setting {resolve_setting(setting)!r} fails: {exc}"
    if vectors is None:
        return f"bm25 (setting {resolve_setting(setting)!r}: no embedder)"
    waiting, stale = pending_vectors(mem.engine, vectors)
    other = f", {stale} with another model's vector (LongTermMemory.reembed)" if stale else ""
    return (
        f"hybrid {described['model']} (dims {described['dims']}), {waiting} entries waiting for a "
        f"vector{other} (any process with this embedder fills them in: serve, memstack.open)"
    )


def _untenanted(mem: Memory) -> str:
    """Keys stored outside every tenant, per tier, and how to move them."""
    from ...services.transfer.adopt import untenanted

    counts = untenanted(mem.engine)
    if not counts:
        return "none"
    listed = ", ".join(f"{tier} {count}" for tier, count in counts.items())
    return (
        f"{sum(counts.values())} keys ({listed}) stored without a tenant: memstack.open, the CLI and "
        "the server do not show them; `memstack tenants adopt --into default` moves them (the "
        "pipeline node reads its sessions there: see --tier)"
    )


def _policies() -> list[dict[str, str]]:
    """One row per retention policy ``serve`` would enforce (from ``$MEMSTACK_RETENTION``)."""
    try:
        rows = parse_retention().describe()
    except InvalidConfiguration as exc:
        return [{"check": "retention", "result": f"setting fails: {exc}"}]
    return [
        {
            "check": f"retention {r['policy']}",
            "result": ("keep forever" if r["seconds"] is None else f"{r['seconds']:g} s")
            + f" ({r['tier']}: {r['does']}; {r['enforced_by']})",
        }
        for r in rows
    ]


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "missing"
