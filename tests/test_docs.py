"""Examples in the docs run as tests: every code block of the README and of docs/ (Python here, shell
and MCP configurations in test_docs_live.py, TypeScript in clients/typescript/test/docs.test.ts),
every docstring example, and the site builds offline with no warning."""

from __future__ import annotations

import doctest
import importlib
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import memstack
from _docblocks import DOC_FILES, KNOWN, ROOT, Block, all_blocks

_OPTIONAL = ("memstack.doors.integrations", "memstack.doors.server")  # need extras; skipped when missing
# Frameworks whose extras the dev set leaves out (their pins would downgrade openai and protobuf):
# their blocks run in .ci/run's own environment for them, where MEMSTACK_REQUIRE_FRAMEWORKS=1 makes
# a missing one a failure instead of a skip.
_OWN_ENVIRONMENT = ("crewai", "autogen_core")


def _modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(memstack.__path__, "memstack."):
        if info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        if name.startswith(_OPTIONAL):
            pytest.skip(f"optional extra missing: {exc}")
        raise
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


@pytest.mark.parametrize("block", all_blocks("python"), ids=lambda b: b.name)
def test_python_blocks_run(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reason = block.skip_reason()
    if reason is not None:
        pytest.skip(reason)
    monkeypatch.chdir(tmp_path)  # a block that writes a file writes it here
    try:
        exec(compile(block.code, block.name, "exec"), {"__name__": "docs"})
    except ModuleNotFoundError as exc:
        if exc.name in _OWN_ENVIRONMENT and not os.environ.get("MEMSTACK_REQUIRE_FRAMEWORKS"):
            pytest.skip(f"{exc.name} is installed in .ci/run's framework environment, not this one")
        raise


def test_every_block_is_in_a_language_the_tests_run() -> None:
    unknown = [b.name for b in all_blocks() if b.lang not in KNOWN and b.skip_reason() is None]
    assert unknown == [], f"blocks no test runs (mark them <!-- test: skip: WHY -->): {unknown}"
    assert len(DOC_FILES) > 10 and all(all_blocks(lang) for lang in KNOWN)


def test_the_readme_shows_the_two_commands_and_the_memory_loop() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "./setup.sh && .venv/bin/memstack serve" in readme
    assert "./setup.sh --dev && .venv/bin/python -m pytest" in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert "./setup.sh --dev && .venv/bin/python -m pytest" in ci
    langs = {b.lang for b in all_blocks() if b.path.name == "README.md" and "remember" in b.code}
    assert langs == {"python", "bash", "ts"}, langs
    assert len(readme.splitlines()) < 150, "the README fits on a screen or two: the reference is docs/"


def test_the_readme_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert links and all((ROOT / link).is_file() for link in links), links


def test_the_set_up_page_says_what_the_set_up_installs() -> None:
    """The first command's set-up installs the local model (hybrid search from the start) and
    ``--no-model`` leaves it out, as the set-up page says."""
    setup = (ROOT / "setup.sh").read_text()
    block = setup[setup.index('if [ "$dev" = 1 ]; then\n  "${pip[@]}"') :]
    dev, default, lean = (set(extras.split(",")) for extras in re.findall(r"-e '\.\[([a-z0-9,-]+)\]'", block))
    assert "embeddings" in dev and "embeddings" in default and "embeddings" not in lean
    assert default - {"embeddings"} == lean == {"tokens", "server"}
    page = " ".join((ROOT / "docs" / "getting-started.md").read_text().split())
    assert "`./setup.sh --no-model` leaves the model out" in page
    assert "and the local embedding model (the `embeddings` extra" in page


def test_the_site_builds_offline_with_no_warning(tmp_path: Path) -> None:
    """``mkdocs build --strict`` (as .ci/run runs it): a broken link, a missing page of the nav or a
    bad anchor fails; the theme fetches no font and the offline plugin makes the search work from files."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # the theme's notice of its successor
    )
    assert done.returncode == 0, done.stderr
    assert "WARNING " not in done.stderr, done.stderr
    index = (tmp_path / "site" / "index.html").read_text()
    assert "fonts.googleapis.com" not in index and "memstack" in index
    assert (tmp_path / "site" / "mcp" / "index.html").is_file() or (tmp_path / "site" / "mcp.html").is_file()
