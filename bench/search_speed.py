"""BM25 speed: memstack's incremental index against bm25s, rank_bm25, SQLite FTS5 and tantivy.

    python bench/search_speed.py [--quick | --smoke] [--entries N] [--queries N] [--filtered-entries N]
                                 [--conversations] [--url URL]

Corpus: memory-like entries of 8-30 words sampled by frequency from wordfreq's English list (seeded, so
every run uses the same corpus). Queries: 2-5 words sampled by frequency from the same list minus its
100 most frequent words (queries name topics, not function words). Top 10 per query.

Every engine runs in its own subprocess, so its peak memory is its own: "peak MB" is the subprocess's
peak RSS minus its RSS after the corpus was loaded (index structures plus whatever building them needs).
memstack, bm25s and rank_bm25 get the same tokens (memstack's default tokeniser: stop words, Snowball
stemming); FTS5 uses ``porter unicode61`` and tantivy ``en_stem``; query times include tokenising.
Queries are OR queries (any term) in every engine. "add" is the time to make one new entry searchable:
memstack, FTS5 (one INSERT, autocommit) and tantivy (add + commit + reload) add incrementally; bm25s and
rank_bm25 have no incremental add, so their "add" is a full rebuild of the index with one more entry.
rank_bm25 scores every document in Python per query, so its queries are capped (see its row).

Filtered: another corpus of 200,000 entries (20,000 with ``--quick``; ``--filtered-entries``) saved
through ``LongTermMemory`` (BM25, a SQLite file) with one of 20 tags each; the same queries searched
without and with a one-tag filter. ``filtered_vs_unfiltered`` is the ratio of the p50s (target <= 2):
filters are answered from postings kept with the cache (``memstack.tiers.longterm.filter_index``).

Cold start: three new processes in turn open that SQLite file (its BM25 snapshot written when the
filling process closed) and search it. ``cold_start_s`` (target <= 1.0) is the median time from
``memstack.open`` to the first search's results (``import memstack`` happens before the clock
starts; the modules open and search import lazily are timed): a plain BM25 search, answered from the
snapshot (``memstack.tiers.longterm.cold``). ``cold_full_build_s`` is the first filtered search right
after, which builds the full cache as every first search did before snapshots.

Hybrid: the same corpus saved through ``LongTermMemory`` (``memory://`` engine) with the ``default`` search
profile and a vector per entry, then the same queries searched (top 10, BM25 + cosine over every entry
+ fusion), ``hybrid_p50_ms`` timing the whole ``search()`` call, query embedding included. Queries are
embedded by the local MiniLM model when it is installed; entry vectors are 384-dimensional hashed
bag-of-words stand-ins (embedding 100,000 entries with the model would take most of an hour of CPU here),
which costs a search exactly what model vectors would: the cosine work does not depend on the values.
``hybrid_embed_p50_ms`` is the query embedding alone. The corpus has no conversation provenance, so
the profile's conversation options stay idle there; ``--conversations`` runs the hybrid measurement
again with every entry a turn of a conversation (500 turns each, sessions of 20, two speakers), so the
context field and the propagation after fusion take part: ``hybrid_conv_p50_ms``. The hybrid run
has its own process with ``OPENBLAS_NUM_THREADS=1`` (and ``OMP_NUM_THREADS=1``): on a shared machine
BLAS's threads wait for each other (the 100,000 x 384 matrix-vector product measured ~31 ms with
them, ~12 ms without).

``--url`` puts the ``LongTermMemory`` measurements (filtered, cold start, hybrid) on that engine
instead (default: a temporary SQLite file for the first two, ``memory://`` for hybrid), each in a
scope of its own that is forgotten at the end; the cold start needs an engine other processes can
open (not ``memory://``: then it is skipped, ``cold_start_s=nan``). Those memories are opened with
``embedder="none"``: BM25 alone unless the run gives a scope its embedder. ``--smoke``: 500 entries,
20 queries, one cold start.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from _smoke import add_smoke, smoke_tag  # bench/ is on sys.path when the script runs

ENGINES = ["memstack", "bm25s", "rank_bm25", "sqlite_fts5", "tantivy"]
TOP_K = 10
AGREEMENT_QUERIES = 200


def make_corpus(entries: int, queries: int, seed: int = 7) -> tuple[list[str], list[str]]:
    from wordfreq import top_n_list, word_frequency

    words = [w for w in top_n_list("en", 30_000) if w.isalpha()]
    cum = list(itertools.accumulate(word_frequency(w, "en") for w in words))
    rng = random.Random(seed)
    docs = []
    for _ in range(entries):
        docs.append(" ".join(rng.choices(words, cum_weights=cum, k=rng.randint(8, 30))))
    topical = words[100:]
    cum_topical = list(itertools.accumulate(word_frequency(w, "en") for w in topical))
    qs = [
        " ".join(rng.choices(topical, cum_weights=cum_topical, k=rng.randint(2, 5))) for _ in range(queries)
    ]
    return docs, qs


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def reset_peak() -> float:
    """Reset the kernel's peak-RSS mark (so loading the corpus does not count) and return the RSS now."""
    gc.collect()
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    return _status_mb("VmRSS")


def peak_mb() -> float:
    return _status_mb("VmHWM")


def timed_queries(run: Callable[[str], list[str]], queries: list[str]) -> tuple[list[float], list[list[str]]]:
    times, tops = [], []
    for q in queries:
        t0 = time.perf_counter()
        ids = run(q)
        times.append(time.perf_counter() - t0)
        tops.append(ids)
    return times, tops


# -- engines (each runs inside its own worker process) ------------------------------------------------


def run_memstack(docs: list[str], queries: list[str], extra: list[str]) -> dict[str, Any]:
    from memstack.search import Bm25Index

    t0 = time.perf_counter()
    idx = Bm25Index()
    idx.add_many((str(i), d) for i, d in enumerate(docs))
    build = time.perf_counter() - t0
    times, tops = timed_queries(lambda q: [d for d, _ in idx.search(q, k=TOP_K)], queries)
    t0 = time.perf_counter()
    for j, text in enumerate(extra):
        idx.add(f"x{j}", text)
    add = (time.perf_counter() - t0) / len(extra)
    return {"build_s": build, "add_s": add, "times": times, "tops": tops, "add_kind": "incremental"}


def run_bm25s(docs: list[str], queries: list[str], extra: list[str]) -> dict[str, Any]:
    import bm25s
    import numpy as np

    from memstack.search import tokenize

    def build_index(texts: list[str]) -> Any:
        retriever = bm25s.BM25(k1=1.2, b=0.75, method="lucene", backend="numpy")
        retriever.index([tokenize(t) for t in texts], show_progress=False)
        return retriever

    t0 = time.perf_counter()
    retriever = build_index(docs)
    build = time.perf_counter() - t0
    vocab = retriever.vocab_dict

    def retrieve(q: str) -> list[str]:
        tokens = [t for t in tokenize(q) if t in vocab]
        if not tokens:
            return []
        ids, scores = retriever.retrieve([tokens], k=TOP_K, show_progress=False, backend_selection="numpy")
        return [str(i) for i, s in zip(ids[0].tolist(), scores[0].tolist(), strict=True) if s > 0]

    def scores_top(q: str) -> list[str]:
        tokens = [t for t in tokenize(q) if t in vocab]
        if not tokens:
            return []
        scores = retriever.get_scores(tokens)
        top = np.argpartition(-scores, TOP_K)[:TOP_K]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [str(i) for i in top.tolist() if scores[i] > 0]

    # retrieve() is bm25s's public search call; get_scores() + argpartition is its fastest path for one
    # query (retrieve() adds a large fixed per-call cost). Both are reported; ratios use the faster.
    times_retrieve, _ = timed_queries(retrieve, queries)
    times, tops = timed_queries(scores_top, queries)
    t0 = time.perf_counter()
    build_index([*docs, extra[0]])
    add = time.perf_counter() - t0
    return {
        "build_s": build,
        "add_s": add,
        "times": times,
        "tops": tops,
        "add_kind": "full rebuild",
        "times_retrieve": times_retrieve,
    }


def run_rank_bm25(docs: list[str], queries: list[str], extra: list[str]) -> dict[str, Any]:
    import numpy as np
    from rank_bm25 import BM25Okapi

    from memstack.search import tokenize

    t0 = time.perf_counter()
    bm = BM25Okapi([tokenize(t) for t in docs], k1=1.2, b=0.75)
    build = time.perf_counter() - t0

    def run(q: str) -> list[str]:
        scores = bm.get_scores(tokenize(q))
        top = np.argsort(-scores, kind="stable")[:TOP_K]
        return [str(i) for i in top.tolist() if scores[i] > 0]

    times, tops = timed_queries(run, queries)
    t0 = time.perf_counter()
    BM25Okapi([tokenize(t) for t in [*docs, extra[0]]], k1=1.2, b=0.75)
    add = time.perf_counter() - t0
    return {"build_s": build, "add_s": add, "times": times, "tops": tops, "add_kind": "full rebuild"}


def run_sqlite_fts5(docs: list[str], queries: list[str], extra: list[str]) -> dict[str, Any]:
    import re
    import sqlite3

    db = sqlite3.connect(":memory:", isolation_level=None)
    t0 = time.perf_counter()
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize='porter unicode61')")
    db.execute("BEGIN")
    db.executemany("INSERT INTO docs(rowid, body) VALUES (?, ?)", enumerate(docs))
    db.execute("COMMIT")
    build = time.perf_counter() - t0

    def run(q: str) -> list[str]:
        terms = re.findall(r"\w+", q.lower())
        if not terms:
            return []
        match = " OR ".join(f'"{t}"' for t in terms)
        rows = db.execute(
            "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?", (match, TOP_K)
        ).fetchall()
        return [str(r[0]) for r in rows]

    times, tops = timed_queries(run, queries)
    t0 = time.perf_counter()
    for j, text in enumerate(extra):
        db.execute("INSERT INTO docs(rowid, body) VALUES (?, ?)", (len(docs) + j, text))
    add = (time.perf_counter() - t0) / len(extra)
    return {"build_s": build, "add_s": add, "times": times, "tops": tops, "add_kind": "incremental"}


def run_tantivy(docs: list[str], queries: list[str], extra: list[str]) -> dict[str, Any]:
    import re

    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("id", stored=True, indexed=True)
    builder.add_text_field("body", stored=False, tokenizer_name="en_stem")
    schema = builder.build()
    index = tantivy.Index(schema)
    t0 = time.perf_counter()
    writer = index.writer(heap_size=200_000_000, num_threads=1)
    for i, text in enumerate(docs):
        writer.add_document(tantivy.Document(id=i, body=text))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    build = time.perf_counter() - t0
    searcher = index.searcher()

    def run(q: str) -> list[str]:
        terms = re.findall(r"\w+", q.lower())
        if not terms:
            return []
        query = index.parse_query(" OR ".join(terms), ["body"])
        hits = searcher.search(query, TOP_K).hits
        return [str(searcher.doc(addr)["id"][0]) for _, addr in hits]

    times, tops = timed_queries(run, queries)
    writer = index.writer(heap_size=50_000_000, num_threads=1)
    n_add = min(len(extra), 20)
    t0 = time.perf_counter()
    for j in range(n_add):
        writer.add_document(tantivy.Document(id=len(docs) + j, body=extra[j]))
        writer.commit()
        index.reload()
    add = (time.perf_counter() - t0) / n_add
    return {"build_s": build, "add_s": add, "times": times, "tops": tops, "add_kind": "add+commit+reload"}


RUNNERS: dict[str, Callable[[list[str], list[str], list[str]], dict[str, Any]]] = {
    "memstack": run_memstack,
    "bm25s": run_bm25s,
    "rank_bm25": run_rank_bm25,
    "sqlite_fts5": run_sqlite_fts5,
    "tantivy": run_tantivy,
}
REQUIRES = {"bm25s": "bm25s", "rank_bm25": "rank_bm25", "tantivy": "tantivy"}
# Imported before the peak-memory mark is reset: library code is not index memory.
PRELOAD = {
    "memstack": ["memstack.search"],
    "bm25s": ["bm25s", "memstack.search"],
    "rank_bm25": ["rank_bm25", "memstack.search"],
    "sqlite_fts5": ["sqlite3"],
    "tantivy": ["tantivy"],
}


def worker(engine: str, data_path: str, query_cap: int) -> None:
    with open(data_path) as fh:
        data = json.load(fh)
    queries = data["queries"][:query_cap]
    for module in PRELOAD[engine]:
        __import__(module)
    base = reset_peak()
    out = RUNNERS[engine](data["docs"], queries, data["extra"])
    out["peak_mb"] = peak_mb() - base
    out["engine"] = engine
    print(json.dumps(out))


class _SpeedEmbedder:
    """Hashed stand-in vectors for entries; queries embedded by the real local model (see the docstring)."""

    def __init__(self) -> None:
        from memstack.search.embedders import FakeEmbedder, available_local_embedder

        self.entries = FakeEmbedder(384)
        self.queries = available_local_embedder()
        self.model_id = "speed-bench:384"
        self.dim = 384

    def embed(self, texts: list[str]) -> Any:
        return self.entries.embed(texts)

    def embed_queries(self, texts: list[str]) -> Any:
        return (self.queries or self.entries).embed(texts)


CONVERSATION_TURNS, SESSION_TURNS = 500, 20


def run_hybrid(
    docs: list[str], queries: list[str], conversations: bool = False, url: str = "memory://"
) -> dict[str, Any]:
    """The hybrid search of the ``default`` profile; with ``conversations`` every entry is a turn of a
    conversation (``CONVERSATION_TURNS`` turns each, sessions of ``SESSION_TURNS``, two speakers), so
    the profile's conversation options (context field, propagation) take part."""
    from datetime import UTC, datetime, timedelta

    import memstack
    from memstack.tiers.longterm.provenance import conversation_metadata

    embedder = _SpeedEmbedder()
    start = datetime(2024, 1, 1, tzinfo=UTC)
    scope = f"speed-{os.getpid()}"
    with memstack.open(url, embedder="none") as mem:
        lt = mem.long_term(scope, embedder=embedder)
        t0 = time.perf_counter()
        for i, text in enumerate(docs):
            meta = None
            if conversations:
                when = start + timedelta(days=i // SESSION_TURNS)
                speaker = ("Ann", "Bob")[i % 2]
                meta = conversation_metadata(
                    f"c{i // CONVERSATION_TURNS}", i % CONVERSATION_TURNS, speaker, when
                )
            lt.save(id=f"e{i}", content=text, metadata=meta)
        lt.flush_embeddings()
        fill = time.perf_counter() - t0
        lt.search(queries[0], max_results=TOP_K)  # builds the index and the matrix: not timed
        times, _ = timed_queries(lambda q: [h.entry.id for h in lt.search(q, max_results=TOP_K)], queries)
        embed_times, _ = timed_queries(lambda q: [str(embedder.embed_queries([q]).shape)], queries)
        mem.forget(scope=scope)
    model = "none (hashed stand-in)" if embedder.queries is None else embedder.queries.model_id
    return {"fill_s": fill, "times": times, "embed_times": embed_times, "query_model": model}


FILTER_TAGS = 20
COLD_RUNS = 3


def run_filtered(docs: list[str], queries: list[str], url: str, scope: str) -> dict[str, Any]:
    """BM25 search of a ``LongTermMemory`` (a SQLite file unless ``--url``) with and without a tag
    filter (one tag of 20, so about 5 % of the entries pass): the filter is answered from postings,
    not by testing every entry. The scope is left with its snapshot for :func:`run_cold`."""
    import memstack

    with memstack.open(url, embedder="none") as mem:
        lt = mem.long_term(scope, embedder=None)
        t0 = time.perf_counter()
        for i, text in enumerate(docs):
            lt.save(id=f"e{i}", content=text, tags=[f"t{i % FILTER_TAGS}"])
        fill = time.perf_counter() - t0
        lt.search(queries[0], max_results=TOP_K)  # builds the index: not timed
        t0 = time.perf_counter()
        assert lt.snapshot()
        snapshot = time.perf_counter() - t0
        plain, _ = timed_queries(lambda q: [h.entry.id for h in lt.search(q, max_results=TOP_K)], queries)
        tagged, tops = timed_queries(
            lambda q: [h.entry.id for h in lt.search(q, tags=["t3"], max_results=TOP_K)], queries
        )
        wrong = sum(1 for top in tops for entry_id in top if int(entry_id[1:]) % FILTER_TAGS != 3)
    return {"plain": plain, "tagged": tagged, "wrong": wrong, "fill_s": fill, "snapshot_s": snapshot}


def run_cold(url: str, scope: str, query: str) -> dict[str, Any]:
    """A new process opens the SQLite file and searches: the first plain BM25 search (answered from
    the scope's snapshot: memstack.tiers.longterm.cold), then the first filtered one (which builds the
    full cache). ``memstack`` is imported before the clock starts; what ``open`` and the search
    import lazily is timed."""
    import memstack

    t0 = time.perf_counter()
    with memstack.open(url, embedder="none") as mem:
        lt = mem.long_term(scope, embedder=None)
        first = [h.entry.id for h in lt.search(query, max_results=TOP_K)]
        t1 = time.perf_counter()
        lt.search(query, tags=["t3"], max_results=TOP_K)
        t2 = time.perf_counter()
        again = [h.entry.id for h in lt.search(query, max_results=TOP_K)]
    return {"cold_start_s": t1 - t0, "full_build_s": t2 - t1, "same_top": first == again}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="20,000 entries and 300 queries (< 60 s)")
    parser.add_argument("--entries", type=int, default=None)
    parser.add_argument("--queries", type=int, default=None)
    parser.add_argument("--filtered-entries", type=int, default=None, help="default 200,000 (--quick 20,000)")
    parser.add_argument(
        "--conversations",
        action="store_true",
        help="also time the hybrid search with every entry a conversation turn (hybrid_conv_p50_ms)",
    )
    parser.add_argument("--worker", choices=[*ENGINES, "hybrid", "filtered", "cold"], help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--query-cap", type=int, default=10**9, help=argparse.SUPPRESS)
    parser.add_argument("--url", help="engine of the LongTermMemory measurements (see the docstring)")
    add_smoke(parser)
    args = parser.parse_args()
    if args.worker == "hybrid":
        with open(args.data) as fh:
            data = json.load(fh)
        hybrid_url = args.url or "memory://"
        print(json.dumps(run_hybrid(data["docs"], data["queries"], args.conversations, hybrid_url)))
        return
    if args.worker == "filtered":
        with open(args.data) as fh:
            data = json.load(fh)
        print(json.dumps(run_filtered(data["docs"], data["queries"], data["url"], data["scope"])))
        return
    if args.worker == "cold":
        with open(args.data) as fh:
            data = json.load(fh)
        print(json.dumps(run_cold(data["url"], data["scope"], data["queries"][0])))
        return
    if args.worker:
        worker(args.worker, args.data, args.query_cap)
        return

    entries = args.entries or (500 if args.smoke else 20_000 if args.quick else 100_000)
    n_queries = args.queries or (20 if args.smoke else 300 if args.quick else 1_000)
    rank_cap = 5 if args.smoke else 10 if args.quick else 30
    docs, queries = make_corpus(entries + 200, n_queries)
    docs, extra = docs[:entries], docs[entries:]
    print(
        f"corpus: {entries:,} entries (8-30 words, wordfreq English), "
        f"{n_queries:,} queries of 2-5 words, top {TOP_K}"
    )
    if args.quick or args.smoke:
        print("a reduced corpus; figures are not comparable with a full run")

    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "corpus.json")
        with open(path, "w") as fh:
            json.dump({"docs": docs, "queries": queries, "extra": extra}, fh)
        for engine in ENGINES:
            module = REQUIRES.get(engine)
            if module is not None:
                try:
                    __import__(module)
                except ImportError:
                    print(f"{engine}: not installed, skipped (pip install 'memstack[bench]')")
                    continue
            cap = rank_cap if engine == "rank_bm25" else 10**9
            cmd = [sys.executable, __file__, "--worker", engine, "--data", path, "--query-cap", str(cap)]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                print(f"{engine}: failed\n{proc.stderr[-2000:]}")
                continue
            results[engine] = json.loads(proc.stdout.strip().splitlines()[-1])
        # One BLAS thread: on shared cores BLAS's own threads wait for each other (measured here: the
        # 100k x 384 product took ~31 ms with them, ~12 ms without); a deployment sets the same variable.
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        on_url = ["--url", args.url] if args.url else []
        cmd = [sys.executable, __file__, "--worker", "hybrid", "--data", path, *on_url]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
        if proc.returncode != 0:
            raise SystemExit(f"hybrid: failed\n{proc.stderr[-2000:]}")
        hybrid = json.loads(proc.stdout.strip().splitlines()[-1])
        conv: dict[str, Any] | None = None
        if args.conversations:
            proc = subprocess.run(
                [*cmd, "--conversations"], capture_output=True, text=True, check=False, env=env
            )
            if proc.returncode != 0:
                raise SystemExit(f"hybrid (conversations): failed\n{proc.stderr[-2000:]}")
            conv = json.loads(proc.stdout.strip().splitlines()[-1])
        default = 500 if args.smoke else 20_000 if args.quick else 200_000
        filtered_entries = args.filtered_entries or default
        filtered_docs, _ = make_corpus(filtered_entries, 1, seed=11)
        filtered_path = os.path.join(tmp, "filtered.json")
        store_url = args.url or f"sqlite:///{os.path.join(tmp, 'f.db')}"
        scope = f"filtered-{os.getpid()}"
        with open(filtered_path, "w") as fh:
            json.dump({"docs": filtered_docs, "queries": queries, "url": store_url, "scope": scope}, fh)
        cmd = [sys.executable, __file__, "--worker", "filtered", "--data", filtered_path]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
        if proc.returncode != 0:
            raise SystemExit(f"filtered: failed\n{proc.stderr[-2000:]}")
        filtered = json.loads(proc.stdout.strip().splitlines()[-1])
        colds = []
        shared = not store_url.startswith("memory:")  # a memory:// engine ends with its process
        for _ in range((1 if args.smoke else COLD_RUNS) if shared else 0):
            cmd = [sys.executable, __file__, "--worker", "cold", "--data", filtered_path]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
            if proc.returncode != 0:
                raise SystemExit(f"cold: failed\n{proc.stderr[-2000:]}")
            colds.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        if args.url and shared:
            import memstack

            with memstack.open(args.url, embedder="none") as mem:
                mem.forget(scope=scope)

    ours = results["memstack"]
    print()
    print(
        f"{'engine':<12} {'build s':>9} {'add ms':>10} {'add is':<18} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'queries':>8} {'peak MB':>8} {'top-10 overlap':>15}"
    )
    for name, r in results.items():
        overlap = ""
        n = min(AGREEMENT_QUERIES, len(r["tops"]), len(ours["tops"]))
        if name != "memstack" and n:
            shared = [
                len(set(a) & set(b)) / max(1, len(b))
                for a, b in zip(ours["tops"][:n], r["tops"][:n], strict=True)
                if b
            ]
            overlap = f"{statistics.fmean(shared):.3f}" if shared else "-"
        print(
            f"{name:<12} {r['build_s']:>9.2f} {r['add_s'] * 1e3:>10.4f} {r['add_kind']:<18} "
            f"{pct(r['times'], 0.5) * 1e3:>8.3f} {pct(r['times'], 0.99) * 1e3:>8.3f} {len(r['times']):>8} "
            f"{r['peak_mb']:>8.1f} {overlap:>15}"
        )
        if "times_retrieve" in r:
            tr = r["times_retrieve"]
            print(
                f"{'  retrieve()':<12} {'':>9} {'':>10} {'':<18} "
                f"{pct(tr, 0.5) * 1e3:>8.3f} {pct(tr, 0.99) * 1e3:>8.3f} {len(tr):>8}"
            )
    print("\npeak MB: peak RSS of the engine's own process minus its RSS with corpus and modules loaded.")
    print("top-10 overlap: mean share of the peer's top 10 that memstack also returns (same queries).")
    print("bm25s: its row times get_scores() + argpartition (its fastest one-query path); the row below")
    print("  times its public retrieve() call. p50_vs_bm25s uses the faster path.")
    if "rank_bm25" in results:
        print(f"rank_bm25: queries capped at {rank_cap} (it scores every document in Python).")

    h50, h99, e50 = (pct(hybrid["times"], 0.5) * 1e3, pct(hybrid["times"], 0.99) * 1e3,
                     pct(hybrid["embed_times"], 0.5) * 1e3)  # fmt: skip
    print(f"\nhybrid (LongTermMemory, default profile, query model {hybrid['query_model']}): "
          f"fill {hybrid['fill_s']:.1f} s; search p50 {h50:.3f} ms, p99 {h99:.3f} ms "
          f"({len(hybrid['times'])} queries); of which query embedding p50 {e50:.3f} ms")  # fmt: skip
    if conv is not None:
        c50, c99 = pct(conv["times"], 0.5) * 1e3, pct(conv["times"], 0.99) * 1e3
        print(f"hybrid with conversation provenance (turns of {CONVERSATION_TURNS}-turn conversations, "
              f"sessions of {SESSION_TURNS}: context field and propagation on): fill {conv['fill_s']:.1f} s; "
              f"search p50 {c50:.3f} ms, p99 {c99:.3f} ms")  # fmt: skip

    f_plain, f_tagged = pct(filtered["plain"], 0.5) * 1e3, pct(filtered["tagged"], 0.5) * 1e3
    print(f"filtered (LongTermMemory BM25, {filtered_entries:,} entries, a tag on 1 in {FILTER_TAGS}): "
          f"unfiltered p50 {f_plain:.3f} ms, filtered p50 {f_tagged:.3f} ms, "
          f"hits outside the filter: {filtered['wrong']}")  # fmt: skip
    nan = float("nan")
    cold_start = statistics.median(c["cold_start_s"] for c in colds) if colds else nan
    full_build = statistics.median(c["full_build_s"] for c in colds) if colds else nan
    print(f"cold start ({store_url.split(':')[0]} engine of those entries, fill {filtered['fill_s']:.1f} s, "
          f"snapshot written in {filtered['snapshot_s']:.2f} s): a new process opens it and answers its "
          f"first search in {cold_start:.3f} s (median of {len(colds)}); its first filtered search builds "
          f"the full cache in {full_build:.2f} s; same top 10 from the snapshot as from the cache: "
          f"{all(c['same_top'] for c in colds)}")  # fmt: skip

    p50 = pct(ours["times"], 0.5) * 1e3
    p99 = pct(ours["times"], 0.99) * 1e3
    add = ours["add_s"] * 1e3
    line = f"RESULT p50_ms={p50:.4f} p99_ms={p99:.4f} add_ms={add:.4f}"
    if "bm25s" in results:
        peer = results["bm25s"]
        line += f" p50_vs_bm25s={p50 / (pct(peer['times'], 0.5) * 1e3):.3f}"
        line += f" add_vs_bm25s={add / (peer['add_s'] * 1e3):.6f}"
    line += f" hybrid_p50_ms={h50:.4f} hybrid_p99_ms={h99:.4f} hybrid_embed_p50_ms={e50:.4f}"
    if conv is not None:
        line += f" hybrid_conv_p50_ms={pct(conv['times'], 0.5) * 1e3:.4f}"
    line += f" filtered_p50_ms={f_tagged:.4f} filtered_vs_unfiltered={f_tagged / f_plain:.3f}"
    line += f" cold_start_s={cold_start:.3f} cold_full_build_s={full_build:.2f}"
    print(line + smoke_tag(args))


if __name__ == "__main__":
    main()
