"""The three kinds of data ``bench/recall_suite.py`` measures, loaded as scopes of entries and questions.

``paraphrase``
    The persona files of ``bench/data/paraphrase/``: 25 first-person chat messages each, saved one per
    entry, and 25 questions in an agent's words, each with an answer pattern (a regular expression); a
    question is answered by the messages its pattern matches. Each file says which part it is in
    (``tune``: the parameters were chosen on it; ``report``: never looked at while choosing).
``locomo-turns``
    Every dialogue turn of the LoCoMo development split as one entry, with its conversation provenance
    (as ``bench/locomo_recall.py`` saves them); a question's recall@k is the share of its evidence turns
    among the first k.
``locomo-facts``
    The ``observation`` facts of the same conversations, one entry per fact (what an extractor saves: no
    conversation provenance, the session's time as ``created_at``); a question is a hit at k when one of
    the first k facts cites one of its evidence turns.

The LoCoMo parts follow the halves of ``bench/locomo_choices.py`` (half A tunes, half B reports).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from locomo_choices import HALVES, REPORT, TUNE  # bench/ is on sys.path when the script runs
from locomo_recall import CATEGORIES, DIA_ID, entry_id, load, session_time
from memstack.tiers.longterm import MemoryEntry

__all__ = ["PARAPHRASE_DIR", "Question", "Scope", "add_smoke_observations", "locomo_facts", "locomo_turns",
           "paraphrase"]  # fmt: skip

PARAPHRASE_DIR = Path(__file__).resolve().parent / "data" / "paraphrase"


@dataclass
class Question:
    text: str
    category: str
    relevant: set[str]  # entry ids that answer it
    fraction: bool  # True: recall is the share of ``relevant`` found; False: a hit when any is found


@dataclass
class Scope:
    name: str
    part: str  # "tune" or "report"
    entries: list[MemoryEntry]
    questions: list[Question]


def _part(sample_id: str) -> str:
    return "tune" if sample_id in HALVES[TUNE] else "report" if sample_id in HALVES[REPORT] else "other"


def paraphrase(directory: Path = PARAPHRASE_DIR, limit: int | None = None) -> list[Scope]:
    """One scope per persona file (``limit``: only that many messages and questions of each)."""
    scopes = []
    for path in sorted(directory.glob("*.json")):
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        messages: list[str] = data["messages"][:limit]
        entries = [MemoryEntry(id=f"m{n}", content=text) for n, text in enumerate(messages)]
        questions = []
        for qa in data["questions"][:limit]:
            pattern = re.compile(qa["answer"], re.IGNORECASE)
            relevant = {e.id for e in entries if pattern.search(e.content)}
            if relevant:
                questions.append(Question(qa["q"], "paraphrase", relevant, fraction=False))
        scopes.append(Scope(str(data["persona"]), str(data["part"]), entries, questions))
    return scopes


def locomo_turns(path: Path) -> list[Scope]:
    """One scope per conversation, one entry per turn."""
    return [
        Scope(
            conv.sample_id,
            _part(conv.sample_id),
            conv.entries,
            [Question(q.text, CATEGORIES[q.category], q.evidence, fraction=True) for q in conv.questions],
        )
        for conv in load(path)
    ]


def locomo_facts(path: Path) -> list[Scope]:
    """One scope per conversation, one entry per ``observation`` fact; ``relevant`` holds the facts
    citing an evidence turn of the question."""
    data: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    by_sample = {conv.sample_id: conv for conv in load(path)}
    scopes = []
    for sample in data:
        entries: list[MemoryEntry] = []
        cites: dict[str, set[str]] = {}  # turn id -> fact ids citing it
        for key, speakers in sorted(sample.get("observation", {}).items()):
            number = int(re.findall(r"\d+", key)[0])
            when = session_time(sample["conversation"][f"session_{number}_date_time"])
            for facts in speakers.values():
                for fact in facts:
                    text, refs = str(fact[0]), fact[1] if isinstance(fact[1], list) else [fact[1]]
                    fid = f"f{len(entries)}"
                    entries.append(MemoryEntry(id=fid, content=text, created_at=when))
                    for ref in refs:
                        for a, b in DIA_ID.findall(str(ref)):
                            turn = entry_id(f"D{a}:{b}")
                            if turn is not None:
                                cites.setdefault(turn, set()).add(fid)
        questions = []
        for q in by_sample[sample["sample_id"]].questions:
            relevant = {fid for turn in q.evidence for fid in cites.get(turn, ())}
            if relevant:
                questions.append(Question(q.text, CATEGORIES[q.category], relevant, fraction=False))
        scopes.append(Scope(sample["sample_id"], _part(sample["sample_id"]), entries, questions))
    return scopes


def add_smoke_observations(path: Path) -> None:
    """Give the smoke set (``_locomo_smoke``) an ``observation`` per session: each turn as a fact."""
    data: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    for sample in data:
        conv, obs = sample["conversation"], {}
        for key, turns in conv.items():
            if isinstance(turns, list):
                facts = [[f"{t['speaker']} said: {t['text']}", t["dia_id"]] for t in turns]
                obs[f"{key}_observation"] = {"all": facts}
        sample["observation"] = obs
    path.write_text(json.dumps(data), encoding="utf-8")
