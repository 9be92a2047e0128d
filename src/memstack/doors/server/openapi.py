"""The service's OpenAPI document, without a running server: ``python -m memstack.doors.server.openapi``.

The document is the app's own (``/openapi.json`` of ``memstack serve``), built on an in-memory
engine and written as sorted, indented JSON, so the same code always gives the same bytes. The
TypeScript client generates its types and its error classes from it
(``clients/typescript/scripts/generate.mjs``), and its check fails while the committed types
differ from what this document gives.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["document", "main", "text"]


def document() -> dict[str, Any]:
    """The OpenAPI document of the HTTP API (the routes of every operation, ``/v1/info``, the
    tools, the keys, health)."""
    from ...engines import open_engine
    from .app import create_app

    engine = open_engine("memory://")
    try:
        # No MCP: its endpoint is not in the document, and its SDK need not be installed.
        return create_app(engine, mcp=False).openapi()
    finally:
        engine.close()


def text() -> str:
    """:func:`document` as the JSON text written to files (sorted keys, two-space indent, a final
    newline)."""
    return json.dumps(document(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    """Write the document to the file named in ``argv``, else to standard output."""
    if argv:
        Path(argv[0]).write_text(text(), encoding="utf-8")
    else:
        sys.stdout.write(text())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
