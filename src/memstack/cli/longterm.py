"""``memstack memories``: long-term memories from the shell.

Human output by default, JSON with the root ``--json`` option; exit codes from ``_errors``
(2 bad input, 3 not found, 4 engine down; ``import`` exits 1 when it skipped a file, unless
``--allow-skips``). Works on tenant ``--tenant``'s memories.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from ..errors import EntryNotFound, InvalidInput
from ..longterm import SearchHit, export_dir, import_dir
from ..longterm.search_request import metadata_from_text
from ..wire import hit_json, memory_json
from ._common import EXIT, console, emit, emit_table, state, tenant_memory
from ._errors import report as report_error
from ._values import split_tags

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True, help="Long-term memories: save, search, export, import.")

_SHOWN_SKIPS = 20  # skipped files listed for humans (all of them under --json)

SCOPE = typer.Option("default", "--scope", help="Whose memories (a user or an agent).")


def _hit_cells(hit: SearchHit) -> dict[str, Any]:
    entry = hit.entry
    return {
        "id": entry.id,
        "score": round(hit.score, 4),
        "sources": ", ".join(hit.sources),
        "category": entry.category,
        "tags": ", ".join(entry.tags),
        "created_at": entry.created_at,
        "content": entry.content,
    }


@app.command()
def save(
    content: str,
    category: str = typer.Option(None, "--category", help="A path such as user-preferences/music."),
    tags: str = typer.Option(None, "--tags", help="Comma-separated tags: a,b,c."),
    memory_id: str = typer.Option(None, "--id", help="Update this id instead of creating one."),
    subject: str = typer.Option(None, "--subject", help="The end user this is about (for forget)."),
    scope: str = SCOPE,
) -> None:
    """Save a memory (an update when --id names an existing one)."""
    with tenant_memory() as mem:
        entry = mem.long_term(scope).save(
            content=content, category=category, tags=split_tags(tags), id=memory_id, subject=subject
        )
        emit(memory_json(entry), f"saved {entry.id}")


@app.command()
def search(
    query: str = typer.Argument(None, help="Words to look for; none lists the most recent memories."),
    category: str = typer.Option(None, "--category", help="Only this category and its sub-categories."),
    tags: str = typer.Option(None, "--tags", help="Only memories with every one of these tags."),
    limit: int = typer.Option(20, "--limit", min=1, help="Most results to show."),
    mode: str = typer.Option("auto", "--mode", help="auto, bm25 or hybrid (hybrid needs an embedder)."),
    created_after: datetime = typer.Option(None, "--created-after", help="ISO time; UTC if no offset."),
    created_before: datetime = typer.Option(None, "--created-before", help="ISO time; UTC if no offset."),
    metadata: str = typer.Option(
        None, "--metadata", help='JSON object every hit\'s metadata matches: {"k": 1}.'
    ),
    min_score: float = typer.Option(None, "--min-score", help="Drop ranked hits scoring below this."),
    profile: str = typer.Option(
        "default",
        "--profile",
        help="Search profile: default, plain, conversation, rm3, rocchio or rockbot (the seed's).",
    ),
    scope: str = SCOPE,
) -> None:
    """Search memories (BM25, hybrid with an embedder); prints scores and which retrievers found
    each one. The parameters are the ones every surface takes (README: search parameters)."""
    with tenant_memory() as mem:
        lt = mem.long_term(scope) if profile == "default" else mem.long_term(scope, profile=profile)
        hits = lt.search(
            query,
            mode=mode,
            category=category,
            tags=split_tags(tags),
            created_after=_utc(created_after),
            created_before=_utc(created_before),
            metadata=metadata_from_text(metadata),
            limit=limit,
            min_score=min_score,
        )
        if state.as_json:
            emit([hit_json(h) for h in hits])
        elif not hits:
            emit([], "no memories found")
        else:
            columns = ["id", "score", "sources", "category", "tags", "created_at", "content"]
            rows = [_hit_cells(h) for h in hits]
            emit_table(rows, columns, title=f"scope {scope}", times=["created_at"])


def _utc(value: datetime | None) -> datetime | None:
    """A time given without an offset is UTC (as over HTTP)."""
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


@app.command()
def delete(memory_id: str, scope: str = SCOPE) -> None:
    """Delete a memory by id."""
    with tenant_memory() as mem:
        if not mem.long_term(scope).delete(memory_id):
            raise EntryNotFound(f"memory {memory_id!r}: no such id in scope {scope!r}")
        emit({"id": memory_id, "deleted": True}, f"deleted {memory_id}")


@app.command()
def categories(scope: str = SCOPE) -> None:
    """List the categories in use."""
    with tenant_memory() as mem:
        names = mem.long_term(scope).list_categories()
        emit(names, "\n".join(names) if names else "no categories yet")


@app.command("export")
def export_command(directory: Path, scope: str = SCOPE) -> None:
    """Write every memory as DIR/{category}/{id}.json (the seed's file layout)."""
    with tenant_memory() as mem:
        count = export_dir(mem.long_term(scope), directory)
        emit({"exported": count, "directory": str(directory)}, f"exported {count} memories to {directory}")


@contextlib.contextmanager
def _quiet(logger: logging.Logger) -> Iterator[None]:
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


@app.command("import")
def import_command(
    directory: Path,
    scope: str = SCOPE,
    allow_skips: bool = typer.Option(
        False, "--allow-skips", help="Exit 0 even when some files were skipped (default: exit 1)."
    ),
) -> None:
    """Import every DIR/**/*.json memory file, keeping ids and times; bad files are skipped.

    Prints how many were imported and skipped; exits 1 when anything was skipped unless
    --allow-skips.
    """
    if not directory.is_dir():
        raise InvalidInput(f"import directory {str(directory)!r}: not a directory")
    # Each skipped file is in the report below: the library's warning per file would repeat it.
    with tenant_memory() as mem, _quiet(logging.getLogger("memstack.longterm")):
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
        f"imported {len(report.imported)} memories, skipped {skipped} file(s){shown}{more}",
    )
    if skipped and not allow_skips:
        total = skipped + len(report.imported)
        report_error(
            "FilesSkipped", f"{skipped} of {total} file(s) skipped; --allow-skips accepts that", EXIT["error"]
        )
        raise typer.Exit(EXIT["error"])
