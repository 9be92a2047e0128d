"""The LoCoMo development split used to choose retrieval settings, and every choice made on it.

The six development conversations are split in two fixed halves by sorted ``sample_id``, alternately:

    A = conv-26, conv-41, conv-43        B = conv-30, conv-42, conv-44

Settings are chosen on the *tune* half and reported on the other (``--split tune|report|both``;
``--reverse`` swaps the halves, for checking that a choice also holds the other way round). A setting
became a default only if it won on the tune half *and* on the report half. The four held-out
conversations were never looked at.

Each choice is recorded once below, with the half it was chosen on and the figures that decided it.
The rule on the tune half: the best recall@10 (of the hybrid mode for settings that touch vectors, of
BM25 alone otherwise); differences under 0.005 are ties, broken towards the simpler or cheaper setting;
a setting that loses more than 0.01 of recall@1 against ``plain`` is refused. Figures are
``R@1 / R@10 / R@20`` on the tune half (480 questions) unless said otherwise; ``plain`` there is BM25
0.331 / 0.616 / 0.682 and hybrid (MiniLM) 0.302 / 0.693 / 0.780. ``bench/locomo_sweep.py`` evaluates
variants of the default profile on one half (the later choices were made with it).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from _smoke import add_smoke, smoke_tag  # bench/ is on sys.path when the script runs

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


CHOICES: tuple[Choice, ...] = (
    Choice(
        "fusion normalisation and threshold",
        "min-max per retriever, cosines >= 0.3",
        "whole dev set, before the split existed",
        "7 variants compared on all 6 conversations (table in memstack.search.fusion); recorded as it "
        "happened: the figures of that choice are not a held-out measurement",
    ),
    Choice(
        "context_window, context_weight (BM25 context field)",
        "2, 0.5",
        "A",
        "windows 1, 2, 3, 4, 5, 6, 10 x weights 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0 (not every pair), "
        "BM25 alone: 2/0.5 0.330 / 0.727 / 0.804; 4/0.6 0.321 / 0.731 (a tie, wider window); 2/0.8 "
        "0.293 / 0.746 and 2/0.6 0.316 / 0.732 lose over 0.01 of R@1; hybrid 2/0.5 0.310 / 0.743 / 0.819",
    ),
    Choice(
        "fusion weights (bm25 / vector) and context_vector_weight",
        "0.6 / 0.4 and 0.5",
        "A",
        "vector weight 0.2, 0.3, 0.4 x context_vector_weight 0.5, 0.8, 1.0, plus vector weight 0.3, 0.4, "
        "0.6 and context_vector_weight 0.2, 0.3, 0.5, 0.8 alone: best 0.4 / 0.5 hybrid 0.330 / 0.769 / "
        "0.840 (next 0.764); equal weights without it 0.310 / 0.743 / 0.819",
    ),
    Choice(
        "BM25 k1, b",
        "unchanged (1.2, 0.75)",
        "A",
        "k1 0.9, 1.2, 1.6 x b 0.4, 0.6, 0.75, 0.9 with the context field: R@10 0.721-0.730, all ties; "
        "lower b raises R@1 (0.364 at 0.9 / 0.4) but the rule ranks by R@10",
    ),
    Choice(
        "RM3 (rm3 profile)",
        "3 docs, 10 terms, query weight 0.7; not a default",
        "A",
        "docs 3, 5 x terms 5, 10, 20 x query weight 0.7, 0.85: R@10 0.604-0.619 against 0.616 (ties) and "
        "R@1 down to 0.250-0.310; on short conversational turns the feedback documents drift",
    ),
    Choice(
        "Rocchio (rocchio profile)",
        "3 docs, weight 0.2; not a default",
        "A",
        "docs 2, 3, 5 x weight 0.2, 0.4, hybrid: R@10 0.685-0.694 against 0.693 (ties)",
    ),
    Choice(
        "default search profile",
        "context field (2, 0.5), context_vector_weight 0.5, fusion 0.6 / 0.4",
        "A, confirmed on B",
        "report half B (403 questions), default vs plain: BM25 R@10 0.682 vs 0.613, hybrid R@10 0.691 vs "
        "0.603, R@20 0.754 vs 0.700 -- it wins on B as on A, so it is the default",
    ),
    Choice(
        "default local embedder",
        "minilm (all-MiniLM-L6-v2 int8) stays; e5-small selectable by name",
        "A",
        "hybrid, default profile: e5-small 0.359 / 0.764 / 0.842 vs minilm 0.330 / 0.769 / 0.840 -- a "
        "tie on R@10, so the cheaper model stays (minilm: ~5 ms per query, ~10 ms per entry here; "
        "e5-small: ~16-20 ms per query, ~50-100 ms per entry). Without the context options e5-small is "
        "behind (0.340 / 0.671 / 0.736 vs 0.302 / 0.693 / 0.780). Measured afterwards on B (not used to "
        "choose): e5-small 0.355 / 0.697 / 0.775 vs minilm 0.310 / 0.691 / 0.754",
    ),
    Choice(
        "the reverse check (same rule, choosing on B; A then plays the report half)",
        "the same window and weight; vector weight 0.3 instead of 0.4",
        "B (a check only: nothing was changed after it)",
        "BM25 grid windows 1-5 x weights 0.2-1.0 on B: best passing 2/0.6 0.304 / 0.684, tied with 2/0.5 "
        "0.317 / 0.682 (plain 0.313 / 0.613). Hybrid grid (windows 2, 3, 4 x vector weights 0.2-0.5 x "
        "context_vector_weight 0, 0.5, 1.0): best 2/0.5, vector weight 0.3, context_vector_weight 1.0 "
        "0.315 / 0.706 / 0.761, tied with 0.5 (0.327 / 0.703 / 0.759); the default scores 0.310 / 0.691 "
        "/ 0.754 on B. No setting of that grid reaches R@20 0.77 on B (best 0.764), even chosen on B",
    ),
    Choice(
        "candidate depth, cosine threshold and fusion method, re-checked with the default profile",
        "unchanged: depth 100, min-max fusion, cosines >= 0.3",
        "A",
        "hybrid, the default profile of the time (now the context row) 0.330 / 0.769 / 0.840. Depth "
        "(each retriever's hits handed to fusion) 200: 0.337 / 0.768 / 0.852, 400: 0.334 / 0.770 / "
        "0.856, all: 0.331 / 0.774 / 0.856 -- ties on R@10, so the cheaper 100 stays (R@20 would gain). "
        "Threshold 0.2, 0.25, 0.35: identical figures; none: 0.330 / 0.769 / 0.839. RRF with the same "
        "0.6 / 0.4 weights: k 60 0.288 / 0.737 / 0.820 (refused: R@1 0.014 under plain's 0.302), k 20 "
        "0.299 / 0.764 / 0.837",
    ),
    Choice(
        "propagation along conversations (neighbour_weight, speaker_weight, session_weight)",
        "0.3, 0.3, 0.3 (neighbour window 1, depth 100), hybrid only",
        "A",
        "hybrid, over the context row (0.330 / 0.769 / 0.840). Alone -- neighbours 0.1, 0.2, 0.3, 0.5: "
        "0.329 / 0.772 / 0.851, 0.329 / 0.777 / 0.850, 0.326 / 0.780 / 0.848, 0.324 / 0.778 / 0.843; "
        "sessions 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0: R@10 0.776, 0.776, 0.784, 0.785, 0.785, 0.787, "
        "0.777 (0.3: 0.330 / 0.784 / 0.849); speakers 0.05, 0.1, 0.2, 0.3, 0.5, 1.0: 0.343 / 0.774 / "
        "0.847, 0.359 / 0.778 / 0.846, 0.376 / 0.791 / 0.847, 0.379 / 0.796 / 0.848, 0.381 / 0.794 / "
        "0.849, 0.381 / 0.781 / 0.829. Pairs: session 0.3 + speaker 0.2 / 0.3 0.376 / 0.799 / 0.856 and "
        "0.379 / 0.799 / 0.856, session 0.5 + speaker 0.3 0.379 / 0.802 / 0.857, speaker 0.2 + neighbour "
        "0.2 0.389 / 0.801 / 0.858, session 0.3 + neighbour 0.2 0.329 / 0.789 / 0.843. All three, "
        "speaker 0.2, 0.3 x session 0.2, 0.3, 0.5 x neighbour 0.1, 0.2, 0.3: R@10 0.803-0.814, best "
        "0.3 / 0.3 / 0.3 at 0.390 / 0.814 / 0.860 (no pair reaches 0.809, so all three are needed). "
        "With it, depth 200 0.391 / 0.815 / 0.871 and 400 0.394 / 0.815 / 0.874 tie (depth stays 100); "
        "neighbour window 2 0.383 / 0.803 / 0.856 loses. BM25-only searches were not given the option "
        "then (see the next choices)",
    ),
    Choice(
        "default search profile, with propagation",
        "context field (2, 0.5), context_vector_weight 0.5, fusion 0.6 / 0.4, propagation 0.3 / 0.3 / "
        "0.3; the previous default kept as the context row",
        "A, confirmed on B",
        "report half B, measured once after the choice above (bench/locomo_sweep.py --split report): "
        "hybrid 0.360 / 0.728 / 0.794 against the context row's 0.310 / 0.691 / 0.754 -- it wins on B as "
        "on A, so it is the default. BM25-only figures are unchanged (R@10 0.682 on B). Cost: about "
        "0.5-0.9 ms more per hybrid search on LoCoMo scopes (a pass over ~200 fused candidates and their "
        "neighbours, independent of scope size); at 100,000 entries that all carry provenance "
        "(search_speed.py --conversations) 1.7-2.7 ms, the whole search p50 24-31 ms against 22-24 ms "
        "for the context row and 17 ms for plain on a loaded machine -- hybrid_p50_ms (<= 20, corpus "
        "without provenance) does not see either conversation option",
    ),
    Choice(
        "propagation in BM25-alone searches",
        "on: BM25 alone is fused as a hybrid search whose vectors found nothing (0.6 x min-max BM25), "
        "then propagated with the profile's weights",
        "A, confirmed on B",
        "BM25 alone, default profile: without propagation (the context row) 0.330 / 0.727 / 0.804, with "
        "it 0.387 / 0.789 / 0.844. Alternatives tried on A first (a script over the same sweep, not "
        "kept): BM25 scores divided by the best one, weights neighbour 0.1-0.5 x session 0.2-0.5 x "
        "speaker 0.2-1.0 -- the profile's own 0.3 / 0.3 / 0.3 0.382 / 0.781 / 0.843, best neighbour 0.2, "
        "session 0.3, speaker 0.5 0.392 / 0.792 / 0.846 (a tie with the fused way, which needs no "
        "weights of its own); min-max with the same grid, best 0.792 too. Then once on B (--split "
        "report --bm25): 0.391 / 0.722 / 0.784 against 0.317 / 0.682 / 0.740 -- it wins on both halves. "
        "BM25-alone scores of a profile that propagates, on a scope holding conversation turns, are "
        "then fused scores (min_score applies to them, as in hybrid searches); other scopes and profiles "
        "keep raw BM25 scores",
    ),
    Choice(
        "fusion of conversation turns searched with vectors",
        "evidence-turns (0.7 BM25 / 0.3 vector, shift 1.5) and context_vector_weight 0",
        "A, checked once on B",
        "bench/recall_suite.py --part tune --sets locomo-turns, R@1 / R@3 / R@10 / R@20: the evidence "
        "fusion 0.359 / 0.602 / 0.799 / 0.854 lost to BM25 alone (0.389 / 0.624 / 0.788 / 0.845) at R@1 "
        "and R@3; no neighbour cosines 0.361 / 0.614 / 0.811 / 0.862; then 0.7 / 0.3 0.390 / 0.641 / "
        "0.812 / 0.864, the first weights never losing to BM25 alone (0.6 / 0.4, 0.65 / 0.35, 0.75 / "
        "0.25, 0.8 / 0.2 and shifts 2 and 2.5 each lose at R@1). On B: 0.356 / 0.557 / 0.724 / 0.790 -> "
        "0.373 / 0.588 / 0.728 / 0.797 (with the relative dates below); BM25 alone there 0.386 / 0.597 / "
        "0.738 / 0.801 still leads by about 0.01",
    ),
    Choice(
        "relative dates of a turn in its context field",
        "on",
        "A, checked once on B",
        "tune 0.390 / 0.641 / 0.812 / 0.864 -> 0.392 / 0.647 / 0.814 / 0.868; report R@10 0.726 -> 0.727",
    ),
    Choice(
        "entity one-hop expansion, question splitting, session spread",
        "none (dropped)",
        "A (the spread also checked on B)",
        "entity hop (rare capitalised words, numbers and dates of the 3 best hits searched again, weight "
        "0.15-0.3): R@10 0.808-0.813 against 0.811, R@1 lower; splitting: 4 of 480 questions split; "
        "session spread of list questions (x 0.95 per repeat of a session): tune R@10 0.814 -> 0.822, "
        "multi-hop 0.474 -> 0.512, but report R@10 0.728 -> 0.727, multi-hop 0.372 -> 0.368",
    ),
)


def main(argv: list[str] | None = None) -> int:
    """Print the halves and every recorded choice (``--smoke`` prints the same: it is a record)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    add_smoke(parser)
    args = parser.parse_args(argv)
    for name, samples in HALVES.items():
        role = "tune" if name == TUNE else "report" if name == REPORT else "-"
        print(f"half {name} ({role}): {', '.join(samples)}")
    for choice in CHOICES:
        print(f"\n{choice.setting}: {choice.value}\n  chosen on {choice.chosen_on}\n  {choice.evidence}")
    print(f"RESULT choices={len(CHOICES)} halves={len(HALVES)}{smoke_tag(args)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
