"""Browser fixtures: Debian's Chromium driven by Playwright against a real loopback server.

Playwright never downloads a browser here: it launches ``/usr/bin/chromium`` (``chromium`` on
PATH). The tests skip only when Chromium or Playwright is missing AND ``CI`` is unset; in CI
they fail instead. Each test saves screenshots under ``$MEMSTACK_SCREENSHOTS`` (default: a
temporary directory), never in the repository.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

# Playwright adds --headless and a fresh temporary --user-data-dir to every launch itself.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def chromium_path() -> str | None:
    """Debian's Chromium, or None."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    return found or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


def _require_browser() -> tuple[Any, str]:
    path = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if path is None or sync_playwright is None:
        missing = "chromium" if path is None else "playwright"
        if os.environ.get("CI"):
            pytest.fail(f"{missing} is required for the browser tests in CI (setup.sh --dev installs it)")
        pytest.skip(f"{missing} is not installed")
    return sync_playwright, path


# Package scope: Playwright's sync API runs an event loop on this thread while it is open, so it
# must close before tests outside tests/doors/ui/ call asyncio.run (tests/doors/cli/test_service_cli.py).
@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """One headless Chromium for the whole run, with a fresh profile."""
    sync_playwright, path = _require_browser()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    """Where screenshots go: ``$MEMSTACK_SCREENSHOTS`` or a temporary directory."""
    root = os.environ.get("MEMSTACK_SCREENSHOTS") or tempfile.mkdtemp(prefix="memstack-screenshots-")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass
class Shooter:
    """Saves numbered screenshots of one test."""

    page: Any
    directory: Path
    stem: str
    count: int = 0

    def __call__(self, label: str) -> Path:
        self.count += 1
        path = self.directory / f"{self.stem}-{self.count:02d}-{label}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


def expected(console_error: str, statuses: tuple[int, ...] = ()) -> bool:
    """Chromium logs every refused request; a 401 is what a wrong key must get, and a test marked
    ``refused(status)`` means its page to be refused with that status."""
    return console_error.startswith("Failed to load resource") and any(
        f"status of {status} " in console_error for status in (401, *statuses)
    )


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh browser context (own storage) and page at a laptop size."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1366, "height": 768})
    context.set_default_timeout(15_000)
    # expect() waits as long as actions do: under a busy CI a forget's report (a whole scan on a
    # Redis engine) took longer than expect's own 5 s default once.
    expect.set_options(timeout=15_000)
    tab = context.new_page()
    errors: list[str] = []
    statuses = tuple(status for mark in request.node.iter_markers("refused") for status in mark.args)
    tab.on("pageerror", lambda exc: errors.append(str(exc)))

    def on_console(message: Any) -> None:
        if message.type == "error" and not expected(message.text, statuses):
            errors.append(message.text)

    tab.on("console", on_console)
    try:
        yield tab
    finally:
        context.close()
    assert errors == [], errors  # a script error or a refused request is a defect of the page


@pytest.fixture
def shoot(page: Any, screenshot_dir: Path, request: pytest.FixtureRequest) -> Shooter:
    """``shoot("label")`` saves a full-page screenshot of this test."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
    return Shooter(page, screenshot_dir, stem)
