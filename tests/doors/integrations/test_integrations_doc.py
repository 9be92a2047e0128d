"""The examples of docs/integrations.md run as written, and print what their comments say."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import warnings
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "integrations.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
NEEDS = {"agents": "agents", "google.adk": "google.adk", "crewai": "crewai", "autogen_core": "autogen_core"}


def _expected(block: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^\s*print\(.*\)  # (.*)$", block, flags=re.M)]


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_example_runs_and_prints_what_it_says(block: str) -> None:
    for prefix, module in NEEDS.items():
        if re.search(rf"^from {re.escape(prefix)}[. ]", block, flags=re.M):
            if not importlib.util.find_spec(module):
                pytest.skip(f"{module} is not installed (its extra)")
            # CrewAI's own import order (a circular import) raises an ImportWarning the first time
            # it loads; a user's script never sees it (Python ignores ImportWarning by default).
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ImportWarning)
                importlib.import_module(module)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, str(DOC), "exec"), {"__name__": "doc"})
    assert out.getvalue().splitlines() == _expected(block)


def test_the_doc_lists_every_extra() -> None:
    text = DOC.read_text()
    for extra in ("openai-agents", "adk", "crewai", "autogen", "langgraph", "llamaindex"):
        assert f"'memstack[{extra}]'" in text
