"""Dream passes over LoCoMo: offline dedupe of injected duplicates, and extract of known contradictions.

For each conversation of the LoCoMo development split, a fresh scope receives every turn as one
entry (as ``bench/locomo_recall.py`` builds them), plus injected duplicates of 20 % of the turns
(chosen at random with a fixed seed): half exact copies, half with a small edit (a word dropped,
two words swapped, a filler word inserted, or a case/punctuation change), each created one second
after its original. Then:

1. BM25 recall@10 of the evidence turns of every question of categories 1-4 (``before``);
2. one offline ``dedupe`` pass (near mode, no model) per scope;
3. recall@10 again (``after``); ``duplicates_removed_ratio`` = injected duplicates retired /
   injected; ``lost_without_record`` = entries gone after the pass that no record holds;
4. ``undo`` of every pass; ``undo_exact`` = 1 when every scope is back exactly (every field of
   every entry).

For reference, ``recall_r10_clean`` is the recall of a scope that never had duplicates.

The extract case (``bench/_dream_extract.py`` says how it is built): known contradictions of
LoCoMo turns said again in new turns, one ``extract`` pass per conversation with a scripted model
that knows them: ``superseded_correct`` (the contradicted turn superseded by its new fact),
``current_fact_r1`` (the new fact ranks first for its question; target >= 0.9), ``stale_r1``, the
same-run ADD-only peer ``add_only_r1`` / ``add_only_stale_r1``, ``locomo_question_r1`` and
``extract_undo_exact``.

    python bench/dream.py [--url URL] [--quick | --smoke] [--data PATH]

``--quick`` uses the first 3 conversations; ``--smoke`` a tiny made-up conversation set in LoCoMo's
format (``bench/_locomo_smoke.py``: no LoCoMo copy needed; its figures mean nothing). Searches use
BM25 alone, whatever ``MEMSTACK_EMBEDDER`` says. Last line:
``RESULT entries_before=… entries_after=… duplicates_removed_ratio=… recall_r10_before=…
recall_r10_after=… recall_delta=… lost_without_record=… undo_exact=… recall_r10_clean=…
contradictions=… superseded_correct=… wrong_superseded=… current_fact_r1=… stale_r1=… add_only_r1=…
add_only_stale_r1=… locomo_question_r1=… extract_undo_exact=…``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import memstack
from _dream_extract import run_extract_case
from _locomo_smoke import write_smoke_data
from _smoke import add_smoke, smoke_tag
from locomo_recall import Conversation, Scores, data_path, load
from memstack.services.dream import Dreamer
from memstack.tiers.longterm import MemoryEntry

SHARE = 0.20
FILLERS = ("really", "actually", "honestly")


def edit(text: str, rng: random.Random) -> str:
    """A small edit of ``text`` (its ``Speaker:`` prefix kept)."""
    speaker, _, body = text.partition(": ")
    words = body.split()
    kind = rng.randrange(4) if len(words) >= 3 else 3
    if kind == 0:
        del words[rng.randrange(1, len(words))]
    elif kind == 1:
        i = rng.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
    elif kind == 2:
        words.insert(rng.randrange(1, len(words)), rng.choice(FILLERS))
    else:
        return f"{speaker}: {body.upper().rstrip('.!?')}!!"
    return f"{speaker}: {' '.join(words)}"


def inject(conv: Conversation, rng: random.Random) -> list[MemoryEntry]:
    picked = rng.sample(conv.entries, round(SHARE * len(conv.entries)))
    dups = []
    for n, original in enumerate(picked):
        content = original.content if n % 2 == 0 else edit(original.content, rng)
        dups.append(
            MemoryEntry(
                id=f"dup-{original.id}",
                content=content,
                created_at=original.created_at + timedelta(seconds=1),
            )
        )
    return dups


def recall(memory: memstack.tiers.longterm.LongTermMemory, conv: Conversation, scores: Scores) -> None:
    for question in conv.questions:
        hits = memory.search(question.text, max_results=10)
        scores.add(question.category, [h.entry.id for h in hits], question.evidence)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--url", default="memory://", help="engine URL (default: the memory engine)")
    parser.add_argument("--quick", action="store_true", help="the first 3 conversations only")
    parser.add_argument("--data", type=Path, default=None)
    add_smoke(parser)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memstack-dream-") as tmp:
        if args.smoke:
            args.data = args.data or write_smoke_data(Path(tmp))
        return run(args)


def run(args: argparse.Namespace) -> int:
    data = data_path(args.data)
    conversations = load(data)[: 3 if args.quick else None]
    rng = random.Random(2024)
    run = uuid.uuid4().hex[:8]
    clean, before, after = Scores(), Scores(), Scores()
    entries_before = entries_after = injected = removed = lost = 0
    exact = True
    seconds = {"fill": 0.0, "dedupe": 0.0, "undo": 0.0}
    with memstack.open(args.url, embedder="none") as mem:
        for conv in conversations:
            reference = mem.long_term(f"clean-{conv.sample_id}-{run}")
            for entry in conv.entries:
                reference.save(entry)
            recall(reference, conv, clean)
            memory = mem.long_term(f"dream-{conv.sample_id}-{run}")
            dups = inject(conv, rng)
            start = time.perf_counter()
            for entry in [*conv.entries, *dups]:
                memory.save(entry)
            seconds["fill"] += time.perf_counter() - start
            snapshot = memory.entries()
            entries_before += len(snapshot)
            injected += len(dups)
            recall(memory, conv, before)
            dreamer = Dreamer(memory)
            start = time.perf_counter()
            record = dreamer.dedupe(mode="near")
            seconds["dedupe"] += time.perf_counter() - start
            left = {e.id for e in memory.entries()}
            entries_after += len(left)
            recall(memory, conv, after)
            archived = set() if record is None else {a.entry.id for a in record.retired}
            removed += sum(1 for d in dups if d.id not in left)
            lost += sum(1 for e in snapshot if e.id not in left and e.id not in archived)
            if record is not None:
                start = time.perf_counter()
                dreamer.undo(record.id)
                seconds["undo"] += time.perf_counter() - start
            exact = exact and memory.entries() == snapshot
            print(
                f"{conv.sample_id}: {len(snapshot)} entries ({len(dups)} injected) -> {len(left)}; "
                f"merged groups {0 if record is None else len(record.created)}"
            )
        samples = json.loads(Path(data).read_text(encoding="utf-8"))[: len(conversations)]
        extract = run_extract_case(mem, samples, run)
    ratio = removed / injected if injected else 1.0
    r_before, r_after = before.recall(10), after.recall(10)
    print(
        f"questions: {sum(before.counts.values())}; recall@10 without duplicates {clean.recall(10):.4f}, "
        f"with them {r_before:.4f}, after dedupe {r_after:.4f}"
    )
    print(f"duplicates removed: {removed}/{injected} ({ratio:.3f}); lost without record: {lost}")
    seconds["extract"] = extract.pop("extract_seconds")
    print(
        f"extract: {extract['contradictions']:.0f} contradictions, superseded correctly "
        f"{extract['superseded_correct']:.3f}; the current fact first {extract['current_fact_r1']:.3f} "
        f"(ADD-only {extract['add_only_r1']:.3f}, the stale one first {extract['add_only_stale_r1']:.3f})"
    )
    print("seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in seconds.items()))
    print(
        f"RESULT entries_before={entries_before} entries_after={entries_after} "
        f"duplicates_removed_ratio={ratio:.4f} recall_r10_before={r_before:.4f} "
        f"recall_r10_after={r_after:.4f} recall_delta={r_after - r_before:.4f} "
        f"lost_without_record={lost} undo_exact={int(exact)} recall_r10_clean={clean.recall(10):.4f} "
        + " ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in extract.items())
        + smoke_tag(args)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
