"""``memstack conversations``: the active thread and the token-limited history from the shell.

Human output by default, JSON with the root ``--json`` option; exit codes from ``_errors``
(2 bad input, 3 not found, 4 engine down). Works on tenant ``--tenant``'s conversations.
"""

from __future__ import annotations

import typer

from ..conversation.store import LATEST
from ..wire import message_json
from ._common import emit, emit_table, state, tenant_memory

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True, help="Conversations: active thread and token-limited history.")


@app.command("list")
def list_conversations() -> None:
    """List the stored conversations."""
    with tenant_memory() as mem:
        ids = mem.conversations.conversations()
        emit(ids, "\n".join(ids) if ids else "no conversations")


@app.command()
def add(
    conversation_id: str,
    role: str,
    content: str,
    message_id: str = typer.Option(None, "--id", help="Message id (default: a new UUID)."),
    parent: str = typer.Option(
        None, "--parent", help="Parent message id (default: the newest message; '' starts a new thread)."
    ),
    run_id: str = typer.Option(None, "--run-id", help="Workflow run id of the message."),
    subject: str = typer.Option(None, "--subject", help="The end user this is about (for forget)."),
) -> None:
    """Append a message (ROLE: user, assistant, system or tool)."""
    with tenant_memory() as mem:
        message = mem.conversations.append(
            conversation_id,
            role,
            content,
            message_id=message_id,
            parent_message_id=LATEST if parent is None else (parent or None),
            workflow_run_id=run_id,
            subject=subject,
        )
        emit(message_json(message), message.message_id)


@app.command()
def thread(
    conversation_id: str,
    message: str = typer.Option(None, "--message", help="Current message id (default: the newest)."),
) -> None:
    """Show the active thread ending at the current message, oldest first."""
    with tenant_memory() as mem:
        messages = mem.conversations.thread(conversation_id, message)
        rows = [message_json(m) for m in messages]
        if state.as_json or not rows:
            emit(rows, f"conversation {conversation_id} has no messages")
        else:
            columns = ["message_id", "parent_message_id", "role", "created_at", "content", "token_count"]
            emit_table(rows, columns, title=f"thread of {conversation_id}", times=["created_at"])


@app.command()
def history(
    conversation_id: str,
    max_tokens: int = typer.Option(2000, "--max-tokens", help="Token limit of the history."),
    message_limit: int = typer.Option(
        None, "--message-limit", help="Stored messages read back (default and cap: 500)."
    ),
    message: str = typer.Option(None, "--message", help="Current message id (default: the newest)."),
) -> None:
    """Show the token-limited history (OpenAI chat messages under --json, text otherwise)."""
    with tenant_memory() as mem:
        store = mem.conversations
        messages = store.history(conversation_id, message, max_tokens, message_limit)
        if state.as_json:
            emit(messages)
        else:
            text = store.history_text(
                conversation_id, message, max_token_limit=max_tokens, message_limit=message_limit
            )
            emit(messages, text or "(empty history)")
