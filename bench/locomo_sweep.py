"""Compare variants of a search profile on one half of the LoCoMo development split (for choosing).

    python bench/locomo_sweep.py [--split tune|report] [--embedder minilm|e5-small] [--bm25]
                                 VARIANT [VARIANT ...]
    python bench/locomo_sweep.py --smoke [VARIANT ...]

A VARIANT is ``name:field=value,field=value`` over the ``default`` search profile's fields
(:class:`memstack.search.SearchProfile`), plus ``fusion.field=value`` for fields of its fusion profile
(:class:`memstack.search.FusionProfile`), e.g. ``d300:fusion_depth=300`` or
``t25:fusion.min_similarity=0.25``; ``default`` alone is the default profile. Each variant is registered
under a temporary name for this process only and evaluated in hybrid mode (also in BM25 mode with
``--bm25``) on the chosen half, through :func:`locomo_recall.evaluate`, so the figures are the bench's.
The halves and the rule are in ``bench/locomo_choices.py``: choose on ``tune``; run ``report`` once,
after choosing. ``--smoke`` evaluates ``default`` (or the variants given) with ``--bm25`` on a tiny
made-up conversation set in LoCoMo's format (``bench/_locomo_smoke.py``; no cache); its figures mean
nothing. The last line is ``RESULT variants=… hybrid_r10=… …`` (the first variant's figures).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import memstack
from _embed_cache import CachedEmbedder  # bench/ is on sys.path when the script runs
from _locomo_smoke import write_smoke_data  # bench/ is on sys.path when the script runs
from _smoke import add_smoke, smoke_tag  # bench/ is on sys.path when the script runs
from locomo_choices import HALVES, REPORT, TUNE  # bench/ is on sys.path when the script runs
from locomo_recall import Modes, data_path, evaluate, load, pooled
from memstack.search import FUSION_PROFILES
from memstack.search.embedders import EMBEDDERS, available_embedder
from memstack.search.retrieval import SEARCH_PROFILES


def _value(text: str, current: object) -> object:
    if isinstance(current, bool):
        return text.lower() in ("1", "true", "yes")
    if isinstance(current, int):
        return int(text)
    if isinstance(current, float):
        return float(text)
    return text


def register(spec: str) -> str:
    """Register the variant ``spec`` and return the search profile name it is evaluated under."""
    name, _, body = spec.partition(":")
    base = SEARCH_PROFILES["default"]
    search: dict[str, object] = {}
    fusion: dict[str, object] = {}
    for item in filter(None, body.split(",")):
        key, _, text = item.partition("=")
        if key.startswith("fusion."):
            field = key.removeprefix("fusion.")
            fusion[field] = _value(text, getattr(FUSION_PROFILES[base.fusion], field))
        else:
            search[key] = _value(text, getattr(base, key))
    profile_name = f"sweep-{name}"
    if fusion:
        fusion_name = f"sweep-{name}"
        FUSION_PROFILES[fusion_name] = replace(FUSION_PROFILES[base.fusion], name=fusion_name, **fusion)  # type: ignore[arg-type]
        search["fusion"] = fusion_name
    SEARCH_PROFILES[profile_name] = replace(base, name=profile_name, **search)  # type: ignore[arg-type]
    return profile_name


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("variants", nargs="*")
    parser.add_argument("--split", choices=("tune", "report"), default="tune")
    parser.add_argument("--embedder", choices=sorted(EMBEDDERS), default="minilm")
    parser.add_argument("--bm25", action="store_true", help="also evaluate each variant with BM25 alone")
    parser.add_argument("--cache-dir", default="/tmp/memstack-locomo-cache")
    parser.add_argument("--data", type=Path, default=None)
    add_smoke(parser)
    args = parser.parse_args(argv)
    if not args.variants and not args.smoke:
        parser.error("give at least one VARIANT (e.g. default)")
    with tempfile.TemporaryDirectory(prefix="memstack-locomo-") as tmp:
        if args.smoke:
            args.variants, args.bm25, args.cache_dir = args.variants or ["default"], True, ""
            args.data = args.data or write_smoke_data(Path(tmp))
        return run(args)


def run(args: argparse.Namespace) -> int:
    data = data_path(args.data)
    half = HALVES[TUNE if args.split == "tune" else REPORT]
    conversations = [c for c in load(data) if c.sample_id in half]
    inner = available_embedder(args.embedder)
    if inner is None:
        print(f"embedder {args.embedder} is not installed", file=sys.stderr)
        return 1
    embedder = CachedEmbedder(inner, Path(args.cache_dir)) if args.cache_dir else inner
    names = {spec: register(spec) for spec in args.variants}
    modes: Modes = {}
    for spec, profile in names.items():
        label = spec.partition(":")[0]
        modes[f"hybrid:{label}"] = lambda m, s, p=profile: m.long_term(s, profile=p, embedder=embedder)
        if args.bm25:
            modes[f"bm25:{label}"] = lambda m, s, p=profile: m.long_term(s, profile=p)
    try:
        with memstack.open("memory://", embedder="none") as mem:  # each mode names its own embedder
            per_conv, _ = evaluate(conversations, mem, modes, embedder)
    finally:
        if isinstance(embedder, CachedEmbedder):
            embedder.save()
    asked = sum(len(c.questions) for c in conversations)
    print(f"half {args.split} ({', '.join(half)}; {asked} questions), embedder {args.embedder}")
    for spec in args.variants:
        label = spec.partition(":")[0]
        for kind in ("hybrid", "bm25") if args.bm25 else ("hybrid",):
            scores = pooled(per_conv[f"{kind}:{label}"], half)
            ms = 1000 * scores.seconds / max(1, asked)
            figures = " / ".join(f"{scores.recall(k):.3f}" for k in (1, 10, 20))
            print(f"{kind + ':' + label:<28} R@1/10/20 {figures}  ({ms:.2f} ms)  {spec}")
    first = args.variants[0].partition(":")[0]
    line = f"RESULT variants={len(args.variants)} questions={asked}"
    for kind in ("hybrid", "bm25") if args.bm25 else ("hybrid",):
        scores = pooled(per_conv[f"{kind}:{first}"], half)
        line += f" {kind}_r10={scores.recall(10):.4f} {kind}_ms={1000 * scores.seconds / max(1, asked):.4f}"
    print(line + smoke_tag(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
