"""The entry check: text that does not decode is a 400 before any route, never a U+FFFD collision;
deep JSON in a query is a typed 400, never a RecursionError; on every engine, and on the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from _serving import serving
from memstack.doors.server import create_app
from memstack.engines import Engine
from memstack.foundation.errors import InvalidValue
from memstack.tiers.longterm.search_request import metadata_from_text


def test_invalid_utf8_in_a_path_is_a_400_and_never_names_another_key(
    client: TestClient, engine: Engine
) -> None:
    before = sorted(engine.scan(""))
    for path in ("/v1/shared/b/keys/a%FFb", "/v1/shared/b/keys/a%FEb", "/v1/shared/b/keys/a%C3b"):
        for method in ("PUT", "GET", "DELETE"):
            body = {"value": 1} if method == "PUT" else None
            response = client.request(method, path, json=body)
            assert response.status_code == 400, (method, path, response.text)
            problem = response.json()
            assert problem["error"] == "InvalidInput"
            assert problem["detail"].startswith("path: byte 0x"), problem
    assert sorted(engine.scan("")) == before  # nothing was written
    # A real U+FFFD, sent as its UTF-8 bytes, is a legal key of its own.
    assert client.put("/v1/shared/b/keys/a%EF%BF%BDb", json={"value": "replacement"}).status_code == 200
    assert client.get("/v1/shared/b/keys/a%EF%BF%BDb").json()["value"] == "replacement"
    assert client.get("/v1/shared/b/keys/a%FFb").status_code == 400


def test_encoded_surrogates_and_nul_in_paths_are_refused(client: TestClient) -> None:
    for path in ("/v1/sessions/a%ED%A0%80b", "/v1/sessions/a%00b", "/v1/sessions/%C0%AF"):
        response = client.get(path)
        assert response.status_code == 400, (path, response.text)
        assert response.json()["detail"].startswith("path: ")


def test_invalid_utf8_in_a_query_is_a_400_naming_the_parameter(client: TestClient) -> None:
    response = client.get("/v1/memories?scope=u%FF1&query=tea")
    assert response.status_code == 400
    assert response.json()["detail"].startswith("query value of 'scope': byte 0xFF")
    response = client.get("/v1/memories?sc%FEope=u1")
    assert response.status_code == 400 and response.json()["detail"].startswith("query name of a parameter")
    assert client.get("/v1/memories?scope=u1&query=th%C3%A9+caf%C3%A9").status_code == 200


def test_invalid_utf8_in_a_header_is_a_400(engine: Engine) -> None:
    # Over a real server: the test client would re-encode header bytes before the app sees them.
    with serving(create_app(engine, mcp=False)) as base, httpx.Client(base_url=base) as http:
        response = http.get("/v1/sessions", headers={"X-Memstack-Tenant": b"\xff\xfeacme"})
        assert response.status_code == 400
        assert response.json()["detail"] == "header 'x-memstack-tenant': byte 0xFF is not valid UTF-8"
        assert http.get("/v1/sessions", headers={"X-Client-Note": "caf\u00e9".encode()}).status_code == 200
        # Raw bytes in the request line never reach the app: the HTTP server refuses them (400).
        assert http.get(f"{base}/v1/shared/b/keys/a%FFb").status_code == 400


@pytest.mark.parametrize("depth", [101, 1_000, 1_990])
def test_deep_metadata_in_a_query_is_a_typed_400(client: TestClient, depth: int) -> None:
    client.post("/v1/memories?scope=u1", json={"content": "likes tea"})
    for text in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth):
        response = client.get("/v1/memories", params={"scope": "u1", "metadata": text})
        problem = response.json()
        assert response.status_code == 400, problem  # measured before parsed, at any length
        assert problem["error"] == "InvalidValue"
        assert problem["detail"] == "metadata: nested deeper than 100 levels"
    nested = '{"a": ' + "[" * 99 + "1" + "]" * 99 + "}"
    assert client.get("/v1/memories", params={"scope": "u1", "metadata": nested}).status_code == 200


def test_the_shared_parser_refuses_any_depth_without_recursion() -> None:
    for depth in (101, 1_000, 100_000, 1_000_000):
        with pytest.raises(InvalidValue, match=r"^metadata: nested deeper than 100 levels$"):
            metadata_from_text("[" * depth + "]" * depth)


def test_metadata_with_a_lone_surrogate_escape_or_nan_is_a_typed_400(client: TestClient) -> None:
    for text in ('{"a": "\\ud800"}', '{"a": NaN}', '{"a": ' + "1e999}"):
        response = client.get("/v1/memories", params={"scope": "u1", "metadata": text})
        assert response.status_code == 400, text[:40]
        assert response.json()["detail"].startswith("metadata")


def test_the_cli_refuses_deep_metadata_with_exit_2(tmp_path: Path) -> None:
    deep = "[" * 5000 + "]" * 5000
    done = subprocess.run(
        [sys.executable, "-m", "memstack.doors.cli", "--url", f"sqlite:///{tmp_path / 'm.db'}",
         "memories", "search", "tea", "--scope", "u1", "--metadata", deep],
        capture_output=True, text=True, timeout=60, env={**os.environ},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "metadata: nested deeper than 100 levels" in done.stderr
    assert "unexpected" not in done.stderr and "Traceback" not in done.stderr
