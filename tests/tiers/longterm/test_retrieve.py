"""Propagation options of a search profile, through LongTermMemory: neighbours, sessions and speakers
re-rank the fused list of entries with conversation provenance; BM25 alone ranks as a hybrid search
whose vectors found nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstack import Memory
from memstack.search import FUSION_PROFILES
from memstack.search.embedders import FakeEmbedder
from memstack.search.fusion import FusionProfile
from memstack.search.retrieval import SEARCH_PROFILES, SearchProfile
from memstack.tiers.longterm import LongTermMemory
from memstack.tiers.longterm.provenance import conversation_metadata

MAY, JUNE = datetime(2023, 5, 8, tzinfo=UTC), datetime(2023, 6, 9, tzinfo=UTC)


@pytest.fixture
def profiles(monkeypatch: pytest.MonkeyPatch) -> None:
    for row in (
        SearchProfile(name="t-none"),
        SearchProfile(name="t-neighbours", neighbour_weight=0.3),
        SearchProfile(name="t-sessions", session_weight=0.3),
        SearchProfile(name="t-speakers", speaker_weight=0.3),
    ):
        monkeypatch.setitem(SEARCH_PROFILES, row.name, row)


def say(lt: LongTermMemory, turn: int, speaker: str, text: str, when: datetime = MAY, **kw: object) -> None:
    meta = conversation_metadata("c", turn, speaker, when)
    lt.save(id=f"t{turn}", content=text, metadata=meta, created_at=when, **kw)  # type: ignore[arg-type]


def ranked(mem: Memory, profile: str, query: str, *, bm25: bool = False, **kw: object) -> list[str]:
    lt = mem.long_term("s", profile=profile, embedder=None if bm25 else FakeEmbedder(dim=64))
    return [h.entry.id for h in lt.search(query, max_results=10, **kw)]  # type: ignore[arg-type]


@pytest.mark.usefixtures("profiles")
def test_the_answer_after_a_question_comes_with_it(mem: Memory) -> None:
    lt = mem.long_term("s", embedder=FakeEmbedder(dim=64))
    say(lt, 1, "Bob", "Which concert tickets did you buy?", tags=["keep"])
    say(lt, 2, "Ann", "Yes, the jazz ones", tags=["keep"])
    say(lt, 3, "Bob", "Cool", tags=["drop"])
    assert lt.flush_embeddings(timeout=30)
    assert "t2" not in ranked(mem, "t-none", "concert tickets")  # no word, no trigram in common
    hits = mem.long_term("s", profile="t-neighbours", embedder=FakeEmbedder(dim=64)).search("concert tickets")
    assert [h.entry.id for h in hits][:2] == ["t1", "t2"]
    assert hits[1].sources == ("neighbours",) and hits[1].bm25 is None and hits[1].vector is None
    # a neighbour a filter leaves out is not brought in
    assert ranked(mem, "t-neighbours", "concert tickets", tags=["keep"])[:2] == ["t1", "t2"]
    assert "t2" not in ranked(mem, "t-neighbours", "concert tickets", tags=["drop", "nope"])


@pytest.mark.usefixtures("profiles")
def test_turns_of_the_best_session_move_up_together(mem: Memory) -> None:
    lt = mem.long_term("s", embedder=FakeEmbedder(dim=64))
    say(lt, 1, "Ann", "our hiking trip to the mountains", JUNE)
    say(lt, 5, "Ann", "a trip", JUNE)
    say(lt, 10, "Bob", "a trip", MAY)  # same text, other session; saved first among equals below
    say(lt, 12, "Bob", "unrelated words", MAY)
    say(lt, 20, "Ann", "more filler", JUNE)
    assert lt.flush_embeddings(timeout=30)
    plain = ranked(mem, "t-none", "hiking trip mountains")
    assert plain[0] == "t1"
    boosted = ranked(mem, "t-sessions", "hiking trip mountains")
    assert boosted[0] == "t1" and boosted.index("t5") < boosted.index("t10")


@pytest.mark.usefixtures("profiles")
def test_turns_of_the_speaker_the_query_names_come_first(mem: Memory) -> None:
    lt = mem.long_term("s", embedder=FakeEmbedder(dim=64))
    say(lt, 1, "Ann", "I love painting sunsets")
    say(lt, 2, "Bob", "I love painting sunsets")
    lt.save(id="note", content="I love painting sunsets")  # no provenance: never boosted
    assert lt.flush_embeddings(timeout=30)
    assert ranked(mem, "t-speakers", "what does Bob love painting")[0] == "t2"
    assert ranked(mem, "t-speakers", "what does Ann love painting")[0] == "t1"
    assert (
        ranked(mem, "t-speakers", "who loves painting")[:3] == ranked(mem, "t-none", "who loves painting")[:3]
    )


def test_the_default_profile_propagates_and_the_context_row_does_not() -> None:
    assert SEARCH_PROFILES["default"].propagates
    assert not SEARCH_PROFILES["context"].propagates and not SEARCH_PROFILES["plain"].propagates


@pytest.mark.usefixtures("profiles")
def test_entries_without_provenance_rank_as_without_the_options(mem: Memory) -> None:
    lt = mem.long_term("s", embedder=FakeEmbedder(dim=64))
    for n, text in enumerate(["red apples", "green apples", "apple pie recipe", "bananas"]):
        lt.save(id=f"e{n}", content=text)
    assert lt.flush_embeddings(timeout=30)
    for profile in ("t-neighbours", "t-sessions", "t-speakers"):
        assert ranked(mem, profile, "apples") == ranked(mem, "t-none", "apples")


@pytest.mark.usefixtures("profiles")
def test_bm25_alone_propagates_too(mem: Memory) -> None:
    lt = mem.long_term("s")
    say(lt, 1, "Bob", "Which concert tickets did you buy?", tags=["keep"])
    say(lt, 2, "Ann", "Yes, the jazz ones", tags=["keep"])
    say(lt, 3, "Bob", "Cool", tags=["drop"])
    say(lt, 4, "Ann", "I love painting sunsets")
    say(lt, 5, "Bob", "I love painting sunsets")
    assert ranked(mem, "t-none", "concert tickets", bm25=True) == ["t1"]
    hits = mem.long_term("s", profile="t-neighbours").search("concert tickets")
    assert [h.entry.id for h in hits][:2] == ["t1", "t2"]
    assert hits[1].sources == ("neighbours",) and hits[1].bm25 is None
    assert ranked(mem, "t-neighbours", "concert tickets", bm25=True, tags=["keep"])[:2] == ["t1", "t2"]
    assert "t2" not in ranked(mem, "t-neighbours", "concert tickets", bm25=True, tags=["drop", "nope"])
    assert ranked(mem, "t-speakers", "what does Bob love painting", bm25=True)[0] == "t5"
    assert ranked(mem, "t-speakers", "what does Ann love painting", bm25=True)[0] == "t4"


@pytest.mark.usefixtures("profiles")
def test_bm25_alone_scores_are_fused_only_when_the_profile_propagates(mem: Memory) -> None:
    lt = mem.long_term("s")
    say(lt, 1, "Ann", "green tea every morning")
    say(lt, 2, "Bob", "green tea ice cream")
    lt.save(id="note", content="tea leaves")
    plain = mem.long_term("s", profile="t-none").search("green tea")
    assert plain and all(h.score == h.bm25 for h in plain)
    spread = mem.long_term("s", profile="t-neighbours").search("green tea")
    weight = FUSION_PROFILES[SEARCH_PROFILES["t-neighbours"].fusion].bm25_weight
    # the best BM25 hit fuses to the BM25 weight, then gains 0.3 x its best neighbour's fused score
    assert spread[0].entry.id == plain[0].entry.id and spread[0].bm25 == plain[0].bm25
    assert spread[0].score > weight and spread[0].score != spread[0].bm25
    assert {h.entry.id for h in spread} == {h.entry.id for h in plain}


@pytest.mark.usefixtures("profiles")
def test_a_turn_saved_after_a_search_is_brought_in_by_its_neighbour(mem: Memory) -> None:
    lt = mem.long_term("s", profile="t-neighbours", embedder=FakeEmbedder(dim=64))
    say(lt, 1, "Bob", "Which concert tickets did you buy?")
    say(lt, 3, "Bob", "Cool")
    assert lt.flush_embeddings(timeout=30)
    assert "t2" not in [h.entry.id for h in lt.search("concert tickets")]  # the scope's table is built
    say(lt, 2, "Ann", "Yes, the jazz ones")
    assert lt.flush_embeddings(timeout=30)
    hits = lt.search("concert tickets")
    assert [h.entry.id for h in hits][:2] == ["t1", "t2"] and hits[1].sources == ("neighbours",)


@pytest.fixture
def conversation_fusion(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        FUSION_PROFILES,
        "t-bm25-only",
        FusionProfile(
            name="t-bm25-only", method="evidence", min_similarity=-1.0, bm25_weight=1, vector_weight=0
        ),
    )
    for row in (
        SearchProfile(
            name="t-conv", fusion="evidence", neighbour_weight=0.3, conversation_fusion="t-bm25-only"
        ),
        SearchProfile(name="t-same", fusion="evidence", neighbour_weight=0.3),
    ):
        monkeypatch.setitem(SEARCH_PROFILES, row.name, row)


def _scores(mem: Memory, scope: str, profile: str, **kw: object) -> list[float]:
    lt = mem.long_term(scope, profile=profile, embedder=FakeEmbedder(dim=64), **kw)  # type: ignore[arg-type]
    return [h.score for h in lt.search("zebra", max_results=10)]


@pytest.mark.usefixtures("conversation_fusion")
def test_a_scope_of_turns_searched_with_vectors_uses_the_conversation_fusion(mem: Memory) -> None:
    turns = mem.long_term("s", embedder=FakeEmbedder(dim=64))
    say(turns, 1, "Bob", "We hiked up the ridge at dawn")
    say(turns, 2, "Ann", "The view over the lake was lovely")
    notes = mem.long_term("n", embedder=FakeEmbedder(dim=64))
    notes.save(id="m1", content="We hiked up the ridge at dawn")
    notes.save(id="m2", content="The view over the lake was lovely")
    assert turns.flush_embeddings(timeout=30) and notes.flush_embeddings(timeout=30)
    # no word of the query in any entry: only the vectors score, and the conversation fusion weighs them 0
    assert _scores(mem, "s", "t-conv") == [0.0, 0.0]
    assert any(s != 0 for s in _scores(mem, "s", "t-same"))
    # entries without conversation provenance keep the profile's own fusion
    assert any(s != 0 for s in _scores(mem, "n", "t-conv"))
    # a fusion the caller asks for is used as asked
    assert any(s != 0 for s in _scores(mem, "s", "t-conv", fusion="evidence"))


def test_the_default_profile_weighs_turns_with_their_own_fusion() -> None:
    default = SEARCH_PROFILES["default"]
    turns = FUSION_PROFILES[default.conversation_fusion]
    assert turns.bm25_weight > FUSION_PROFILES[default.fusion].bm25_weight
    assert default.context_vector_weight == 0


def test_bm25_alone_answers_the_head_of_the_deeper_ranking(mem: Memory) -> None:
    # BM25 alone asks the index for only the hits it returns: they must be the head of the deep list
    lt = mem.long_term("deep", embedder=None)
    for i in range(30):  # many ties (the same text) and a spread of scores
        lt.save(id=f"e{i}", content="green tea" if i % 3 else f"green tea and more tea {'x ' * (i % 7)}")
    full = [(h.entry.id, h.score) for h in lt.search("tea green", max_results=30)]
    assert len(full) == 30
    for n in (1, 3, 10):
        assert [(h.entry.id, h.score) for h in lt.search("tea green", max_results=n)] == full[:n]
    assert [(h.entry.id, h.score) for h in lt.search("tea green", max_results=4, offset=5)] == full[5:9]
