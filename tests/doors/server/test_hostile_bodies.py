"""Hostile JSON bodies on every route that takes one, on every engine: a 400 (or the schema's 422)
naming the field, never a 500, and nothing written."""

from __future__ import annotations

import io
import json

import pytest
from fastapi.testclient import TestClient

from memstack.engines import Engine
from memstack.services.transfer.dump import export_jsonl

NS = {"namespace": "session/s1"}
# (method, path, query, body with one field set to the marker HOSTILE, the field's name in errors)
ROUTES: list[tuple[str, str, dict[str, str], str, str]] = [
    ("POST", "/v1/sessions", {}, '{"session_id": HOSTILE}', "body['session_id']"),
    ("PUT", "/v1/sessions/s1/keys/k", {}, '{"value": HOSTILE}', "body['value']"),
    ("PUT", "/v1/sessions/s1/keys/k", {}, '{"value": {"a": [1, HOSTILE]}}', "body['value']['a'][1]"),
    ("POST", "/v1/sessions/s1/keys/n/increment", {}, '{"amount": HOSTILE}', "body['amount']"),
    ("POST", "/v1/conversations/c1/messages", {}, '{"role": "user", "content": HOSTILE}', "body['content']"),
    ("POST", "/v1/memories", {}, '{"content": HOSTILE}', "body['content']"),
    ("POST", "/v1/memories", {}, '{"content": "x", "metadata": {"m": HOSTILE}}', "body['metadata']['m']"),
    ("POST", "/v1/memories", {}, '{"content": "x", "tags": [HOSTILE]}', "body['tags'][0]"),
    ("PUT", "/v1/working/k", NS, '{"value": HOSTILE}', "body['value']"),
    ("PUT", "/v1/shared/board/keys/plan", {}, '{"value": HOSTILE}', "body['value']"),
    ("POST", "/v1/context", {}, '{"session_id": "s1", "message": HOSTILE}', "body['message']"),
    (
        "POST",
        "/v1/tools/save_memory",
        {},
        '{"arguments": {"content": HOSTILE}}',
        "body['arguments']['content']",
    ),
    (
        "POST",
        "/v1/tools/session_put",
        {},
        '{"arguments": {"key": "k", "value": HOSTILE}}',
        "body['arguments']",
    ),
]
HOSTILE: dict[str, str] = {
    "lone high surrogate": '"\\ud800"',
    "lone low surrogate in text": '"ok \\udfff ok"',
    "NaN": "NaN",
    "Infinity": "Infinity",
    "-Infinity": "-Infinity",
    "overflowing float": "1e999",
    "5,000-digit integer": "9" * 5000,
    "150 levels deep": "[" * 150 + "]" * 150,
    "100,000 levels deep": "[" * 100_000 + "]" * 100_000,
    "surrogate object key": '{"\\ud800": 1}',
}


def _tenant_data(engine: Engine) -> str:
    out = io.StringIO()
    export_jsonl(engine, out, prefix="t:")
    return out.getvalue()


@pytest.mark.parametrize("hostile", list(HOSTILE), ids=list(HOSTILE))
def test_hostile_values_are_refused_on_every_route(client: TestClient, engine: Engine, hostile: str) -> None:
    assert client.post("/v1/sessions", json={"session_id": "s1"}).status_code == 201
    before = _tenant_data(engine)
    for method, path, query, template, field in ROUTES:
        body = template.replace("HOSTILE", HOSTILE[hostile])
        response = client.request(
            method, path, params=query, content=body, headers={"content-type": "application/json"}
        )
        where = f"{method} {path} {template}"
        assert response.status_code in (400, 422), (where, response.status_code, response.text[:300])
        assert response.headers["content-type"].startswith("application/problem+json"), where
        problem = response.json()
        if response.status_code == 400:
            assert problem["error"] == "InvalidValue", where
            assert problem["detail"].startswith("body"), (where, problem["detail"])
        if "surrogate" in hostile and response.status_code == 400:
            assert problem["detail"].startswith(field), (where, problem["detail"])
    assert _tenant_data(engine) == before


def test_a_surrogate_inside_tool_arguments_text_names_the_argument(
    client: TestClient, engine: Engine
) -> None:
    before = _tenant_data(engine)
    response = client.post("/v1/tools/save_memory", json={"arguments": json.dumps({"content": "a\ud800"})})
    assert response.status_code == 400
    assert response.json()["detail"] == (
        "invalid arguments for 'save_memory': content: contains a lone surrogate '\\ud800' at index 1; "
        "text must be valid Unicode."
    )
    assert _tenant_data(engine) == before


def test_values_at_the_limits_are_accepted(client: TestClient) -> None:
    client.post("/v1/sessions", json={"session_id": "s1"})
    deep: object = "bottom"
    for _ in range(99):
        deep = [deep]
    assert client.put("/v1/sessions/s1/keys/deep", json={"value": deep}).status_code == 200
    assert client.put("/v1/sessions/s1/keys/big", json={"value": int("9" * 3999)}).status_code == 200
    assert client.put("/v1/sessions/s1/keys/emoji", json={"value": "😀 \U0001f600"}).status_code == 200
    assert client.get("/v1/sessions/s1/keys/emoji").json()["value"] == "😀 \U0001f600"
