"""The dream tools offered to agents (MCP and ``/v1/tools``): dry runs and history only.

Applying and undoing passes stays with people and operators (CLI, HTTP): an agent can look at
what a pass would do and at what passes did, never change its own memory wholesale.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from .._memory import Memory
from ..dream import Dreamer
from ..llm.chat import chat_model_from_env
from ..tools.schemas import ToolSpec
from ..wire import dream_record_json, dream_summary_json

__all__ = ["DREAM_HELPERS"]


class DreamDryRunArgs(BaseModel):
    pass_name: Literal["consolidate", "preferences", "dedupe"] = Field(
        "dedupe", description="The pass to dry-run: consolidate, preferences or dedupe."
    )
    scope: str = Field("default", description="Long-term memory scope.")


class DreamHistoryArgs(BaseModel):
    limit: int = Field(10, ge=1, le=100, description="Most recent records to list.")
    scope: str = Field("default", description="Long-term memory scope.")


def _dry_run(mem: Memory, session_id: str, args: DreamDryRunArgs) -> str:
    model = None if args.pass_name == "dedupe" else chat_model_from_env()
    dreamer = Dreamer(mem.long_term(args.scope), model=model, turns=mem.turns)
    records = dreamer.run([args.pass_name], dry_run=True)
    if not records:
        return f"The {args.pass_name} pass has nothing to do in scope '{args.scope}'."
    return json.dumps(dream_record_json(records[0]), ensure_ascii=False)


def _history(mem: Memory, session_id: str, args: DreamHistoryArgs) -> str:
    records = Dreamer(mem.long_term(args.scope)).history(args.limit)
    if not records:
        return f"No dream records in scope '{args.scope}'."
    return json.dumps([dream_summary_json(r) for r in records], ensure_ascii=False)


DREAM_HELPERS: dict[str, tuple[ToolSpec, Any]] = {
    "dream_dry_run": (
        ToolSpec(
            "dream_dry_run",
            "Show what a dream pass (consolidate, preferences, dedupe) would change; writes nothing.",
            DreamDryRunArgs,
        ),
        _dry_run,
    ),
    "dream_history": (
        ToolSpec("dream_history", "The recent dream passes over a memory scope.", DreamHistoryArgs),
        _history,
    ),
}
