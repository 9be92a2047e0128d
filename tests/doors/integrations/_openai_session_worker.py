"""One agent process on the shared session: ``URL NAME ROUNDS``. Each round runs the agent (which
adds the question and the scripted answer) and every other round pops the newest item; prints the
popped items as JSON."""

from __future__ import annotations

import asyncio
import json
import sys

from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message

import memstack
from memstack.doors.integrations.openai_agents import MemstackSession


async def main(url: str, name: str, rounds: int) -> None:
    set_tracing_disabled(True)
    mem = memstack.open(url, tenant=None)
    try:
        session = MemstackSession("shared", mem)
        model = ScriptedModel([[assistant_message(f"{name} answer {n}")] for n in range(rounds)])
        agent = Agent(name=name, model=model)
        popped = []
        for n in range(rounds):
            # The run's own input format would make the item differ from what was typed: add it
            # as a plain message and let the run add only the answer.
            await session.add_items([{"role": "user", "content": f"{name} question {n}"}])
            result = await Runner.run(agent, [], session=session)
            assert result.final_output == f"{name} answer {n}"
            if n % 2:
                popped.append(await session.pop_item())
        print(json.dumps(popped))
    finally:
        mem.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
