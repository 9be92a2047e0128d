"""Tokeniser profiles: the seed's exact rules and the Unicode-aware default."""

from __future__ import annotations

import pytest

from memstack.foundation.errors import InvalidConfiguration
from memstack.search import TOKENIZERS, TokenizerProfile, tokenize
from memstack.search.tokenize import get_tokenizer


def test_rockbot_lowercases_and_splits_on_non_ascii_alnum() -> None:
    assert tokenize("Hello, World! x2 abc123 a_b-cd", "rockbot") == ["hello", "world", "abc123"]


def test_rockbot_drops_tokens_shorter_than_three() -> None:
    assert tokenize("I am at the zoo on a day", "rockbot") == ["the", "zoo", "day"]


def test_rockbot_non_ascii_letters_are_separators() -> None:
    assert tokenize("café naïve", "rockbot") == ["caf"]  # "na" and "ve" are too short


def test_rockbot_cjk_gives_no_tokens() -> None:
    assert tokenize("東京タワーに行きました", "rockbot") == []


def test_rockbot_keeps_stop_words_and_does_not_stem() -> None:
    assert tokenize("The concerts were running", "rockbot") == ["the", "concerts", "were", "running"]


def test_default_casefolds_stems_and_drops_stop_words() -> None:
    assert tokenize("The Concerts were RUNNING") == ["concert", "run"]


def test_default_keeps_digits_and_short_tokens() -> None:
    assert tokenize("Room 42 on floor 3b") == ["room", "42", "floor", "3b"]


def test_default_is_unicode_aware() -> None:
    assert tokenize("Café Straße") == ["café", "strass"]
    assert tokenize("ＦＵＬＬＷＩＤＴＨ") == ["fullwidth"]  # NFKC folds compatibility forms


def test_default_splits_cjk_into_characters() -> None:
    assert tokenize("東京タワー") == ["東", "京", "タ", "ワ", "ー"]


def test_default_underscore_splits_words() -> None:
    assert tokenize("user_preferences") == ["user", "prefer"]


def test_default_keeps_negations() -> None:
    assert tokenize("does not like jazz") == ["not", "like", "jazz"]
    assert "don" in tokenize("I don't like jazz")


def test_empty_and_blank_text() -> None:
    assert tokenize("") == []
    assert tokenize("   \n\t") == []
    assert tokenize("", "rockbot") == []


def test_unknown_profile_names_the_value() -> None:
    with pytest.raises(InvalidConfiguration, match="nope"):
        tokenize("x", "nope")


def test_non_string_is_refused() -> None:
    with pytest.raises(TypeError, match="int"):
        tokenize(3)  # type: ignore[arg-type]  # the point of the test


def test_custom_profile_as_data() -> None:
    prof = TokenizerProfile(name="words", pattern=r"\w+", min_length=2, stop_words=frozenset({"is"}))
    assert get_tokenizer(prof)("It is OK ok") == ["it", "ok", "ok"]


def test_unknown_stemmer_is_a_configuration_error() -> None:
    prof = TokenizerProfile(name="x", pattern=r"\w+", stemmer="klingon")
    with pytest.raises(InvalidConfiguration, match="klingon"):
        get_tokenizer(prof)


def test_profiles_table_names() -> None:
    assert set(TOKENIZERS) >= {"default", "rockbot"}
