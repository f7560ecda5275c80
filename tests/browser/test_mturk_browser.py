"""End to end in Debian's Chromium: an MTurk worker in MTurk's frame.

MTurk's sandbox is played by Playwright: its pages (the frame around the
HIT, and the externalSubmit endpoint) are answered locally, so nothing
leaves the machine. The app runs with ``MTURK_FRAME`` on: it may be framed
by MTurk's hosts only, and its cookies are ``SameSite=None; Secure`` so
that they work inside the frame.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.models import Block, User
from tests.data.studies import FINE_SCALES_TOML, STS_B_TOML, study_toml

from .conftest import CHROMIUM, CHROMIUM_ARGS, ITEMS, add_study, serve

WORKER = "A1B2C3D4E5F6G7"
SANDBOX = "https://workersandbox.mturk.com"
STUDY = study_toml(
    name="MTurk browser study",
    slug="hit",
    scales=FINE_SCALES_TOML,
    benchmarks=STS_B_TOML,
    extra='[crowd]\nplatform = "mturk"\n',
)


@pytest.fixture
def mturk_app(make_app, tmp_path):
    app = make_app(WTF_CSRF_ENABLED=True, MTURK_FRAME=True)
    add_study(app, STUDY, ITEMS, tmp_path)
    # localhost: Chromium accepts Secure cookies from it over plain http.
    with serve(app, hostname="localhost") as base:
        yield app, base


@pytest.mark.browser
def test_an_mturk_worker_previews_accepts_and_submits_in_the_frame(mturk_app):
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import expect, sync_playwright

    app, base = mturk_app
    with sync_playwright() as playwright:
        # The test's "MTurk" is a public https origin framing the app on
        # 127.0.0.1: Chromium's local-network-access check would block that
        # (a real deployment is public too), so it is off for this browser.
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=[*CHROMIUM_ARGS, "--disable-features=LocalNetworkAccessChecks"],
        )
        try:
            _worker_session(app, base, browser, expect)
        finally:
            browser.close()


def _worker_session(app, base, browser, expect) -> None:
    context = browser.new_context(viewport={"width": 800, "height": 900})
    context.set_default_timeout(15_000)
    submitted: list[dict] = []

    def hit_url(assignment: str, worker: str | None = None) -> str:
        query = {"assignmentId": assignment, "hitId": "3HITWAVE1", "turkSubmitTo": SANDBOX}
        if worker:
            query["workerId"] = worker
        return f"{base}/s/hit?{urlencode(query)}"

    def sandbox(route) -> None:
        request = route.request
        if request.url.startswith(f"{SANDBOX}/mturk/externalSubmit"):
            submitted.append(parse_qs(request.post_data or ""))
            route.fulfill(status=200, content_type="text/html", body="<p>HIT submitted</p>")
            return
        assignment = "ASSIGNMENT_ID_NOT_AVAILABLE" if "preview" in request.url else "3ASSIGN1"
        worker = None if "preview" in request.url else WORKER
        body = (
            '<!doctype html><html lang="en"><title>MTurk</title>'
            f'<iframe title="HIT" src="{hit_url(assignment, worker)}" '
            'style="width:760px;height:800px"></iframe></html>'
        )
        route.fulfill(status=200, content_type="text/html", body=body)

    context.route(f"{SANDBOX}/**", sandbox)
    page = context.new_page()

    # Preview: the consent and a sample item, nothing stored.
    page.goto(f"{SANDBOX}/projects/preview")
    hit = page.frame_locator("iframe")
    expect(hit.get_by_text("This is a preview")).to_be_visible()
    expect(hit.get_by_text("You agree to rate ten short texts.")).to_be_visible()
    expect(hit.get_by_role("heading", name="A sample item")).to_be_visible()
    with Session(get_engine(app)) as session:
        assert session.exec(select(User).where(User.role == "rater")).all() == []

    # Accepted: consent, questionnaire and a block, all inside the frame.
    page.goto(f"{SANDBOX}/projects/accepted")
    hit = page.frame_locator("iframe")
    hit.get_by_role("button", name="I agree").click()
    expect(hit.get_by_role("heading", name="A few questions about you")).to_be_visible()
    hit.get_by_label("Female", exact=True).check()
    hit.get_by_label("Age in years").fill("41")
    hit.get_by_role("button", name="Continue").click()
    hit.get_by_role("button", name="Start").click()
    progress = hit.locator(".progress-text")
    score = hit.get_by_label("Score", exact=True)
    for position in range(1, 11):
        expect(progress).to_have_text(f"{position} / 10")
        score.fill("2.5")
        score.press("Enter")
    # The page posts the assignment back to MTurk by itself.
    expect(hit.get_by_text("HIT submitted")).to_be_visible()
    assert len(submitted) == 1
    assert submitted[0]["assignmentId"] == ["3ASSIGN1"] and submitted[0]["block"] == ["1"]
    with Session(get_engine(app)) as session:
        user = session.exec(select(User).where(User.platform_id == WORKER)).one()
        block = session.exec(
            select(Block).where(Block.rater_id == user.id, Block.position == 1)
        ).one()
        assert block.completed_at is not None
        assert (block.platform_study_id, block.platform_session_id) == ("3HITWAVE1", "3ASSIGN1")
    # Kept although it is a third-party cookie: partitioned by MTurk's site.
    cookies = {c["name"]: c for c in context.cookies(base)}
    assert cookies["session"]["sameSite"] == "None" and cookies["session"]["secure"]
    assert cookies["session"]["partitionKey"] == "https://mturk.com"
    context.close()
