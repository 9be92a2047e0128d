"""A model endpoint that echoes credentials in its errors: the record's reason is stored and
answered through the one redaction rule, so no record, export, HTTP or tool answer holds them."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from memstack.doors.server import create_app
from memstack.engines import Engine
from memstack.services.transfer.dump import export_jsonl

from ._openai_server import Step, fake_openai

SECRETS = (
    "sk-proj-Abc123Def456Ghi789Jkl0",
    "sk-ant-api03-ZZZZyyyy-xxxx_wwww1234",
    "msk_0123456789ab_SuperSecretPart42",
    "hunter/2 with space@and-at",
    "Tok3nInAUrlPath99",
)
ECHO = (
    f"invalid api key Bearer {SECRETS[0]}; also tried {SECRETS[1]} and {SECRETS[2]}; "
    f"upstream postgresql://app:{SECRETS[3]}@db:5432/app and https://{SECRETS[4]}@proxy.local/v1 "
    "password=PlainPassw0rdValue"
)


@pytest.fixture
def client(engine: Engine) -> Iterator[TestClient]:
    with TestClient(create_app(engine)) as test_client:
        yield test_client


def _clean(text: str) -> None:
    for secret in (*SECRETS, "PlainPassw0rdValue", "SuperSecretPart42", "with space@and-at", "and-at@db"):
        assert secret not in text, (secret, text)


def test_no_answer_or_export_holds_what_the_model_echoed(
    client: TestClient, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    for text in ("Zoe likes hiking", "Zoe reads poetry"):
        client.post("/v1/memories?scope=zoe", json={"content": text})
    refusal = Step(status=401, body=json.dumps({"error": {"message": ECHO}}).encode())
    with fake_openai([refusal]) as server:
        monkeypatch.setenv("MEMSTACK_CHAT_URL", server.url)
        monkeypatch.setenv("MEMSTACK_CHAT_MODEL", "m")
        ran = client.post("/v1/dream/runs?scope=zoe", json={"passes": ["consolidate"]})
    answers = [ran.text]
    history = client.get("/v1/dream/records?scope=zoe")
    (record,) = history.json()["items"]
    assert record["status"] == "skipped" and "***" in record["reason"]  # the reason is kept, masked
    answers += [history.text, client.get(f"/v1/dream/records/{record['id']}?scope=zoe").text]
    answers.append(client.post("/v1/tools/dream_history", json={"arguments": {"scope": "zoe"}}).text)
    out = io.StringIO()
    export_jsonl(engine, out)
    answers.append(out.getvalue())
    assert "dream" in out.getvalue()
    for text in answers:
        _clean(text)
