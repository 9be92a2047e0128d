"""The seed's file layout: one indented camelCase JSON file per memory.

``{dir}/{category}/{id}.json`` (nested categories are sub-directories), ``{dir}/{id}.json`` for
an entry without category. Field names are read case-insensitively; malformed files are skipped
with a logged warning naming the file. No path ever leaves ``dir``: categories and ids are checked
segment by segment before a path is built, and the result is verified to stay inside.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ...foundation.errors import InvalidKey
from ...foundation.limits import short_repr
from ...tiers.longterm.entry import MemoryEntry, entry_from_dict, to_json
from ...tiers.longterm.store import LongTermMemory
from ...tiers.longterm.validate import check_category, normalise_id

__all__ = ["ImportReport", "entry_path", "export_dir", "import_dir"]

log = logging.getLogger("memstack.tiers.longterm")

Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each file."""


@dataclass
class ImportReport:
    """What :func:`import_dir` did: ids imported, and ``(path, reason)`` of every skipped file."""

    imported: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def entry_path(root: Path, entry: MemoryEntry) -> Path:
    """Where ``entry`` lives under ``root``.

    Raises:
        InvalidCategory: a category that breaks the path rule.
        InvalidKey: an id that is not a safe file name, or a path outside ``root``.
    """
    entry_id = normalise_id(entry.id)
    category = check_category(entry.category)
    folder = root.joinpath(*category.split("/")) if category is not None else root
    path = folder / f"{entry_id}.json"
    if not path.resolve().is_relative_to(root.resolve()):
        raise InvalidKey(
            f"memory {short_repr(entry.id)} in category {short_repr(category)}: its path would leave {root}"
        )
    return path


def export_dir(memory: LongTermMemory, directory: str | os.PathLike[str]) -> int:
    """Write every memory of ``memory``'s scope under ``directory``; returns how many.

    Raises:
        OSError: the directory cannot be written.
    """
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    count = 0
    for entry in memory.entries():
        path = entry_path(root, entry)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(to_json(entry, indent=2) + "\n", encoding="utf-8")
        tmp.replace(path)  # a reader never sees half a file
        count += 1
    return count


def import_dir(
    memory: LongTermMemory, directory: str | os.PathLike[str], progress: Progress | None = None
) -> ImportReport:
    """Import every ``*.json`` under ``directory`` (recursively, hidden folders excepted) into
    ``memory``'s scope, keeping ids and times exactly; malformed files are skipped and logged.

    Raises:
        NotADirectoryError: ``directory`` is not a directory.
    """
    root = Path(directory)
    if not root.is_dir():
        raise NotADirectoryError(f"import directory {str(root)!r} does not exist or is not a directory")
    files = sorted(
        p for p in root.rglob("*.json") if not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    report = ImportReport()
    for done, path in enumerate(files, 1):
        try:
            entry = entry_from_dict(json.loads(path.read_text(encoding="utf-8")))
            report.imported.append(memory.restore(entry).id)
        except (OSError, ValueError) as exc:  # InvalidInput and UnicodeDecodeError are ValueErrors
            reason = str(exc) or type(exc).__name__
            log.warning("skipped memory file %s: %s", path, reason)
            report.skipped.append((str(path), reason))
        if progress is not None:
            progress(done, len(files))
    return report
