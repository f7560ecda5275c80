"""The browser tests' app: served on a free port, driven by Debian's Chromium."""

from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from annotator.data.importers import import_items
from annotator.db import session_scope
from annotator.study.studies import create_study
from annotator.study.studyfile import parse_study_file
from tests.data.studies import FINE_SCALES_TOML, STS_B_TOML, study_toml

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

STUDY = study_toml(
    name="Browser study", slug="browser", scales=FINE_SCALES_TOML, benchmarks=STS_B_TOML
)

ITEMS = [
    {
        "item_id": f"s{i}",
        "benchmark": "sts-b",
        "sentence1": f"A person is slicing vegetable number {i} <carefully>.",
        "sentence2": f"Someone cuts vegetable {i} with a knife.",
    }
    for i in range(1, 11)
]


def add_study(app, toml: str, items: list[dict], folder: Path) -> None:
    """Create a study from its file's text and import its items."""
    spec = parse_study_file(toml)
    path = folder / f"{spec.slug}-items.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in items) + "\n", "utf-8")
    with session_scope(app) as session:
        import_items(session, create_study(session, spec), path)


@contextmanager
def serve(app, *, hostname: str = "127.0.0.1"):
    """Serve ``app`` on a free port of 127.0.0.1; yields the base URL, naming the
    server by ``hostname`` (``"localhost"``: Chromium accepts Secure cookies from it
    over plain http)."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{hostname}:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)


@pytest.fixture
def served_app(make_app, tmp_path):
    """The app on a free port, with the real clock and CSRF on."""
    app = make_app(WTF_CSRF_ENABLED=True, CLOCK=None)
    add_study(app, STUDY, ITEMS, tmp_path)
    with serve(app) as base:
        yield app, base


@pytest.fixture
def browser():
    """Debian's Chromium through Playwright; skipped (failed in CI) when absent."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        watched = _CspWatched(chromium)
        try:
            yield watched
        finally:
            chromium.close()
        # Every page ran under the app's Content-Security-Policy: nothing blocked.
        assert watched.violations == []


class _CspWatched:
    """The browser, with every page's Content-Security-Policy reports collected."""

    def __init__(self, chromium) -> None:
        self._chromium = chromium
        self.violations: list[str] = []

    def _watch(self, target) -> None:
        def note(message) -> None:
            if "Content Security Policy" in message.text:
                self.violations.append(f"{message.location.get('url')}: {message.text}")

        target.on("console", note)

    def new_page(self, *args, **kwargs):
        page = self._chromium.new_page(*args, **kwargs)
        self._watch(page)
        return page

    def new_context(self, *args, **kwargs):
        context = self._chromium.new_context(*args, **kwargs)
        self._watch(context)
        return context

    def __getattr__(self, name):
        return getattr(self._chromium, name)


def wait_until(page, expression: str, arg=None, *, timeout: float = 10.0) -> None:
    """Poll ``page.evaluate(expression, arg)`` until it is truthy.

    Playwright's ``wait_for_function`` compiles its predicate in the page,
    which the app's Content-Security-Policy (no ``unsafe-eval``) forbids;
    ``evaluate`` runs through the DevTools protocol and is allowed.
    """
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression, arg):
        if time.monotonic() > deadline:
            raise AssertionError(f"not true after {timeout} s: {expression}")
        time.sleep(0.05)
