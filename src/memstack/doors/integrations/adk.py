"""Google ADK's session service over memstack (the ``adk`` extra); the memory service is
:class:`memstack.doors.integrations.adk_memory.MemstackMemoryService`.

:class:`MemstackSessionService` keeps each ADK session's events in a memstack conversation (one message
per event, its JSON as the content) and its state in memstack session records, with ADK's scopes::

    service = MemstackSessionService(mem)
    runner = Runner(agent=agent, app_name="shop", session_service=service)

* session state (plain keys) in the session's own record;
* ``user:`` keys in one record per app and user, shared by that user's sessions;
* ``app:`` keys in one record per app, shared by every user;
* ``temp:`` keys never stored (ADK keeps them for the running invocation only).

Every state key is its own record key, so two sessions writing different keys never overwrite each
other. ADK's names (app, user, session) may hold any character: the records and the conversation are
named after a hash of them, and the names themselves are kept in the session's record. The user id is
the memstack subject of what the service writes for them (when it fits the subject rule), so
``Memory.forget(subject=user_id)`` removes the user's sessions, events and ``user:`` state.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import uuid
from typing import TYPE_CHECKING, Any, Final

from google.adk.events.event import Event
from google.adk.sessions import BaseSessionService, Session
from google.adk.sessions.base_session_service import GetSessionConfig, ListSessionsResponse
from google.adk.sessions.state import State

from ...foundation.errors import AlreadyExists, InvalidKey
from ...foundation.keyspace.subjects import SUBJECT_RULE
from ...foundation.limits import short_repr

if TYPE_CHECKING:
    from ... import Memory

__all__ = ["MemstackSessionService", "record_id"]

_SESSION: Final = "adks"
_USER: Final = "adku"
_APP: Final = "adka"
_STATE: Final = "s."
_META: Final = ("m.app", "m.user", "m.id", "m.updated")


def record_id(kind: str, *names: str) -> str:
    """The memstack id (session record, conversation) of an ADK app, user or session."""
    digest = hashlib.sha256("\0".join(names).encode()).hexdigest()[:40]
    return f"{kind}-{digest}"


def _state_key(key: str) -> str:
    stored = _STATE + key.encode().hex()
    if len(stored) > 256:
        raise InvalidKey(f"state key {short_repr(key)}: at most 127 bytes of UTF-8")
    return stored


def _state_of(items: dict[str, Any]) -> dict[str, Any]:
    return {bytes.fromhex(k[len(_STATE) :]).decode(): v for k, v in items.items() if k.startswith(_STATE)}


def _split(delta: dict[str, Any]) -> dict[str, dict[str, Any]]:
    scopes: dict[str, dict[str, Any]] = {"app": {}, "user": {}, "session": {}}
    for key, value in delta.items():
        if key.startswith(State.APP_PREFIX):
            scopes["app"][key.removeprefix(State.APP_PREFIX)] = value
        elif key.startswith(State.USER_PREFIX):
            scopes["user"][key.removeprefix(State.USER_PREFIX)] = value
        elif not key.startswith(State.TEMP_PREFIX):
            scopes["session"][key] = value
    return scopes


class MemstackSessionService(BaseSessionService):
    """ADK sessions, events and state in a :class:`memstack.Memory`."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self._sessions = memory.sessions
        self._conversations = memory.conversations

    # -- records -----------------------------------------------------------------------------
    @staticmethod
    def _subject(user_id: str) -> str | None:
        return user_id if SUBJECT_RULE.fullmatch(user_id) else None

    def _ensure(self, record: str, subject: str | None) -> None:
        if not self._sessions.exists(record):
            with contextlib.suppress(AlreadyExists):  # another writer made it first
                self._sessions.create(record, ttl_hours=0, subject=subject)

    def _write_state(self, app_name: str, user_id: str, record: str, delta: dict[str, Any]) -> None:
        scopes = _split(delta)
        targets = (
            (record_id(_APP, app_name), None, scopes["app"]),
            (record_id(_USER, app_name, user_id), self._subject(user_id), scopes["user"]),
            (record, None, scopes["session"]),
        )
        for target, subject, values in targets:
            if values:
                self._ensure(target, subject)
                for key, value in values.items():
                    self._sessions.put(target, _state_key(key), value)

    def _merged(self, app_name: str, user_id: str, record: str) -> tuple[dict[str, Any], dict[str, Any]]:
        items = self._sessions.items(record)
        state = _state_of(items)
        for prefix, scope in (
            (State.APP_PREFIX, record_id(_APP, app_name)),
            (State.USER_PREFIX, record_id(_USER, app_name, user_id)),
        ):
            if self._sessions.exists(scope):
                state.update({prefix + k: v for k, v in _state_of(self._sessions.items(scope)).items()})
        return items, state

    # -- the service -------------------------------------------------------------------------
    def _create(
        self, app_name: str, user_id: str, state: dict[str, Any] | None, session_id: str | None
    ) -> Session:
        session_id = (session_id or "").strip() or str(uuid.uuid4())
        record = record_id(_SESSION, app_name, user_id, session_id)
        subject = self._subject(user_id)
        self._sessions.create(record, ttl_hours=0, subject=subject)  # SessionExists when taken
        now = self.memory.clock.now()
        for key, value in zip(_META, (app_name, user_id, session_id, now), strict=True):
            self._sessions.put(record, key, value)
        self._write_state(app_name, user_id, record, dict(state or {}))
        _, merged = self._merged(app_name, user_id, record)
        return Session(app_name=app_name, user_id=user_id, id=session_id, state=merged, last_update_time=now)

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Create a session (``SessionExists`` when ``session_id`` is taken for this app and user)."""
        return await asyncio.to_thread(self._create, app_name, user_id, state, session_id)

    def _get(
        self, app_name: str, user_id: str, session_id: str, config: GetSessionConfig | None
    ) -> Session | None:
        record = record_id(_SESSION, app_name, user_id, session_id.strip())
        if not self._sessions.exists(record):
            return None
        items, state = self._merged(app_name, user_id, record)
        events = [Event.model_validate_json(m.content) for m in self._conversations.messages(record)]
        if config is not None:
            if config.num_recent_events is not None:
                events = events[len(events) - config.num_recent_events :] if config.num_recent_events else []
            if config.after_timestamp is not None:
                events = [e for e in events if e.timestamp >= config.after_timestamp]
        return Session(
            app_name=app_name,
            user_id=user_id,
            id=items["m.id"],
            state=state,
            events=events,
            last_update_time=items["m.updated"],
        )

    async def get_session(
        self, *, app_name: str, user_id: str, session_id: str, config: GetSessionConfig | None = None
    ) -> Session | None:
        """The session with its events (filtered by ``config``) and merged state, or None."""
        return await asyncio.to_thread(self._get, app_name, user_id, session_id, config)

    def _list(self, app_name: str, user_id: str | None) -> ListSessionsResponse:
        found = []
        for record in self._sessions.list():
            if not record.startswith(_SESSION + "-"):
                continue
            items = self._sessions.items(record)
            if items.get("m.app") != app_name or (user_id is not None and items.get("m.user") != user_id):
                continue
            _, state = self._merged(app_name, items["m.user"], record)
            found.append(
                Session(
                    app_name=app_name,
                    user_id=items["m.user"],
                    id=items["m.id"],
                    state=state,
                    last_update_time=items["m.updated"],
                )
            )
        found.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
        return ListSessionsResponse(sessions=found)

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        """The sessions of an app (of one user when given), without events, oldest update first."""
        return await asyncio.to_thread(self._list, app_name, user_id)

    def _delete(self, app_name: str, user_id: str, session_id: str) -> None:
        record = record_id(_SESSION, app_name, user_id, session_id.strip())
        self._conversations.delete(record)
        self._sessions.delete(record)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete a session and its events (the app's and the user's state stay)."""
        await asyncio.to_thread(self._delete, app_name, user_id, session_id)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """The ``user:`` state of this app and user, keys without the prefix."""
        record = record_id(_USER, app_name, user_id)

        def read() -> dict[str, Any]:
            return _state_of(self._sessions.items(record)) if self._sessions.exists(record) else {}

        return await asyncio.to_thread(read)

    def _persist(self, session: Session, event: Event) -> None:
        record = record_id(_SESSION, session.app_name, session.user_id, session.id)
        if event.actions and event.actions.state_delta:
            self._write_state(session.app_name, session.user_id, record, dict(event.actions.state_delta))
        role = "user" if event.author == "user" else "assistant"
        self._conversations.append(
            record, role, event.model_dump_json(exclude_none=True), subject=self._subject(session.user_id)
        )
        self._sessions.put(record, "m.updated", event.timestamp)

    async def append_event(self, session: Session, event: Event) -> Event:
        """Append ``event`` to the session (stored, and on ``session``); partial events are not kept."""
        if event.partial:
            return event
        appended: Event = await super().append_event(session, event)  # drops temp: keys from the delta
        await asyncio.to_thread(self._persist, session, appended)
        session.last_update_time = appended.timestamp
        return appended
