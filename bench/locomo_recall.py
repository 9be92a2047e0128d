"""Recall@k of LoCoMo evidence turns through long-term memory, per search profile, on fixed halves.

For each conversation of the development split, a fresh scope receives every turn as one entry
(content ``"{speaker}: {text}"`` plus `` [image: {caption}]`` on image turns; created at the session's
date; conversation provenance in ``metadata["conversation"]``: conversation id, turn position, speaker,
session time, as :mod:`memstack.tiers.longterm.provenance` defines it), then every question of categories 1-4
is asked as a search. Recall@k is the fraction of a question's evidence turns among the top k results,
averaged over questions. Nothing of a question (text, answer, evidence) reaches the index; nothing is
tuned per conversation.

    python bench/locomo_recall.py [--split tune|report|both] [--reverse] [--embedder minilm|e5-small]
                                  [--data PATH] [--url URL] [--cache-dir DIR] [--quick | --smoke]

The halves and every choice made on them are in ``bench/locomo_choices.py``. ``--split tune`` (or
``report``) evaluates that half only; ``both`` (the default) evaluates all six conversations and prints
each half and the whole. Each mode is ``bm25:{profile}`` or ``hybrid:{profile}`` for a row of
:data:`memstack.search.SEARCH_PROFILES`; every mode searches the same scope, so they share its vectors.

Embeddings are cached on disk outside the repository (``--cache-dir``, default
``/tmp/memstack-locomo-cache``; ``--cache-dir ''`` disables it): the cache returns exactly what the
model computed for the same text, so figures do not depend on it, only the run time does. ``--quick``
evaluates ``bm25:plain``, ``bm25:default`` and ``hybrid:default`` only, on the report half unless
``--split`` is given. Most of a run without the cache is the local model embedding every turn (3,435 on
the whole development split) and every question; with the cache the full run takes about a minute.
The last line is ``RESULT questions=… bm25_r10=… hybrid_r10=… hybrid_r20=… report_hybrid_r10=… …``
(figures of the ``default`` profile; ``report_`` on the report half, the others on the evaluated set).
``--smoke`` runs the ``--quick`` modes over a tiny made-up conversation set in LoCoMo's format
(``bench/_locomo_smoke.py``; no cache): it needs no LoCoMo copy, and its figures mean nothing.

The BM25 modes search with BM25 alone and the hybrid modes with ``--embedder``, whatever
``MEMSTACK_EMBEDDER`` says: the memory is opened with ``embedder="none"``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import memstack
from _embed_cache import CachedEmbedder  # bench/ is on sys.path when the script runs
from _locomo_smoke import write_smoke_data  # bench/ is on sys.path when the script runs
from _smoke import add_smoke, smoke_tag  # bench/ is on sys.path when the script runs
from locomo_choices import HALVES, REPORT, TUNE  # bench/ is on sys.path when the script runs
from memstack import Memory
from memstack.search.embedders import EMBEDDERS, Embedder, available_embedder
from memstack.tiers.longterm import LongTermMemory, MemoryEntry
from memstack.tiers.longterm.provenance import conversation_metadata

REPO = Path(__file__).resolve().parents[1]
DATA_VARIABLE = "MEMSTACK_LOCOMO"
"""The environment variable naming the LoCoMo file when ``--data`` is not given."""
KS = (1, 5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DIA_ID = re.compile(r"D(\d+):(\d+)")
SESSION_KEY = re.compile(r"session_(\d+)")


def data_path(given: Path | None) -> Path:
    """The LoCoMo file: ``--data``, else ``$MEMSTACK_LOCOMO``; exits with a message when neither is
    a file (the data is never shipped)."""
    path = given or (Path(os.environ[DATA_VARIABLE]) if os.environ.get(DATA_VARIABLE) else None)
    if path is None or not path.is_file():
        where = str(path) if path else f"none given (--data PATH or ${DATA_VARIABLE})"
        raise SystemExit(f"LoCoMo data: {where} is not a file; the LoCoMo development split is not shipped")
    return path


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

    def merge(self, other: Scores) -> None:
        for category, count in other.counts.items():
            self.counts[category] += count
            for k in KS:
                self.sums[category][k] += other.sums[category][k]
        self.seconds += other.seconds


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
            for position, turn in enumerate(conv[key]):
                content = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    content += f" [image: {turn['blip_caption']}]"
                eid = entry_id(turn["dia_id"])
                if eid is not None:
                    # what an agent saving a turn from its conversation records (longterm.provenance)
                    meta = conversation_metadata(
                        sample["sample_id"], 10_000 * number + position, turn["speaker"], when
                    )
                    entries.append(MemoryEntry(id=eid, content=content, created_at=when, metadata=meta))
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


Modes = dict[str, Callable[[Memory, str], LongTermMemory]]


def evaluate(
    conversations: Sequence[Conversation], mem: Memory, modes: Modes, embedder: Embedder | None
) -> tuple[dict[str, dict[str, Scores]], float]:
    """Fill one fresh scope per conversation, then run every question in every mode.

    Returns scores per mode per conversation, and the fill time.
    """
    results: dict[str, dict[str, Scores]] = {name: {} for name in modes}
    fill_seconds = 0.0
    run = uuid.uuid4().hex[:8]
    for conv in conversations:
        scope = f"locomo-{conv.sample_id}-{run}"
        writer = mem.long_term(scope, embedder=embedder)
        start = time.perf_counter()
        for entry in conv.entries:
            writer.save(entry)
        if not writer.flush_embeddings(timeout=1800):
            print(f"warning: vectors of {conv.sample_id} still computing after 1800 s", file=sys.stderr)
        fill_seconds += time.perf_counter() - start
        for name, make in modes.items():
            memory = make(mem, scope)
            scores = results[name][conv.sample_id] = Scores()
            memory.search(conv.questions[0].text, max_results=max(KS))  # builds the indexes: not timed
            start = time.perf_counter()
            for question in conv.questions:
                hits = memory.search(question.text, max_results=max(KS))
                scores.add(question.category, [h.entry.id for h in hits], question.evidence)
            scores.seconds += time.perf_counter() - start
    return results, fill_seconds


def pooled(per_conv: dict[str, Scores], samples: Sequence[str]) -> Scores:
    total = Scores()
    for sample in samples:
        if sample in per_conv:
            total.merge(per_conv[sample])
    return total


def print_table(title: str, results: dict[str, Scores]) -> None:
    print(f"== {title}")
    header = f"{'mode':<22} {'category':<12} {'n':>4} " + " ".join(f"{'R@' + str(k):>6}" for k in KS)
    print(header)
    print("-" * len(header))
    for name, scores in results.items():
        for category in [*CATEGORIES, None]:
            label = "overall" if category is None else f"{category} {CATEGORIES[category]}"
            n = sum(scores.counts.values()) if category is None else scores.counts[category]
            row = " ".join(f"{scores.recall(k, category):6.3f}" for k in KS)
            print(f"{name:<22} {label:<12} {n:>4} {row}")
        print()


BM25_PROFILES = ("plain", "rm3", "conversation", "default", "rockbot")
HYBRID_PROFILES = ("plain", "rm3", "rocchio", "conversation", "context", "default")


def make_modes(embedder: Embedder | None, quick: bool) -> Modes:
    modes: Modes = {}
    for profile in ("plain", "default") if quick else BM25_PROFILES:
        modes[f"bm25:{profile}"] = lambda m, s, p=profile: m.long_term(s, profile=p)
    if embedder is not None:
        for profile in ("default",) if quick else HYBRID_PROFILES:
            modes[f"hybrid:{profile}"] = lambda m, s, p=profile: m.long_term(s, profile=p, embedder=embedder)
    return modes


def add_locomo_options(parser: argparse.ArgumentParser) -> None:
    """The options of every bench over LoCoMo: the data file, the embedder and its cache, --smoke."""
    parser.add_argument(
        "--data", type=Path, default=None, help=f"locomo-dev.json (default: ${DATA_VARIABLE})"
    )
    parser.add_argument("--embedder", choices=sorted(EMBEDDERS), default="minilm")
    parser.add_argument("--cache-dir", default="/tmp/memstack-locomo-cache", help="'' disables the cache")
    add_smoke(parser)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    add_locomo_options(parser)
    parser.add_argument("--url", default="memory://", help="engine URL (default: the memory engine)")
    parser.add_argument("--quick", action="store_true", help="bm25:plain, bm25:default, hybrid:default only")
    parser.add_argument("--split", choices=("tune", "report", "both"), default=None, help="default: both")
    parser.add_argument("--reverse", action="store_true", help="swap the tune and report halves")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memstack-locomo-") as tmp:
        if args.smoke:
            args.quick, args.cache_dir, args.split = True, "", args.split or "both"
            args.data = args.data or write_smoke_data(Path(tmp))
        return run(args)


def run(args: argparse.Namespace) -> int:
    args.split = args.split or ("report" if args.quick else "both")
    data = data_path(args.data)
    tune, report = (REPORT, TUNE) if args.reverse else (TUNE, REPORT)
    halves = {"tune": HALVES[tune], "report": HALVES[report]}
    conversations = load(data)
    if args.split != "both":
        conversations = [c for c in conversations if c.sample_id in halves[args.split]]
    n_questions = sum(len(c.questions) for c in conversations)
    n_turns = sum(len(c.entries) for c in conversations)
    print(f"LoCoMo {data.name}: {len(conversations)} conversations, {n_turns} turns, ", end="")
    print(f"{n_questions} questions of categories 1-4; split {args.split}", end="")
    print(
        f" (tune = half {tune} {', '.join(halves['tune'])};"
        f" report = half {report} {', '.join(halves['report'])})"
    )

    embedder: Embedder | None = available_embedder(args.embedder)
    cached: CachedEmbedder | None = None
    if embedder is not None:
        print(f"hybrid: embedder {args.embedder} = {embedder.model_id} (dim {embedder.dim})")
        if args.cache_dir:
            embedder = cached = CachedEmbedder(embedder, Path(args.cache_dir))
    else:
        print(f"hybrid: embedder {args.embedder} is not installed; hybrid figures are nan")
    modes = make_modes(embedder, args.quick)
    print(f"engine: {args.url}\n")

    started = time.perf_counter()
    try:
        with memstack.open(args.url, embedder="none") as mem:  # each mode names its own embedder
            per_conv, fill_seconds = evaluate(conversations, mem, modes, embedder)
    finally:
        if cached is not None:
            cached.save()
    total_seconds = time.perf_counter() - started
    everything = [c.sample_id for c in conversations]
    tables: dict[str, dict[str, Scores]] = {}
    for label, samples in (("tune", halves["tune"]), ("report", halves["report"]), ("all", everything)):
        if args.split in (label, "both") or (label == "all" and args.split == "both"):
            tables[label] = {name: pooled(per_conv[name], samples) for name in modes}
    for label, results in tables.items():
        samples = halves.get(label, tuple(everything))
        asked = sum(len(c.questions) for c in conversations if c.sample_id in samples)
        print_table(f"{label}: {', '.join(samples)} ({asked} questions)", results)
    print(f"fill (save every turn{', embed' if embedder else ''}): {fill_seconds:.1f} s", end="")
    print("" if cached is None else f" (embedding cache: {cached.hits} hits, {cached.misses} computed)")
    whole = tables.get("all") or next(iter(tables.values()))
    for name, scores in whole.items():
        each = 1000 * scores.seconds / max(1, n_questions)
        print(f"{name}: {n_questions} searches in {scores.seconds:.2f} s ({each:.2f} ms each)")
    print(f"evaluation (fill + searches): {total_seconds:.1f} s")

    nan = float("nan")

    def recall(table: str, mode: str, k: int) -> float:
        found = tables.get(table, {}).get(mode)
        return found.recall(k) if found is not None else nan

    scope = "all" if "all" in tables else args.split
    bm25, hybrid = whole["bm25:default"], whole.get("hybrid:default")
    figures: dict[str, int | float] = {
        "questions": n_questions,
        "bm25_r10": recall(scope, "bm25:default", 10),
        "hybrid_r10": recall(scope, "hybrid:default", 10),
        "hybrid_r20": recall(scope, "hybrid:default", 20),
        "report_bm25_r10": recall("report", "bm25:default", 10),
        "report_hybrid_r10": recall("report", "hybrid:default", 10),
        "report_hybrid_r20": recall("report", "hybrid:default", 20),
        "tune_hybrid_r10": recall("tune", "hybrid:default", 10),
        "plain_bm25_r10": recall(scope, "bm25:plain", 10),
        "plain_hybrid_r10": recall(scope, "hybrid:plain", 10),
        "bm25_ms": 1000 * bm25.seconds / max(1, n_questions),
        "hybrid_ms": 1000 * hybrid.seconds / max(1, n_questions) if hybrid else nan,
    }
    pairs = (f"{k}={v}" if isinstance(v, int) else f"{k}={v:.4f}" for k, v in figures.items())
    print("RESULT " + " ".join(pairs) + smoke_tag(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
