"""A tiny made-up conversation set in LoCoMo's file format, for the LoCoMo benches' ``--smoke`` runs.

The LoCoMo data is not shipped with memstack, and CI has no copy: a smoke run reads this instead, so
the benches' whole path (loading, filling scopes, searching, scoring, printing) runs anywhere. Two
conversations, named after one conversation of each fixed half (``bench/locomo_choices.py``) so every
table of the benches has rows; each has two sessions and three questions with their evidence. The
figures of a smoke run mean nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["write_smoke_data"]

_SESSIONS: dict[str, list[list[tuple[str, str]]]] = {
    "conv-26": [
        [
            ("Ann", "I started drinking green tea every morning last week."),
            ("Ben", "Nice, I still need two coffees before work."),
            ("Ann", "My sister moved to Lisbon in spring."),
            ("Ben", "Lisbon is lovely, the trams are great."),
        ],
        [
            ("Ben", "I adopted a rescue dog called Miso."),
            ("Ann", "How old is Miso?"),
            ("Ben", "She is three and loves the beach."),
            ("Ann", "I am learning to play the cello now."),
        ],
    ],
    "conv-30": [
        [
            ("Cai", "The car needs new winter tyres before December."),
            ("Dee", "I ran five kilometres on Sunday."),
            ("Cai", "We booked a flight to Oslo for the holidays."),
        ],
        [
            ("Dee", "My laptop battery drains very quickly."),
            ("Cai", "The team moved the backend to Python."),
            ("Dee", "I collect vintage postcards from train stations."),
        ],
    ],
}
_QUESTIONS: dict[str, list[tuple[str, list[str], int]]] = {
    "conv-26": [
        ("What does Ann drink in the morning?", ["D1:1"], 4),
        ("Where does Ann's sister live?", ["D1:3"], 4),
        ("What is the name of Ben's dog and how old is she?", ["D2:1", "D2:3"], 1),
    ],
    "conv-30": [
        ("Where are Cai and Dee flying for the holidays?", ["D1:3"], 4),
        ("What does Dee collect?", ["D2:3"], 4),
        ("When does the car need new tyres?", ["D1:1"], 2),
    ],
}


def _sample(sample_id: str) -> dict[str, Any]:
    conversation: dict[str, Any] = {}
    for number, turns in enumerate(_SESSIONS[sample_id], 1):
        conversation[f"session_{number}_date_time"] = f"1:56 pm on {number + 7} May, 2023"
        conversation[f"session_{number}"] = [
            {"speaker": speaker, "dia_id": f"D{number}:{position}", "text": text}
            for position, (speaker, text) in enumerate(turns, 1)
        ]
    qa = [
        {"question": question, "answer": "", "evidence": evidence, "category": category}
        for question, evidence, category in _QUESTIONS[sample_id]
    ]
    return {"sample_id": sample_id, "conversation": conversation, "qa": qa}


def write_smoke_data(directory: Path) -> Path:
    """Write the set as ``locomo-smoke.json`` in ``directory``; returns its path."""
    path = directory / "locomo-smoke.json"
    path.write_text(json.dumps([_sample(s) for s in _SESSIONS]), encoding="utf-8")
    return path
