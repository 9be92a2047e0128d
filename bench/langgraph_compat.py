"""LangGraph's own store tests run against ``MemstackStore``, with only their imports swapped.

    python bench/langgraph_compat.py --langgraph PATH [--engines sqlite,redis] [--workdir DIR]

``PATH`` is a checkout of the ``langchain-ai/langgraph`` repository (kept outside this repository;
its tests are never copied into it). The script copies four of its test files into a scratch
folder (``--workdir``, default a temporary one):

* ``libs/checkpoint/tests/test_store.py`` (the ``InMemoryStore`` tests, with ``embed_test_utils.py``),
* ``libs/checkpoint-sqlite/tests/test_store.py``, ``test_async_store.py`` and ``test_ttl.py``,

rewrites the lines that import ``InMemoryStore``, ``SqliteStore`` and ``AsyncSqliteStore`` to import
them from a shim module written beside them, and runs each file with pytest once per engine. The
shim's classes are ``MemstackStore`` subclasses that only choose the engine where LangGraph's tests
open a store: a fresh SQLite file per ``:memory:`` store and the test's own file otherwise, or a
fresh key prefix of one Redis server (started on a free loopback port unless ``--redis-url`` names
one). ``AsyncSqliteStore``'s own sweeper methods are coroutines, so the shim awaits
``MemstackStore``'s sync ones in a worker thread there.

LangGraph's tests need pytest-asyncio, pytest-mock and pytest-retry; they must never be installed
into memstack's own environment (pytest-asyncio's start-up warning would fail memstack's suite,
which turns warnings into errors), so the script installs them with pip into
``WORKDIR/plugins`` on first use and puts only that folder on the test runs' path.

Tests of SqliteStore's private SQL helpers and migrations are deselected (:data:`EXCLUDED`, each
with its reason). The last line: ``RESULT passed=… failed=… excluded=…`` over every file and engine.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Final

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _redis_servers import redis_servers  # tests/ holds the server starter

PLUGINS: Final = ("pytest-asyncio==1.5.0", "pytest-mock==3.17.0", "pytest-retry==1.7.0")

# (suite folder, file in the checkout, name in the suite)
FILES: Final = (
    ("core", "libs/checkpoint/tests/test_store.py", "test_store.py"),
    ("core", "libs/checkpoint/tests/embed_test_utils.py", "embed_test_utils.py"),
    ("sqlite", "libs/checkpoint-sqlite/tests/test_store.py", "test_store.py"),
    ("sqlite", "libs/checkpoint-sqlite/tests/test_async_store.py", "test_async_store.py"),
    ("sqlite", "libs/checkpoint-sqlite/tests/test_ttl.py", "test_ttl.py"),
)
SWAPS: Final = {
    "from langgraph.store.memory import InMemoryStore": "from memstack_lg_shim import InMemoryStore",
    "from langgraph.store.sqlite import SqliteStore": "from memstack_lg_shim import SqliteStore",
    "from langgraph.store.sqlite import AsyncSqliteStore": "from memstack_lg_shim import AsyncSqliteStore",
    "from langgraph.store.sqlite.aio import AsyncSqliteStore": (
        "from memstack_lg_shim import AsyncSqliteStore"
    ),
}
EXCLUDED: Final = {
    "sqlite/tests/test_store.py::test_nonnull_migrations": "reads SqliteStore.MIGRATIONS (its SQL schema)",
    "sqlite/tests/test_store.py::test_escape_glob_literal": "a private SQL helper (_escape_glob_literal)",
    "sqlite/tests/test_store.py::test_namespace_match_pattern": (
        "a private SQL helper (_namespace_match_pattern)"
    ),
    "sqlite/tests/test_store.py::test_list_namespaces_prefix_uses_indexable_condition": (
        "inspects the SQL BaseSqliteStore generates (_get_batch_list_namespaces_queries)"
    ),
    "sqlite/tests/test_store.py::test_vector_store_initialization": (
        "queries sqlite_master through store.conn for SqliteStore's vector tables"
    ),
    "sqlite/tests/test_async_store.py::test_vector_store_initialization": (
        "queries sqlite_master through store.conn for SqliteStore's vector tables"
    ),
    "sqlite/tests/test_async_store.py::test_no_running_loop": (
        "AsyncSqliteStore is async-only: its sync methods refuse to run on the event loop they would "
        "deadlock; MemstackStore has a real sync face that runs anywhere"
    ),
}

SHIM: Final = '''\
"""MemstackStore where LangGraph's tests build InMemoryStore, SqliteStore and AsyncSqliteStore."""

import asyncio
import contextlib
import hashlib
import os
import tempfile
import uuid

from memstack.engines import open_engine
from memstack.engines.prefixed import PrefixedEngine
from memstack.doors.integrations.langgraph import MemstackStore

_URL = os.environ["MEMSTACK_LG_URL"]
_FILES = tempfile.mkdtemp(prefix="memstack-lg-")
_redis = None


def engine_for(conn_string=":memory:"):
    """A fresh engine, or the one of conn_string's file (the same data for the same file)."""
    if _URL == "sqlite":
        if conn_string == ":memory:":
            conn_string = os.path.join(_FILES, uuid.uuid4().hex + ".db")
        return open_engine("sqlite:///" + os.path.abspath(conn_string))
    global _redis
    if _redis is None:
        _redis = open_engine(_URL)
        _redis.flush()
    if conn_string == ":memory:":
        tag = uuid.uuid4().hex
    else:
        tag = hashlib.sha1(os.path.abspath(conn_string).encode()).hexdigest()
    return PrefixedEngine(_redis, "lgc" + tag[:16] + ":")


class InMemoryStore(MemstackStore):
    def __init__(self, **kwargs):
        super().__init__(engine_for(), **kwargs)


class SqliteStore(MemstackStore):
    @classmethod
    @contextlib.contextmanager
    def from_conn_string(cls, conn_string, **kwargs):
        engine = engine_for(conn_string)
        store = cls(engine, **kwargs)
        try:
            yield store
        finally:
            store.stop_ttl_sweeper()
            engine.close()


class AsyncSqliteStore(MemstackStore):
    @classmethod
    @contextlib.asynccontextmanager
    async def from_conn_string(cls, conn_string, **kwargs):
        engine = engine_for(conn_string)
        store = cls(engine, **kwargs)
        try:
            yield store
        finally:
            MemstackStore.stop_ttl_sweeper(store)
            engine.close()

    async def setup(self):
        MemstackStore.setup(self)

    async def sweep_ttl(self):
        return await asyncio.to_thread(MemstackStore.sweep_ttl, self)

    async def start_ttl_sweeper(self, sweep_interval_minutes=None):
        return MemstackStore.start_ttl_sweeper(self, sweep_interval_minutes)

    async def stop_ttl_sweeper(self, timeout=None):
        return await asyncio.to_thread(MemstackStore.stop_ttl_sweeper, self, timeout)
'''

PYTEST_INI: Final = """\
[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
addopts = -p no:cacheprovider
"""


def plugins_dir(workdir: Path) -> Path:
    """The folder holding LangGraph's test plugins (installed there by pip on first use)."""
    target = workdir / "plugins"
    if not (target / "pytest_asyncio").is_dir():
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), *PLUGINS],
            check=True,
        )
    return target


def lay_out(checkout: Path, workdir: Path) -> None:
    """Copy the test files into ``workdir/{core,sqlite}/tests`` with their imports swapped."""
    for suite, source, name in FILES:
        folder = workdir / suite / "tests"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").write_text("")
        text = (checkout / source).read_text()
        for old, new in SWAPS.items():
            text = "\n".join(new if line.strip() == old else line for line in text.split("\n"))
        (folder / name).write_text(text)
        (workdir / suite / "pytest.ini").write_text(PYTEST_INI)
    (workdir / "memstack_lg_shim.py").write_text(SHIM)


def run(workdir: Path, plugins: Path, suite: str, name: str, url: str) -> dict[str, int]:
    """pytest on one file with one engine: counts of passed, failed and excluded tests."""
    report = workdir / f"{suite}-{name}-{url.split(':')[0]}.xml"
    deselect = [
        arg
        for node in EXCLUDED
        if node.startswith(f"{suite}/tests/{name}::")
        for arg in ("--deselect", node.removeprefix(f"{suite}/"))
    ]
    env = dict(os.environ)
    env["MEMSTACK_LG_URL"] = url
    env["PYTHONPATH"] = os.pathsep.join([str(workdir), str(plugins), env.get("PYTHONPATH", "")])
    subprocess.run(
        [sys.executable, "-m", "pytest", f"tests/{name}", "-q", f"--junitxml={report}", *deselect],
        cwd=workdir / suite,
        env=env,
        check=False,
        stdout=subprocess.DEVNULL if not os.environ.get("LG_COMPAT_VERBOSE") else None,
    )
    suite_xml = ET.parse(report).getroot()
    cases = suite_xml.iter("testcase")
    passed = failed = 0
    for case in cases:
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
            print(f"  FAILED {case.get('classname')}::{case.get('name')}")
        elif case.find("skipped") is None:
            passed += 1
    excluded = len(deselect) // 2
    return {"passed": passed, "failed": failed, "excluded": excluded}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--langgraph", required=True, type=Path, help="a checkout of langchain-ai/langgraph")
    parser.add_argument("--engines", default="sqlite,redis", help="comma-separated: sqlite, redis")
    parser.add_argument("--redis-url", help="a Redis server to use (it is flushed); default: start one")
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: a temporary one)")
    args = parser.parse_args()
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    totals = {"passed": 0, "failed": 0, "excluded": 0}
    with contextlib.ExitStack() as stack:
        if args.workdir is not None:
            args.workdir.mkdir(parents=True, exist_ok=True)
            workdir = args.workdir.resolve()
        else:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memstack-lg-compat-")))
        redis = args.redis_url
        if redis is None and "redis" in engines:
            redis, _ = stack.enter_context(redis_servers())
        plugins = plugins_dir(workdir)
        lay_out(args.langgraph, workdir)
        print("excluded (SqliteStore's private SQL and migrations, async-only rules):")
        for node, reason in EXCLUDED.items():
            print(f"  {node}: {reason}")
        for engine in engines:
            url = "sqlite" if engine == "sqlite" else str(redis)
            for suite, _, name in FILES:
                if not name.startswith("test_"):
                    continue
                counts = run(workdir, plugins, suite, name, url)
                print(f"{engine:<7}{suite}/{name:<22} passed={counts['passed']} "
                      f"failed={counts['failed']} excluded={counts['excluded']}")  # fmt: skip
                for key in totals:
                    totals[key] += counts[key]
    print("RESULT " + " ".join(f"{k}={v}" for k, v in totals.items()))


if __name__ == "__main__":
    main()
