"""The fenced code blocks of the README and of docs/, with the marks that say how a test runs them.

A block may be preceded by comment lines of the form ``<!-- test: … -->`` (invisible on GitHub and in
the site):

* ``<!-- test: skip: REASON -->``: not run; the reason is the test's skip message.
* ``<!-- test: needs memstack.Memory.remember -->``: run once that name exists in this build, skipped
  (saying so) before; a feature's examples become live tests the day it lands.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC_FILES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
KNOWN = {"python", "bash", "ts", "json"}
_FENCE = re.compile(
    r"(?P<marks>(?:<!-- test: [^\n]*-->\n)*)```(?P<lang>[a-z]*)\n(?P<code>.*?)^```$", re.S | re.M
)
_MARK = re.compile(r"<!-- test: (?P<mark>.*?) -->")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    lang: str
    code: str
    marks: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    def skip_reason(self) -> str | None:
        """Why this block is not run now, or None."""
        for mark in self.marks:
            if mark.startswith("skip:"):
                return mark.removeprefix("skip:").strip()
            if mark.startswith("needs "):
                name = mark.removeprefix("needs ").strip()
                if not _exists(name):
                    return f"{name} is not in this build yet (the example runs once it is)"
        return None


def _exists(dotted: str) -> bool:
    module, _, rest = dotted.partition(".")
    found: object = importlib.import_module(module)
    for part in rest.split(".") if rest else []:
        if not hasattr(found, part):
            return False
        found = getattr(found, part)
    return True


def blocks(path: Path) -> list[Block]:
    """Every fenced block of ``path``, in order."""
    text = path.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        marks = tuple(m.group("mark") for m in _MARK.finditer(match.group("marks")))
        line = text.count("\n", 0, match.start("lang")) + 1
        found.append(Block(path, line, match.group("lang"), match.group("code"), marks))
    return found


def all_blocks(lang: str | None = None) -> list[Block]:
    return [b for path in DOC_FILES for b in blocks(path) if lang is None or b.lang == lang]
