"""The inspector and the API docs in a real Chromium: routing only over the inspector's own views,
a keyless server opened without a sign-in, and a Content-Security-Policy with
``frame-ancestors 'none'`` on every page the server renders."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from _serving import serving
from doors.ui._live import Live, live_server
from memstack.doors.server import ServerSettings, create_app
from memstack.engines import Engine
from memstack.engines.memory import MemoryEngine

pytest.importorskip("playwright")
from playwright.sync_api import expect

PAGES = ["/ui/", "/docs", "/redoc", "/docs/oauth2-redirect"]


@pytest.fixture
def live(engine: Engine) -> Iterator[Live]:
    with live_server(engine) as server:
        yield server


@pytest.fixture
def keyless(engine: Engine) -> Iterator[str]:
    app = create_app(engine, ServerSettings(auth="none"), mcp=False)
    with serving(app) as url:
        yield url


@pytest.fixture(scope="module")
def pages_server() -> Iterator[str]:
    """A server for what no engine changes (the docs pages and their headers): one, on memory://."""
    engine = MemoryEngine()
    try:
        with serving(create_app(engine, ServerSettings(auth="none"), mcp=False)) as url:
            yield url
    finally:
        engine.close()


def _sign_in(page: Any, live: Live, hash_: str) -> None:
    page.goto(f"{live.url}/ui/#{hash_}")
    page.get_by_label("API key").fill(live.token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("navigation", name="Memory tiers")).to_be_visible()


BUILTINS = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]


def test_a_hash_naming_an_object_builtin_shows_the_sessions_view(live: Live, page: Any, shoot: Any) -> None:
    live.api.post("/v1/sessions", json={"session_id": "visible-1"}).raise_for_status()
    _sign_in(page, live, BUILTINS[0])  # straight from the address bar
    expect(page.get_by_role("heading", name="Sessions", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="visible-1")).to_be_visible()
    assert page.url.endswith("#sessions")
    shoot("hash-constructor")
    for name in BUILTINS:  # typed into a signed-in tab: each falls back to the sessions view
        page.get_by_role("button", name="Conversations").click()
        expect(page.get_by_role("heading", name="Conversations", exact=True)).to_be_visible()
        page.evaluate(f"location.hash = '#{name}'")
        expect(page.get_by_role("heading", name="Sessions", exact=True)).to_be_visible()
        expect(page.get_by_role("button", name="visible-1")).to_be_visible()
        assert page.url.endswith("#sessions"), (name, page.url)


def test_a_keyless_server_opens_without_a_sign_in_and_names_its_tenant(
    keyless: str, page: Any, shoot: Any
) -> None:
    httpx.post(f"{keyless}/v1/sessions", json={"session_id": "keyless-1"}).raise_for_status()
    page.goto(f"{keyless}/ui/#sessions")
    expect(page.get_by_role("navigation", name="Memory tiers")).to_be_visible()
    expect(page.locator("#who")).to_have_text("Tenant: default (this server needs no key)")
    expect(page.get_by_role("button", name="keyless-1")).to_be_visible()
    expect(page.get_by_label("API key")).to_be_hidden()
    expect(page.get_by_role("button", name="Sign out")).to_be_hidden()
    shoot("keyless")
    page.reload()
    expect(page.get_by_role("button", name="keyless-1")).to_be_visible()


def test_a_signed_in_tab_names_the_tenant_its_key_acts_for(live: Live, page: Any, shoot: Any) -> None:
    page.goto(f"{live.url}/ui/")
    expect(page.get_by_label("API key")).to_be_focused()
    _sign_in(page, live, "sessions")
    expect(page.locator("#who")).to_have_text(f"Tenant: {live.tenant}")
    shoot("tenant")
    page.reload()
    expect(page.locator("#who")).to_have_text(f"Tenant: {live.tenant}")


def test_every_rendered_page_forbids_framing_and_other_origins(live: Live) -> None:
    for path in [*PAGES, "/v1/sessions", "/healthz", "/openapi.json", "/nowhere", "/ui/static/app.js"]:
        response = live.api.get(path)
        policy = response.headers.get("content-security-policy", "")
        assert "frame-ancestors 'none'" in policy, (path, policy)
        assert "default-src 'none'" in policy or "default-src 'self'" in policy, (path, policy)
        assert "unsafe-eval" not in policy and "*" not in policy and "http" not in policy, (path, policy)
        assert response.headers["x-content-type-options"] == "nosniff", path
    assert (
        "'unsafe-inline'"
        not in live.api.get("/docs").headers["content-security-policy"].split("style-src")[0]
    )


def _watch_violations(context: Any) -> None:
    context.add_init_script(
        "window.__violations = [];"
        "document.addEventListener('securitypolicyviolation',"
        " (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));"
    )


def test_docs_render_under_their_policy_and_reach_no_other_host(
    pages_server: str, browser: Any, screenshot_dir: Any
) -> None:
    base = pages_server
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    context.set_default_timeout(20_000)
    _watch_violations(context)
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{base}/docs")
        # Generous waits: the bundles are megabytes of script, parsed on a shared, loaded machine.
        expect(page.locator(".opblock-summary-path").first).to_be_visible(timeout=60_000)
        assert page.locator(".opblock").count() > 40  # every operation is drawn
        page.screenshot(path=str(screenshot_dir / "docs-swagger.png"))
        assert page.evaluate("window.__violations") == []
        page.goto(f"{base}/redoc")
        expect(page.get_by_role("heading", name=re.compile(r"^memstack"))).to_be_visible(timeout=60_000)
        page.get_by_placeholder("Search...").fill("atomically")  # the search index runs in a blob: worker
        results = page.locator("[data-role='search:results']")
        expect(results).to_contain_text("Add a number to the number at a key", timeout=60_000)
        page.screenshot(path=str(screenshot_dir / "docs-redoc.png"))
        # ReDoc asks for its vendor's logo on a CDN: the policy refuses it, and nothing else.
        violations = page.evaluate("window.__violations")
        assert all(v.startswith("img-src https://cdn.redoc.ly/") for v in violations), violations
        assert errors == [], errors
    finally:
        context.close()
    others = [u for u in requests if not u.startswith((base, "data:", "blob:", "https://cdn.redoc.ly/"))]
    assert others == [], others


@pytest.mark.parametrize("path", ["/ui/", "/docs", "/redoc"])
def test_no_other_page_can_frame_them(pages_server: str, browser: Any, path: str) -> None:
    context = browser.new_context()
    context.set_default_timeout(20_000)
    try:
        page = context.new_page()
        html = f'<h1>elsewhere</h1><iframe src="{pages_server}{path}" width="800" height="400"></iframe>'
        with page.expect_console_message(lambda message: "frame-ancestors" in message.text) as refused:
            page.set_content(html)
        assert "has been blocked" in refused.value.text
        framed = [f for f in page.frames if f is not page.main_frame and not f.is_detached()]
        texts = [f.evaluate("document.body ? document.body.innerText : ''") for f in framed]
        assert not any("memstack" in text for text in texts), texts
    finally:
        context.close()


def test_long_unbroken_text_wraps_inside_the_tables(live: Live, page: Any, shoot: Any) -> None:
    unbroken = "x" * 40 + "https://example.com/" + "a1B2c3" * 100
    live.api.post("/v1/memories?scope=wide", json={"content": unbroken}).raise_for_status()
    _sign_in(page, live, "memories")
    page.get_by_role("list", name="Scopes").get_by_role("button", name="wide").click()
    table = page.locator("#memory-results")
    expect(table).to_contain_text("a1B2c3")
    fits = page.evaluate(
        "() => { const t = document.querySelector('#memory-results');"
        " return [t.scrollWidth, t.parentElement.clientWidth, document.documentElement.scrollWidth,"
        " window.innerWidth]; }"
    )
    shoot("long-text")
    table_width, wrap_width, page_width, viewport = fits
    assert table_width <= wrap_width + 1 and page_width <= viewport, fits
