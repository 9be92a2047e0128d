"""Google ADK's own session-service tests run against ``MemstackSessionService``.

    python scripts/framework_conformance.py --adk PATH [--commit SHA] [--url URL] [--workdir DIR]

``PATH`` is a git directory or checkout of ``google/adk-python`` (kept outside this repository; its
tests are never copied into it). The script takes ``tests/unittests/sessions/test_session_service.py``
at the pinned commit (:data:`COMMIT`, or ``--commit``) into a scratch folder (``--workdir``, default a
temporary one), with its import of ADK's SQLAlchemy service (never made here) removed, writes a
``conftest.py`` beside it that makes the file's ``get_session_service`` return the service under test,
and runs it with pytest twice, in the Python that runs this script (it needs the ``adk`` extra):

* against ADK's own ``InMemorySessionService``, the reference: a test that fails there fails
  because the pinned tests and the installed ADK drifted apart, so it is excluded (with its error);
* against ``MemstackSessionService`` on ``--url`` (default ``memory://``; a fresh memory per
  service the tests make: a fresh SQLite file for ``sqlite:``, a fresh tenant otherwise).

The tests' ``DATABASE`` cases are excluded: they exercise ADK's SQLAlchemy service, which here would be
the same adapter a second time. The tests mark coroutines with ``pytest.mark.asyncio``; the conftest
runs them with ``asyncio.run`` itself, so pytest-asyncio is not needed. The other frameworks publish
no tests of their storage interface at a version matching their installed release (the OpenAI Agents
SDK's session tests target its own SQLite and Redis sessions; CrewAI's and AutoGen's memory tests
target their built-in stores), so ADK's are the ones run here. The last line:
``RESULT passed=… failed=… excluded=…``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Final

COMMIT: Final = "7c670f638bc17374ceb08740bdd057e55c9c2e12"  # google/adk-python, June 2025
TEST_FILE: Final = "tests/unittests/sessions/test_session_service.py"
ROOT: Final = Path(__file__).resolve().parent.parent
SWAP: Final = (  # ADK's SQLAlchemy service is never made here (and needs its `db` extra)
    "from google.adk.sessions import DatabaseSessionService",
    "DatabaseSessionService = None",
)

CONFTEST: Final = """
import asyncio
import inspect
import os
import uuid

import pytest

import memstack
from memstack.doors.integrations.adk import MemstackSessionService


def pytest_configure(config):
    config.addinivalue_line("markers", "asyncio: a coroutine test (run with asyncio.run)")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    if inspect.iscoroutinefunction(pyfuncitem.obj):
        names = pyfuncitem._fixtureinfo.argnames
        asyncio.run(pyfuncitem.obj(**{n: pyfuncitem.funcargs[n] for n in names}))
        return True
    return None


_opened = []


def _memstack_service(*_args):
    url = os.environ["MEMSTACK_CONFORMANCE_URL"]
    if url.startswith("sqlite"):
        url = f"sqlite:///{os.environ['MEMSTACK_CONFORMANCE_DIR']}/{uuid.uuid4().hex}.db"
        mem = memstack.open(url)
    elif url == "memory://":
        mem = memstack.open(url)
    else:
        mem = memstack.open(url, tenant="adk" + uuid.uuid4().hex[:12])
    _opened.append(mem)
    return MemstackSessionService(mem)


def _reference_service(*_args):
    from google.adk.sessions import InMemorySessionService

    return InMemorySessionService()


@pytest.fixture(autouse=True)
def _service_under_test(request, monkeypatch):
    target = os.environ["MEMSTACK_CONFORMANCE_TARGET"]
    factory = _memstack_service if target == "memstack" else _reference_service
    monkeypatch.setattr(request.module, "get_session_service", factory)
    yield
    while _opened:
        _opened.pop().close()
"""


def _test_source(adk: Path, commit: str) -> str:
    git_dir = adk if (adk / "HEAD").exists() and not (adk / ".git").exists() else adk / ".git"
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{commit}:{TEST_FILE}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def _run(workdir: Path, target: str, url: str) -> dict[str, str | None]:
    """pytest on the scratch folder; each test's outcome: None (passed) or its failure text."""
    report = workdir / f"{target}.xml"
    env = {
        **os.environ,
        "MEMSTACK_CONFORMANCE_TARGET": target,
        "MEMSTACK_CONFORMANCE_URL": url,
        "MEMSTACK_CONFORMANCE_DIR": str(workdir),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-o", "addopts=",
         f"--junitxml={report}", "test_session_service.py"],
        cwd=workdir,
        env=env,
        check=False,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    outcomes: dict[str, str | None] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        message = "failed" if problem is None else (problem.get("message") or "failed")
        outcomes[case.get("name", "")] = None if problem is None else message.splitlines()[0]
    return outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--adk", type=Path, required=True, help="git directory or checkout of google/adk-python"
    )
    parser.add_argument("--commit", default=COMMIT, help="the pinned commit of the tests")
    parser.add_argument("--url", default="memory://", help="the memstack engine under the adapter")
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        workdir = args.workdir or Path(scratch)
        workdir.mkdir(parents=True, exist_ok=True)
        source = _test_source(args.adk, args.commit).replace(*SWAP)
        (workdir / "test_session_service.py").write_text(source)
        (workdir / "conftest.py").write_text(CONFTEST)
        reference = _run(workdir, "reference", args.url)
        ours = _run(workdir, "memstack", args.url)
    passed = failed = excluded = 0
    for name, problem in sorted(ours.items()):
        if "DATABASE" in name:
            excluded += 1
            print(f"EXCLUDED {name}: ADK's SQLAlchemy service case (here the same adapter a second time)")
        elif reference.get(name) is not None:
            excluded += 1
            print(f"EXCLUDED {name}: fails on ADK's own InMemorySessionService too: {reference[name]}")
        elif problem is None:
            passed += 1
            print(f"PASSED {name}")
        else:
            failed += 1
            print(f"FAILED {name}: {problem}")
    print(f"RESULT passed={passed} failed={failed} excluded={excluded}")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
