"""Operations of the dream passes: run (or dry-run) them over a scope, list and show records, undo
a pass, record feedback.

The chat model of the LLM passes (``consolidate``, ``preferences``, ``extract``) is any OpenAI-compatible
``/v1/chat/completions`` endpoint, from ``MEMSTACK_CHAT_URL`` / ``MEMSTACK_CHAT_MODEL`` (key in
``MEMSTACK_CHAT_API_KEY``, JSON replies with ``MEMSTACK_CHAT_JSON=1``) of the process; the command
line also takes ``dream run --chat-url URL --model NAME``. ``dedupe`` needs none. Agents get dry
runs and the history only: applying and undoing passes stays with people.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field
from typing_extensions import TypedDict

from ..foundation.errors import InvalidConfiguration
from ..services.memory import Memory
from .fields import Scope, Subject
from .spec import Ops, Request, Tool, cli, http
from .wire import DreamRecordJSON, DreamSummaryJSON, dream_record_json, dream_summary_json

if TYPE_CHECKING:
    from ..llm.chat import ChatClient

__all__ = ["OPS"]

PassName = Literal["consolidate", "preferences", "dedupe", "extract"]
RecordId = Annotated[str, Field(max_length=64, pattern=r"^[A-Za-z0-9]+$", description="A dream record id.")]
_HISTORY = "The recent dream passes over a memory scope."


class Records(TypedDict):
    items: list[DreamRecordJSON]


class Summaries(TypedDict):
    items: list[DreamSummaryJSON]


class Undone(TypedDict):
    record_id: str
    restored: list[str]
    removed: list[str]
    kept: list[str]


class Feedback(TypedDict):
    kind: str
    text: str
    timestamp: str


def _first_two() -> list[PassName]:
    return ["consolidate", "preferences"]


class Run(Request):
    scope: Scope = "default"
    passes: list[PassName] = Field(
        default_factory=_first_two,
        min_length=1,
        max_length=4,
        description="consolidate, preferences, dedupe or extract (new conversation turns become "
        "memories), in order (default: the first two).",
    )
    dry_run: bool = Field(False, description="Compute the plans; write nothing.")
    force: bool = Field(False, description="Apply plans the guard rails refuse.")
    user: Subject = Field(
        None,
        description="Whose conversations preferences and extract read (default: the scope's name); "
        "never another user's.",
    )


class ReadHistory(Request):
    scope: Scope = "default"
    limit: int = Field(50, ge=1, le=1000, description="Most records, newest first (1-1000).")


class OneRecord(Request):
    scope: Scope = "default"
    record_id: RecordId


class AddFeedback(Request):
    scope: Scope = "default"
    kind: str = Field(max_length=64, description="correction, positive, negative…")
    text: str = Field(max_length=4000, description="What the user said about the assistant.")
    subject: Subject = None


ops = Ops()
_RECORD = "/v1/dream/records/{record_id}"
_SCOPED = ("scope",)
# Agents dry-run and read the history only: applying and undoing passes stays with people.
_DRY_RUN = Tool(
    "dream_dry_run",
    fixed={"dry_run": True, "force": False},
    defaults={"passes": ["dedupe"]},
    description="Show what dream passes (consolidate, preferences, dedupe, extract) would change; "
    "writes nothing.",
)


@ops("dream.run", "mem.dream(scope).run(passes)", tool=_DRY_RUN)
@http("POST /v1/dream/runs", query=_SCOPED)
@cli(
    "dream run",
    names={"passes": ("--pass",)},
    env={
        "--chat-url": (
            "MEMSTACK_CHAT_URL",
            "Base URL of the OpenAI-compatible chat model of consolidate, preferences and extract, e.g. "
            "http://127.0.0.1:11434/v1 (default: $MEMSTACK_CHAT_URL; key from $MEMSTACK_CHAT_API_KEY).",
        ),
        "--model": (
            "MEMSTACK_CHAT_MODEL",
            "The chat model's name at --chat-url (default: $MEMSTACK_CHAT_MODEL).",
        ),
    },
)
def _run(mem: Memory, r: Run) -> Records:
    """Run (or dry-run) dream passes over a scope; all but dedupe ask a chat model.

    The model: MEMSTACK_CHAT_URL and MEMSTACK_CHAT_MODEL (command line: --chat-url and --model).
    """
    from ..services.dream import Dreamer

    passes = list(dict.fromkeys(r.passes))
    model = _chat_model() if set(passes) - {"dedupe"} else None
    dreamer = Dreamer.over(mem, r.scope, model=model, user=r.user)
    records = dreamer.run(passes, dry_run=r.dry_run, force=r.force)
    return {"items": [dream_record_json(record) for record in records]}


def _chat_model() -> ChatClient:
    """The chat model of the process's environment.

    Raises:
        InvalidConfiguration: none configured, half of one, or a bad URL.
    """
    from ..llm.chat import chat_model_from_env

    if bool(os.environ.get("MEMSTACK_CHAT_URL")) != bool(os.environ.get("MEMSTACK_CHAT_MODEL")):
        raise InvalidConfiguration(
            "a chat model needs both its URL (--chat-url or MEMSTACK_CHAT_URL) and its name "
            "(--model or MEMSTACK_CHAT_MODEL)"
        )
    found = chat_model_from_env()
    if found is None:
        raise InvalidConfiguration(
            "consolidate, preferences and extract need a chat model: --chat-url URL --model NAME, or "
            "MEMSTACK_CHAT_URL and MEMSTACK_CHAT_MODEL (key: MEMSTACK_CHAT_API_KEY); "
            "--pass dedupe needs none"
        )
    return found


@ops("dream.history", "mem.dream(scope).history(limit)", tool=Tool("dream_history", description=_HISTORY))
@http("GET /v1/dream/records")
@cli("dream history")
def _history(mem: Memory, r: ReadHistory) -> Summaries:
    """The scope's dream records, newest first (counts; one record's entries: show it)."""
    from ..services.dream import Dreamer

    return {"items": [dream_summary_json(x) for x in Dreamer(mem.long_term(r.scope)).history(r.limit)]}


@ops("dream.show", "mem.dream(scope).show(record_id)")
@http("GET " + _RECORD)
@cli("dream show RECORD_ID")
def _show(mem: Memory, r: OneRecord) -> DreamRecordJSON:
    """One dream record: every retired entry and every created entry with its sources."""
    from ..services.dream import Dreamer

    return dream_record_json(Dreamer(mem.long_term(r.scope)).show(r.record_id))


@ops("dream.undo", "mem.dream(scope).undo(record_id)")
@http("POST " + _RECORD + "/undo", query=_SCOPED)
@cli("dream undo RECORD_ID")
def _undo(mem: Memory, r: OneRecord) -> Undone:
    """Undo an applied pass: retired entries come back, created ones go unless changed since."""
    from ..services.dream import Dreamer

    report = Dreamer(mem.long_term(r.scope)).undo(r.record_id)
    return {
        "record_id": report.record_id,
        "restored": list(report.restored),
        "removed": list(report.removed),
        "kept": list(report.kept),
    }


@ops("dream.feedback", "mem.dream(scope).feedback.add(kind, text)")
@http("POST /v1/dream/feedback", status=201, query=_SCOPED)
@cli("dream feedback KIND TEXT", names={"text": ("FEEDBACK",)})
def _feedback(mem: Memory, r: AddFeedback) -> Feedback:
    """Record a feedback signal; the next passes show the last 7 days of them to the model."""
    from ..services.dream import Dreamer

    data = Dreamer(mem.long_term(r.scope)).feedback.add(r.kind, r.text, subject=r.subject).to_dict()
    return {"kind": data["kind"], "text": data["text"], "timestamp": data["timestamp"]}


OPS = tuple(ops.all)
