"""A turn cut into its sentences and sentence windows, for ``bench/sentence_vectors.py``.

A LoCoMo turn is ``"{speaker}: {text}"`` with `` [image: {caption}]`` on image turns. Its text is cut
after ``.``, ``!`` or ``?`` followed by a space (a rule, no model); each piece keeps the speaker's
name in front (a question names the person: "What does Melanie ..."), and the image caption is a
piece of its own. A window is two adjacent sentences joined, for turns of three or more sentences
(a shorter turn's windows are its sentences).
"""

from __future__ import annotations

import itertools
import re

__all__ = ["sentences", "windows"]

_SPEAKER = re.compile(r"^([^:]{1,60}): (.*)$", re.DOTALL)
_IMAGE = re.compile(r"^(.*?)\s*(\[image: [^\]]*\])\s*$", re.DOTALL)
_CUT = re.compile(r"(?<=[.!?])\s+")


def _parts(content: str) -> tuple[str, list[str], str | None]:
    """The speaker prefix (``"Ann: "`` or ``""``), the text's sentences and the image piece."""
    match = _SPEAKER.match(content)
    prefix, body = (f"{match[1]}: ", match[2]) if match else ("", content)
    image = None
    found = _IMAGE.match(body)
    if found:
        body, image = found[1], found[2]
    cut = [s.strip() for s in _CUT.split(body) if s.strip()]
    return prefix, cut, image


def sentences(content: str) -> list[str]:
    """The turn's sentences (and image caption), each as ``"{speaker}: {sentence}"``; the whole
    content when it has no sentence."""
    prefix, cut, image = _parts(content)
    out = [prefix + s for s in cut] + ([prefix + image] if image else [])
    return out or [content]


def windows(content: str) -> list[str]:
    """Two adjacent sentences joined, for a turn of three or more; else its sentences."""
    prefix, cut, image = _parts(content)
    if len(cut) < 3:
        return sentences(content)
    pairs = [f"{prefix}{a} {b}" for a, b in itertools.pairwise(cut)]
    return pairs + ([prefix + image] if image else [])
