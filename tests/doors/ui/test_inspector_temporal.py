"""The inspector shows memory that changes, in a real Chromium: the extract pass run from the Dream
view against a loopback chat model (a dry run first), the superseded entry with its validity and
history in the memory view, and an entry's expiry."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from doors.ui._live import Live, live_server
from memstack import ManualClock, Memory
from memstack.engines import Engine
from memstack.engines.prefixed import tenant_engine
from services.dream._openai_server import fake_openai

pytest.importorskip("playwright")
from playwright.sync_api import expect

BERLIN = {"content": "The user lives in Berlin", "category": "user/home", "sourceIds": ["m1"]}


@pytest.fixture
def live(engine: Engine) -> Iterator[Live]:
    with live_server(engine) as server:
        yield server


def sign_in(page: Any, live: Live, view: str) -> None:
    page.goto(f"{live.url}/ui/#{view}")
    page.get_by_label("API key").fill(live.token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("navigation", name="Memory tiers")).to_be_visible()


def test_extract_from_the_dream_view_then_validity_and_history(
    live: Live, engine: Engine, clock: ManualClock, page: Any, shoot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    lisbon = live.api.post("/v1/memories?scope=u", json={"content": "The user lives in Lisbon"}).json()
    for other in ("The user likes jazz", "The user has a cat"):  # a pass may supersede at most half
        live.api.post("/v1/memories?scope=u", json={"content": other}).raise_for_status()
    clock.advance(3600)
    tenant = Memory(tenant_engine(engine, live.tenant))
    tenant.turns.add("s1", "user", "I moved to Berlin last week!", message_id="m1")
    update = json.dumps({"decisions": [{"fact": 1, "action": "update", "ids": [lisbon["id"]]}]})
    found = json.dumps({"facts": [BERLIN]})
    with fake_openai([found, update, found, update]) as server:
        monkeypatch.setenv("MEMSTACK_CHAT_URL", server.url)
        monkeypatch.setenv("MEMSTACK_CHAT_MODEL", "scripted")
        sign_in(page, live, "dream")
        page.get_by_role("list", name="Dream scopes").get_by_role("button", name="u").click()
        page.get_by_label("Pass", exact=True).select_option("extract")
        expect(page.get_by_label("Dry run")).to_be_checked()
        page.get_by_role("button", name="Run", exact=True).click()
        summary = page.locator("#dream-run-summary")
        expect(summary).to_have_text("extract: dry-run · 1 created, 0 retired, 1 superseded")
        expect(page.get_by_role("region", name="Superseded entries")).to_contain_text("Lisbon")
        shoot("extract-dry-run")
        assert live.api.get(f"/v1/memories/{lisbon['id']}?scope=u").json()["superseded_by"] is None
        page.get_by_label("Dry run").uncheck()
        page.get_by_role("button", name="Run", exact=True).click()
        expect(summary).to_have_text("extract: applied · 1 created, 0 retired, 1 superseded")
    assert len(server.requests) == 4
    created = page.get_by_role("region", name="Created entries")
    expect(created).to_contain_text("The user lives in Berlin")
    expect(created).to_contain_text("said in m1")
    superseded = page.get_by_role("region", name="Superseded entries")
    expect(superseded).to_contain_text(re.compile(r"until \S+Z \(superseded by [0-9a-f]+\)"))
    records = page.locator("#dream-records tbody tr")
    expect(records).to_have_count(1)  # the dry run left no record
    expect(records.locator("td.num").nth(3)).to_have_text("1")  # superseded
    shoot("extract-applied")

    page.get_by_role("button", name="Long-term memories").click()
    page.get_by_role("list", name="Scopes").get_by_role("button", name="u").click()
    rows = page.locator("#memory-results tbody tr[data-memory-id]")
    expect(rows).to_have_count(3)  # only the current facts
    expect(rows.filter(has_text="Lisbon")).to_have_count(0)
    expect(rows.filter(has_text="Berlin")).to_have_count(1)
    page.get_by_label("Include superseded").check()
    page.get_by_role("button", name="Search").click()
    expect(rows).to_have_count(4)
    old = page.locator(f'#memory-results tr[data-memory-id="{lisbon["id"]}"]')
    expect(old.locator(".state-superseded")).to_have_text("superseded")
    expect(old.locator(".validity")).to_contain_text("(superseded by ")
    page.get_by_role("button", name=f"History of memory {lisbon['id']}").click()
    changes = page.get_by_role("list", name=f"History of memory {lisbon['id']}")
    expect(changes.locator("li")).to_have_count(2)
    expect(changes.locator("li").nth(0)).to_contain_text("create")
    expect(changes.locator("li").nth(0)).to_contain_text("by api")
    expect(changes.locator("li").nth(1)).to_contain_text("supersede")
    expect(changes.locator("li").nth(1)).to_contain_text(re.compile(r"by dream:[0-9a-f]+"))
    shoot("memory-history")

    as_of = lisbon["created_at"]
    page.get_by_label("Include superseded").uncheck()  # a time shows what was valid then, no history
    page.get_by_label("As of").fill(as_of)
    page.get_by_role("button", name="Search").click()
    expect(rows).to_have_count(3)  # what was valid then
    expect(rows.filter(has_text="Berlin")).to_have_count(0)
    expect(rows.filter(has_text="Lisbon")).to_have_count(1)


def test_an_entry_shows_its_expiry(live: Live, page: Any, shoot: Any) -> None:
    body = {"content": "Door code 4321 for today", "expires_at": "2099-01-01T00:00:00Z"}
    saved = live.api.post("/v1/memories?scope=ops", json=body).json()
    assert saved["expires_at"] == "2099-01-01T00:00:00.000000Z"
    sign_in(page, live, "memories")
    page.get_by_role("list", name="Scopes").get_by_role("button", name="ops").click()
    row = page.locator(f'#memory-results tr[data-memory-id="{saved["id"]}"]')
    expect(row.locator(".validity")).to_contain_text("expires 2099-01-01T00:00:00Z")
    page.get_by_role("button", name=f"Edit memory {saved['id']}").click()
    page.get_by_label("Content").fill("Door code 9876 for today")
    page.get_by_role("button", name="Save").click()
    expect(row).to_contain_text("9876")
    stored = live.api.get(f"/v1/memories/{saved['id']}?scope=ops").json()
    assert stored["expires_at"] == saved["expires_at"]  # an edit keeps the expiry
    shoot("expiry")
