"""The inspector's memory loop in a real Chromium, on every engine: two users remember through the
page, a recall for one shows their message with its message id and conversation and never the
other's, the remember answer's extract status is shown, and hostile text stays text."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from doors.ui._live import Live, live_server
from memstack import Memory
from memstack.engines import Engine
from memstack.engines.prefixed import tenant_engine
from memstack.tiers.conversation.turns import _LOG

pytest.importorskip("playwright")
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("MEMSTACK_LOOP_SHOTS", "/tmp/loopui-shots"))
HOSTILE = '<img src=x onerror="window.__pwned=1"><b>bold</b> & "quotes"'


@pytest.fixture
def live(engine: Engine) -> Iterator[Live]:
    with live_server(engine) as server:
        yield server


@pytest.fixture
def shots(request: pytest.FixtureRequest) -> Any:
    SHOTS.mkdir(parents=True, exist_ok=True)
    engine_id = request.node.callspec.id if hasattr(request.node, "callspec") else "x"

    def shoot(page: Any, label: str) -> None:
        page.screenshot(
            path=str(SHOTS / f"{request.node.originalname}-{engine_id}-{label}.png"), full_page=True
        )

    return shoot


def _open(page: Any, live: Live) -> None:
    page.goto(f"{live.url}/ui/#loop")
    page.get_by_label("API key").fill(live.token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Remember / recall", exact=True)).to_be_visible()


def _remember(page: Any, user: str, messages: list[tuple[str, str]], conversation: str = "") -> list[str]:
    """Remember ``messages`` (role, text) for ``user`` through the form; the message ids shown."""
    view = page.locator("#view-loop")
    view.get_by_label("User id").fill(user)
    view.get_by_role("textbox", name="Conversation (optional)").fill(conversation)
    for n, (role, text) in enumerate(messages):
        if n:
            page.get_by_role("button", name="Add message").click()
        page.get_by_label("Role of message").nth(n).select_option(role)
        page.get_by_label("Text of message").nth(n).fill(text)
    page.get_by_role("button", name="Remember", exact=True).click()
    summary = page.locator("#loop-remembered-summary")
    expect(summary).to_contain_text(f"Remembered {len(messages)} message")
    expect(summary).to_contain_text(f"of {user} in conversation {conversation or 'user-' + user}")
    rows = page.get_by_role("table", name="Messages remembered").locator("tbody tr")
    expect(rows).to_have_count(len(messages))
    ids: list[str] = rows.evaluate_all("rows => rows.map(r => r.dataset.messageId)")
    return ids


def _recall(page: Any, user: str, query: str) -> Any:
    view = page.locator("#view-loop")
    view.get_by_label("User id").fill(user)
    view.get_by_label("What to recall").fill(query)
    page.get_by_role("button", name="Recall", exact=True).click()
    expect(page.locator("#loop-recall-summary")).to_contain_text(f"for “{query}” · user {user}")
    return page.locator("#loop-results tbody tr")


def test_recall_for_one_user_shows_their_message_with_its_id_and_never_anothers(
    live: Live, page: Any, shots: Any
) -> None:
    _open(page, live)
    expect(page.get_by_label("Text of message")).to_have_count(1)  # one empty message to type
    shots(page, "01-empty")
    alice = _remember(
        page,
        "alice",
        [("user", "My locker code is 4417, locker by the north door."), ("assistant", "Noted, 4417.")],
    )
    expect(page.locator("#loop-remembered-summary")).to_contain_text("extract skipped")
    shots(page, "02-alice-remembered")
    bob = _remember(page, "bob", [("user", "My locker code is 9923, near the gym.")], conversation="bob-gym")
    assert len(alice) == 2 and len(bob) == 1 and not set(alice) & set(bob)
    # The form is cleared for the next turn: one empty message again.
    expect(page.get_by_label("Text of message")).to_have_count(1)
    expect(page.get_by_label("Text of message")).to_have_value("")

    rows = _recall(page, "alice", "locker code")
    expect(rows.first).to_be_visible()
    expect(page.locator("#loop-remembered")).to_be_empty()  # bob's remember answer went with his id
    table = page.locator("#loop-results")
    expect(table).to_contain_text("user: My locker code is 4417, locker by the north door.")
    first = rows.filter(has_text="4417, locker by the north door")
    expect(first.locator("td").nth(1)).to_have_text("turn")
    expect(first.locator(".loop-message-ids")).to_have_text(f"message {alice[0]}")
    expect(first.locator(".loop-conversations")).to_have_text("conversation user-alice")
    expect(first.locator("td").nth(2)).to_have_text(re.compile(r"^\d+\.\d{3}$"))
    shots(page, "03-alice-recall")
    text = table.inner_text()
    assert "9923" not in text and "gym" not in text and bob[0] not in text and "bob" not in text, text

    rows = _recall(page, "bob", "locker code")  # bob's own recall does find his: the check above can fail
    expect(page.locator("#loop-results")).to_contain_text("9923")
    expect(rows.filter(has_text="9923").locator(".loop-message-ids")).to_have_text(f"message {bob[0]}")
    expect(rows.filter(has_text="9923").locator(".loop-conversations")).to_have_text("conversation bob-gym")
    bob_text = page.locator("#loop-results").inner_text()
    assert "4417" not in bob_text and alice[0] not in bob_text, bob_text
    shots(page, "04-bob-recall")

    # The provenance link opens the conversation the turn was said in.
    rows.filter(has_text="9923").get_by_role("link", name="bob-gym").click()
    expect(page.locator("#conversation-summary")).to_contain_text("1 message")
    expect(page.locator(f'article[data-message-id="{bob[0]}"]')).to_contain_text("My locker code is 9923")


def test_hostile_text_is_remembered_and_shown_as_text(live: Live, page: Any, shots: Any) -> None:
    _open(page, live)
    ids = _remember(page, "mallory", [("user", HOSTILE)], conversation="evil")
    remembered = page.get_by_role("table", name="Messages remembered")
    expect(remembered).to_contain_text(HOSTILE)
    rows = _recall(page, "mallory", "quotes bold")
    expect(rows.first.locator("td").nth(3)).to_contain_text("user: " + HOSTILE)
    expect(rows.first.locator(".loop-message-ids")).to_have_text(f"message {ids[0]}")
    shots(page, "hostile")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#view-loop img, #view-loop b").count() == 0


@pytest.mark.refused(409)
def test_a_refused_remember_says_why_keeps_the_typed_turn_and_shows_nothing_of_the_owner(
    live: Live, page: Any, shots: Any
) -> None:
    _open(page, live)
    _remember(page, "mallory", [("user", "Mallory's safe code is 5150.")], conversation="vault")
    view = page.locator("#view-loop")
    view.get_by_label("User id").fill("eve")  # another user writing into mallory's conversation
    view.get_by_role("textbox", name="Conversation (optional)").fill("vault")
    page.get_by_label("Text of message").first.fill("Eve was here.")
    page.get_by_role("button", name="Remember", exact=True).click()
    status = page.locator("#status")
    expect(status).to_have_class(re.compile(r"\bbad\b"))
    expect(status).to_contain_text("conversation 'vault': holds messages of another user or of nobody")
    expect(page.get_by_label("Text of message").first).to_have_value("Eve was here.")  # kept to correct
    expect(page.locator("#loop-remember-refused")).to_have_text(
        "Not remembered: conversation 'vault': holds messages of another user or of nobody"
    )
    shots(page, "refused")
    assert "5150" not in page.locator("#view-loop").inner_text()
    rows = _recall(page, "mallory", "safe code")  # the refusal wrote nothing into mallory's scope
    expect(rows.filter(has_text="5150")).to_have_count(1)
    assert "Eve was here" not in page.locator("#loop-results").inner_text()


def test_each_kind_shows_its_provenance_and_a_model_queues_the_extract(
    live: Live, page: Any, shots: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A chat model on loopback where nothing listens: the pass it queues is due only after the
    # 30 s debounce, long after this test, and could reach nothing off this machine anyway.
    monkeypatch.setenv("MEMSTACK_CHAT_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MEMSTACK_CHAT_MODEL", "scripted")
    _open(page, live)
    ids = _remember(page, "carol", [("user", "I moved my bike lock to locker 12 today.")])
    expect(page.locator("#loop-remembered-summary")).to_contain_text("extract queued")
    # What an extract pass saves (its source and the turns it cites), and a memory saved by hand.
    fact = {"source": "extracted", "message_ids": [ids[0]], "session_ids": ["user-carol"]}
    post = live.api.post
    post(
        "/v1/memories?scope=carol",
        json={"content": "Carol keeps her bike lock in locker 12", "metadata": fact},
    ).raise_for_status()
    post("/v1/memories?scope=carol", json={"content": "Carol's bike lock is orange"}).raise_for_status()
    rows = _recall(page, "carol", "bike lock locker")
    expect(rows).to_have_count(3)
    kinds = {row.locator("td.kind").inner_text(): row for row in rows.all()}
    assert sorted(kinds) == ["fact", "memory", "turn"], kinds
    expect(kinds["fact"].locator(".loop-message-ids")).to_have_text(f"message {ids[0]}")
    expect(kinds["fact"].locator(".loop-conversations")).to_have_text("conversation user-carol")
    expect(kinds["turn"].locator(".loop-message-ids")).to_have_text(f"message {ids[0]}")
    expect(kinds["memory"].locator("td.provenance")).to_have_text("none recorded")
    shots(page, "kinds")


@pytest.fixture
def tenant(live: Live, engine: Engine) -> Iterator[Memory]:
    """The memory of the tenant the page acts for."""
    memory = Memory(tenant_engine(engine, live.tenant))
    yield memory
    memory.close()


def test_the_older_turn_log_is_copied_into_conversations_once(
    live: Live, page: Any, shots: Any, tenant: Memory
) -> None:
    # An entry as logged before turns went to conversations.
    entry = {"session_id": "s9", "role": "user", "content": "dora likes quinces", "subject": "dora"}
    tenant.engine.rpush(
        tenant.turns._base + _LOG, json.dumps({**entry, "message_id": "d1", "timestamp": 1.0})
    )
    _open(page, live)
    migrate = page.get_by_role("button", name="Copy the turn log into conversations")
    migrate.click()
    expect(page.locator("#loop-migrate-summary")).to_have_text("Copied 1 turn-log entry into conversations.")
    shots(page, "migrated")
    migrate.click()
    expect(page.locator("#loop-migrate-summary")).to_have_text(
        "Nothing to copy: every turn-log entry is in its conversation."
    )
    assert [m.content for m in tenant.conversations.messages("s9")] == ["dora likes quinces"]
