"""How ``bench/sentence_vectors.py`` cuts a turn into sentences and windows (``bench/_sentences.py``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def _load() -> ModuleType:
    """``bench/_sentences.py`` as a module (bench/ is a folder of scripts, not a package)."""
    path = Path(__file__).resolve().parents[2] / "bench" / "_sentences.py"
    spec = importlib.util.spec_from_file_location("_sentences", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


cut = _load()


def test_each_sentence_keeps_the_speaker_in_front() -> None:
    turn = "Melanie: Hey! I signed up for a pottery class last week. Do you paint?"
    assert cut.sentences(turn) == [
        "Melanie: Hey!",
        "Melanie: I signed up for a pottery class last week.",
        "Melanie: Do you paint?",
    ]


def test_the_image_caption_is_a_piece_of_its_own() -> None:
    turn = "Ann: Look at this. So pretty! [image: a photo of a red bowl on a table]"
    assert cut.sentences(turn) == [
        "Ann: Look at this.",
        "Ann: So pretty!",
        "Ann: [image: a photo of a red bowl on a table]",
    ]


def test_a_turn_of_one_sentence_is_itself() -> None:
    assert cut.sentences("Ben: I adopted a dog called Miso") == ["Ben: I adopted a dog called Miso"]
    assert cut.windows("Ben: I adopted a dog called Miso") == ["Ben: I adopted a dog called Miso"]


def test_no_sentence_gives_the_whole_content() -> None:
    assert cut.sentences("Ben: ") == ["Ben: "]
    assert cut.sentences("") == [""]


def test_windows_join_adjacent_sentences_from_three_on() -> None:
    turn = "Cai: One. Two! Three? [image: a cat]"
    assert cut.windows(turn) == ["Cai: One. Two!", "Cai: Two! Three?", "Cai: [image: a cat]"]
    assert cut.windows("Cai: One. Two.") == ["Cai: One.", "Cai: Two."]


def test_a_colon_inside_the_text_is_not_a_speaker() -> None:
    assert cut.sentences("Dee: Plan: run. Then rest.") == ["Dee: Plan: run.", "Dee: Then rest."]
