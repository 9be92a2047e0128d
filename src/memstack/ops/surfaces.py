"""The docs' tables of surfaces, generated from the registry.

``python -m memstack.ops.surfaces`` (run from the repository's root) rewrites the tables between
their markers (``<!-- surfaces:begin -->`` … ``<!-- surfaces:end -->`` in docs/surfaces.md, the same
for ``search`` in docs/search.md); tests/ops/test_surfaces.py fails while a page differs from what
this module generates.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from .registry import GROUPS, OPERATIONS, client_method
from .request import field_kind
from .spec import Op

__all__ = ["MARKERS", "rewrite", "search_table", "surfaces_table"]

MARKERS: Final = ("surfaces", "search")
"""The generated blocks of the docs, by marker name."""


def _code(text: str) -> str:
    return f"`{text}`"


def _cli(op: Op[Any]) -> str:
    if op.cli is None:
        return "—"
    args = " ".join(op.cli.names.get(f, (f.upper(),))[0] for f in op.cli.args)
    return _code(f"{op.cli.words} {args}".strip())


def _http(op: Op[Any]) -> str:
    if not op.http:
        return f"`POST /v1/tools/{op.tool.name}`" if op.tool is not None else "—"
    return "<br>".join(_code(f"{h.method} {h.path.replace(':path', '')}") for h in op.http)


def _typescript(op: Op[Any]) -> str:
    if op.http:
        return _code(f"mem.{client_method(op.name)}(…)")
    return _code(f'mem.tools.call("{op.tool.name}", …)') if op.tool is not None else "—"


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def surfaces_table() -> str:
    """Every operation with its library call, command, routes, tool and TypeScript client method,
    grouped by tier."""
    lines = [
        _row(
            (
                "operation",
                "what it does",
                "library",
                "CLI (`.venv/bin/memstack …`)",
                "HTTP",
                "MCP tool",
                "TypeScript (`@memstack/client`)",
            )
        ),
        _row(("---",) * 7),
    ]
    for op in OPERATIONS.values():
        tool = _code(op.tool.name) if op.tool is not None else "—"
        cells = (_code(op.name), op.summary, _code(op.library), _cli(op), _http(op), tool, _typescript(op))
        lines.append(_row(cells))
    groups = ", ".join(_code(g) for g in GROUPS)
    lines.append("")
    lines.append(f"Command groups generated from the registry: {groups}.")
    return "\n".join(lines)


def search_table() -> str:
    """The long-term search parameters on every surface (one row per field of the request)."""
    op = OPERATIONS["memories.search"]
    assert op.cli is not None
    tool = OPERATIONS["agent.search_memory"]
    lines = [
        _row(
            (
                "parameter",
                "rule",
                "library `search()`",
                "CLI `memories search`",
                "HTTP `GET /v1/memories`",
                "tool `search_memory`",
            )
        ),
        _row(("---",) * 6),
    ]
    for name, info in op.request.model_fields.items():
        if name == "scope":
            continue
        kind = field_kind(info)
        if name in op.cli.args:
            cli = "argument"
        else:
            flag = op.cli.names.get(name, ("--" + name.replace("_", "-"),))[0]
            cli = f"`{flag} a,b`" if kind == "tags" else _code(flag)
        http = (
            f"`{name}` (repeated)"
            if kind == "tags"
            else (f"`{name}` (JSON text)" if kind == "json" else _code(name))
        )
        offered = name in tool.request.model_fields
        library = _code(name) if name != "profile" else "`mem.long_term(scope, profile=…)`"
        lines.append(
            _row(
                (
                    _code(name),
                    (info.description or "").rstrip("."),
                    library,
                    cli,
                    http,
                    _code(name) if offered else "—",
                )
            )
        )
    return "\n".join(lines)


_TABLES = {"surfaces": surfaces_table, "search": search_table}


def rewrite(text: str) -> str:
    """``text`` (a page of the docs) with every generated block it holds replaced by its table.

    Raises:
        ValueError: the page holds no generated block, or a block without its end marker.
    """
    found = False
    for marker in MARKERS:
        begin, end = f"<!-- {marker}:begin -->", f"<!-- {marker}:end -->"
        if begin not in text:
            continue
        if end not in text:
            raise ValueError(f"{begin} without its {end}")
        found = True
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = f"{head}{begin}\n{_TABLES[marker]()}\n{end}{tail}"
    if not found:
        raise ValueError(f"no generated block (<!-- NAME:begin --> with NAME one of {', '.join(MARKERS)})")
    return text


PAGES = ("docs/surfaces.md", "docs/search.md")
"""The pages holding the generated tables (paths from the repository's root)."""


def main(argv: list[str]) -> int:
    """Rewrite the pages named in ``argv`` (default :data:`PAGES`); 0 when they were up to date."""
    stale = 0
    for name in argv or PAGES:
        path = Path(name)
        old = path.read_text(encoding="utf-8")
        new = rewrite(old)
        if new != old:
            path.write_text(new, encoding="utf-8")
            print(f"{path}: tables of surfaces rewritten")
            stale = 1
        else:
            print(f"{path}: up to date")
    return stale


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
