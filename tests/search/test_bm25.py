"""Bm25Index: RockBot's reference scores, the default profile against a brute-force reference, updates."""

from __future__ import annotations

import itertools
import math
import random
import threading
from collections import Counter

import pytest

from memstack.foundation.errors import InvalidConfiguration, InvalidInput
from memstack.search import PROFILES, Bm25Index, Bm25Profile, tokenize
from memstack.search import bm25 as bm25_module

CONCERTS = ["I went to a concert last summer", "concert concert concert — huge music fan, loves concerts"]


def _index(texts: list[str], profile: str = "default") -> Bm25Index:
    idx = Bm25Index(profile)
    for i, text in enumerate(texts):
        idx.add(str(i), text)
    return idx


def _rounded(hits: list[tuple[str, float]]) -> list[tuple[str, float]]:
    return [(doc, round(score, 4)) for doc, score in hits]


# -- RockBot's formula (rockbot profile) ------------------------------------------------------------


def test_rockbot_reference_scores_concert_music() -> None:
    assert _rounded(_index(CONCERTS, "rockbot").search("concert music")) == [("1", 0.8832), ("0", 0.2145)]


def test_rockbot_reference_score_single_doc() -> None:
    assert _rounded(_index(["only one doc about cats"], "rockbot").search("cats")) == [("0", 0.2877)]


def test_rockbot_phrase_quirk_substring_beats_tokens() -> None:
    hits = _index(["brock music rules", "rock and music"], "rockbot").search("rock music")
    assert _rounded(hits) == [("0", 1.5686), ("1", 0.8755)]


def test_rockbot_stats_over_candidates_only() -> None:
    idx = _index(["only one doc about cats", "dogs are nice", "cats and dogs"], "rockbot")
    # With the candidate set reduced to one document, N = 1 and df = 1 as in the one-doc corpus.
    assert _rounded(idx.search("cats", candidates=["0"])) == [("0", 0.2877)]
    assert idx.search("cats", candidates={"0"})[0][1] != idx.search("cats")[0][1]


def test_rockbot_phrase_counts_are_case_insensitive_and_non_overlapping() -> None:
    idx = _index(["Rock Music and ROCK MUSIC", "rock music"], "rockbot")
    lone = _index(["rock music"], "rockbot").search("rock music")[0][1]
    assert idx.search("rock music")[0][0] == "0"
    assert lone > 0


def test_rockbot_query_terms_are_distinct() -> None:
    idx = _index(CONCERTS, "rockbot")
    assert idx.search("concert concert music") != idx.search("concert music")  # phrase "concert concert"
    assert _rounded(idx.search("music music")) == _rounded(idx.search("music"))


def test_rockbot_no_query_tokens_gives_nothing() -> None:
    idx = _index(CONCERTS, "rockbot")
    assert idx.search("") == []
    assert idx.search("a an to") == []


def test_stable_ties_in_insertion_order() -> None:
    idx = _index(["same text here", "same text here", "same text here"], "rockbot")
    assert [d for d, _ in idx.search("text")] == ["0", "1", "2"]
    idx.add("0", "same text here")  # re-adding keeps the first-insertion position
    assert [d for d, _ in idx.search("text")] == ["0", "1", "2"]
    assert [d for d, _ in idx.search("text", k=2)] == ["0", "1"]


# -- the default profile against a brute-force reference -----------------------------------------------


def _reference(docs: dict[str, str], order: list[str], query: str, k1: float = 1.2, b: float = 0.75):
    toks = {d: tokenize(t) for d, t in docs.items()}
    n = len(docs)
    avgdl = sum(len(t) for t in toks.values()) / n if n else 1.0
    avgdl = avgdl or 1.0
    out = []
    for d in order:
        counts = Counter(toks[d])
        score = 0.0
        for term in dict.fromkeys(tokenize(query)):
            df = sum(1 for t in toks.values() if term in t)
            f = counts.get(term, 0)
            if f:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(toks[d]) / avgdl))
        if score > 0:
            out.append((d, score))
    out.sort(key=lambda p: -p[1])
    return out


WORDS = [
    "apple",
    "banana",
    "cherry",
    "date",
    "elder",
    "fig",
    "grape",
    "honeydew",
    "kiwi",
    "lemon",
    "mango",
    "nectarine",
    "olive",
]


def _random_text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS[: rng.randint(3, len(WORDS))]) for _ in range(rng.randint(0, 12)))


@pytest.mark.parametrize("seed", range(8))
def test_default_matches_brute_force_through_adds_updates_removes(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bm25_module, "_MIN_COMPACT", 5)  # exercise compaction on small corpora
    rng = random.Random(seed)
    idx = Bm25Index()
    docs: dict[str, str] = {}
    order: list[str] = []
    for _step in range(300):
        op = rng.random()
        doc_id = f"d{rng.randint(0, 40)}"
        if op < 0.6:
            text = _random_text(rng)
            idx.add(doc_id, text)
            if doc_id not in docs:
                order.append(doc_id)
            docs[doc_id] = text
        else:
            assert idx.remove(doc_id) == (doc_id in docs)
            if doc_id in docs:
                del docs[doc_id]
                order.remove(doc_id)
        if _step % 10 == 0:
            query = " ".join(rng.sample(WORDS, rng.randint(1, 4)))
            got = idx.search(query)
            want = _reference(docs, order, query)
            assert [d for d, _ in got] == [d for d, _ in want]
            assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9)
            k = rng.randint(1, 5)
            assert idx.search(query, k=k) == got[:k]
            cands = set(rng.sample(order, min(len(order), 5)))
            assert idx.search(query, candidates=cands) == [p for p in got if p[0] in cands]
    assert len(idx) == len(docs)
    assert idx.ids() == order


def test_default_profile_values() -> None:
    prof = PROFILES["default"]
    assert (prof.k1, prof.b, prof.tokenizer, prof.stats) == (1.2, 0.75, "default", "index")
    assert Bm25Index().profile is prof


def test_update_replaces_text() -> None:
    idx = Bm25Index()
    idx.add("a", "jazz concert")
    idx.add("a", "rock festival")
    assert idx.search("jazz") == []
    assert [d for d, _ in idx.search("festival")] == ["a"]
    assert len(idx) == 1


def test_remove_and_contains() -> None:
    idx = _index(CONCERTS)
    assert "0" in idx
    assert idx.remove("0") is True
    assert "0" not in idx
    assert idx.remove("0") is False
    assert idx.remove("never") is False
    assert [d for d, _ in idx.search("concert")] == ["1"]


def test_remove_everything_then_reuse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm25_module, "_MIN_COMPACT", 1)
    idx = _index(CONCERTS)
    idx.remove("0")
    idx.remove("1")
    assert len(idx) == 0
    assert idx.search("concert") == []
    idx.add("z", "concert")
    assert [d for d, _ in idx.search("concert")] == ["z"]


def test_candidates_unknown_ids_are_ignored() -> None:
    idx = _index(CONCERTS)
    assert idx.search("concert", candidates=["nope"]) == []
    assert [d for d, _ in idx.search("concert", candidates=["nope", "1"])] == ["1"]
    assert idx.search("concert", candidates=[]) == []


def test_default_candidates_do_not_change_scores() -> None:
    idx = _index(CONCERTS)
    full = dict(idx.search("concert music"))
    assert dict(idx.search("concert music", candidates=["0"])) == {"0": full["0"]}


def test_bad_arguments() -> None:
    idx = Bm25Index()
    with pytest.raises(InvalidInput, match="doc_id"):
        idx.add(1, "x")  # type: ignore[arg-type]  # the point of the test
    with pytest.raises(InvalidInput, match="text"):
        idx.add("a", None)  # type: ignore[arg-type]  # the point of the test
    with pytest.raises(InvalidInput, match="k=-1"):
        idx.search("x", k=-1)
    with pytest.raises(InvalidConfiguration, match="bogus"):
        Bm25Index("bogus")
    with pytest.raises(InvalidConfiguration, match="b=2"):
        Bm25Profile(name="x", tokenizer="default", k1=1.0, b=2)
    assert len(idx) == 0
    assert idx.search("x", k=0) == []


def test_custom_profile_object() -> None:
    prof = Bm25Profile(name="strict", tokenizer="rockbot", k1=1.5, b=0.0)
    idx = Bm25Index(prof)
    idx.add("a", "music music")
    idx.add("b", "music and many more words here")
    hits = idx.search("music")
    assert [d for d, _ in hits] == ["a", "b"]


def test_concurrent_adds_and_searches() -> None:
    idx = Bm25Index()
    errors: list[BaseException] = []

    def writer(base: int) -> None:
        try:
            for i in range(300):
                idx.add(f"{base}-{i % 50}", f"topic{i % 7} shared words {i}")
                if i % 5 == 0:
                    idx.remove(f"{base}-{(i + 3) % 50}")
        except BaseException as exc:  # collected and re-raised in the main thread
            errors.append(exc)

    def reader() -> None:
        try:
            for _ in range(200):
                for doc, score in idx.search("shared topic3", k=5):
                    assert score > 0
                    assert doc
        except BaseException as exc:  # collected and re-raised in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    threads.append(threading.Thread(target=reader))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    ids = idx.ids()
    assert len(ids) == len(idx) == len(set(ids))


def test_add_while_a_posting_view_is_alive() -> None:
    idx = Bm25Index()
    idx.add("a", "jazz")
    held = idx._postings.slots[:1]  # a view that outlived a search (e.g. kept by a traceback)
    for n in range(100):  # the arrays grow (and blocks move) under the view
        idx.add(f"b{n}", "jazz")
    assert [d for d, _ in idx.search("jazz")] == ["a", *(f"b{n}" for n in range(100))]
    assert held.tolist() == [0]


def _rockbot_reference(texts: list[tuple[str, str]], query: str) -> list[tuple[str, float]]:
    """RockBot's Bm25Ranker formula written out directly over an ordered candidate list."""
    k1, b = 1.5, 0.75
    toks = [tokenize(t, "rockbot") for _, t in texts]
    q = tokenize(query, "rockbot")
    terms = list(dict.fromkeys(q))
    phrases = list(dict.fromkeys(f"{x} {y}" for x, y in itertools.pairwise(q)))
    n = len(texts)
    avgdl = (sum(map(len, toks)) / n if n else 0) or 1.0
    out = []
    for (doc_id, text), tk in zip(texts, toks, strict=True):
        norm = k1 * (1 - b + b * len(tk) / avgdl)
        score = 0.0
        for term in terms:
            df = sum(term in other for other in toks)
            f = tk.count(term)
            if f:
                score += math.log((n - df + 0.5) / (df + 0.5) + 1) * f * (k1 + 1) / (f + norm)
        for phrase in phrases:
            df = sum(phrase in other.lower() for _, other in texts)
            f = text.lower().count(phrase)
            if f:
                score += 2 * math.log((n - df + 0.5) / (df + 0.5) + 1) * f * (k1 + 1) / (f + norm)
        if score > 0:
            out.append((doc_id, score))
    out.sort(key=lambda p: -p[1])
    return out


@pytest.mark.parametrize("seed", range(4))
def test_rockbot_matches_reference_through_updates_and_candidates(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bm25_module, "_MIN_COMPACT", 5)
    rng = random.Random(seed)
    idx = Bm25Index("rockbot")
    docs: dict[str, str] = {}
    for step in range(200):
        doc_id = f"d{rng.randint(0, 25)}"
        if rng.random() < 0.65:
            text = _random_text(rng) + rng.choice(["", " Apple Banana", " apple-banana cherry"])
            idx.add(doc_id, text)
            docs[doc_id] = text
        else:
            idx.remove(doc_id)
            docs.pop(doc_id, None)
        if step % 8 == 0:
            query = " ".join(rng.sample(WORDS, rng.randint(1, 4)))
            if step % 16 == 0:
                query = "APPLE banana " + query  # a phrase the texts hold, in any case
            order = idx.ids()
            assert sorted(order) == sorted(docs)
            cands = [d for d in order if rng.random() < 0.5]
            for subset in (order, cands):
                got = idx.search(query, candidates=None if subset is order else set(subset))
                want = _rockbot_reference([(d, docs[d]) for d in subset], query)
                assert [d for d, _ in got] == [d for d, _ in want]
                assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9)
