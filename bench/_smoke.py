"""``--smoke``, the tiny run every bench offers for CI.

A smoke run takes every step of its bench once, on data a few seconds cover, exits 0 and prints its
``RESULT`` line with ``smoke=1`` appended. Its figures mean nothing: CI runs it to show the bench
still works, never to time or compare anything.
"""

from __future__ import annotations

import argparse

__all__ = ["add_smoke", "keys_to_run", "smoke_tag"]

HELP = "tiny run for CI (a few seconds): every step once; the figures mean nothing"


def add_smoke(parser: argparse.ArgumentParser) -> None:
    """Add ``--smoke`` to a bench's options."""
    parser.add_argument("--smoke", action="store_true", help=HELP)


def smoke_tag(args: argparse.Namespace) -> str:
    """What a smoke run appends to its ``RESULT`` line."""
    return " smoke=1" if args.smoke else ""


def keys_to_run(doc: str | None, smoke: int, quick: int, default: int) -> tuple[argparse.Namespace, int]:
    """The options of a bench sized by a number of keys (``--keys N``, ``--quick``, ``--smoke``)
    and that number: ``smoke``, ``quick`` or ``--keys`` (``default``)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"{quick:,} keys")
    parser.add_argument("--keys", type=int, default=default, help=f"keys written (default {default:,})")
    add_smoke(parser)
    args = parser.parse_args()
    return args, smoke if args.smoke else quick if args.quick else args.keys
