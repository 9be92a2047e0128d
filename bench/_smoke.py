"""``--smoke``, the tiny run every bench offers for CI.

A smoke run takes every step of its bench once, on data a few seconds cover, exits 0 and prints its
``RESULT`` line with ``smoke=1`` appended. Its figures mean nothing: CI runs it to show the bench
still works, never to time or compare anything.
"""

from __future__ import annotations

import argparse

__all__ = ["add_smoke", "smoke_tag"]

HELP = "tiny run for CI (a few seconds): every step once; the figures mean nothing"


def add_smoke(parser: argparse.ArgumentParser) -> None:
    """Add ``--smoke`` to a bench's options."""
    parser.add_argument("--smoke", action="store_true", help=HELP)


def smoke_tag(args: argparse.Namespace) -> str:
    """What a smoke run appends to its ``RESULT`` line."""
    return " smoke=1" if args.smoke else ""
