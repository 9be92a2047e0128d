"""MemstackStorage as the external memory of a real CrewAI crew (its LLM a loopback
OpenAI-compatible server), on every engine."""

from __future__ import annotations

import pytest

pytest.importorskip("crewai", reason="the crewai extra is not installed")
pytest.importorskip("fastapi")

from crewai import LLM, Agent, Crew, Task
from crewai.memory.external.external_memory import ExternalMemory

from memstack import Memory
from memstack.doors.integrations.crewai import MemstackStorage
from memstack.engines import Engine
from services.dream._openai_server import fake_openai

from ._doors import default_tenant, http_door

ANSWER = "Thought: I now can give a great answer\nFinal Answer: Your dog is called Rex."


def test_a_crew_reads_and_writes_memstack(engine: Engine) -> None:
    mem = default_tenant(engine)
    storage = MemstackStorage(mem.long_term("ann"), subject="ann")
    storage.save("Ann's dog is called Rex", {"source": "onboarding", "messages": [{"role": "user"}]})
    with fake_openai([ANSWER]) as fake:
        llm = LLM(model="openai/gpt-4o-mini", base_url=fake.url, api_key="sk-loopback")
        agent = Agent(role="helper", goal="answer about the user's pets", backstory="kind", llm=llm)
        task = Task(description="What is my dog called?", expected_output="a name", agent=agent)
        crew = Crew(agents=[agent], tasks=[task], external_memory=ExternalMemory(storage=storage))
        assert crew.kickoff().raw == "Your dog is called Rex."
    prompt = fake.requests[0]["messages"][-1]["content"]
    assert "External memories:\n- Ann's dog is called Rex" in prompt, "the crew searched memstack first"
    saved = {e.content: e.metadata for e in mem.long_term("ann").entries()}
    assert saved[ANSWER]["description"] == "What is my dog called?", "and saved its answer"
    assert saved["Ann's dog is called Rex"] == {"source": "onboarding"}, "only plain metadata values are kept"
    with http_door(engine) as client:
        hits = client.get("/v1/memories", params={"scope": "ann", "query": "Rex"}).json()["items"]
        assert sorted(h["entry"]["content"] for h in hits) == sorted(saved)
    assert mem.forget(subject="ann").remaining == 0
    assert storage.search("Rex") == []


def test_search_threshold_and_reset(mem: Memory) -> None:
    storage = MemstackStorage(mem.long_term("crew"))
    other = MemstackStorage(mem.long_term("other"))
    storage.save("green tea every morning", {})
    other.save("green tea", {})
    found = storage.search("green tea", limit=3, score_threshold=0.6)
    assert [(h["content"], h["metadata"]) for h in found] == [("green tea every morning", {})]
    strict = MemstackStorage(mem.long_term("crew"), use_score_threshold=True)
    assert strict.search("green tea", score_threshold=1e9) == []
    storage.reset()
    assert storage.search("green tea") == [] and len(other.search("green tea")) == 1
    with pytest.raises(TypeError, match="LongTermMemory"):
        MemstackStorage(object())  # type: ignore[arg-type]
