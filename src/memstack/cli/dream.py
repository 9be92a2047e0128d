"""``memstack dream``: run, review and undo dream passes from the shell.

The chat model of the LLM passes (``consolidate``, ``preferences``) is any OpenAI-compatible
``/v1/chat/completions`` endpoint: ``dream run --chat-url URL --model NAME``, else
``MEMSTACK_CHAT_URL`` / ``MEMSTACK_CHAT_MODEL`` (its key in ``MEMSTACK_CHAT_API_KEY``, JSON replies
with ``MEMSTACK_CHAT_JSON=1``); ``dedupe`` needs none.
"""

from __future__ import annotations

import os

import typer

from ..dream import PASSES, Dreamer
from ..errors import InvalidConfiguration, InvalidInput
from ..llm.chat import ChatClient, chat_model_from_env
from ..wire import dream_record_json, dream_summary_json
from ._common import emit, emit_table, tenant_memory

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True, help="Dream passes: consolidation, preferences, dedupe; undo.")

SCOPE = typer.Option("default", "--scope", help="Whose memories (a user or an agent).")


@app.command()
def run(
    scope: str = SCOPE,
    pass_: list[str] = typer.Option(
        None, "--pass", help="consolidate, preferences or dedupe (repeatable; default: the first two)."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the plan; write nothing."),
    force: bool = typer.Option(False, "--force", help="Apply a plan the guard rails refuse."),
    chat_url: str = typer.Option(
        None,
        "--chat-url",
        help="Base URL of the OpenAI-compatible chat model of consolidate and preferences, e.g. "
        "http://127.0.0.1:11434/v1 (default: $MEMSTACK_CHAT_URL; key from $MEMSTACK_CHAT_API_KEY).",
    ),
    model: str = typer.Option(
        None, "--model", help="The chat model's name at --chat-url (default: $MEMSTACK_CHAT_MODEL)."
    ),
) -> None:
    """Run passes over a scope and print their records. consolidate and preferences ask a chat
    model (--chat-url and --model, or MEMSTACK_CHAT_URL and MEMSTACK_CHAT_MODEL); dedupe needs none."""
    passes = pass_ or ["consolidate", "preferences"]
    with tenant_memory() as mem:
        for name in passes:
            if name not in PASSES:
                raise InvalidInput(f"--pass {name!r}: must be one of {', '.join(PASSES)}")
        chat = _chat_model(chat_url, model) if set(passes) - {"dedupe"} else None
        dreamer = Dreamer(mem.long_term(scope), model=chat, turns=mem.turns)
        records = dreamer.run(passes, dry_run=dry_run, force=force)
        lines = [
            f"{r.kind}: {r.status} {r.id} (retired {len(r.retired)}, created {len(r.created)})"
            + (f": {r.reason}" if r.reason else "")
            for r in records
        ]
        emit([dream_record_json(r) for r in records], "\n".join(lines) or "nothing to do")


def _chat_model(chat_url: str | None, model: str | None) -> ChatClient:
    """The chat model of the options, else of the environment.

    Raises:
        InvalidConfiguration: none configured, half of one, or a bad URL.
    """
    given = {"MEMSTACK_CHAT_URL": chat_url, "MEMSTACK_CHAT_MODEL": model}
    env = {**os.environ, **{k: v for k, v in given.items() if v}}
    if bool(env.get("MEMSTACK_CHAT_URL")) != bool(env.get("MEMSTACK_CHAT_MODEL")):
        raise InvalidConfiguration(
            "a chat model needs both its URL (--chat-url or MEMSTACK_CHAT_URL) and its name "
            "(--model or MEMSTACK_CHAT_MODEL)"
        )
    found = chat_model_from_env(env)
    if found is None:
        raise InvalidConfiguration(
            "consolidate and preferences need a chat model: --chat-url URL --model NAME, or "
            "MEMSTACK_CHAT_URL and MEMSTACK_CHAT_MODEL (key: MEMSTACK_CHAT_API_KEY); "
            "--pass dedupe needs none"
        )
    return found


@app.command()
def history(scope: str = SCOPE, limit: int = typer.Option(50, "--limit", min=1)) -> None:
    """The scope's dream records, newest first."""
    with tenant_memory() as mem:
        rows = [dream_summary_json(r) for r in Dreamer(mem.long_term(scope)).history(limit)]
        columns = ["id", "kind", "status", "at", "model", "retired_count", "created_count", "reason"]
        emit_table(rows, columns, "dream records", times=["at"])


@app.command()
def show(record_id: str, scope: str = SCOPE) -> None:
    """One record: every retired entry and every created entry with its sources."""
    with tenant_memory() as mem:
        record = Dreamer(mem.long_term(scope)).show(record_id)
        data = dream_record_json(record)
        lines = [f"{record.kind} {record.status} at {data['at']} model={record.model or '-'}"]
        lines += [f"- retired [{e['id']}] {e['content']}" for e in data["retired"]]
        lines += [
            f"+ created [{e['id']}] {e['content']} <- {', '.join(e['source_ids'])}" for e in data["created"]
        ]
        emit(data, "\n".join(lines))


@app.command()
def undo(record_id: str, scope: str = SCOPE) -> None:
    """Undo an applied pass: retired entries back, created ones removed unless changed since."""
    with tenant_memory() as mem:
        report = Dreamer(mem.long_term(scope)).undo(record_id)
        emit(
            report.to_dict(),
            f"restored {len(report.restored)}, removed {len(report.removed)}, kept {len(report.kept)}"
            + (f" (changed since: {', '.join(report.kept)})" if report.kept else ""),
        )


@app.command()
def feedback(
    kind: str = typer.Argument(..., help="correction, positive, negative…"),
    # Named by meaning: a bare TEXT reads as the type of the value (see ``_help``).
    text: str = typer.Argument(..., metavar="FEEDBACK", help="What the user said about the assistant."),
    scope: str = SCOPE,
) -> None:
    """Record a feedback signal; the next passes show the last 7 days of them to the model."""
    with tenant_memory() as mem:
        signal = Dreamer(mem.long_term(scope)).feedback.add(kind, text)
        emit(signal.to_dict(), f"recorded {signal.kind} feedback")
