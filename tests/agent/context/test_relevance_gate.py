"""The context builder's and the agent tool's relevance gate: a search with vectors has no floor, so
these agent-facing recalls keep only memories whose fused score reaches RELEVANCE_GATE (unless the
tool's caller sets ``min_score``)."""

from __future__ import annotations

from memstack import Memory
from memstack.agent.context import ContextBuilder
from memstack.agent.context import format as fmt
from memstack.agent.tools.longterm_tools import search_memory
from memstack.agent.tools.schemas import SearchMemoryArgs
from memstack.search.embedders import FakeEmbedder
from memstack.search.evidence import GATED_SCOPE, RELEVANCE_GATE, relevance_gate

TEXTS = [
    "The garden hose leaks near the tap",
    "Invoice 4471 was paid on Tuesday",
    "Our cat sleeps on the windowsill",
    "The tram line closes for repairs in May",
]


def _filled(mem: Memory) -> object:
    memories = mem.long_term("gate", embedder=FakeEmbedder(dim=32))
    for n, text in enumerate(TEXTS):
        memories.save(id=f"e{n}", content=text)
    assert memories.flush_embeddings(timeout=30)
    return memories


def test_the_builder_injects_only_memories_above_the_gate(mem: Memory) -> None:
    memories = _filled(mem)
    hits = memories.search("the garden hose leaks", limit=10)
    assert len(hits) == len(TEXTS)  # the search itself has no floor
    above = [h.entry.id for h in hits if h.score >= RELEVANCE_GATE]
    assert above and len(above) < len(TEXTS)
    ctx = ContextBuilder(mem, long_term=memories).build("s2", "the garden hose leaks")
    block = next(m["content"] for m in ctx.messages if m["content"].startswith(fmt.RECALL_HEADER))
    assert sorted(line.split("]")[0][3:] for line in block.splitlines()[1:]) == sorted(above)


def test_the_search_tool_gates_unless_the_agent_sets_min_score(mem: Memory) -> None:
    memories = _filled(mem)
    gated = search_memory(memories, SearchMemoryArgs(query="the garden hose leaks"))
    assert "[e0]" in gated and "[e2]" not in gated
    everything = search_memory(memories, SearchMemoryArgs(query="the garden hose leaks", min_score=-10.0))
    assert all(f"[e{n}]" in everything for n in range(len(TEXTS)))


def test_a_small_scope_keeps_positive_evidence_and_a_large_one_the_gate() -> None:
    # Among n cosines no z-score passes sqrt(n - 1): a perfect vector match in a scope of 5 fuses
    # under RELEVANCE_GATE, so a small scope keeps what has positive evidence instead.
    assert relevance_gate(True, entries=5) == 0.0
    assert relevance_gate(True, entries=GATED_SCOPE - 1) == 0.0
    assert relevance_gate(True, entries=GATED_SCOPE) == RELEVANCE_GATE
    assert relevance_gate(True) == RELEVANCE_GATE  # the size unknown: the gate
    assert relevance_gate(True, 0.5, entries=5) == 0.5  # the caller's own floor wins
    assert relevance_gate(False, entries=5) is None  # BM25 alone keeps its own rule
