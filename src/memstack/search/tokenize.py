"""Tokenisers as data: a table of named profiles and one function that applies a profile.

``default``
    Unicode-aware: NFKC-normalised, case-folded, words are runs of letters and digits (``_`` splits),
    each Han / kana character is a token of its own (those scripts do not separate words with spaces),
    English stop words dropped, Snowball English stemming (PyStemmer, C-backed).
``rockbot``
    The seed's tokeniser exactly: lower-case, split on ``[^a-z0-9]+``, keep tokens of 3+ characters.
    Non-ASCII letters are separators (``café`` → ``caf``; CJK text yields no tokens).

Tokenising is thread-safe: the stemmer is called under a lock (PyStemmer objects keep a cache).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

import Stemmer

from memstack.foundation.errors import InvalidConfiguration
from memstack.search._lookup import lookup
from memstack.search.stopwords import ENGLISH_STOP_WORDS

__all__ = ["TOKENIZERS", "TokenizerProfile", "get_tokenizer", "tokenize"]

# Han ideographs (incl. extension A and compatibility) and hiragana/katakana: one token per character.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"


@dataclass(frozen=True, slots=True)
class TokenizerProfile:
    """How one tokeniser turns text into terms.

    ``pattern`` finds the tokens (after ``unicode_normalize`` and case mapping); ``casefold`` uses
    :meth:`str.casefold` instead of :meth:`str.lower`; tokens shorter than ``min_length`` and tokens in
    ``stop_words`` are dropped; ``stemmer`` names a Snowball algorithm (or ``None``).
    """

    name: str
    pattern: str
    casefold: bool = True
    unicode_normalize: Literal["NFC", "NFD", "NFKC", "NFKD"] | None = "NFKC"
    min_length: int = 1
    stop_words: frozenset[str] = frozenset()
    stemmer: str | None = None


TOKENIZERS: dict[str, TokenizerProfile] = {
    "default": TokenizerProfile(
        name="default",
        pattern=rf"[{_CJK}]|[^\W_{_CJK}]+",
        casefold=True,
        unicode_normalize="NFKC",
        min_length=1,
        stop_words=ENGLISH_STOP_WORDS,
        stemmer="english",
    ),
    "rockbot": TokenizerProfile(
        name="rockbot",
        pattern=r"[a-z0-9]+",
        casefold=False,
        unicode_normalize=None,
        min_length=3,
    ),
}


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


class _LockedStemmer:
    """A Snowball stemmer shared by threads, with a bounded memo of stems.

    PyStemmer objects are not documented as thread-safe, so misses go through a lock; hits are plain
    dict reads (safe under the GIL) and make stemming a repeated vocabulary cheap.
    """

    _MAX_MEMO = 200_000

    def __init__(self, algorithm: str) -> None:
        self._stemmer = Stemmer.Stemmer(algorithm)
        self._lock = threading.Lock()
        self._memo: dict[str, str] = {}

    def stem_words(self, words: Sequence[str]) -> list[str]:
        memo = self._memo
        out = [memo.get(w) for w in words]
        if None in out:
            with self._lock:
                if len(memo) > self._MAX_MEMO:
                    memo.clear()
                for i, stem in enumerate(out):
                    if stem is None:
                        stem = memo[words[i]] = self._stemmer.stemWord(words[i])
                        out[i] = stem
        return out  # type: ignore[return-value]  # every None was replaced above


_STEMMERS: dict[str, _LockedStemmer] = {}
_STEMMERS_LOCK = threading.Lock()


def _stemmer(algorithm: str) -> _LockedStemmer:
    with _STEMMERS_LOCK:
        found = _STEMMERS.get(algorithm)
        if found is None:
            try:
                found = _LockedStemmer(algorithm)
            except KeyError as exc:
                raise InvalidConfiguration(
                    f"stemmer {algorithm!r} is not a Snowball algorithm known to PyStemmer"
                ) from exc
            _STEMMERS[algorithm] = found
        return found


def get_tokenizer(profile: str | TokenizerProfile = "default") -> Callable[[str], list[str]]:
    """Return a function ``text -> tokens`` for a profile name or a :class:`TokenizerProfile`.

    Raises:
        InvalidConfiguration: unknown profile name or unknown stemmer algorithm.
    """
    prof = _resolve(profile)
    finder = _compiled(prof.pattern).findall
    norm = prof.unicode_normalize
    fold = str.casefold if prof.casefold else str.lower
    min_len = prof.min_length
    stops = prof.stop_words
    stem = _stemmer(prof.stemmer).stem_words if prof.stemmer else None

    def run(text: str) -> list[str]:
        if norm is not None and not text.isascii():
            text = unicodedata.normalize(norm, text)
        tokens: list[str] = finder(fold(text))
        if min_len > 1 or stops:
            tokens = [t for t in tokens if len(t) >= min_len and t not in stops]
        if stem is not None and tokens:
            tokens = stem(tokens)
        return tokens

    return run


def _resolve(profile: str | TokenizerProfile) -> TokenizerProfile:
    return lookup(TOKENIZERS, profile, TokenizerProfile, "tokenizer")


def tokenize(text: str, profile: str | TokenizerProfile = "default") -> list[str]:
    """Split ``text`` into terms with the named tokeniser profile (see the module docstring).

    Raises:
        InvalidConfiguration: unknown profile name.
        TypeError: ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"tokenize() needs a str, got {type(text).__name__}")
    return _tokenizer_for(profile)(text)


@cache
def _tokenizer_for(profile: str | TokenizerProfile) -> Callable[[str], list[str]]:
    return get_tokenizer(profile)
