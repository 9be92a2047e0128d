"""The LoCoMo development split used to choose retrieval settings, and every choice made on it.

The six development conversations are split in two fixed halves by sorted ``sample_id``, alternately:

    A = conv-26, conv-41, conv-43        B = conv-30, conv-42, conv-44

Settings are chosen on the *tune* half and reported on the other (``--split tune|report|both``;
``--reverse`` swaps the halves, for checking that a choice also holds the other way round). A setting
became a default only if it won on the tune half *and* on the report half. The four held-out
conversations were never looked at.

Each choice is recorded once below, with the half it was chosen on and the figures that decided it.
"""

from __future__ import annotations

from dataclasses import dataclass

HALVES: dict[str, tuple[str, ...]] = {
    "A": ("conv-26", "conv-41", "conv-43"),
    "B": ("conv-30", "conv-42", "conv-44"),
}
TUNE, REPORT = "A", "B"


@dataclass(frozen=True)
class Choice:
    setting: str
    value: str
    chosen_on: str
    evidence: str


CHOICES: tuple[Choice, ...] = ()
