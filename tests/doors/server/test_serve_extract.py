"""``memstack serve --dream-passes extract``: a real service process runs each user's extract pass
over that user's turns only, and files what it learns in that user's scope; on every engine.

Two users remember over HTTP; the loopback model records every prompt it is asked. The model
answers from what it reads (its reply cites only ids it was shown), so the order of the passes
does not matter.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx
import pytest

pytest.importorskip("uvicorn")

from services.dream._openai_server import fake_openai

from .live import memstack_serve

WORDS = {"alice": "I play the violin every morning", "bob": "my locker code is bob-secret-4242"}
FACTS = {"alice": "Alice plays the violin", "bob": "Bob's locker code is bob-secret-4242"}
DEADLINE = 60.0


def _text(body: dict[str, Any]) -> str:
    return json.dumps(body.get("messages", []))


def _answer(ids: dict[str, str]) -> Any:
    def answer(body: dict[str, Any]) -> str:
        text = _text(body)
        facts = [i for i, user in enumerate(ids) if FACTS[user] in text]
        if facts:  # the second prompt of a pass: what to do with each fact found
            return json.dumps({"decisions": [{"fact": n + 1, "action": "add"} for n in range(len(facts))]})
        found = [
            {"content": FACTS[user], "sourceIds": [message_id]}
            for user, message_id in ids.items()
            if re.search(re.escape(message_id), text)
        ]
        return json.dumps({"facts": found})

    return answer


def test_scheduled_extract_passes_of_a_served_process_keep_users_apart(
    engine_url_for: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids: dict[str, str] = {}
    with fake_openai([], _answer(ids)) as model:
        monkeypatch.setenv("MEMSTACK_CHAT_URL", model.url)
        monkeypatch.setenv("MEMSTACK_CHAT_MODEL", "dream-model")
        monkeypatch.setenv("MEMSTACK_CHAT_JSON", "1")
        # --no-auth: keys another test created on a shared engine must not turn keys on here
        args = ("--no-auth", "--dream-interval", "0.5", "--dream-passes", "extract")
        with (
            memstack_serve(engine_url_for, *args) as served,
            httpx.Client(base_url=served.base, timeout=20) as http,
        ):
            for user, words in WORDS.items():
                done = http.post("/v1/remember", json={"user": user, "content": words})
                assert done.status_code == 201, done.text
                ids[user] = done.json()["messages"][0]["message_id"]
            deadline = time.monotonic() + DEADLINE
            learnt: dict[str, list[str]] = {}
            while time.monotonic() < deadline:
                learnt = {
                    user: [
                        item["entry"]["content"]
                        for item in http.post("/v1/recall", json={"user": user, "query": FACTS[user]}).json()[
                            "items"
                        ]
                        if item["kind"] == "fact"
                    ]
                    for user in WORDS
                }
                if all(learnt.values()):
                    break
                time.sleep(0.2)  # polling a live process; the deadline bounds the wait
            assert learnt == {user: [FACTS[user]] for user in WORDS}, served.stderr
            for user, other in (("alice", "bob"), ("bob", "alice")):
                scope = http.get("/v1/memories", params={"scope": user}).json()
                assert WORDS[other] not in json.dumps(scope) and FACTS[other] not in json.dumps(scope)
    prompts = [_text(r) for r in model.requests]
    for user, other in (("alice", "bob"), ("bob", "alice")):
        # the prompts of a pass that read this user's words hold nothing of the other user
        mine = [p for p in prompts if ids[user] in p or FACTS[user] in p]
        assert mine and not any(ids[other] in p or WORDS[other] in p or FACTS[other] in p for p in mine)
