"""The inspector in a real Chromium: sign in, find data made through the API, watch a board live."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from doors.ui._live import Live, live_server
from memstack.engines import Engine

pytest.importorskip("playwright")
from playwright.sync_api import expect


@pytest.fixture
def live(engine: Engine) -> Iterator[Live]:
    with live_server(engine) as server:
        yield server


def sign_in(page: Any, live: Live, view: str = "sessions") -> None:
    page.goto(f"{live.url}/ui/#{view}")
    page.get_by_label("API key").fill(live.token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("navigation", name="Memory tiers")).to_be_visible()


def test_sign_in_refuses_a_wrong_key_and_keeps_the_key_out_of_urls(live: Live, page: Any, shoot: Any) -> None:
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    page.goto(f"{live.url}/ui")
    page.get_by_label("API key").fill("msk_wrong_key")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("This key is not valid here.")
    shoot("refused")
    sign_in(page, live)
    shoot("signed-in")
    assert urls and all(live.token not in url for url in urls)
    assert live.token not in page.url
    page.reload()  # the key lives in the tab's session storage: still signed in
    expect(page.get_by_role("navigation", name="Memory tiers")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("API key")).to_be_focused()


def test_sessions_show_values_and_history(live: Live, page: Any, shoot: Any) -> None:
    live.api.post("/v1/sessions", json={"session_id": "support-42"}).raise_for_status()
    topic = {"value": {"product": "kettle"}}
    live.api.put("/v1/sessions/support-42/keys/topic", json=topic).raise_for_status()
    live.api.post("/v1/sessions/support-42/keys/turns/increment", json={"amount": 3}).raise_for_status()
    sign_in(page, live)
    page.get_by_role("button", name="support-42").click()
    values = page.get_by_role("table", name="Values of session support-42")
    expect(values).to_contain_text("kettle")
    expect(values.get_by_role("row", name="turns")).to_contain_text("3")
    history = page.get_by_role("table", name="History of session support-42")
    expect(history.get_by_role("row")).to_have_count(3)  # header + put + increment
    expect(history).to_contain_text("Z")  # ISO-8601 UTC
    shoot("session")


def test_conversation_tree_draws_branches_and_the_active_thread(live: Live, page: Any, shoot: Any) -> None:
    post = live.api.post
    for role, text, mid, parent in [
        ("user", "What is a good tea?", "m1", None),
        ("assistant", "Sencha is a fine green tea.", "m2", "m1"),
        ("assistant", "Try an oolong, lightly roasted.", "m3", "m1"),  # a regeneration: a second branch
        ("user", "How hot should the water be?", "m4", "m3"),
    ]:
        body = {"role": role, "content": text, "message_id": mid, "parent_message_id": parent}
        post("/v1/conversations/chat-1/messages", json=body).raise_for_status()
    sign_in(page, live, "conversations")
    page.get_by_role("button", name="chat-1").click()
    expect(page.locator("#conversation-summary")).to_have_text(
        "4 messages · 1 branch point · active thread 3 messages, "
        + str(sum(m["token_count"] for m in live.api.get("/v1/conversations/chat-1/thread").json()["items"]))
        + " tokens"
    )
    branches = page.get_by_role("list", name="2 branches")
    expect(branches).to_be_visible()
    expect(branches.locator(".branch-label")).to_have_text(["Branch 1 of 2", "Branch 2 of 2 (active)"])
    active = page.locator("article.msg.active")
    expect(active).to_have_count(3)
    expect(page.locator('article[data-message-id="m2"]')).not_to_have_class("msg active")
    expect(page.locator('article[data-message-id="m3"]')).to_contain_text("tokens")
    shoot("tree")


def test_memory_search_shows_scores_and_edits_and_deletes(live: Live, page: Any, shoot: Any) -> None:
    save = live.api.post
    tea = {"content": "Ana drinks green tea every morning", "category": "food", "tags": ["drinks"]}
    save("/v1/memories?scope=ana", json=tea).raise_for_status()
    runs = {"content": "Ana runs on Sundays", "category": "sport"}
    save("/v1/memories?scope=ana", json=runs).raise_for_status()
    sign_in(page, live, "memories")
    page.get_by_role("list", name="Scopes").get_by_role("button", name="ana").click()
    expect(page.locator("#memory-summary")).to_have_text("Scope ana · 2 newest memories")
    expect(page.locator("#memory-count")).to_have_text("2 stored · 2 current")
    page.get_by_label("Query").fill("tea")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("#memory-summary")).to_contain_text("Scope ana · 1 result for “tea”")
    row = page.locator("#memory-results tbody tr[data-memory-id]")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("green tea")
    cells = row.locator("td.num")
    assert float(cells.nth(0).inner_text()) > 0 and float(cells.nth(1).inner_text()) > 0  # fused, BM25
    expect(page.get_by_role("list").filter(has_text="sport")).to_be_visible()  # categories facet
    shoot("search")
    memory_id = row.get_attribute("data-memory-id")
    page.get_by_role("button", name=f"Edit memory {memory_id}").click()
    page.get_by_label("Content").fill("Ana drinks jasmine tea every morning")
    page.get_by_label("Tags (comma-separated)").fill("drinks, mornings")
    page.get_by_role("button", name="Save").click()
    expect(row).to_contain_text("jasmine")
    stored = live.api.get(f"/v1/memories/{memory_id}?scope=ana").json()
    assert stored["content"] == "Ana drinks jasmine tea every morning"
    assert stored["tags"] == ["drinks", "mornings"]
    shoot("edited")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name=f"Delete memory {memory_id}").click()
    expect(page.locator("#memory-results tbody tr")).to_have_count(0)
    expect(page.locator("#memory-count")).to_have_text("1 stored · 1 current")
    assert live.api.get(f"/v1/memories/{memory_id}?scope=ana").status_code == 404


def test_working_memory_counts_down_ttls(live: Live, page: Any, shoot: Any) -> None:
    body = {"value": {"step": 2}, "ttl": 120, "category": "plan"}
    live.api.put("/v1/working/plan?namespace=agent/7", json=body).raise_for_status()
    sign_in(page, live, "working")
    page.get_by_role("list", name="Namespaces").get_by_role("button", name="agent/7").click()
    row = page.locator("#working-entries tbody tr")
    expect(row).to_contain_text("plan")
    ttl = row.locator("td.ttl")
    expect(ttl).to_have_text(re.compile(r"^(1 min \d+ s|\d+ s)$"))
    shoot("working")


def test_shared_board_updates_live(live: Live, page: Any, shoot: Any) -> None:
    live.api.put("/v1/shared/pipeline/keys/status", json={"value": "planning"}).raise_for_status()
    sign_in(page, live, "shared")
    page.get_by_role("list", name="Boards").get_by_role("button", name="pipeline").click()
    expect(page.locator("#board-state")).to_have_text(re.compile(r"^live: pipeline \(\d+ keys?\)$"))
    status = page.locator('#board-keys tr[data-key="status"]')
    expect(status).to_contain_text("planning")
    live.api.put("/v1/shared/pipeline/keys/status", json={"value": "writing"}).raise_for_status()
    expect(status).to_contain_text("writing")
    live.api.put("/v1/shared/pipeline/keys/draft", json={"value": {"words": 120}}).raise_for_status()
    expect(page.locator('#board-keys tr[data-key="draft"]')).to_contain_text("120")
    expect(page.locator("#board-log li")).to_have_count(2)
    assert "memstack_subscriptions 1.0" in live.api.get("/metrics").text  # this page's one stream
    # Deletes publish no change in shared memory; a new snapshot (Watch again) drops the key.
    live.api.delete("/v1/shared/pipeline/keys/draft").raise_for_status()
    page.get_by_role("button", name="Watch").click()
    expect(page.locator('#board-keys tr[data-key="draft"]')).to_have_count(0)
    expect(status).to_contain_text("writing")
    shoot("board")
    page.get_by_role("button", name="Sessions").click()  # leaving the view ends the stream
    expect(page.locator("#board-state")).to_be_hidden()


def test_keyboard_moves_between_tabs(live: Live, page: Any) -> None:
    sign_in(page, live)
    page.get_by_role("button", name="Sessions").focus()
    page.keyboard.press("ArrowRight")
    expect(page.get_by_role("button", name="Conversations")).to_have_attribute("aria-current", "page")
    expect(page.get_by_role("heading", name="Conversations", exact=True)).to_be_visible()
    assert page.url.endswith("#conversations")


def test_dream_view_shows_a_dedupe_diff_and_undoes_it(live: Live, page: Any, shoot: Any) -> None:
    texts = ["Zoe drinks coffee every single morning", "zoe drinks coffee every single morning.", "Zoe swims"]
    # ids: a save of content equal to a current entry without one returns that entry
    ids = [
        live.api.post("/v1/memories?scope=zoe", json={"id": f"zoe-{i}", "content": t}).json()["id"]
        for i, t in enumerate(texts)
    ]
    ran = live.api.post("/v1/dream/runs?scope=zoe", json={"passes": ["dedupe"]}).json()["items"][0]
    assert ran["status"] == "applied"
    (gone,) = set(ids[:2]) - {ran["created"][0]["id"]}
    assert live.api.get(f"/v1/memories/{gone}?scope=zoe").status_code == 404
    sign_in(page, live, "dream")
    page.get_by_role("list", name="Dream scopes").get_by_role("button", name="zoe").click()
    row = page.locator(f'#dream-records tr[data-record-id="{ran["id"]}"]')
    expect(row).to_contain_text("dedupe")
    expect(row).to_contain_text("applied")
    # the listing's counts (retired_count, created_count of the history summary)
    expect(row.locator("td.num").nth(1)).to_have_text("2")
    expect(row.locator("td.num").nth(2)).to_have_text("1")
    page.get_by_role("button", name=f"Open record {ran['id']}").click()
    retired = page.get_by_role("region", name="Retired entries")
    expect(retired.locator("li.entry")).to_have_count(2)
    expect(retired).to_contain_text("zoe drinks coffee every single morning.")
    created = page.get_by_role("region", name="Created entries")
    expect(created.locator("li.entry")).to_have_count(1)
    expect(created).to_contain_text("from ")
    expect(created).to_contain_text(gone)
    shoot("dream-diff")
    dialogs: list[str] = []

    def accept(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    page.get_by_role("button", name=f"Undo this pass: record {ran['id']}").click()
    undo_summary = re.compile(r"^2 entries restored · \d+ removed · \d+ kept$")
    expect(page.locator("#dream-undo-summary")).to_have_text(undo_summary)
    expect(row).to_contain_text("undone")
    expect(page.get_by_role("button", name=f"Undo this pass: record {ran['id']}")).to_have_count(0)
    assert dialogs and ran["id"] in dialogs[0]
    shoot("dream-undone")
    assert all(live.api.get(f"/v1/memories/{i}?scope=zoe").status_code == 200 for i in ids)
    status = live.api.get(f"/v1/dream/records/{ran['id']}?scope=zoe").json()["status"]
    assert status == "undone"


def test_forget_view_removes_a_scope_and_shows_the_report(live: Live, page: Any, shoot: Any) -> None:
    for text in ("Yara keeps bees", "Yara lives in Porto"):
        assert live.api.post("/v1/memories?scope=yara", json={"content": text}).status_code == 201
    assert live.api.post("/v1/memories?scope=kept", json={"content": "Kim stays"}).status_code == 201
    sign_in(page, live, "forget")
    page.get_by_label("What to forget").select_option("scope")
    expect(page.locator("#forget-options option")).to_have_count(2)  # the scopes to pick from
    assert page.locator("#forget-options option").evaluate_all("os => os.map(o => o.value)") == [
        "kept",
        "yara",
    ]
    page.get_by_label("Id or name").fill("yara")
    dialogs: list[str] = []

    def accept(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    page.get_by_role("button", name="Forget it").click()
    expect(page.locator("#forget-summary")).to_have_text(
        re.compile(r"^Forgot scope yara: \d+ keys removed, 0 remaining\.$")
    )
    expect(page.locator("#forget-table")).to_contain_text("long_term")
    assert dialogs and "yara" in dialogs[0]
    shoot("forget-report")
    assert live.api.get("/v1/memories?scope=yara").json()["items"] == []
    assert len(live.api.get("/v1/memories?scope=kept").json()["items"]) == 1


def test_every_tier_lists_its_ids_a_page_at_a_time(live: Live, page: Any, shoot: Any) -> None:
    for i in range(201):
        live.api.post(f"/v1/memories?scope=s{i:03d}", json={"content": f"fact {i}"}).raise_for_status()
    live.api.put("/v1/working/notes?namespace=session/w1", json={"value": 1}).raise_for_status()
    live.api.put("/v1/working/alert?namespace=patrol/hb", json={"value": 2}).raise_for_status()
    for board in ("alpha", "beta"):
        live.api.put(f"/v1/shared/{board}/keys/k", json={"value": board}).raise_for_status()
    sign_in(page, live, "memories")
    scopes = page.get_by_role("list", name="Scopes").get_by_role("button")
    expect(scopes).to_have_count(200)  # one page
    page.get_by_role("button", name="More scopes").click()
    expect(scopes).to_have_count(201)
    expect(page.get_by_role("button", name="More scopes")).to_be_hidden()
    scopes.last.click()
    expect(page.locator("#memory-results")).to_contain_text("fact 200")
    shoot("scopes")
    page.get_by_role("button", name="Working memory").click()
    namespaces = page.get_by_role("list", name="Namespaces").get_by_role("button")
    expect(namespaces).to_have_text(["patrol/hb", "session/w1"])
    namespaces.first.click()
    expect(page.locator("#working-entries")).to_contain_text("patrol/hb/alert")
    shoot("namespaces")
    page.get_by_role("button", name="Shared boards").click()
    boards = page.get_by_role("list", name="Boards").get_by_role("button")
    expect(boards).to_have_text(["alpha", "beta"])
    boards.last.click()
    expect(page.locator("#board-state")).to_have_text("live: beta (1 key)")
    shoot("boards")
