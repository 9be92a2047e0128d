"""The docs' tables of surfaces are the registry's (regenerate with ``python -m
memstack.ops.surfaces``), the command-line page lists every command group, and the docs call the
command line one way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memstack.doors.cli import GROUPS
from memstack.ops.surfaces import PAGES, rewrite, search_table, surfaces_table

ROOT = Path(__file__).parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_the_docs_tables_are_the_registrys() -> None:
    for page in PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        assert rewrite(text) == text, "stale: run python -m memstack.ops.surfaces"
    assert surfaces_table() in (ROOT / "docs" / "surfaces.md").read_text(encoding="utf-8")
    assert search_table() in (ROOT / "docs" / "search.md").read_text(encoding="utf-8")


def test_a_page_without_a_generated_block_is_refused() -> None:
    with pytest.raises(ValueError, match="no generated block"):
        rewrite("# a page\n")
    with pytest.raises(ValueError, match="without its"):
        rewrite("<!-- search:begin -->\n")


def test_the_command_line_page_lists_every_command_group() -> None:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for group in GROUPS:
        assert f"`{group}`" in text, group


def test_the_docs_call_the_command_line_one_way() -> None:
    calls = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        calls += re.findall(r"(?:^|`|\$ )memstack [a-z-]+", text, re.MULTILINE)  # in code, not in prose
    assert calls == [], calls  # always `.venv/bin/memstack …`
    assert sum(path.read_text(encoding="utf-8").count(".venv/bin/memstack") for path in DOCS) >= 10
