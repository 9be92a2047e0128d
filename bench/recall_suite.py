"""Recall of memstack's default search against plain cosine and BM25 alone, on three kinds of data.

Usage::

    python bench/recall_suite.py [--data locomo-dev.json] [--quick] [--smoke] [--sets paraphrase,...]
        [--embedder minilm|e5-small|...] [--embed-speed N]

Side by side in one run, over the same entries:

``default``
    ``LongTermMemory.search`` with the embedder (hybrid, the ``default`` search profile).
``cosine``
    every entry ranked by the cosine of the same model's vectors (what a plain vector store answers).
``bm25``
    ``LongTermMemory.search`` without an embedder (the ``default`` profile's BM25).

The sets are described in ``bench/_recall_sets.py``: paraphrase personas (``bench/data/paraphrase``),
LoCoMo turns and LoCoMo ``observation`` facts (the LoCoMo development split is not shipped: ``--data``
or ``$MEMSTACK_LOCOMO``). Every set has a tune part (parameters were chosen on it) and a report part;
the tables show both, the ``RESULT`` lines the report part. On LoCoMo turns the session-level recall
(the share of a question's evidence sessions among the first k distinct sessions of the ranking) is
printed too. ``empty`` counts searches that returned nothing from a scope holding entries.
The share of the memories an agent's prompt would get (the default search's top 8 at or above the
relevance gate of the context builder) that are evidence is printed under each table.
``--quick``: the report part only. ``--smoke``: a tiny made-up set, any embedder (the figures mean
nothing). ``--embedder NAME``: a row of memstack's embedder registry (default ``minilm``), for the
default search and plain cosine alike; ``--embed-speed N`` first times that embedder on N entry texts
(uncached), per 1,000 texts.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import memstack
from _embed_cache import CachedEmbedder  # bench/ is on sys.path when the script runs
from _locomo_smoke import write_smoke_data  # bench/ is on sys.path when the script runs
from _recall_sets import Question, Scope, add_smoke_observations, locomo_facts, locomo_turns, paraphrase
from _smoke import add_smoke, smoke_tag  # bench/ is on sys.path when the script runs
from locomo_recall import DATA_VARIABLE
from memstack import Memory
from memstack.search.embedders import DEFAULT_EMBEDDER, EMBEDDERS, Embedder, available_embedder, embed_queries
from memstack.search.embedders.fake import FakeEmbedder
from memstack.search.evidence import RELEVANCE_GATE
from memstack.tiers.longterm import SearchHit

KS = (1, 3, 5, 10, 20)
INJECTED = 8  # the context builder's recall_limit
SYSTEMS = ("default", "cosine", "bm25")
SETS = ("paraphrase", "locomo-turns", "locomo-facts")


class Tally:
    """Recall@k sums per (system, part, category), plus empty answers and session recall."""

    def __init__(self) -> None:
        self.sums: dict[tuple[str, str, str], list[float]] = defaultdict(lambda: [0.0] * len(KS))
        self.counts: dict[tuple[str, str, str], int] = defaultdict(int)
        self.empty: dict[str, int] = defaultdict(int)
        # per part: [questions, injected, evidence among them, questions with evidence injected]
        self.injected: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])

    def add_injected(self, part: str, hits: Sequence[SearchHit], q: Question) -> None:
        """What an agent-facing recall injects: the top :data:`INJECTED` hits at or above the gate."""
        kept = [h.entry.id for h in hits[:INJECTED] if h.score >= RELEVANCE_GATE]
        row = self.injected[part]
        found = sum(i in q.relevant for i in kept)
        row[0], row[1], row[2], row[3] = row[0] + 1, row[1] + len(kept), row[2] + found, row[3] + bool(found)

    def add(self, key: tuple[str, str, str], ranked: Sequence[str], q: Question) -> None:
        for cat in (key[2], "all"):
            k2 = (key[0], key[1], cat)
            self.counts[k2] += 1
            for n, k in enumerate(KS):
                found = q.relevant & set(ranked[:k])
                self.sums[k2][n] += len(found) / len(q.relevant) if q.fraction else float(bool(found))
        if not ranked:
            self.empty[key[0]] += 1

    def recall(self, system: str, part: str, k: int, category: str = "all") -> float:
        key = (system, part, category)
        n = self.counts.get(key, 0)
        return self.sums[key][KS.index(k)] / n if n else float("nan")


def session_ranking(ranked: Sequence[str]) -> list[str]:
    """The distinct sessions of ranked turn ids (``d3-12`` is session 3), in order of first appearance."""
    return list(dict.fromkeys(r.split("-")[0] for r in ranked))


def run_scope(mem: Memory, scope: Scope, embedder: Embedder, tally: Tally, sessions: Tally | None) -> None:
    name = f"suite-{scope.name}-{uuid.uuid4().hex[:8]}"
    writer = mem.long_term(name, embedder=embedder)
    for entry in scope.entries:
        writer.save(entry)
    writer.flush_embeddings(timeout=1800)
    bm25 = mem.long_term(name)
    ids = [e.id for e in scope.entries]
    matrix = embedder.embed([e.content for e in scope.entries]).astype(np.float32)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    for q in scope.questions:
        vector = embed_queries(embedder, [q.text])[0].astype(np.float32)
        order = np.argsort(-(matrix @ vector), kind="stable")[: max(KS)]
        hits = writer.search(q.text, limit=max(KS))
        tally.add_injected(scope.part, hits, q)
        answers = {
            "default": [h.entry.id for h in hits],
            "cosine": [ids[n] for n in order.tolist()],
            "bm25": [h.entry.id for h in bm25.search(q.text, limit=max(KS))],
        }
        for system, ranked in answers.items():
            tally.add((system, scope.part, q.category), ranked, q)
            if sessions is not None:
                evidence = Question(q.text, q.category, set(session_ranking(sorted(q.relevant))), True)
                sessions.add((system, scope.part, q.category), session_ranking(ranked), evidence)


def print_tally(title: str, tally: Tally, parts: Sequence[str]) -> None:
    print(f"== {title}")
    cats = sorted({key[2] for key in tally.counts})
    head = f"{'part':<7} {'category':<12} {'n':>4} {'system':<8} "
    head += " ".join(f"{'R@' + str(k):>6}" for k in KS)
    print(head + "\n" + "-" * len(head))
    for part in parts:
        for cat in cats:
            for system in SYSTEMS:
                n = tally.counts.get((system, part, cat), 0)
                if n:
                    row = " ".join(f"{tally.recall(system, part, k, cat):6.3f}" for k in KS)
                    print(f"{part:<7} {cat:<12} {n:>4} {system:<8} {row}")
    print(f"empty answers: {dict(tally.empty) or 0}")
    for part in parts:
        n, injected, evidence, answered = tally.injected.get(part, [0, 0, 0, 0])
        if n:
            print(
                f"{part}: top {INJECTED} at fused score >= {RELEVANCE_GATE} (what the context builder gets):"
                f" {injected / n:.2f} per question, {evidence / max(1, injected):.3f} of them evidence,"
                f" evidence injected for {answered / n:.3f} of the questions"
            )
    print()


def result_line(name: str, tally: Tally, part: str, extra: str, tag: str, embedder: str) -> str:
    figures = [f"set={name}", f"part={part}", f"embedder={embedder}"]
    for system in SYSTEMS:
        figures += [f"{system}_r{k}={tally.recall(system, part, k):.4f}" for k in KS]
    figures.append(f"empty={tally.empty.get('default', 0)}")
    return "RESULT " + " ".join(figures) + extra + tag


def load_sets(args: argparse.Namespace) -> dict[str, list[Scope]]:
    wanted = args.sets.split(",")
    sets: dict[str, list[Scope]] = {}
    if "paraphrase" in wanted:
        sets["paraphrase"] = paraphrase(limit=6 if args.smoke else None)
    if {"locomo-turns", "locomo-facts"} & set(wanted):
        path = args.data or (Path(os.environ[DATA_VARIABLE]) if os.environ.get(DATA_VARIABLE) else None)
        if path is None or not path.is_file():
            print(f"LoCoMo: no data ({path or f'--data or ${DATA_VARIABLE}'}); its sets are skipped")
        else:
            if "locomo-turns" in wanted:
                sets["locomo-turns"] = locomo_turns(path)
            if "locomo-facts" in wanted:
                sets["locomo-facts"] = locomo_facts(path)
    if args.part != "both":
        sets = {k: [s for s in v if s.part == args.part] for k, v in sets.items()}
    return sets


def embed_speed(embedder: Embedder, sets: dict[str, list[Scope]], n: int) -> str:
    """Seconds to embed ``n`` entry texts of the loaded sets (no cache), per 1,000 texts."""
    texts = [e.content for scopes in sets.values() for s in scopes for e in s.entries][:n]
    embedder.embed(texts[:8])  # load the model first: its load time is not embedding time
    started = time.perf_counter()
    embedder.embed(texts)
    took = time.perf_counter() - started
    per_1k = took / max(1, len(texts)) * 1000
    print(f"embedding speed: {len(texts)} texts in {took:.2f} s, {per_1k:.2f} s per 1k texts")
    return f" embed_texts={len(texts)} embed_s_per_1k={per_1k:.3f}"


def run(args: argparse.Namespace) -> int:
    found = available_embedder(args.embedder)
    if found is None and not args.smoke:
        print(f"embedder {args.embedder!r}: its package is not installed")
        return 2
    inner: Embedder = found if found is not None else FakeEmbedder()
    print(f"embedder: {args.embedder} = {inner.model_id} (dim {inner.dim})")
    embedder = cached = CachedEmbedder(inner, Path(args.cache_dir)) if args.cache_dir else None
    embedder = embedder or inner
    parts = ("tune", "report") if args.part == "both" else (args.part,)
    lines = []
    sets = load_sets(args)
    if args.embed_speed:
        speed = embed_speed(inner, sets, 40 if args.smoke else args.embed_speed)
        lines.append(f"RESULT set=embed-speed embedder={args.embedder}{speed}{smoke_tag(args)}")
    try:
        with memstack.open(args.url, embedder="none") as mem:
            for name, scopes in sets.items():
                started = time.perf_counter()
                tally, sessions = Tally(), Tally() if name == "locomo-turns" else None
                for scope in scopes:
                    run_scope(mem, scope, embedder, tally, sessions)
                n_q = sum(len(s.questions) for s in scopes)
                which = "; ".join(f"{s.name}={s.part}" for s in scopes)
                took = time.perf_counter() - started
                print_tally(f"{name}: {n_q} questions ({which}) {took:.1f} s", tally, parts)
                extra = ""
                if sessions is not None:
                    print_tally(f"{name}: session-level recall", sessions, parts)
                    extra = "".join(
                        f" session_{s}_r{k}={sessions.recall(s, parts[-1], k):.4f}"
                        for s in ("default", "cosine") for k in (1, 5, 10)
                    )  # fmt: skip
                    multihop = tally.recall("default", parts[-1], 10, "multi-hop")
                    extra += f" default_multihop_r10={multihop:.4f}"
                lines.append(result_line(name, tally, parts[-1], extra, smoke_tag(args), args.embedder))
    finally:
        if cached is not None:
            cached.save()
    print("\n".join(lines))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--data", type=Path, default=None, help=f"locomo-dev.json (default: ${DATA_VARIABLE})"
    )
    parser.add_argument("--url", default="memory://", help="engine URL (default: the memory engine)")
    parser.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {', '.join(SETS)}")
    parser.add_argument("--quick", action="store_true", help="the report part only (--part report)")
    parser.add_argument("--part", choices=("tune", "report", "both"), default=None, help="default: both")
    parser.add_argument("--cache-dir", default="/tmp/memstack-locomo-cache", help="'' disables the cache")
    parser.add_argument(
        "--embedder",
        choices=sorted(EMBEDDERS),
        default=DEFAULT_EMBEDDER,
        help=f"a row of memstack's embedder registry (default: {DEFAULT_EMBEDDER}); --smoke falls back to a "
        "fake embedder when its package is not installed",
    )
    parser.add_argument(
        "--embed-speed",
        type=int,
        default=0,
        metavar="N",
        help="first time embedding N entry texts of the sets without the cache (0: not measured)",
    )
    add_smoke(parser)
    args = parser.parse_args(argv)
    args.part = args.part or ("report" if args.quick else "both")
    with tempfile.TemporaryDirectory(prefix="memstack-suite-") as tmp:
        if args.smoke:
            args.cache_dir = ""
            args.data = write_smoke_data(Path(tmp))
            add_smoke_observations(args.data)
        return run(args)


if __name__ == "__main__":
    sys.exit(main())
