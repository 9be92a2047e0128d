"""The README's tables of surfaces are the registry's (regenerate with
``python -m memstack.ops.surfaces README.md``), it lists every command group, and it calls the
command line one way."""

from __future__ import annotations

import re
from pathlib import Path

from memstack.doors.cli import GROUPS
from memstack.ops.surfaces import rewrite, search_table, surfaces_table

README = Path(__file__).parents[2] / "README.md"


def test_the_readme_tables_are_the_registrys() -> None:
    text = README.read_text(encoding="utf-8")
    assert rewrite(text) == text, "stale: run python -m memstack.ops.surfaces README.md"
    assert surfaces_table() in text and search_table() in text


def test_the_readme_lists_every_command_group() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## The command line") : text.index("## The service")]
    for group in GROUPS:
        assert f"`{group}`" in section, group


def test_the_readme_calls_the_command_line_one_way() -> None:
    text = README.read_text(encoding="utf-8")
    calls = re.findall(r"(?:^|`|\$ )memstack [a-z-]+", text, re.MULTILINE)  # in code, not in prose
    assert calls == [], calls  # always `.venv/bin/memstack …`
    assert text.count(".venv/bin/memstack") >= 10
