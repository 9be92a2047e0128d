"""The directives (system prompts) of the dream passes: package data, replaceable by a path."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ...foundation.errors import InvalidConfiguration

__all__ = ["CONSOLIDATION", "EXTRACTION", "EXTRACTION_DECISIONS", "PREFERENCES", "load_directive"]

CONSOLIDATION = "dream.md"
PREFERENCES = "pref-dream.md"
EXTRACTION = "extract.md"
EXTRACTION_DECISIONS = "extract-decide.md"


def load_directive(name: str, path: str | Path | None = None) -> str:
    """The text of directive ``name`` (``dream.md``, ``pref-dream.md``, ``extract.md``,
    ``extract-decide.md``), or of the file at ``path``.

    Raises:
        InvalidConfiguration: ``path`` cannot be read, or is empty.
    """
    if path is None:
        return resources.files(__package__).joinpath("directives", name).read_text(encoding="utf-8")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidConfiguration(f"directive {str(path)!r}: cannot be read ({exc})") from None
    if not text.strip():
        raise InvalidConfiguration(f"directive {str(path)!r}: the file is empty")
    return text
