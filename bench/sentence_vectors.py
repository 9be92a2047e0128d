"""Sentence-level vectors for conversation turns (max-sim), measured on LoCoMo's halves.

A LoCoMo turn averages 27 words (with its speaker's name) and 3.2 sentences; its one vector mixes
its topics. This bench cuts every turn into sentences (``bench/_sentences.py``: a rule, the speaker's
name kept in front, the image caption a piece of its own), embeds each with the scope's own embedder,
and scores a turn by the best cosine of its sentences with the query (``sent``), of its two-sentence
windows (``win``), or by a mix with the whole turn's cosine ``w``: ``max:a`` = max(w, a·sent),
``mix:b`` = (w + b·sent) / (1 + b), ``maxwin:a`` = max(w, a·win), ``mixwin:b`` likewise. ``turn``
is the whole-turn cosine, what a search uses today. ``MODE@x`` also weighs the turns' fusion
``1 - x`` / ``x`` (BM25 / vectors; the default is 0.7 / 0.3), for ``turn`` and ``sent`` with x in
:data:`VECTOR_WEIGHTS`.

Nothing is reimplemented: every turn is saved into a fresh scope, and memstack's own ``default``
search runs with the vector score of the first stage replaced by the mode's (the one function that
computes the scope's cosines, ``memstack.tiers.longterm.hybrid.cosines``, is wrapped for the run: the
fused evidence, the propagation and the second stage then read the mode's score; the second stage's
``z`` feature still reads the whole-turn cosine). Per mode, on the tune half:

- ``plain``: R@1, R@3, R@10 of the vector score alone, ranking every turn (no BM25);
- ``cand50`` / ``cand100``: the share of questions with an evidence turn among the first 50 of the
  first stage (the head the second stage re-scores, taken with
  ``memstack.tiers.longterm.turn_head.watched``) and among the 100 hits of a limit-100 search;
  ``c50f`` / ``c100f``: the share of each question's evidence turns there (what a perfect order of
  them would give at R@k, k >= 20), averaged; ``50+20f``: that share among the first 50 joined
  with the score's own first 20 (what the score alone could add to the stage's candidates);
- R@10, R@20 and multi-hop R@10 of the search as it returns (limit 20; the committed second-stage
  table), and with the table refitted on the mode's own tune heads (``_listwise.fit``, converged), as
  a product change would refit it.

``feature`` keeps the whole-turn search and gives the second stage two more features, the sentence
and window max-sims in standard deviations over the scope (refitted on tune the same way; compare it
with ``turn``'s refit). ``--report`` then measures :data:`CHOSEN` (chosen on tune) and ``turn`` on the
report half once, with the tables fitted on tune. The halves are ``bench/locomo_choices.py``'s.

    python bench/sentence_vectors.py [--report] [--modes M,M,...] [--data PATH] [--cache-dir DIR] [--smoke]

``--smoke`` runs on ``bench/_locomo_smoke.py``'s made-up set with a fake embedder; its figures mean
nothing. The last line is ``RESULT {part}_{mode}_{figure}=…`` for ``turn``, :data:`CHOSEN` and
the modes ``--modes`` names.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

import memstack
from _embed_cache import CachedEmbedder  # bench/ is on sys.path when the script runs
from _listwise import NotConverged, fit, table
from _locomo_smoke import write_smoke_data
from _sentences import sentences, windows
from _smoke import smoke_tag
from locomo_choices import HALVES, REPORT, TUNE
from locomo_recall import Conversation, add_locomo_options, data_path, load
from memstack import Memory
from memstack.search.embedders import Embedder, FakeEmbedder, available_embedder, embed_queries
from memstack.search.fusion import FUSION_PROFILES, Row
from memstack.search.turn_rerank import FEATURES, TurnHead, features
from memstack.tiers.longterm import hybrid
from memstack.tiers.longterm.turn_head import watched

Floats = npt.NDArray[np.float64]
Score = Callable[[Floats, Floats, Floats], Floats]
Table = Mapping[str, tuple[float, float]]

MODES: dict[str, Score] = {
    "turn": lambda w, s, v: w,
    "sent": lambda w, s, v: s,
    "win": lambda w, s, v: v,
    "max:0.9": lambda w, s, v: np.maximum(w, 0.9 * s),
    "max:1.0": lambda w, s, v: np.maximum(w, s),
    "mix:0.5": lambda w, s, v: (w + 0.5 * s) / 1.5,
    "mix:1.0": lambda w, s, v: (w + s) / 2,
    "mix:2.0": lambda w, s, v: (w + 2 * s) / 3,
    "maxwin:1.0": lambda w, s, v: np.maximum(w, v),
    "mixwin:1.0": lambda w, s, v: (w + v) / 2,
}
VECTOR_WEIGHTS = (0.4, 0.5)
"""Vector weights of the turns' fusion tried with ``sent`` and ``turn`` (``sent@0.4``: BM25 0.6,
vectors 0.4; the default is ``evidence-turns``' 0.7 / 0.3): a stronger vector score may deserve more."""
FEATURE = "feature"
"""The whole-turn search, its second stage given the sentence and window max-sims as features."""
EXTRA = ("sent_z", "win_z")
CHOSEN = ("sent", FEATURE)
"""The settings measured on the report half (chosen on the tune half's figures, see docs/recall.md)."""


@dataclass
class Pieces:
    """One scope's sentence (or window) vectors, grouped by turn."""

    ids: list[str]  # the turns, in the order of ``starts``
    matrix: npt.NDArray[np.float32]  # (pieces, dim), unit rows
    starts: npt.NDArray[np.int64]  # each turn's first row

    @classmethod
    def of(cls, conv: Conversation, embedder: Embedder, cut: Callable[[str], list[str]]) -> Pieces:
        texts = [cut(e.content) for e in conv.entries]
        flat = [t for group in texts for t in group]
        vectors = np.asarray(embedder.embed(flat), dtype=np.float32)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        starts = np.cumsum([0] + [len(g) for g in texts[:-1]]).astype(np.int64)
        return cls([e.id for e in conv.entries], vectors, starts)

    def best(self, unit: npt.NDArray[np.float32], ids: Sequence[str]) -> Floats:
        """Each of ``ids``' best piece cosine with the unit query vector."""
        per_turn = np.maximum.reduceat(self.matrix @ unit, self.starts).astype(np.float64)
        where = {i: n for n, i in enumerate(self.ids)}
        return per_turn[[where[i] for i in ids]]


@dataclass
class Tap:
    """What the wrapped cosines saw last: the whole-turn, sentence and window scores of every turn."""

    mode: Score
    sents: Pieces
    wins: Pieces
    calls: int = 0
    last: tuple[list[str], Floats, Floats, Floats] | None = None

    def scores(self, query_vector: npt.NDArray[np.float32], ids: list[str], whole: Floats) -> Floats:
        unit = (query_vector / max(float(np.linalg.norm(query_vector)), 1e-12)).astype(np.float32).ravel()
        s, v = self.sents.best(unit, ids), self.wins.best(unit, ids)
        self.last = (ids, whole, s, v)
        self.calls += 1
        return self.mode(whole, s, v)


@contextmanager
def tapped(tap: Tap) -> Iterator[None]:
    """Within the block, a search's cosines are the mode's scores (the whole-turn ones go to ``tap``)."""
    original = hybrid.cosines

    def cosines(cache, embedder, query_vector):  # type: ignore[no-untyped-def]
        ids, whole = original(cache, embedder, query_vector)
        if not ids:
            return ids, whole
        return ids, tap.scores(query_vector, ids, whole.astype(np.float64)).astype(np.float32)

    hybrid.cosines = cosines
    try:
        yield
    finally:
        hybrid.cosines = original


@contextmanager
def vector_weight(weight: float | None) -> Iterator[None]:
    """Within the block, the turns' fusion weighs vectors ``weight`` and BM25 ``1 - weight``."""
    if weight is None:
        yield
        return
    original = FUSION_PROFILES["evidence-turns"]
    FUSION_PROFILES["evidence-turns"] = replace(original, bm25_weight=1 - weight, vector_weight=weight)
    try:
        yield
    finally:
        FUSION_PROFILES["evidence-turns"] = original


def all_modes() -> list[str]:
    weighted = [f"{m}@{w}" for m in ("turn", "sent") for w in VECTOR_WEIGHTS]
    return [*MODES, *weighted, FEATURE]


@dataclass
class Asked:
    category: int
    evidence: set[str]
    ids: list[str]  # the head (first 50 of the first stage)
    x: Floats  # the head's features: FEATURES then EXTRA
    returned: list[str]  # limit-20 hits
    wide: set[str]  # limit-100 hits
    plain: list[str]  # every turn by the mode's vector score alone


def extra(last: tuple[list[str], Floats, Floats, Floats], ids: list[str]) -> Floats:
    """The head's sentence and window max-sims in standard deviations over the scope."""
    all_ids, _, s, v = last
    where = {i: n for n, i in enumerate(all_ids)}
    rows = [where.get(i, -1) for i in ids]
    out = []
    for values in (s, v):
        z = (values - values.mean()) / (values.std() or 1.0)
        out.append(np.array([z[r] if r >= 0 else 0.0 for r in rows]))
    return np.stack(out, axis=1)


def ask(conv: Conversation, memory: object, tap: Tap, embedder: Embedder) -> list[Asked]:
    out = []
    for question in conv.questions:
        seen: list[tuple[list[Row], TurnHead, Floats]] = []

        def watch(rows: list[Row], head: TurnHead, seen: list = seen) -> None:  # type: ignore[type-arg]
            assert tap.last is not None
            seen.append((rows, head, extra(tap.last, [r[0] for r in rows])))

        with watched(watch):
            hits = memory.search(question.text, max_results=20)  # type: ignore[attr-defined]
        wide = {h.entry.id for h in memory.search(question.text, max_results=100)}  # type: ignore[attr-defined]
        rows, head, more = seen[0]
        vector = embed_queries(embedder, [question.text])[0]
        ids, whole = tap.last[0], tap.last[1]  # type: ignore[index]
        mine = tap.scores(vector, ids, np.asarray(whole))
        plain = [ids[n] for n in np.argsort(-mine, kind="stable")[:20]]  # the score's own first 20
        x = np.hstack([features(head), more])
        out.append(
            Asked(
                question.category,
                question.evidence,
                [r[0] for r in rows],
                x,
                [h.entry.id for h in hits],
                wide,
                plain,
            )
        )
    return out


def run_mode(
    conversations: Sequence[Conversation], mem: Memory, embedder: Embedder, name: str
) -> list[Asked]:
    """Every question of ``conversations`` asked with mode ``name`` (``feature`` asks as ``turn``)."""
    asked: list[Asked] = []
    run = uuid.uuid4().hex[:8]
    for conv in conversations:
        memory = mem.long_term(f"sv-{conv.sample_id}-{run}", embedder=embedder)
        for entry in conv.entries:
            memory.save(entry)
        if not memory.flush_embeddings(timeout=1800):
            raise SystemExit(f"vectors of {conv.sample_id} still computing")
        base, _, weight = ("turn" if name == FEATURE else name).partition("@")
        tap = Tap(MODES[base], Pieces.of(conv, embedder, sentences), Pieces.of(conv, embedder, windows))
        with tapped(tap), vector_weight(float(weight) if weight else None):
            asked += ask(conv, memory, tap, embedder)
        if tap.calls == 0:
            raise SystemExit("the wrapped cosines never ran: the bench measures nothing")
    return asked


def names(mode: str) -> tuple[str, ...]:
    return FEATURES + EXTRA if mode == FEATURE else FEATURES


def refit(asked: Sequence[Asked], mode: str) -> Table | None:
    width = len(names(mode))
    rows = [a.x[:, :width] for a in asked]
    labels = [np.array([i in a.evidence for i in a.ids]) for a in asked]
    try:
        return table(fit(rows, labels), names(mode), "score")
    except (NotConverged, ValueError) as exc:
        print(f"  {mode}: no refit ({exc})")
        return None


def ordered(a: Asked, weights: Table | None, mode: str) -> list[str]:
    """The limit-20 order: the hits as returned, or the head re-scored by ``weights``."""
    if weights is None:
        return a.returned
    cols = names(mode)
    w, m = np.array([weights[c][0] for c in cols]), np.array([weights[c][1] for c in cols])
    scores = (a.x[:, : len(cols)] - m) @ w
    return [a.ids[n] for n in np.argsort(-scores, kind="stable")][:20]


def figures(asked: Sequence[Asked], weights: Table | None, mode: str) -> dict[str, float]:
    def r(order: list[str], a: Asked, k: int) -> float:
        return len(a.evidence & set(order[:k])) / len(a.evidence)

    orders = [(a, ordered(a, weights, mode)) for a in asked]
    out = {f"plain_r{k}": float(np.mean([r(a.plain, a, k) for a in asked])) for k in (1, 3, 10)}
    out["cand50"] = float(np.mean([bool(a.evidence & set(a.ids)) for a in asked]))
    out["cand100"] = float(np.mean([bool(a.evidence & a.wide) for a in asked]))
    out["cand50f"] = float(np.mean([len(a.evidence & set(a.ids)) / len(a.evidence) for a in asked]))
    out["cand100f"] = float(np.mean([len(a.evidence & a.wide) / len(a.evidence) for a in asked]))
    # what the score alone would add to the stage's candidates: its own first 20 joined to the head
    out["union"] = float(
        np.mean([len(a.evidence & (set(a.ids) | set(a.plain))) / len(a.evidence) for a in asked])
    )
    for k in (10, 20):
        out[f"r{k}"] = float(np.mean([r(o, a, k) for a, o in orders]))
    multi = [r(o, a, 10) for a, o in orders if a.category == 1]
    out["mh_r10"] = float(np.mean(multi)) if multi else float("nan")
    return out


HEADER = (
    "mode         plainR@1 R@3  R@10  cand50 cand100 c50f  c100f 50+20f"
    " | committed R@10 R@20 MH@10 | refit R@10 R@20 MH@10"
)


def line(mode: str, c: dict[str, float], f: dict[str, float]) -> str:
    keys = ("plain_r1", "plain_r3", "plain_r10", "cand50", "cand100", "cand50f", "cand100f", "union")
    return (
        f"{mode:<12} " + " ".join(f"{c[k]:.3f}" for k in keys)
        + " | " + " ".join(f"{c[k]:.3f}" for k in ("r10", "r20", "mh_r10"))
        + " | " + " ".join(f"{f[k]:.3f}" for k in ("r10", "r20", "mh_r10"))
    )  # fmt: skip


def embedder_of(args: argparse.Namespace) -> tuple[Embedder, CachedEmbedder | None]:
    if args.smoke:
        return FakeEmbedder(dim=64), None
    found = available_embedder(args.embedder)
    if found is None:
        raise SystemExit(f"embedder {args.embedder} is not installed")
    if not args.cache_dir:
        return found, None
    cached = CachedEmbedder(found, Path(args.cache_dir))
    return cached, cached


def measure(
    part: str, convs: Sequence[Conversation], mem: Memory, embedder: Embedder, modes: Sequence[str],
    tables: dict[str, Table | None], result: dict[str, float], kept: set[str],
) -> None:  # fmt: skip
    """Print each mode's figures on ``convs``; on tune, fit ``tables``; on report, use them."""
    print(
        f"{part}: {', '.join(c.sample_id for c in convs)}, {sum(len(c.questions) for c in convs)} questions"
    )
    print(HEADER)
    for mode in modes:
        asked = run_mode(convs, mem, embedder, mode)
        if part == "tune":
            tables[mode] = refit(asked, mode)
        committed = figures(asked, None, mode)
        fitted = figures(asked, tables.get(mode), mode) if tables.get(mode) else committed
        print(line(mode, committed, fitted), flush=True)
        if mode not in kept:
            continue
        tag = mode.replace(":", "").replace(".", "").replace("@", "_w")
        for k in ("plain_r1", "plain_r10", "cand100f", "r10", "r20", "mh_r10"):
            result[f"{part}_{tag}_{k}"] = committed[k]
        for k in ("r10", "r20", "mh_r10"):
            result[f"{part}_{tag}_refit_{k}"] = fitted[k]


def run(args: argparse.Namespace) -> int:
    conversations = load(data_path(args.data))
    tune = [c for c in conversations if c.sample_id in HALVES[TUNE]]
    report = [c for c in conversations if c.sample_id in HALVES[REPORT]]
    embedder, cached = embedder_of(args)
    result: dict[str, float] = {}
    tables: dict[str, Table | None] = {}
    try:
        with memstack.open("memory://", embedder="none") as mem:
            modes = args.modes.split(",") if args.modes else all_modes()
            if args.report:  # the report half reads the tables these fit on tune
                modes += [m for m in ("turn", *CHOSEN) if m not in modes]
            if unknown := set(modes) - set(all_modes()):
                raise SystemExit(f"unknown modes {sorted(unknown)}; known: {', '.join(all_modes())}")
            kept = {"turn", *CHOSEN, *(modes if args.modes else ())}  # the modes of the RESULT line
            measure("tune", tune, mem, embedder, modes, tables, result, kept)
            if args.report:
                measure("report", report, mem, embedder, ["turn", *CHOSEN], tables, result, kept)
    finally:
        if cached is not None:
            cached.save()
    print("RESULT " + " ".join(f"{k}={v:.4f}" for k, v in result.items()) + smoke_tag(args))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    add_locomo_options(parser)
    parser.add_argument(
        "--report", action="store_true", help=f"measure {', '.join(CHOSEN)} on the report half"
    )
    parser.add_argument("--modes", default="", help="comma-separated modes on tune (default: all)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memstack-sentvec-") as tmp:
        if args.smoke:
            args.report = True
            args.data = args.data or write_smoke_data(Path(tmp))
        return run(args)


if __name__ == "__main__":
    sys.exit(main())
