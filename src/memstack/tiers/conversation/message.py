"""Messages and file references of the conversation tier, with their validation and JSON form.

A stored message is ONE role (``user``, ``assistant``, ``system`` or ``tool``), not Dify's
query + answer row: a regenerated answer is then simply a new assistant message whose parent is
the user message it answers again, which is exactly the branch shape Dify's regeneration makes. A Dify row
is a user message followed by its assistant message (see :mod:`memstack.tiers.conversation.history` for
how ``message_limit`` counts).
"""

from __future__ import annotations

import json
import math
import re
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ...foundation import limits
from ...foundation.errors import InvalidKey, InvalidSessionId, InvalidValue
from ...foundation.limits import check_match, short_repr

__all__ = [
    "CONVERSATION_RULE",
    "FILE_TRANSFER_METHODS",
    "FILE_TYPES",
    "LATEST",
    "ROLES",
    "FileRef",
    "Message",
    "check_conversation_id",
    "check_files",
    "check_message_id",
    "check_role",
    "check_token_count",
    "draft_message",
    "link_drafts",
]

ROLES: Final = ("user", "assistant", "system", "tool")
FILE_TYPES: Final = ("image", "audio", "video", "document", "custom")
# transfer method → the one reference field it needs (Dify's NodeMemoryFile)
FILE_TRANSFER_METHODS: Final = {
    "local_file": "upload_file_id",
    "tool_file": "tool_file_id",
    "remote_url": "url",
}
LATEST: Final = "__latest__"
"""Default parent of an appended message: the conversation's newest message."""
UUID_NIL: Final = "00000000-0000-0000-0000-000000000000"  # as memstack.tiers.conversation.thread
_FIELDS: Final = frozenset(
    {
        "role",
        "content",
        "message_id",
        "parent_message_id",
        "files",
        "token_count",
        "workflow_run_id",
        "created_at",
    }
)
CONVERSATION_RULE: Final = re.compile(r"[A-Za-z0-9_-]{1,128}")
_MESSAGE_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")


def check_conversation_id(value: object, name: str = "conversation_id") -> str:
    """Return ``value`` if it is 1-128 characters of ``[A-Za-z0-9_-]``.

    Raises:
        InvalidSessionId: anything else.
    """
    return check_match(value, CONVERSATION_RULE, name, "1-128 characters of [A-Za-z0-9_-]", InvalidSessionId)


def check_message_id(value: object, name: str = "message_id") -> str:
    """Return ``value`` if it is 1-128 characters of ``[A-Za-z0-9_.:-]`` (UUIDs fit).

    Raises:
        InvalidKey: anything else.
    """
    return check_match(value, _MESSAGE_ID, name, "1-128 characters of [A-Za-z0-9_.:-]", InvalidKey)


@dataclass(frozen=True, slots=True)
class FileRef:
    """A reference to a file attached to a message; the file itself lives elsewhere.

    ``transfer_method`` decides which reference is required: ``local_file`` → ``upload_file_id``,
    ``tool_file`` → ``tool_file_id``, ``remote_url`` → ``url``. ``belongs_to`` is ``user`` or
    ``assistant`` (None: the role of the message carrying it).

    Raises:
        InvalidValue: unknown type or transfer method, the required reference missing, or a
            reference that is not valid text (a lone surrogate, over 1 MiB).
    """

    type: str
    transfer_method: str
    upload_file_id: str | None = None
    tool_file_id: str | None = None
    url: str | None = None
    belongs_to: str | None = None

    def __post_init__(self) -> None:
        if self.type not in FILE_TYPES:
            raise InvalidValue(f"file type {short_repr(self.type)}: must be one of {', '.join(FILE_TYPES)}")
        needed = FILE_TRANSFER_METHODS.get(self.transfer_method)
        if needed is None:
            raise InvalidValue(
                f"file transfer_method {short_repr(self.transfer_method)}: must be one of "
                f"{', '.join(FILE_TRANSFER_METHODS)}"
            )
        reference = getattr(self, needed)
        for name in ("upload_file_id", "tool_file_id", "url"):
            if getattr(self, name) is not None:
                limits.check_text(getattr(self, name), f"file {name}", max_bytes=limits.MAX_VALUE_BYTES)
        if not isinstance(reference, str) or not reference:
            raise InvalidValue(
                f"file with transfer_method {short_repr(self.transfer_method)} needs a non-empty {needed}, "
                f"got {short_repr(reference)}"
            )
        if self.belongs_to not in (None, "user", "assistant"):
            raise InvalidValue(
                f"file belongs_to {short_repr(self.belongs_to)}: must be 'user' or 'assistant'"
            )

    @classmethod
    def coerce(cls, value: FileRef | Mapping[str, Any]) -> FileRef:
        """A :class:`FileRef` from itself or a mapping of its fields.

        Raises:
            InvalidValue: not a mapping, unknown fields, or an invalid reference.
        """
        if isinstance(value, FileRef):
            return value
        if not isinstance(value, Mapping):
            raise InvalidValue(f"file {short_repr(value)}: expected a FileRef or a mapping of its fields")
        unknown = set(value) - set(cls.__dataclass_fields__)
        if unknown:
            raise InvalidValue(f"file {dict(value)!r}: unknown fields {sorted(unknown)}")
        return cls(**value)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: only the fields that are set."""
        data: dict[str, Any] = {"type": self.type, "transfer_method": self.transfer_method}
        for name in ("upload_file_id", "tool_file_id", "url", "belongs_to"):
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        return data


@dataclass(frozen=True, slots=True)
class Message:
    """One stored message of a conversation.

    Attributes:
        message_id: unique in its conversation.
        parent_message_id: the message this one follows (None: a thread root; ``UUID_NIL``: a
            legacy message whose parent is simply the previous message).
        role: ``user``, ``assistant``, ``system`` or ``tool``.
        content: the text.
        files: file references attached to the message.
        token_count: tokens of ``content`` by the store's counter when appended.
        created_at: engine-clock seconds when appended.
        workflow_run_id: the workflow run that produced it (node memory follows these).
    """

    message_id: str
    parent_message_id: str | None
    role: str
    content: str
    files: tuple[FileRef, ...] = field(default=())
    token_count: int = 0
    created_at: float = 0.0
    workflow_run_id: str | None = None

    def to_json(self) -> str:
        """The stored JSON text."""
        data: dict[str, Any] = {
            "message_id": self.message_id,
            "parent_message_id": self.parent_message_id,
            "role": self.role,
            "content": self.content,
            "files": [f.to_dict() for f in self.files],
            "token_count": self.token_count,
            "created_at": self.created_at,
        }
        if self.workflow_run_id is not None:
            data["workflow_run_id"] = self.workflow_run_id
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Message:
        """Parse a stored record (written by :meth:`to_json`)."""
        data = json.loads(text)
        return cls(
            message_id=data["message_id"],
            parent_message_id=data.get("parent_message_id"),
            role=data["role"],
            content=data["content"],
            files=tuple(FileRef.coerce(f) for f in data.get("files", ())),
            token_count=int(data.get("token_count", 0)),
            created_at=float(data.get("created_at", 0.0)),
            workflow_run_id=data.get("workflow_run_id"),
        )

    def to_dict(self) -> dict[str, Any]:
        """A fresh plain-dict copy (for JSON output)."""
        data: dict[str, Any] = json.loads(self.to_json())
        data.setdefault("workflow_run_id", None)
        return data


def check_role(role: object) -> str:
    """Return ``role`` if it is one of :data:`ROLES`.

    Raises:
        InvalidValue: anything else.
    """
    if role not in ROLES:
        raise InvalidValue(f"role {short_repr(role)}: must be one of {', '.join(ROLES)}")
    return str(role)


def check_files(files: Sequence[FileRef | Mapping[str, Any]] | None) -> tuple[FileRef, ...]:
    """Coerce file references.

    Raises:
        InvalidValue: a reference is invalid.
    """
    if files is None:
        return ()
    if isinstance(files, str | bytes | Mapping) or not isinstance(files, Iterable):
        raise InvalidValue(f"files {short_repr(files)}: expected a sequence of file references")
    return tuple(FileRef.coerce(f) for f in files)


def draft_message(
    fields: Mapping[str, Any], count_tokens: Callable[[str], int] | None = None, field: str = "message"
) -> dict[str, Any]:
    """Validate the fields of a message to append and fill the defaults (id, token count; without
    ``count_tokens`` a missing count stays None, for the store that writes it to count).

    Text follows :mod:`memstack.foundation.limits` (no lone surrogates; content at most 1 MiB); messages
    name the field as ``{field}.content``.

    Raises:
        InvalidValue, InvalidKey: an unknown field or an invalid value.
    """
    unknown = set(fields) - _FIELDS
    if unknown:
        raise InvalidValue(f"message fields {sorted(unknown)}: unknown")
    role = check_role(fields.get("role"))
    content = fields.get("content")
    if not isinstance(content, str):
        raise InvalidValue(f"{field}.content {short_repr(content)}: must be a string")
    limits.check_text(content, f"{field}.content", max_bytes=limits.MAX_VALUE_BYTES)
    message_id = check_message_id(fields.get("message_id") or str(uuid.uuid4()))
    parent = fields.get("parent_message_id", LATEST)
    if parent not in (None, "", LATEST, UUID_NIL):
        check_message_id(parent, "parent_message_id")
    files = _role_files(fields.get("files"), role)
    tokens = fields.get("token_count")
    if tokens is None and count_tokens is not None:
        tokens = count_tokens(content)
    if tokens is not None:
        check_token_count(tokens, field)
    run_id = _run_id(fields.get("workflow_run_id"), field)
    at = fields.get("created_at")
    if at is not None and (isinstance(at, bool) or not isinstance(at, int | float) or not math.isfinite(at)):
        raise InvalidValue(f"created_at {short_repr(at)}: must be a finite number of seconds")
    return {
        **({} if at is None else {"created_at": float(at)}),
        "message_id": message_id,
        "parent_message_id": parent or None,
        "role": role,
        "content": content,
        "files": files,
        "token_count": tokens,
        "workflow_run_id": run_id,
    }


def check_token_count(tokens: object, field: str = "message") -> int:
    """``tokens`` if it is an int >= 0 of magnitude at most 2**53.

    Raises:
        InvalidValue: anything else.
    """
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
        raise InvalidValue(f"token_count {short_repr(tokens)}: must be an int >= 0")
    return limits.check_int(tokens, f"{field}.token_count")


def _role_files(raw: Any, role: str) -> tuple[FileRef, ...]:
    """A message's checked files; a file that belongs to the other side of a user or assistant
    message is refused."""
    files = check_files(raw)
    for file in files:
        if file.belongs_to is not None and role in ("user", "assistant") and file.belongs_to != role:
            raise InvalidValue(
                f"file belongs_to {short_repr(file.belongs_to)} on a {short_repr(role)} message"
            )
    return files


def _run_id(run_id: Any, field: str) -> str | None:
    """A message's workflow run id: None, or a non-empty string of at most 1 KiB."""
    if run_id is not None and (not isinstance(run_id, str) or not run_id):
        raise InvalidValue(f"workflow_run_id {short_repr(run_id)}: must be a non-empty string or None")
    if run_id is not None:
        limits.check_text(run_id, f"{field}.workflow_run_id", max_bytes=1024)
    return run_id


def link_drafts(
    drafts: Sequence[dict[str, Any]], previous: str | None, now: float
) -> tuple[list[Message], set[str]]:
    """The messages of one extend call, each default parent resolved (the message before it, the
    conversation's last for the first), and the parents outside the call (checked ids)."""
    ids = [d["message_id"] for d in drafts]
    built: list[Message] = []
    external: set[str] = set()
    for offset, draft in enumerate(drafts):
        parent = draft["parent_message_id"]
        if parent == LATEST:
            parent = built[-1].message_id if built else previous
        elif parent and parent != UUID_NIL and parent not in ids[:offset]:
            external.add(check_message_id(parent, "parent_message_id"))
        # A copy of an older record (the turn log's) keeps its time; a new message is now's.
        built.append(
            Message(**{**draft, "parent_message_id": parent, "created_at": draft.get("created_at", now)})
        )
    return built, external
