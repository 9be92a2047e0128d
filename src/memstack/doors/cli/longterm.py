"""``memstack memories export`` and ``import``: a scope to a directory of JSON files and back
(the original's file layout), and a JSON Lines file into a scope in bulk. Written by hand: they
work on files, not only on the memory.

``import DIR`` exits 1 when it skipped a file, unless ``--allow-skips``; ``import FILE.jsonl``
skips nothing (a bad line stops the import; the batches before it stay saved). Works on tenant
``--tenant``'s memories.
"""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Iterator
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from ...foundation.errors import InvalidInput
from ._common import EXIT, console, counted, emit, state, tenant_memory
from ._errors import report as report_error

__all__ = ["export_command", "import_command"]

_SHOWN_SKIPS = 20  # skipped files listed for humans (all of them under --json)

SCOPE = typer.Option("default", "--scope", help="Whose memories (a user or an agent).")


def export_command(directory: Path, scope: str = SCOPE) -> None:
    """Write every memory as DIR/{category}/{id}.json (RockBot's file layout)."""
    from ...compat.rockbot.longterm_files import export_dir  # the store loads with the commands that use it

    with tenant_memory() as mem:
        count = export_dir(mem.long_term(scope), directory)
        emit(
            {"exported": count, "directory": str(directory)},
            f"exported {counted(count, 'memory', 'memories')} to {directory}",
        )


@contextlib.contextmanager
def _quiet(logger: logging.Logger) -> Iterator[None]:
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _import_jsonl(path: Path, scope: str, batch_size: int) -> None:
    from ...tiers.longterm.jsonl import import_lines

    with tenant_memory() as mem, path.open("rb") as raw, io.TextIOWrapper(raw, encoding="utf-8") as lines:
        target = mem.long_term(scope)
        if state.as_json or not console.is_terminal:
            count = import_lines(target, lines, batch_size=batch_size)
        else:
            size = path.stat().st_size
            columns = (TextColumn("importing"), BarColumn(), TextColumn("{task.fields[saved]} memories"))
            with Progress(*columns, console=console, transient=True) as bar:
                task = bar.add_task("import", total=size or None, saved=0)
                saved = [0]

                def advance(batch: int) -> None:  # the bytes read so far: how far through the file
                    saved[0] += batch
                    bar.update(task, completed=raw.tell(), saved=saved[0])

                count = import_lines(target, lines, batch_size=batch_size, progress=advance)
    emit(
        {"imported": count, "skipped": 0, "file": str(path)},
        f"imported {counted(count, 'memory', 'memories')} from {path}",
    )


def import_command(
    directory: Path,
    scope: str = SCOPE,
    allow_skips: bool = typer.Option(
        False, "--allow-skips", help="Exit 0 even when some files were skipped (default: exit 1)."
    ),
    batch_size: int = typer.Option(
        500, "--batch-size", help="Memories per transaction of a JSON Lines import (1-10000)."
    ),
) -> None:
    """Import every DIR/**/*.json memory file, keeping ids and times (bad files are skipped); or a
    JSON Lines FILE, one memory per line with the fields of a save, in bulk.

    Prints how many were imported and skipped; exits 1 when anything was skipped unless
    --allow-skips.
    """
    from ...compat.rockbot.longterm_files import import_dir

    if directory.is_file():
        _import_jsonl(directory, scope, batch_size)
        return
    if not directory.is_dir():
        raise InvalidInput(f"import {str(directory)!r}: neither a directory nor a JSON Lines file")
    # Each skipped file is in the report below: the library's warning per file would repeat it.
    with tenant_memory() as mem, _quiet(logging.getLogger("memstack.tiers.longterm")):
        target = mem.long_term(scope)
        if state.as_json or not console.is_terminal:
            report = import_dir(target, directory)
        else:
            columns = (TextColumn("importing"), BarColumn(), MofNCompleteColumn())
            with Progress(*columns, console=console, transient=True) as bar:
                task = bar.add_task("import", total=None)
                report = import_dir(
                    target,
                    directory,
                    progress=lambda done, total: bar.update(task, completed=done, total=total),
                )
    skipped = len(report.skipped)
    shown = "".join(f"\n  skipped {p}: {r}" for p, r in report.skipped[:_SHOWN_SKIPS])
    more = f"\n  … and {skipped - _SHOWN_SKIPS} more" if skipped > _SHOWN_SKIPS else ""
    emit(
        {
            "imported": len(report.imported),
            "skipped": skipped,
            "skipped_files": [{"path": p, "reason": r} for p, r in report.skipped],
        },
        f"imported {counted(len(report.imported), 'memory', 'memories')}, skipped "
        f"{counted(skipped, 'file', 'files')}{shown}{more}",
    )
    if skipped and not allow_skips:
        total = skipped + len(report.imported)
        report_error(
            "FilesSkipped",
            f"{skipped} of {counted(total, 'file', 'files')} skipped; --allow-skips accepts that",
            EXIT["error"],
        )
        raise typer.Exit(EXIT["error"])
