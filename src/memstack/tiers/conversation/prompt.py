"""Prompt messages (OpenAI chat dicts) from stored messages, and their text rendering.

A message without files is ``{"role": r, "content": text}``. A message with files becomes a
multimodal message: the file parts first, the text part last (Dify's order), images as
``{"type": "image_url", "image_url": {"url": …, "detail": "high"}}``. A file becomes a part through
a *resolver* ``(FileRef) -> part | None``: the default one turns an image with a URL into an image
part and skips the rest (a file stored by upload or tool id needs the application's resolver to
become a URL); a message whose files all resolve to nothing stays plain text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from .message import FileRef

__all__ = [
    "IMAGE_DETAILS",
    "FileResolver",
    "PromptMessage",
    "default_resolver",
    "history_text",
    "prompt_message",
]

PromptMessage = dict[str, Any]
FileResolver = Callable[[FileRef, str], Mapping[str, Any] | None]
"""``(file, image_detail) -> content part or None`` (None: the file is left out)."""

IMAGE_DETAILS: Final = ("high", "low", "auto")


def default_resolver(file: FileRef, detail: str) -> dict[str, Any] | None:
    """An image with a URL → an ``image_url`` part with ``detail``; anything else → None."""
    if file.type == "image" and file.url:
        return {"type": "image_url", "image_url": {"url": file.url, "detail": detail}}
    return None


def prompt_message(
    role: str,
    text: str,
    files: Sequence[FileRef] = (),
    *,
    resolver: FileResolver = default_resolver,
    image_detail: str = "high",
) -> PromptMessage:
    """One OpenAI chat message: plain text, or file parts then the text part."""
    parts = [dict(part) for part in (resolver(f, image_detail) for f in files) if part is not None]
    if not parts:
        return {"role": role, "content": text}
    parts.append({"type": "text", "text": text})
    return {"role": role, "content": parts}


def _render(content: Any) -> str:
    if isinstance(content, str):
        return content
    text = ""
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "text":
            text += f"{part.get('text', '')}\n"
        elif part.get("type") == "image_url":
            text += "[image]\n"
    return text.strip()


def history_text(
    messages: Iterable[Mapping[str, Any]], human_prefix: str = "Human", ai_prefix: str = "Assistant"
) -> str:
    """Dify's text form of a history: one ``"{prefix}: {content}"`` line per user/assistant message.

    Other roles are skipped; in list content each text part renders as its text and each image as
    ``[image]`` (images come first, so ``Human: [image]\\nquestion``); no messages → ``""``.
    """
    lines = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            prefix = human_prefix
        elif role == "assistant":
            prefix = ai_prefix
        else:
            continue
        lines.append(f"{prefix}: {_render(message.get('content'))}")
    return "\n".join(lines)
