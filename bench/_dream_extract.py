"""The ``extract`` case of ``bench/dream.py``: known contradictions on LoCoMo, learnt from new turns.

For each conversation, a scope holds what a memory of it holds: its facts, LoCoMo's ``observation``
lists (facts about each speaker, each citing the turn it comes from; without them, as in the
``--smoke`` set, the turns themselves), saved at their session's time, without conversation
provenance (they are facts, not turns). Contradictions are made from the questions of category 4
(single-hop) whose evidence is one turn: in a fact citing that turn, the answer's words (or,
without them, its longest word) are replaced by another answer of the same conversation, and the
changed fact is said again, later, in a new turn of the turn log (at most :data:`PER_CONVERSATION`
per conversation). A scripted model plays a
model that knows the contradictions, and nothing else: asked for facts, it returns each changed turn
citing its message id; asked to decide, it answers ``update`` naming the contradicted turn when the
pass showed it that turn among the stored memories most like the fact, and ``add`` otherwise. One
``extract`` pass per conversation, then:

* ``superseded_correct``: contradicted turns superseded by their own new fact / contradictions;
  ``wrong_superseded``: entries superseded that no contradiction named (0 expected);
* ``current_fact_r1``: the share of contradictions whose new fact ranks first for its question, the
  contradicted fact with its changed words left out (a cloze: both the old and the new fact hold
  every word of it); ``stale_r1``: the share where the old fact ranks first (0 expected);
* the same-run peer, an ADD-only memory (the new facts saved next to the old ones, what mem0's
  issue #4896 describes): ``add_only_r1`` and ``add_only_stale_r1``;
* ``locomo_question_r1``: the share whose new fact ranks first for the original LoCoMo question
  (a harder, informational figure: the question was not written for the fact's exact words);
* ``extract_undo_exact``: undo of every pass gives every scope back exactly.

Searches use BM25 alone. The choices (the cap, the seed) were made on ``--quick`` (the first three
conversations); the figures of a full run include the other three.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import memstack
from locomo_recall import DIA_ID, SESSION_KEY, session_time
from memstack.llm.scripted import ScriptedChatModel
from memstack.services.dream import Dreamer
from memstack.tiers.longterm import LongTermMemory, MemoryEntry

__all__ = ["Contradiction", "contradictions", "run_extract_case"]

PER_CONVERSATION = 40
SPARE = ("Berlin", "Tokyo", "the violin", "seven", "orange")
"""Replacement words when the conversation's answers offer none (the smoke set has no answers)."""
SINGLE_HOP = 4
_ID_LINE = re.compile(r"^\[ID:([^\]]+)\]", re.MULTILINE)
_FACT_LINE = re.compile(r"^(\d+)\. (.*)$")
_SIMILAR_LINE = re.compile(r"^   \[ID:([^\]]+)\] ")


@dataclass(frozen=True)
class Contradiction:
    """One known contradiction: the fact it contradicts, the new text, its question and cloze."""

    old_id: str
    new_text: str
    question: str
    cloze: str
    message_id: str


def facts_of(sample: dict[str, Any]) -> tuple[list[MemoryEntry], dict[str, list[MemoryEntry]]]:
    """A conversation's facts (see the module docstring) and, per turn reference (``D3:4``), the
    facts citing it."""
    conv = sample["conversation"]
    found: list[tuple[str, str, str]] = []  # (session number, fact, turn reference)
    for key, lists in sorted((sample.get("observation") or {}).items()):
        number = key.split("_")[1]
        for items in lists.values():
            found += [(number, str(text), str(ref)) for text, ref in items if isinstance(text, str)]
    if not found:  # no observations: the turns are the facts
        for key, turns in conv.items():
            if SESSION_KEY.fullmatch(key) and isinstance(turns, list):
                found += [(key.split("_")[1], f"{t['speaker']}: {t['text']}", t["dia_id"]) for t in turns]
    facts, cited = [], defaultdict(list)
    for n, (number, text, ref) in enumerate(found):
        when = session_time(conv[f"session_{number}_date_time"])
        entry = MemoryEntry(id=f"f{n}", content=text, created_at=when)
        facts.append(entry)
        cited[ref.strip()].append(entry)
    return facts, cited


def _span(text: str, answer: str) -> str | None:
    """``answer`` as it is written in ``text`` (case-insensitively), or None."""
    at = text.lower().find(answer.lower()) if answer.strip() else -1
    return None if at < 0 else text[at : at + len(answer)]


def contradictions(
    sample: dict[str, Any], cited: dict[str, list[MemoryEntry]], rng: random.Random
) -> list[Contradiction]:
    """The conversation's contradictions (see the module docstring), in a seeded random order."""
    qas = sample["qa"]
    answers = sorted({str(q.get("answer", "")).strip() for q in qas if str(q.get("answer", "")).strip()})
    made: dict[str, Contradiction] = {}
    for qa in qas:
        refs = [ref.strip() for ref in qa.get("evidence", []) if DIA_ID.fullmatch(str(ref).strip())]
        if qa.get("category") != SINGLE_HOP or len(refs) != 1 or not cited.get(refs[0]):
            continue
        answer = str(qa.get("answer", ""))
        old = next((f for f in cited[refs[0]] if _span(f.content, answer)), cited[refs[0]][0])
        if old.id in made:
            continue
        span = _span(old.content, answer)
        if span is None:  # no answer in the fact (or none at all): its longest word changes
            words = [w.strip(".,!?;:'\"()") for w in old.content.split()]
            span = max((w for w in words if len(w) >= 4), key=len, default=None)
        others = [
            a
            for a in answers or SPARE
            if a.lower() not in old.content.lower() and a.lower() != (span or "").lower()
        ]
        if span is None or not others:
            continue
        new_text = old.content.replace(span, rng.choice(others), 1)
        cloze = " ".join(old.content.replace(span, " ", 1).split())
        made[old.id] = Contradiction(old.id, new_text, str(qa["question"]), cloze, f"c-{old.id}")
    chosen = sorted(made.values(), key=lambda c: c.old_id)
    rng.shuffle(chosen)
    return chosen[:PER_CONVERSATION]


def _knowing(cases: Sequence[Contradiction]) -> Callable[[list[dict[str, Any]], Any], str]:
    """The scripted model: it knows ``cases`` and answers both questions of the pass from them."""
    by_message = {c.message_id: c for c in cases}
    by_text = {c.new_text: c for c in cases}

    def reply(messages: list[dict[str, Any]], tools: Any) -> str:
        system, user = messages[0]["content"], messages[1]["content"]
        if '"facts"' in system:  # the extraction question: each new turn it was shown, as a fact
            shown = [by_message[m] for m in _ID_LINE.findall(user) if m in by_message]
            return json.dumps(
                {"facts": [{"content": c.new_text, "sourceIds": [c.message_id]} for c in shown]}
            )
        decisions, fact, similar = [], None, []  # the decision question: update what it was shown
        for line in [*user.splitlines(), "0. end"]:
            head, row = _FACT_LINE.match(line), _SIMILAR_LINE.match(line)
            if row is not None:
                similar.append(row[1])
            elif head is not None:
                if fact is not None:
                    case = by_text.get(fact[1])
                    known = case is not None and case.old_id in similar
                    decisions.append(
                        {
                            "fact": fact[0],
                            "action": "update" if known else "add",
                            "ids": [case.old_id] if known else [],
                        }  # type: ignore[union-attr]  # known implies a case
                    )
                fact, similar = (int(head[1]), head[2]), []
        return json.dumps({"decisions": decisions})

    return reply


def _first(memory: LongTermMemory, query: str) -> str | None:
    hits = memory.search(query, limit=1)
    return hits[0].entry.id if hits else None


def run_extract_case(mem: memstack.Memory, samples: Sequence[dict[str, Any]], run: str) -> dict[str, float]:
    """Every conversation's contradictions through one extract pass each; the figures."""
    rng = random.Random(2029)
    total = correct = wrong = current = stale = add_only = add_only_stale = locomo = 0
    exact = True
    seconds = 0.0
    for sample in samples:
        facts, cited = facts_of(sample)
        cases = contradictions(sample, cited, rng)
        if not cases:
            continue
        sample_id = sample["sample_id"]
        memory = mem.long_term(f"extract-{sample_id}-{run}")
        plain = mem.long_term(f"addonly-{sample_id}-{run}")
        for entry in facts:
            memory.save(entry)
            plain.save(entry)
        snapshot = memory.entries()
        later = max(e.created_at for e in facts) + timedelta(days=30)
        session = f"{sample_id}-{run}"
        for case in cases:
            mem.turns.add(session, "user", case.new_text, message_id=case.message_id)
            plain.save(MemoryEntry(id=case.message_id, content=case.new_text, created_at=later))
        model = ScriptedChatModel([_knowing(cases)] * 2, model="knows-the-contradictions")
        dreamer = Dreamer(memory, model=model, turns=mem.turns)
        start = time.perf_counter()
        record = dreamer.extract(sessions=[session])
        seconds += time.perf_counter() - start
        if record is None or record.status != "applied":
            raise RuntimeError(f"{sample_id}: the extract pass did not apply: {record}")
        new_of = {c.message_ids[0]: c.entry.id for c in record.created}
        superseded = {x.entry.id: x.entry.superseded_by for x in record.superseded}
        total += len(cases)
        for case in cases:
            new_id = new_of.get(case.message_id)
            correct += int(new_id is not None and superseded.get(case.old_id) == new_id)
            top = _first(memory, case.cloze)
            current += int(top is not None and top == new_id)
            stale += int(top == case.old_id)
            locomo += int(new_id is not None and _first(memory, case.question) == new_id)
            plain_top = _first(plain, case.cloze)
            add_only += int(plain_top == case.message_id)
            add_only_stale += int(plain_top == case.old_id)
        wrong += sum(1 for old in superseded if old not in {c.old_id for c in cases})
        dreamer.undo(record.id)
        exact = exact and memory.entries() == snapshot
        print(
            f"{sample_id}: {len(facts)} facts, {len(cases)} contradictions; superseded {len(superseded)}, "
            f"created {len(record.created)}, dropped {record.dropped}"
        )
    share = (lambda n: n / total) if total else (lambda n: float("nan"))
    return {
        "contradictions": total,
        "superseded_correct": share(correct),
        "wrong_superseded": wrong,
        "current_fact_r1": share(current),
        "stale_r1": share(stale),
        "add_only_r1": share(add_only),
        "add_only_stale_r1": share(add_only_stale),
        "locomo_question_r1": share(locomo),
        "extract_undo_exact": int(exact),
        "extract_seconds": seconds,
    }
