"""Fit the turns' second-stage table (``memstack.search.turn_rerank.WEIGHTS``) on the tune half of LoCoMo.

The stage re-scores the first :data:`~memstack.search.turn_rerank.DEPTH` turns of a search over
conversation turns with a linear model over :data:`~memstack.search.turn_rerank.FEATURES`. This bench
makes its table from data, reproducibly: every turn of each tune conversation is saved into a fresh
scope (as ``bench/locomo_recall.py`` saves them), every question of categories 1-4 is asked with the
``default`` search, and the head the stage receives, before it is re-scored, is taken from the
library itself (``memstack.tiers.longterm.turn_head.watched``): the features are computed by
``memstack.search.turn_rerank.features``, the code every search runs. The head does not depend on the
stage's weights (it is the fused, propagated order), so the fit does not depend on the table it
replaces. The fit is a listwise logistic regression (``bench/_listwise.py``): a softmax over each
question's candidates against its evidence turns. The table is printed in the form of ``WEIGHTS``,
ready to paste.

    python bench/fit_turn_rerank.py [--check] [--report] [--converged] [--embedder minilm|e5-small]
                                    [--data PATH] [--cache-dir DIR] [--smoke]

By default the fit is made as the committed table was: on the heads of searches asked with limit
:data:`FIT_LIMIT`, by ``_listwise.DESCENT_STEPS`` gradient steps. ``--converged`` fits instead on
the heads a search with limit 20 re-scores (those every figure here is measured on), to convergence
(Newton's method); see ``_listwise``'s docstring for why the two differ.

``--check`` compares the fitted table with the committed one: it prints the largest difference of a
weight and of a mean, and exits 1 when one exceeds ``_listwise.TOLERANCE``. Both tables are then
measured on the tune half (R@1 R@5 R@10 R@20 and multi-hop R@10 of the limit-20 searches, each head
re-ordered by ``memstack.search.turn_rerank.rescored``); the committed table's order is also compared
with the order the searches returned (they ran with it), which must be the same for every question.
``--report`` measures both tables on the report half too (its questions are asked only after the
fit, and never reach it). Only the tune half's questions are read for the fit; the halves are
``bench/locomo_choices.py``'s.

The data and the embedding cache are those of ``bench/locomo_recall.py`` (``--data`` or
``$MEMSTACK_LOCOMO``; ``--cache-dir``, default ``/tmp/memstack-locomo-cache``, returns exactly what the
model computed). The last line is ``RESULT questions=… steps=… weight_difference=… mean_difference=…
reproduced=… same_order=… committed_r10=… committed_r20=… refit_r10=… refit_r20=…`` (``report_…``
with ``--report``). ``--smoke`` fits on the made-up set of ``bench/_locomo_smoke.py`` with a
deterministic fake embedder (no model, no LoCoMo copy) and runs ``--check`` and ``--report``, ignoring
the comparison's verdict; its figures mean nothing.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

import memstack
from _embed_cache import CachedEmbedder  # bench/ is on sys.path when the script runs
from _listwise import TOLERANCE, NotConverged, descend, fit, largest_difference, table, table_text
from _locomo_smoke import write_smoke_data
from _smoke import smoke_tag
from locomo_choices import HALVES, REPORT, TUNE
from locomo_recall import CATEGORIES, KS, Conversation, add_locomo_options, data_path, load
from memstack import Memory
from memstack.search.embedders import Embedder, FakeEmbedder, available_embedder
from memstack.search.fusion import Row
from memstack.search.turn_rerank import FEATURES, WEIGHTS, TurnHead, features, rescored
from memstack.tiers.longterm.turn_head import watched

Table = Mapping[str, tuple[float, float]]
LIMIT = max(KS)
"""The figures are of searches with this limit, as ``bench/locomo_recall.py`` asks them; their heads
are what a search with a limit up to 20 re-scores (the fused depth is then 100, and the stage takes
the first 50 after propagation). ``--converged`` fits on these heads."""
FIT_LIMIT = 100
"""The limit of the searches whose heads the committed table was fitted on: a fused depth of 500, so
their propagated first 50 differ from a limit-20 search's (fused scores average 0.79 against 0.77)."""


@dataclass
class Asked:
    """One question, the head its search handed the stage, and what the search returned."""

    category: int
    evidence: set[str]
    ids: list[str]  # the head's turns, in the fused (propagated) order
    head: TurnHead
    returned: list[str]  # the search's hits, re-ordered by the committed table

    @property
    def labels(self) -> npt.NDArray[np.bool_]:
        return np.array([i in self.evidence for i in self.ids], dtype=np.bool_)

    def ranked(self, weights: Table) -> list[str]:
        """The head re-ordered by ``weights`` (ties keep the fused order), as a search orders it."""
        order = np.argsort(-rescored(self.head, weights), kind="stable").tolist()
        return [self.ids[n] for n in order]


def ask(
    conversations: Sequence[Conversation], mem: Memory, embedder: Embedder, limits: Sequence[int] = (LIMIT,)
) -> dict[int, list[Asked]]:
    """Fill a fresh scope per conversation, ask its questions with each limit, keep each search's head."""
    asked: dict[int, list[Asked]] = {limit: [] for limit in limits}
    run = uuid.uuid4().hex[:8]
    for conv in conversations:
        scope = f"fit-{conv.sample_id}-{run}"
        memory = mem.long_term(scope, embedder=embedder)  # the default search profile
        for entry in conv.entries:
            memory.save(entry)
        if not memory.flush_embeddings(timeout=1800):
            raise SystemExit(f"vectors of {conv.sample_id} still computing after 1800 s")
        for question, limit in itertools.product(conv.questions, limits):
            seen: list[tuple[list[Row], TurnHead]] = []
            with watched(lambda rows, head, seen=seen: seen.append((rows, head))):
                hits = memory.search(question.text, max_results=limit)
            if len(seen) != 1:  # the stage runs once per search of turns with vectors
                raise SystemExit(f"{conv.sample_id}: {len(seen)} heads for {question.text!r}")
            rows, head = seen[0]
            ids, returned = [row[0] for row in rows], [h.entry.id for h in hits]
            asked[limit].append(Asked(question.category, question.evidence, ids, head, returned))
    return asked


def recall(asked: Sequence[Asked], weights: Table) -> dict[str, float]:
    """R@k over the questions and multi-hop R@10, each head ordered by ``weights``."""
    out: dict[str, float] = {}
    orders = [(a, a.ranked(weights)) for a in asked]
    for k in KS:
        out[f"r{k}"] = float(np.mean([len(a.evidence & set(o[:k])) / len(a.evidence) for a, o in orders]))
    multi = [len(a.evidence & set(o[:10])) / len(a.evidence) for a, o in orders if a.category == 1]
    out["multi_hop_r10"] = float(np.mean(multi)) if multi else float("nan")
    return out


def show(part: str, asked: Sequence[Asked], tables: Mapping[str, Table]) -> dict[str, dict[str, float]]:
    """Print and return each table's recall on ``asked``."""
    print(f"{part}: {len(asked)} questions; " + " ".join(f"R@{k}" for k in KS) + f" {CATEGORIES[1]} R@10")
    figures = {}
    for name, weights in tables.items():
        figures[name] = found = recall(asked, weights)
        print(f"  {name:<10} " + " ".join(f"{v:.3f}" for v in found.values()))
    return figures


def same_order(asked: Sequence[Asked]) -> int:
    """How many questions' hits are the committed table's order of their head: the searches ran with
    it, so every one must be (otherwise this bench does not measure what a search does)."""
    return sum(a.ranked(WEIGHTS)[: len(a.returned)] == a.returned for a in asked)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    add_locomo_options(parser)
    parser.add_argument("--check", action="store_true", help="compare with the committed WEIGHTS")
    parser.add_argument("--report", action="store_true", help="also measure both tables on the report half")
    parser.add_argument(
        "--converged",
        action="store_true",
        help=f"fit to convergence on the limit-{LIMIT} heads (default: limit-{FIT_LIMIT} heads, fixed steps)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memstack-fit-") as tmp:
        if args.smoke:
            args.check = args.report = True
            args.data = args.data or write_smoke_data(Path(tmp))
        return run(args)


def embedder_of(args: argparse.Namespace) -> tuple[Embedder, CachedEmbedder | None]:
    if args.smoke:
        return FakeEmbedder(dim=64), None
    found = available_embedder(args.embedder)
    if found is None:
        raise SystemExit(f"embedder {args.embedder} is not installed: the stage runs only with vectors")
    print(f"embedder {args.embedder} = {found.model_id} (dim {found.dim})")
    if not args.cache_dir:
        return found, None
    cached = CachedEmbedder(found, Path(args.cache_dir))
    return cached, cached


def run(args: argparse.Namespace) -> int:
    data = data_path(args.data)
    conversations = load(data)
    tune = [c for c in conversations if c.sample_id in HALVES[TUNE]]
    report = [c for c in conversations if c.sample_id in HALVES[REPORT]] if args.report else []
    print(f"LoCoMo {data.name}: tune = half {TUNE} {', '.join(c.sample_id for c in tune)}", end="")
    print(f"; report = half {REPORT} {', '.join(c.sample_id for c in report)}" if report else "")
    embedder, cached = embedder_of(args)
    started = time.perf_counter()
    limits = (LIMIT,) if args.converged else (LIMIT, FIT_LIMIT)
    try:
        with memstack.open("memory://", embedder="none") as mem:  # the scopes name their embedder
            heads = ask(tune, mem, embedder, limits)
            asked, fitted_on = heads[LIMIT], heads[limits[-1]]
            rows, labels = [features(a.head) for a in fitted_on], [a.labels for a in fitted_on]
            fitted = fit(rows, labels) if args.converged else descend(rows, labels)
            held_out = ask(report, mem, embedder)[LIMIT]  # asked after the fit: nothing of it reaches it
    except NotConverged as exc:
        raise SystemExit(str(exc)) from exc
    finally:
        if cached is not None:
            cached.save()
    seconds = time.perf_counter() - started
    how = f"converged in {fitted.steps} Newton steps" if args.converged else f"{fitted.steps} gradient steps"
    print(f"{len(asked)} tune questions asked and {len(held_out)} report questions, in {seconds:.1f} s;")
    print(f"fitted on the limit-{limits[-1]} heads of {fitted.questions} tune questions with evidence in")
    print(f"  their head ({how})")
    try:
        refit = table(fitted, FEATURES, "score")
    except ValueError as exc:
        print(f"the fit cannot be written as a table: {exc}")
        return 0 if args.smoke else 1
    print(table_text(refit))
    return compare(args, asked, held_out, refit, fitted.steps)


def compare(
    args: argparse.Namespace, asked: Sequence[Asked], held_out: Sequence[Asked], refit: Table, steps: int
) -> int:
    """The ``--check`` and ``--report`` figures, and the ``RESULT`` line."""
    tables = {"committed": WEIGHTS, "refit": refit}
    differences = largest_difference(WEIGHTS, refit)
    difference = max(d for d, _ in differences.values())
    reproduced = difference <= TOLERANCE
    figures: dict[str, int | float] = {"questions": len(asked), "steps": steps}
    status = 0
    if args.check:
        same = same_order(asked)
        verdict = "reproduced" if reproduced else "NOT reproduced"
        print(f"committed vs refit, the largest difference (tolerance {TOLERANCE}):")
        for part, (d, name) in differences.items():
            print(f"  of a {part}: {d:.4f}" + (f" ({name})" if d else ""))
        print(f"  the committed table is {verdict}")
        print(f"searches whose hits are the committed table's order of their head: {same} of {len(asked)}")
        tune = show("tune", asked, tables)
        figures |= {f"{part}_difference": d for part, (d, _) in differences.items()}
        figures |= {"reproduced": int(reproduced), "same_order": same}
        for name in tables:
            figures |= {f"{name}_r10": tune[name]["r10"], f"{name}_r20": tune[name]["r20"]}
        status = 0 if (reproduced and same == len(asked)) or args.smoke else 1
    if args.report:
        held = show("report", held_out, tables)
        for name in tables:
            figures |= {f"report_{name}_r10": held[name]["r10"], f"report_{name}_r20": held[name]["r20"]}
    pairs = (f"{k}={v}" if isinstance(v, int) else f"{k}={v:.4f}" for k, v in figures.items())
    print("RESULT " + " ".join(pairs) + smoke_tag(args))
    return status


if __name__ == "__main__":
    sys.exit(main())
