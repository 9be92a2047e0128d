"""MemstackStore against LangGraph's own InMemoryStore and SqliteStore, measured in the same run.

    python bench/langgraph_store.py [--url URL | --postgres] [--quick | --smoke]

Data: 10,000 items in 100 namespaces of 100 (``--quick``: 1,000 in 10; ``--smoke``: 40 in 2, 20 ops
per read phase), each value a short
sentence drawn from a fixed vocabulary, a ``kind`` (``"x"`` for one item in ten) and a number;
every namespace sits under one run-unique root label, so a shared Redis is never flushed.
Stores: LangGraph's ``InMemoryStore``; LangGraph's ``SqliteStore`` on a temporary file opened as
its ``from_conn_string`` opens it, with ``PRAGMA journal_mode=WAL`` and ``synchronous=NORMAL``
set on that connection (what memstack's SQLite engine uses); memstack's ``MemstackStore`` on
``memstack.open(URL, embedder="none")``, by default a temporary SQLite file. No store has an
``index`` config.

Phases, ops/s: ``put`` (every item once, namespaces interleaved; in 20 chunks, the stores
taking turns, so that a noisy stretch of a shared machine hits every store alike), ``get``
(every item, shuffled), ``search_filter`` (``search(ns, filter={"kind": "x"})``, namespaces in
turn), ``list_namespaces`` (under the root, all of them), and memstack's ``query``
(``search(ns, query=two words)`` on a 100-item namespace, BM25-ranked; LangGraph's stores
without an index do not rank a query, so their figure is shown for reference only). The read
phases run in rounds (stores interleaved, one warm-up round, then the median of the others)
because the machine is shared and noisy.
The last line is ``RESULT engine=… put_vs_lg_sqlite=… …``: memstack ops/s ÷ SqliteStore ops/s.

With ``--url postgresql://…`` LangGraph's ``PostgresStore`` joins as a peer on the same server and
database (as ``from_conn_string`` connects: autocommit, no prepared-statement threshold), its
tables in a schema of its own for the run, dropped afterwards; the RESULT line adds
``put_vs_lg_postgres=…`` and the other phases against it, and ``durable=1`` when the server
flushes its WAL at each commit (``fsync`` and ``synchronous_commit`` on, as production servers run),
else ``durable=0`` (see ``bench/_postgres_bench.py``). ``--postgres`` starts a durable server of its own.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

import memstack
from _postgres_bench import add_postgres, describe, durable, server_settings, target_url
from _smoke import add_smoke, smoke_tag
from memstack.doors.integrations.langgraph import MemstackStore

WORDS = (
    "river", "stone", "garden", "window", "coffee", "letter", "music", "winter", "forest",
    "candle", "market", "bridge", "mountain", "silver", "doctor", "engine", "travel", "yellow",
    "pocket", "summer", "island", "camera", "basket", "thunder", "violin", "orange", "pencil",
    "harbor", "ticket", "blanket", "lantern", "meadow", "rocket", "saddle", "spider", "tunnel",
    "velvet",
)  # fmt: skip
ROUNDS = 4
PUT_CHUNKS = 20


def value(rng: random.Random, i: int) -> dict[str, Any]:
    """The i-th item's value."""
    return {"text": " ".join(rng.choices(WORDS, k=8)), "kind": "x" if i % 10 == 0 else "y", "n": i}


@contextlib.contextmanager
def lg_postgres(url: str) -> Iterator[BaseStore]:
    """LangGraph's PostgresStore on the server of ``url`` (memstack's ``schema`` parameter
    dropped), its tables in a run-unique schema that is dropped afterwards."""
    from urllib.parse import parse_qsl, quote, urlencode, urlsplit

    import psycopg
    from langgraph.store.postgres import PostgresStore

    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "schema"]
    schema = f"lg_bench_{uuid.uuid4().hex[:8]}"
    plain = parts._replace(query=urlencode(query)).geturl()
    with psycopg.connect(plain, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
        try:
            conninfo = parts._replace(
                query=urlencode([*query, ("options", f"-c search_path={schema}")], quote_via=quote)
            ).geturl()
            with PostgresStore.from_conn_string(conninfo) as store:
                store.setup()
                yield store
        finally:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


@contextlib.contextmanager
def lg_sqlite(path: Path) -> Iterator[SqliteStore]:
    """LangGraph's SqliteStore on ``path``: its own connection settings, plus WAL + NORMAL."""
    conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    store = SqliteStore(conn)
    store.setup()
    try:
        yield store
    finally:
        conn.close()


def _rate(n: int, run: Callable[[int], Any]) -> float:
    start = time.perf_counter()
    for i in range(n):
        run(i)
    return n / (time.perf_counter() - start)


def measure(
    stores: dict[str, BaseStore], root: str, namespaces: int, per_ns: int, ops: int | None = None
) -> dict[str, dict[str, float]]:
    """ops/s per phase and store."""
    rng = random.Random(7)
    names = [(root, f"ns{n:03d}") for n in range(namespaces)]
    items = [(names[i % namespaces], f"item{i}", value(rng, i)) for i in range(namespaces * per_ns)]
    # Puts in chunks, stores taking turns, so a noisy stretch of the machine hits them all alike.
    spent = dict.fromkeys(stores, 0.0)
    step = max(1, len(items) // PUT_CHUNKS)
    for lo in range(0, len(items), step):
        for name, store in stores.items():
            start = time.perf_counter()
            for item in items[lo : lo + step]:
                store.put(*item)
            spent[name] += time.perf_counter() - start
    figures: dict[str, dict[str, float]] = {"put": {name: len(items) / spent[name] for name in stores}}
    order = list(range(len(items)))
    rng.shuffle(order)
    queries = [" ".join(rng.sample(WORDS, 2)) for _ in range(64)]
    gets = min(len(items), 5000 if ops is None else ops)
    searches = 400 if ops is None else ops
    phases: dict[str, tuple[int, Callable[[BaseStore, int], Any]]] = {
        "get": (gets, lambda s, i: s.get(items[order[i]][0], items[order[i]][1])),
        "search_filter": (searches, lambda s, i: s.search(names[i % namespaces], filter={"kind": "x"})),
        "list_namespaces": (
            200 if ops is None else ops,
            lambda s, i: s.list_namespaces(prefix=(root,), limit=1000),
        ),
        "query": (searches, lambda s, i: s.search(names[i % namespaces], query=queries[i % 64], limit=10)),
    }
    for phase, (n, op) in phases.items():
        rounds: dict[str, list[float]] = {name: [] for name in stores}
        for _ in range(ROUNDS):
            for name, store in stores.items():
                rounds[name].append(_rate(n, lambda i, s=store, o=op: o(s, i)))  # type: ignore[misc]
        figures[phase] = {name: statistics.median(r[1:]) for name, r in rounds.items()}
    return figures


def report(figures: dict[str, dict[str, float]], engine: str, tag: str = "") -> None:
    """The table, then the RESULT line."""
    print(f"{'phase':<16}{'InMemoryStore':>15}{'SqliteStore':>13}{'memstack':>11}{'vs Sqlite':>11}")
    for phase, row in figures.items():
        ratio = row["memstack"] / row["lg_sqlite"]
        note = "  (LangGraph stores do not rank without an index)" if phase == "query" else ""
        print(
            f"{phase:<16}{row['lg_memory']:>15,.0f}{row['lg_sqlite']:>13,.0f}"
            f"{row['memstack']:>11,.0f}{ratio:>11.2f}{note}"
        )
    ratios = " ".join(
        f"{phase}_vs_lg_sqlite={figures[phase]['memstack'] / figures[phase]['lg_sqlite']:.3f}"
        for phase in ("put", "get", "search_filter", "list_namespaces")
    )
    if "lg_postgres" in figures["put"]:
        print(f"{'phase':<16}{'PostgresStore':>15}{'memstack':>11}{'vs Postgres':>13}")
        for phase, row in figures.items():
            ratio = row["memstack"] / row["lg_postgres"]
            print(f"{phase:<16}{row['lg_postgres']:>15,.0f}{row['memstack']:>11,.0f}{ratio:>13.2f}")
        ratios += " " + " ".join(
            f"{phase}_vs_lg_postgres={figures[phase]['memstack'] / figures[phase]['lg_postgres']:.3f}"
            for phase in ("put", "get", "search_filter", "list_namespaces")
        )
    print(f"RESULT engine={engine} {ratios} query_ops={figures['query']['memstack']:.0f}{tag}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--url", help="memstack engine URL (default: a temporary SQLite file)")
    parser.add_argument("--quick", action="store_true", help="1,000 items in 10 namespaces")
    add_postgres(parser)
    add_smoke(parser)
    args = parser.parse_args()
    with target_url(args) as given:
        run(args, given)


def run(args: argparse.Namespace, given: str | None) -> None:
    namespaces, per_ns = (2, 20) if args.smoke else (10, 100) if args.quick else (100, 100)
    server = ""
    with tempfile.TemporaryDirectory() as tmp:
        url = given or f"sqlite:///{Path(tmp) / 'memstack.db'}"
        memory = memstack.open(url, embedder="none")  # no index config: the store never embeds
        try:
            with contextlib.ExitStack() as peers:
                sqlite_store = peers.enter_context(lg_sqlite(Path(tmp) / "langgraph.db"))
                stores: dict[str, BaseStore] = {"lg_memory": InMemoryStore(), "lg_sqlite": sqlite_store}
                if url.split("://", 1)[0] in ("postgresql", "postgres"):
                    settings = server_settings(url)
                    print(describe(settings))
                    server = f" durable={int(durable(settings))}"
                    stores["lg_postgres"] = peers.enter_context(lg_postgres(url))
                stores["memstack"] = MemstackStore(memory)
                root = f"bench{uuid.uuid4().hex[:8]}"
                figures = measure(stores, root, namespaces, per_ns, 20 if args.smoke else None)
        finally:
            memory.close()
    print(f"{namespaces * per_ns:,} items in {namespaces} namespaces; memstack on {memory.engine.name}")
    report(figures, memory.engine.name, server + smoke_tag(args))


if __name__ == "__main__":
    main()
