"""Recall@k of LoCoMo evidence turns through long-term memory: BM25 (two profiles) and hybrid.

For each conversation of the development split, a fresh scope receives every turn as one entry
(content ``"{speaker}: {text}"`` plus `` [image: {caption}]`` on image turns; created at the
session's date), then every question of categories 1-4 is asked as a search. Recall@k is the
fraction of a question's evidence turns among the top k results, averaged over questions. Nothing
of a question (text, answer, evidence) reaches the index; nothing is tuned per conversation.

    python bench/locomo_recall.py [--data PATH] [--url URL] [--quick]

Each conversation's turns are embedded once (by the scope's background worker, during the fill);
every mode then searches the same scope, so the retrieval profiles share those vectors. ``hybrid``
uses the ``default`` fusion; the full run also evaluates ``hybrid-raw`` (the ``weighted-raw`` fusion,
the previous default) on the same vectors. ``--quick`` skips ``bm25-rockbot`` and ``hybrid-raw``
(every question is still evaluated). Most of the run time is the local model embedding every turn
(3,435 on the development split, about 10 ms of CPU each) and every question; BM25 alone takes
about a second. ``--quick`` took 26-47 s on a shared 2-core machine (depending on its load).
The last line is ``RESULT questions=… bm25_r10=… hybrid_r10=… hybrid_r20=… …``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import memstack
from memstack import Memory
from memstack.longterm import LongTermMemory, MemoryEntry
from memstack.search.embedders import Embedder, available_local_embedder

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO / ".." / "shared" / "data" / "locomo" / "locomo-dev.json"
FALLBACK_DATA = Path("/work/shared/data/locomo/locomo-dev.json")
KS = (1, 5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DIA_ID = re.compile(r"D(\d+):(\d+)")
SESSION_KEY = re.compile(r"session_(\d+)")


@dataclass
class Question:
    text: str
    category: int
    evidence: set[str]  # entry ids


@dataclass
class Conversation:
    sample_id: str
    entries: list[MemoryEntry]
    questions: list[Question]


@dataclass
class Scores:
    """Recall@k sums per category."""

    sums: dict[int, dict[int, float]] = field(
        default_factory=lambda: defaultdict(lambda: dict.fromkeys(KS, 0.0))
    )
    counts: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    seconds: float = 0.0

    def add(self, category: int, ranked: Sequence[str], evidence: set[str]) -> None:
        self.counts[category] += 1
        for k in KS:
            self.sums[category][k] += len(evidence & set(ranked[:k])) / len(evidence)

    def recall(self, k: int, category: int | None = None) -> float:
        cats = [category] if category is not None else list(self.counts)
        n = sum(self.counts[c] for c in cats)
        return sum(self.sums[c][k] for c in cats) / n if n else float("nan")


def entry_id(dia_id: str) -> str | None:
    """``D3:12`` → ``d3-12`` (ids are file-name safe); None for a malformed reference."""
    match = DIA_ID.fullmatch(dia_id.strip())
    return f"d{int(match[1])}-{int(match[2])}" if match else None


def session_time(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` as UTC (the dataset gives no zone)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load(path: Path) -> list[Conversation]:
    data: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    conversations = []
    for sample in data:
        conv = sample["conversation"]
        entries: list[MemoryEntry] = []
        sessions = sorted(
            (int(m[1]), key)
            for key in conv
            if (m := SESSION_KEY.fullmatch(key)) and isinstance(conv[key], list)
        )
        for number, key in sessions:
            when = session_time(conv[f"session_{number}_date_time"])
            for turn in conv[key]:
                content = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    content += f" [image: {turn['blip_caption']}]"
                eid = entry_id(turn["dia_id"])
                if eid is not None:
                    entries.append(MemoryEntry(id=eid, content=content, created_at=when))
        known = {e.id for e in entries}
        questions = []
        for qa in sample["qa"]:
            if qa.get("category") not in CATEGORIES:
                continue
            evidence = {
                f"d{int(a)}-{int(b)}" for ref in qa.get("evidence", []) for a, b in DIA_ID.findall(str(ref))
            } & known
            if evidence:
                questions.append(Question(str(qa["question"]), int(qa["category"]), evidence))
        conversations.append(Conversation(sample["sample_id"], entries, questions))
    return conversations


def evaluate(
    conversations: Sequence[Conversation],
    mem: Memory,
    modes: dict[str, Callable[[Memory, str], LongTermMemory]],
    embedder: Embedder | None,
) -> tuple[dict[str, Scores], float]:
    """Fill one fresh scope per conversation, then run every question in every mode."""
    results = {name: Scores() for name in modes}
    fill_seconds = 0.0
    run = uuid.uuid4().hex[:8]
    for conv in conversations:
        scope = f"locomo-{conv.sample_id}-{run}"
        writer = mem.long_term(scope, embedder=embedder)
        start = time.perf_counter()
        for entry in conv.entries:
            writer.save(entry)
        if not writer.flush_embeddings(timeout=600):
            print(f"warning: vectors of {conv.sample_id} still computing after 600 s", file=sys.stderr)
        fill_seconds += time.perf_counter() - start
        for name, make in modes.items():
            memory = make(mem, scope)
            start = time.perf_counter()
            for question in conv.questions:
                hits = memory.search(question.text, max_results=max(KS))
                results[name].add(question.category, [h.entry.id for h in hits], question.evidence)
            results[name].seconds += time.perf_counter() - start
    return results, fill_seconds


def print_table(results: dict[str, Scores]) -> None:
    header = f"{'mode':<16} {'category':<12} {'n':>4} " + " ".join(f"{'R@' + str(k):>6}" for k in KS)
    print(header)
    print("-" * len(header))
    for name, scores in results.items():
        for category in [*CATEGORIES, None]:
            label = "overall" if category is None else f"{category} {CATEGORIES[category]}"
            n = sum(scores.counts.values()) if category is None else scores.counts[category]
            row = " ".join(f"{scores.recall(k, category):6.3f}" for k in KS)
            print(f"{name:<16} {label:<12} {n:>4} {row}")
        print()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--data", type=Path, default=None, help="locomo-dev.json (default: ../shared/data/locomo)"
    )
    parser.add_argument("--url", default="memory://", help="engine URL (default: the memory engine)")
    parser.add_argument("--quick", action="store_true", help="skip bm25-rockbot and hybrid-raw")
    args = parser.parse_args(argv)
    data = args.data or (DEFAULT_DATA if DEFAULT_DATA.is_file() else FALLBACK_DATA)
    conversations = load(data)
    n_questions = sum(len(c.questions) for c in conversations)
    n_turns = sum(len(c.entries) for c in conversations)
    print(f"LoCoMo {data.name}: {len(conversations)} conversations, {n_turns} turns, ", end="")
    print(f"{n_questions} questions of categories 1-4")

    embedder = available_local_embedder()
    modes: dict[str, Callable[[Memory, str], LongTermMemory]] = {
        "bm25": lambda m, s: m.long_term(s, profile="default"),
    }
    if not args.quick:
        modes["bm25-rockbot"] = lambda m, s: m.long_term(s, profile="rockbot")
    if embedder is not None:
        modes["hybrid"] = lambda m, s: m.long_term(s, profile="default", embedder=embedder, fusion="default")
        if not args.quick:
            modes["hybrid-raw"] = lambda m, s: m.long_term(
                s, profile="default", embedder=embedder, fusion="weighted-raw"
            )
        print(f"hybrid: local embedder {embedder.model_id} (dim {embedder.dim})")
    else:
        print("hybrid: no local embedder installed (pip install 'memstack[embeddings]'); hybrid_r10=nan")
    print(f"engine: {args.url}\n")

    started = time.perf_counter()
    with memstack.open(args.url) as mem:
        results, fill_seconds = evaluate(conversations, mem, modes, embedder)
    total_seconds = time.perf_counter() - started
    print_table(results)
    print(f"fill (save every turn{', embed' if embedder else ''}): {fill_seconds:.1f} s")
    for name, scores in results.items():
        each = 1000 * scores.seconds / max(1, n_questions)
        print(f"{name}: {n_questions} searches in {scores.seconds:.2f} s ({each:.2f} ms each)")
    print(f"evaluation (fill + searches): {total_seconds:.1f} s")

    nan = float("nan")
    bm25 = results["bm25"]
    hybrid = results.get("hybrid")
    figures = {
        "questions": n_questions,
        "bm25_r10": bm25.recall(10),
        "hybrid_r10": hybrid.recall(10) if hybrid else nan,
        "hybrid_r20": hybrid.recall(20) if hybrid else nan,
        "bm25_r20": bm25.recall(20),
        "rockbot_r10": results["bm25-rockbot"].recall(10) if "bm25-rockbot" in results else nan,
        "hybrid_vs_bm25_r10": (hybrid.recall(10) / bm25.recall(10)) if hybrid else nan,
        "hybrid_vs_bm25_search_time": (hybrid.seconds / bm25.seconds) if hybrid and bm25.seconds else nan,
    }
    pairs = (f"{k}={v}" if isinstance(v, int) else f"{k}={v:.4f}" for k, v in figures.items())
    print("RESULT " + " ".join(pairs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
