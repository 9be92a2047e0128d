"""End to end: a scripted agent loop over several turns, on every engine, with the manual clock.

A user session saves and finds long-term memories and keeps scratch data in working memory; a
patrol task leaves a finding in its own namespace that the user session sees in its inventory.
Every turn checks the EXACT context the builder produced and the exact tool results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memstack import ManualClock, Memory
from memstack.agent.context import ContextBuilder
from memstack.agent.context import format as fmt
from memstack.agent.tools import tool_schemas
from memstack.agent.tools.schemas import TOOLS
from memstack.llm.scripted import ScriptedChatModel, ToolCall, reply, tool_call
from memstack.ops.memory_tools import MemoryTools

SYSTEM = "You are a helpful assistant with memory tools."


@dataclass
class Agent:
    mem: Memory
    model: ScriptedChatModel
    session_id: str
    namespace: str | None = None
    scope: str = "user"
    transcripts: list[list[dict[str, Any]]] = field(default_factory=list)

    def turn(self, text: str) -> list[dict[str, Any]]:
        """One turn: record the message, build the context, loop tools until a text answer."""
        self.mem.turns.add(self.session_id, "user", text)
        builder = ContextBuilder(self.mem, scope=self.scope, system_prompt=SYSTEM)
        context = builder.build(self.session_id, text, namespace=self.namespace).messages
        tools = MemoryTools(self.mem, scope=self.scope, session_id=self.session_id, namespace=self.namespace)
        messages = list(context)
        while True:
            answer = self.model.complete(messages, tools=tool_schemas())["choices"][0]["message"]
            messages.append(answer)
            if not answer.get("tool_calls"):
                break
            messages.extend(tools.call(call) for call in answer["tool_calls"])
        self.mem.turns.add(self.session_id, "assistant", answer["content"])
        self.transcripts.append(messages)
        return context


def tool_results(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "tool"]


def saved_id(text: str) -> str:
    assert text.startswith("Memory saved with id '"), text
    return text.split("'")[1]


def system(text: str) -> dict[str, str]:
    return {"role": "system", "content": text}


def patrol_block(remaining: str) -> dict[str, str]:
    return system(
        f"{fmt.PATROL_HEADER}\n"
        f"- patrol/heartbeat/latest-briefing: expires in {remaining}, category: patrol-finding"
    )


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


def test_scripted_agent_loop(mem: Memory, clock: ManualClock) -> None:
    user_model = ScriptedChatModel(
        [
            # turn 1: two facts to long-term memory
            reply(
                None,
                ToolCall(
                    "save_memory",
                    {
                        "content": "User loves jazz",
                        "category": "user-preferences/music",
                        "tags": "music, jazz",
                    },
                ),
                ToolCall(
                    "save_memory",
                    {"content": "User lives in Chicago", "category": "user-preferences/location"},
                ),
            ),
            "Noted!",
            # turn 2: read the patrol finding, keep a draft in working memory
            tool_call("get_from_working_memory", {"key": "patrol/heartbeat/latest-briefing"}),
            tool_call(
                "save_to_working_memory",
                {"key": "draft_list", "data": "Chicago Jazz Festival, Saturday", "tags": "events, jazz"},
            ),
            "There is a jazz festival on Saturday; I put it on your draft list.",
            # turn 3: find the preference, read the draft back
            tool_call("search_memory", {"query": "music"}),
            tool_call("get_from_working_memory", {"key": "draft_list"}),
            "You love jazz; your draft list has the Chicago Jazz Festival.",
            # turn 4: the draft has expired; forget the city; a malformed call is answered, not raised
            tool_call("get_from_working_memory", {"key": "draft_list"}),
            tool_call("search_memory", {"query": "Chicago"}),
            lambda messages, tools: tool_call(
                "delete_memory", {"id": messages[-1]["content"].split("[")[1].split("]")[0]}
            ),
            tool_call("save_to_working_memory", '{"key": "x", '),
            tool_call("list_memory_categories"),
            "Done: I forgot where you live.",
        ]
    )
    patrol_model = ScriptedChatModel(
        [
            tool_call(
                "save_to_working_memory",
                {
                    "key": "latest-briefing",
                    "data": "Jazz festival in Chicago on Saturday",
                    "ttl_minutes": 240,
                    "category": "patrol-finding",
                },
            ),
            "Briefing stored.",
        ]
    )
    alice = Agent(mem, user_model, "u1")
    patrol = Agent(mem, patrol_model, "hb-1", namespace="patrol/heartbeat", scope="patrol")

    # -- turn 1: nothing known yet ----------------------------------------------------------------
    assert alice.turn("Remember that I love jazz and live in Chicago.") == [
        system(SYSTEM),
        user("Remember that I love jazz and live in Chicago."),
    ]
    jazz_id, chicago_id = (saved_id(t) for t in tool_results(alice.transcripts[0]))
    assert user_model.calls[0]["tools"] == tool_schemas()
    assert [t["function"]["name"] for t in user_model.calls[0]["tools"]] == [t.name for t in TOOLS]

    # -- the patrol task runs in its own namespace and sees only that ------------------------------
    clock.advance(60)
    assert patrol.turn("Run the heartbeat patrol.") == [system(SYSTEM), user("Run the heartbeat patrol.")]
    assert tool_results(patrol.transcripts[0]) == [
        "Saved to working memory under key 'patrol/heartbeat/latest-briefing'."
    ]
    clock.advance(60)

    # -- turn 2: recall for the message, patrol finding in the inventory ---------------------------
    context = alice.turn("Any jazz events near me? Keep a draft list.")
    assert context == [
        system(SYSTEM),
        user("Remember that I love jazz and live in Chicago."),
        assistant("Noted!"),
        system(f"{fmt.RECALL_HEADER}\n- [{jazz_id}] (user-preferences/music): User loves jazz"),
        patrol_block("239m00s"),
        user("Any jazz events near me? Keep a draft list."),
    ]
    assert tool_results(alice.transcripts[1]) == [
        "Jazz festival in Chicago on Saturday",
        "Saved to working memory under key 'session/u1/draft_list'.",
    ]
    clock.advance(30)

    # -- turn 3: the jazz memory is not injected again; the draft is in the own inventory ----------
    context = alice.turn("What music do I like, and what is on my draft list?")
    assert context == [
        system(SYSTEM),
        user("Remember that I love jazz and live in Chicago."),
        assistant("Noted!"),
        user("Any jazz events near me? Keep a draft list."),
        assistant("There is a jazz festival on Saturday; I put it on your draft list."),
        system(f"{fmt.WORKING_HEADER}\n- session/u1/draft_list: expires in 4m30s, tags: events, jazz"),
        patrol_block("238m30s"),
        user("What music do I like, and what is on my draft list?"),
    ]
    assert tool_results(alice.transcripts[2]) == [
        f"Found 1 memory entry:\n\n- [{jazz_id}] (user-preferences/music, remembered today): "
        "User loves jazz\n  Tags: music, jazz",
        "Chicago Jazz Festival, Saturday",
    ]

    # -- turn 4, ten minutes later: the draft has expired, the city is recalled for the message -----
    clock.advance(600)
    context = alice.turn("Please forget where I live.")
    assert context == [
        system(SYSTEM),
        user("Remember that I love jazz and live in Chicago."),
        assistant("Noted!"),
        user("Any jazz events near me? Keep a draft list."),
        assistant("There is a jazz festival on Saturday; I put it on your draft list."),
        user("What music do I like, and what is on my draft list?"),
        assistant("You love jazz; your draft list has the Chicago Jazz Festival."),
        system(f"{fmt.RECALL_HEADER}\n- [{chicago_id}] (user-preferences/location): User lives in Chicago"),
        patrol_block("228m30s"),
        user("Please forget where I live."),
    ]
    assert tool_results(alice.transcripts[3]) == [
        "Working memory entry 'session/u1/draft_list' not found or has expired.",
        f"Found 1 memory entry:\n\n- [{chicago_id}] (user-preferences/location, remembered today): "
        "User lives in Chicago",
        f"Deleted memory entry '{chicago_id}': \"User lives in Chicago\"",
        "Error: the arguments of 'save_to_working_memory' are not valid JSON "
        "(Expecting property name enclosed in double quotes at position 13).",
        "Memory categories:\n- user-preferences/music",
    ]
    assert alice.mem.long_term("user").get(chicago_id) is None
    assert user_model.remaining == 0
    # the model saw exactly the built context, then the tool exchange, on every call of a turn
    first_call_of_turn_4 = user_model.calls[8]["messages"]
    assert first_call_of_turn_4 == context

    # -- a day later the conversation has gone idle (1 h) and the patrol finding expired; the jazz
    # memory was injected in this session already, so nothing is recalled, but the tool finds it
    clock.advance(86400)
    alice.model = ScriptedChatModel([tool_call("search_memory", {"query": "jazz"}), "Jazz."])
    assert alice.turn("Which music again?") == [system(SYSTEM), user("Which music again?")]
    assert tool_results(alice.transcripts[4]) == [
        f"Found 1 memory entry:\n\n- [{jazz_id}] (user-preferences/music, remembered 1 day ago): "
        "User loves jazz\n  Tags: music, jazz"
    ]
