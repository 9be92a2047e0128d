"""MemstackSessionService and MemstackMemoryService under ADK's own Runner, on every engine."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("google.adk", reason="the adk extra is not installed")
pytest.importorskip("fastapi")

from google.adk.agents import LlmAgent
from google.adk.cli.agent_test_runner import MockModel  # ADK's own scripted model
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.tools import ToolContext, load_memory
from google.genai import types

from memstack import Memory, SessionExists
from memstack.doors.integrations.adk import MemstackSessionService, record_id
from memstack.doors.integrations.adk_memory import MemstackMemoryService, memory_scope
from memstack.engines import Engine

from ._doors import default_tenant, http_door


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def remember_pet(pet: str, tool_context: ToolContext) -> str:
    """Remember the user's pet."""
    tool_context.state["user:pet"] = pet
    tool_context.state["app:pets_seen"] = 1
    tool_context.state["temp:scratch"] = "never stored"
    tool_context.state["turns"] = 1
    return f"remembered {pet}"


def call(name: str, **args: Any) -> types.Content:
    return types.Content(
        role="model", parts=[types.Part(function_call=types.FunctionCall(name=name, args=args))]
    )


def say(text: str) -> types.Content:
    return types.Content(role="model", parts=[types.Part(text=text)])


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def turn(runner: Runner, user_id: str, session_id: str, text: str) -> list[Event]:
    return [e async for e in runner.run_async(user_id=user_id, session_id=session_id, new_message=user(text))]


def test_an_adk_run_keeps_sessions_state_and_memory(engine: Engine) -> None:
    mem = default_tenant(engine)
    sessions, memories = MemstackSessionService(mem), MemstackMemoryService(mem)
    model = MockModel.create(
        [
            call("remember_pet", pet="a dog called Rex"),
            say("Noted: Rex."),
            call("load_memory", query="dog"),
            say("Rex!"),
        ]
    )
    agent = LlmAgent(name="helper", model=model, tools=[remember_pet, load_memory])
    runner = Runner(agent=agent, app_name="shop", session_service=sessions, memory_service=memories)

    async def story() -> None:
        first = await sessions.create_session(
            app_name="shop", user_id="ann", state={"lang": "fr"}, session_id="s1"
        )
        assert first.state == {"lang": "fr"}
        await turn(runner, "ann", "s1", "my dog is called Rex")
        stored = await sessions.get_session(app_name="shop", user_id="ann", session_id="s1")
        assert stored is not None
        assert stored.state == {"lang": "fr", "turns": 1, "user:pet": "a dog called Rex", "app:pets_seen": 1}
        assert [e.author for e in stored.events] == ["user", "helper", "helper", "helper"]
        await memories.add_session_to_memory(stored)
        await memories.add_session_to_memory(stored)  # again: updated, not repeated

        second = await sessions.create_session(app_name="shop", user_id="ann", session_id="s2")
        assert second.state == {"user:pet": "a dog called Rex", "app:pets_seen": 1}, (
            "user: and app: are shared"
        )
        events = await turn(runner, "ann", "s2", "what is my dog called?")
        response = next(p.function_response for e in events for p in e.content.parts if p.function_response)
        assert "Rex" in repr(response.response)
        bob = await sessions.create_session(app_name="shop", user_id="bob")
        assert bob.state == {"app:pets_seen": 1}, "another user sees the app's state, not ann's"
        found = await memories.search_memory(app_name="shop", user_id="bob", query="dog")
        assert found.memories == [], "one user's memories never reach another"
        listed = await sessions.list_sessions(app_name="shop", user_id="ann")
        assert [s.id for s in listed.sessions] == ["s1", "s2"]
        assert len((await sessions.list_sessions(app_name="shop")).sessions) == 3
        recent = await sessions.get_session(
            app_name="shop", user_id="ann", session_id="s2", config=GetSessionConfig(num_recent_events=1)
        )
        assert recent is not None and recent.events[-1].content.parts[0].text == "Rex!"

    run(story())
    conversation = record_id("adks", "shop", "ann", "s1")
    with http_door(engine) as client:
        thread = client.get(f"/v1/conversations/{conversation}/thread").json()["items"]
        assert json.loads(thread[0]["content"])["content"]["parts"][0]["text"] == "my dog is called Rex"
        hits = client.get(
            "/v1/memories", params={"scope": memory_scope("shop", "ann"), "query": "dog"}
        ).json()
        assert [h["entry"]["content"] for h in hits["items"]] == ["user: my dog is called Rex"]
    assert mem.forget(subject="ann").remaining == 0
    assert run(sessions.get_session(app_name="shop", user_id="ann", session_id="s1")) is None
    assert run(sessions.get_user_state(app_name="shop", user_id="ann")) == {}
    assert run(memories.search_memory(app_name="shop", user_id="ann", query="dog")).memories == []
    assert [s.user_id for s in run(sessions.list_sessions(app_name="shop")).sessions] == ["bob"]


def test_session_service_rules(mem: Memory) -> None:
    sessions = MemstackSessionService(mem)

    async def story() -> None:
        made = await sessions.create_session(app_name="a/b c", user_id="ünïcode user", state={"temp:x": 1})
        assert made.state == {} and made.id
        with pytest.raises(SessionExists):
            await sessions.create_session(app_name="a/b c", user_id="ünïcode user", session_id=made.id)
        event = Event(author="user", invocation_id="i1", actions=EventActions(state_delta={"k": [1, "two"]}))
        partial = Event(
            author="user", invocation_id="i1", partial=True, actions=EventActions(state_delta={"p": 1})
        )
        await sessions.append_event(made, event)
        await sessions.append_event(made, partial)
        again = await sessions.get_session(app_name="a/b c", user_id="ünïcode user", session_id=made.id)
        assert again is not None and again.state == {"k": [1, "two"]} and again.events == [event]
        assert again.last_update_time == event.timestamp
        later = await sessions.get_session(
            app_name="a/b c",
            user_id="ünïcode user",
            session_id=made.id,
            config=GetSessionConfig(after_timestamp=event.timestamp + 1),
        )
        assert later is not None and later.events == []
        await sessions.delete_session(app_name="a/b c", user_id="ünïcode user", session_id=made.id)
        assert (
            await sessions.get_session(app_name="a/b c", user_id="ünïcode user", session_id=made.id) is None
        )
        assert (await sessions.list_sessions(app_name="a/b c")).sessions == []

    run(story())
