"""The inspector opens on what matters: an overview of every tier (counts, links, the command that
adds data to an empty tier), and scores only where a search made them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from _serving import serving
from memstack.doors.server import ServerSettings, create_app
from memstack.engines import Engine
from memstack.foundation.clock import ManualClock

pytest.importorskip("playwright")

from playwright.sync_api import expect

# The server shares two cores with Chromium and the other worker's tests; httpx's default of 5 s
# timed the first request out in loaded CI runs, where the other inspector tests' client waits 30 s.
_TIMEOUT = 30.0


def _post(url: str, **options: Any) -> httpx.Response:
    return httpx.post(url, timeout=_TIMEOUT, **options)


def _put(url: str, **options: Any) -> httpx.Response:
    return httpx.put(url, timeout=_TIMEOUT, **options)


@pytest.fixture
def keyless(engine: Engine) -> Iterator[str]:
    with serving(create_app(engine, ServerSettings(auth="none"), mcp=False)) as url:
        yield url


def test_an_empty_store_opens_on_an_overview_saying_how_to_add_data(
    keyless: str, page: Any, shoot: Any
) -> None:
    page.goto(f"{keyless}/ui/")
    expect(page.get_by_role("heading", name="Overview", exact=True)).to_be_visible()
    expect(page.locator("#overview-empty")).to_contain_text("This tenant holds nothing yet.")
    tiers = page.get_by_role("table", name="What this tenant holds")
    expect(tiers.get_by_role("row")).to_have_count(6)  # header + five tiers
    expect(tiers.get_by_role("row", name="Long-term memory scopes")).to_contain_text(
        "memories save 'Ana lives in Lisbon' --scope ana"
    )
    assert page.url.endswith("#overview")
    shoot("overview-empty")


def test_a_filled_store_shows_counts_that_link_to_their_views(keyless: str, page: Any, shoot: Any) -> None:
    for n in range(3):
        _post(f"{keyless}/v1/sessions", json={"session_id": f"s{n}"}).raise_for_status()
    saved = _post(f"{keyless}/v1/memories", params={"scope": "ana"}, json={"content": "Ana lives in Lisbon"})
    saved.raise_for_status()
    page.goto(f"{keyless}/ui/")
    tiers = page.get_by_role("table", name="What this tenant holds")
    expect(tiers.get_by_role("row", name="Sessions")).to_contain_text("3")
    expect(tiers.get_by_role("row", name="Long-term memory scopes")).to_contain_text("last listed: ana")
    expect(tiers.get_by_role("row", name="Conversations")).to_contain_text("conversations add c1 user")
    expect(page.locator("#overview-empty")).to_be_hidden()
    shoot("overview-filled")
    tiers.get_by_role("link", name="Sessions").click()
    expect(page.get_by_role("heading", name="Sessions", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="s2")).to_be_visible()


def test_scores_show_only_where_a_search_made_them(keyless: str, page: Any, shoot: Any) -> None:
    for content in ("Ana lives in Lisbon", "Ana plays the violin"):
        _post(f"{keyless}/v1/memories", params={"scope": "ana"}, json={"content": content}).raise_for_status()
    page.goto(f"{keyless}/ui/#memories")
    page.get_by_role("button", name="ana").click()
    results = page.locator("#memory-results tbody tr")
    expect(results).to_have_count(2)
    expect(results.first).not_to_contain_text("0.000")
    shoot("newest-unscored")
    page.get_by_label("Query").fill("violin")
    page.get_by_role("button", name="Search").click()
    expect(results).to_have_count(1)
    expect(results.first).to_contain_text("violin")
    expect(results.first.locator("td.num").first).not_to_have_text("–")
    shoot("searched-scored")


def test_deep_links_open_a_memory_a_dream_record_and_a_conversation(
    engine: Engine, keyless: str, page: Any, shoot: Any
) -> None:
    from memstack import Memory
    from memstack.engines.prefixed import tenant_engine
    from memstack.llm.chat import ChatClient
    from services.dream._openai_server import fake_openai

    mem = Memory(tenant_engine(engine, "default"))
    try:
        notes = mem.long_term("ana")
        notes.save(content="Ana lives in Lisbon")
        # a duplicate for the dedupe pass, under an id: without one, the save would return the first entry
        notes.save(id="lisbon-2", content="Ana lives in Lisbon!")
        violin = notes.save(content="Ana plays the violin")
        with fake_openai(["this is not JSON"]) as model:
            (skipped,) = mem.dream("ana", model=ChatClient(model.url, "m")).run(["consolidate"])
        (applied,) = mem.dream("ana").run(["dedupe"])
        message = mem.conversations.append("support-1", "user", "hello there")
    finally:
        mem.close()
    assert skipped.status == "skipped" and skipped.reason

    page.goto(f"{keyless}/ui/#memories/ana/{violin.id}")
    rows = page.locator("#memory-results tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Ana plays the violin")
    expect(page.locator("#memory-summary")).to_have_text(f"Scope ana · memory {violin.id}")
    expect(page.get_by_role("list", name="Scopes").get_by_role("button", name="ana")).to_have_attribute(
        "aria-current", "true"
    )
    shoot("memory-link")

    page.goto(f"{keyless}/ui/#dream/ana/{applied.id}")
    expect(page.get_by_role("heading", name=f"Record {applied.id} · dedupe · applied")).to_be_visible()
    skipped_row = page.locator(f'#dream-records tr[data-record-id="{skipped.id}"]')
    expect(skipped_row.locator("td.reason")).to_have_text(skipped.reason)
    shoot("dream-link")

    page.goto(f"{keyless}/ui/#conversations/support-1")
    expect(page.locator("#conversation-detail")).to_contain_text("hello there")
    assert page.url.endswith("#conversations/support-1") and message.message_id
    shoot("conversation-link")


def test_a_board_shows_its_reserved_keys_apart_and_only_when_set(
    engine: Engine, keyless: str, page: Any, shoot: Any
) -> None:
    from memstack import Memory
    from memstack.engines.prefixed import tenant_engine

    _put(f"{keyless}/v1/shared/team/keys/plan", json={"value": ["research", "write"]}).raise_for_status()
    page.goto(f"{keyless}/ui/#shared")
    page.get_by_role("button", name="team").click()
    expect(page.locator("#board-state")).to_have_text("live: team (1 key)")
    expect(page.locator("#board-keys tbody tr")).to_have_count(1)  # plan: no data/results/messages/session_id
    expect(page.locator("#board-reserved-section")).to_be_hidden()
    shoot("board-user-keys")
    mem = Memory(tenant_engine(engine, "default"))
    try:
        mem.shared("team").append_result({"answer": 42})  # a reserved key, written by an agent
    finally:
        mem.close()
    page.get_by_role("button", name="Watch").click()
    expect(page.locator('#board-reserved tr[data-key="results"]')).to_contain_text("42")
    expect(page.locator("#board-reserved-section")).to_be_visible()
    expect(page.locator('#board-keys tr[data-key="results"]')).to_have_count(0)
    shoot("board-reserved-keys")


def test_the_overview_lists_the_latest_changes_across_tiers_newest_first(
    keyless: str, clock: ManualClock, page: Any, shoot: Any
) -> None:
    _post(f"{keyless}/v1/sessions", json={"session_id": "s1"}).raise_for_status()
    clock.advance(10)  # the engine runs on this clock: the changes get distinct times
    _put(f"{keyless}/v1/sessions/s1/keys/topic", json={"value": "billing"}).raise_for_status()
    clock.advance(10)
    saved = _post(f"{keyless}/v1/memories", params={"scope": "ana"}, json={"content": "Ana likes tea"})
    saved.raise_for_status()
    clock.advance(10)
    _post(f"{keyless}/v1/memories", params={"scope": "bob"}, json={"content": "Bob likes jazz"})
    page.goto(f"{keyless}/ui/")
    feed = page.get_by_role("list", name="Latest changes").get_by_role("listitem")
    expect(feed).to_have_count(3)
    expect(feed.nth(0)).to_contain_text("memory in bob saved: Bob likes jazz")
    expect(feed.nth(1)).to_contain_text("memory in ana saved: Ana likes tea")
    expect(feed.nth(2)).to_contain_text("session s1: put topic")
    shoot("overview-activity")
    feed.nth(1).get_by_role("link").click()
    expect(page.locator("#memory-results")).to_contain_text("Ana likes tea")
    assert page.url.endswith(f"#memories/ana/{saved.json()['id']}")
