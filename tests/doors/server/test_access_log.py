"""The access log holds route templates and keyed hashes, never the ids of a request."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets

import httpx
import pytest

pytest.importorskip("uvicorn")

from memstack.doors.server.access_log import AccessLog

from .live import memstack_serve


def _digest(key: str, value: str) -> str:
    return hmac.new(key.encode(), value.encode(), hashlib.sha256).hexdigest()[:16]


@pytest.mark.parametrize("engine_kind", ["sqlite", "postgres"], indirect=True)
def test_a_served_run_logs_no_id_of_any_request(engine_url_for: str, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = secrets.token_hex(6)
    session, conversation, board = f"sess-{marker}", f"conv-{marker}", f"board-{marker}"
    namespace, scope, subject = f"session/ns-{marker}", f"scope-{marker}", f"subj-{marker}"
    log_key = "log-key-" + secrets.token_hex(8)
    monkeypatch.setenv("MEMSTACK_LOG_KEY", log_key)
    url = engine_url_for
    with (
        memstack_serve(url, "--log-level", "info") as served,
        httpx.Client(base_url=served.base, timeout=20) as http,
    ):
        assert http.post("/v1/sessions", json={"session_id": session}).status_code == 201
        assert http.put(f"/v1/sessions/{session}/keys/topic", json={"value": marker}).status_code == 200
        assert http.get(f"/v1/sessions/{session}").status_code == 200
        message = {"role": "user", "content": f"hello {marker}", "message_id": f"m-{marker}"}
        assert http.post(f"/v1/conversations/{conversation}/messages", json=message).status_code == 201
        assert http.get(f"/v1/conversations/{conversation}/thread").status_code == 200
        assert http.put(f"/v1/shared/{board}/keys/plan", json={"value": marker}).status_code == 200
        assert http.get(f"/v1/shared/{board}/keys/plan").status_code == 200
        assert http.put(f"/v1/working/k-{marker}?namespace={namespace}", json={"value": 1}).status_code == 200
        saved = http.post(f"/v1/memories?scope={scope}", json={"content": marker, "subject": subject})
        assert saved.status_code == 201
        assert http.get(f"/v1/memories/{saved.json()['id']}?scope={scope}").status_code == 200
        assert http.get(f"/v1/sessions/missing-{marker}").status_code == 404
        assert http.get(f"/nowhere/{marker}").status_code == 404
        assert http.get(f"/v1/sessions/{session}%FF").status_code == 400
        with http.stream("GET", f"/ui/api/shared/{board}/events") as stream:
            assert stream.status_code == 200
            next(stream.iter_bytes())
    lines = [line for line in served.stderr.splitlines() if " memstack.access " in line]
    assert len(lines) >= 14
    assert marker not in served.stderr, [line for line in served.stderr.splitlines() if marker in line]
    records = [json.loads(line.split(" memstack.access ", 1)[1]) for line in lines]
    routes = {r["route"] for r in records}
    assert {"/v1/sessions/{session_id}", "/v1/conversations/{conversation_id}/messages"} <= routes
    assert {"/v1/shared/{name}/keys/{key}", "/ui/api/shared/{name}/events", "unmatched"} <= routes
    put = next(r for r in records if r["route"] == "/v1/sessions/{session_id}/keys/{key}")
    # One id gives one hash under a known key: a session can be followed through the log.
    assert put["ids"] == {"session_id": _digest(log_key, session), "key": _digest(log_key, "topic")}
    assert put["method"] == "PUT" and put["status"] == 200 and set(put) == {
        "method", "route", "ids", "status", "ms", "client"
    }  # fmt: skip
    assert put["client"] == _digest(log_key, "127.0.0.1")


def test_the_default_key_is_random_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMSTACK_LOG_KEY", raising=False)
    first, second = AccessLog(), AccessLog()
    assert first.digest("session-1") == first.digest("session-1")
    assert first.digest("session-1") != second.digest("session-1")
    assert AccessLog("k").digest("s") == AccessLog("k").digest("s") == _digest("k", "s")
    assert os.environ.get("MEMSTACK_LOG_KEY") is None


def test_unknown_methods_are_one_value(monkeypatch: pytest.MonkeyPatch) -> None:
    scope = {"method": "PROPFIND-" + "x" * 500, "path": "/a/b", "client": ("10.0.0.1", 1)}
    line = AccessLog("k").line(scope, 405, 1.0)
    assert line["method"] == "OTHER" and line["route"] == "unmatched"
    assert line["ids"] == {"path": _digest("k", "/a/b")}
