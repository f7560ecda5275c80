"""A judge run started in Chromium from the study page, with JavaScript and without:
the form, the job page with its figures and failures, no serious axe violation."""

from __future__ import annotations

import pytest

from annotator.db import session_scope
from annotator.study.studies import create_lead
from tests.fake_openai import Reply, default_reply

from .axe import assert_no_serious_violations
from .conftest import ITEMS, STUDY, add_study, serve

LEAD = ("lead@example.org", "lead-password-1")


def _refuse_s1(request, n):
    # The first item gets no score on any scale: failures for the job page.
    if "vegetable number 1 " in request["messages"][-1]["content"]:
        return Reply(content="I would rather not say")
    return default_reply(request, n)


@pytest.mark.browser
@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_an_owner_runs_a_judge_from_the_study_page(
    make_app, tmp_path, fake_endpoint, browser, javascript
):
    from playwright.sync_api import expect

    endpoint = fake_endpoint(_refuse_s1)
    app = make_app(
        WTF_CSRF_ENABLED=True, CLOCK=None, JUDGE_ENDPOINTS={"fake": {"base_url": endpoint.url}}
    )
    add_study(app, STUDY, ITEMS[:3], tmp_path)
    with app.app_context(), session_scope(app) as session:
        create_lead(session, *LEAD)
    with serve(app) as base:
        context = browser.new_context(java_script_enabled=javascript)
        context.set_default_timeout(30_000)
        page = context.new_page()
        page.goto(f"{base}/login")
        page.get_by_label("Email or rater code").fill(LEAD[0])
        page.get_by_label("Password").fill(LEAD[1])
        page.get_by_role("button", name="Log in").click()
        page.goto(f"{base}/lead/studies/browser")
        page.get_by_role("link", name="Run an LLM judge").click()
        if javascript:
            # axe is a script: a page without JavaScript cannot run it (the HTML is the same).
            assert_no_serious_violations(page, "judge form")
        page.get_by_label("Model").fill("judge-b")
        # One scale only.
        for box in page.locator("#scales input").all():
            box.uncheck()
        page.get_by_label("0-5", exact=True).check()
        page.get_by_label("Runs").fill("2")
        page.get_by_role("button", name="Start the judge").click()
        # The job ran at once (tests run jobs in the request): its page shows the figures.
        expect(page.locator(".job-status")).to_have_text("done")
        figures = page.locator(".judge-figures")
        # 3 items x 1 scale x 2 runs; s1 asked three times per run, then failed.
        expect(figures).to_contain_text("6 of 6 scores asked for (0 already stored)")
        expect(figures).to_contain_text("4 stored, 2 failed; 10 requests, 120 tokens")
        expect(page.get_by_role("heading", name="Failures of this run (2)")).to_be_visible()
        expect(page.locator("table.judge-failures tbody tr")).to_have_count(2)
        if javascript:
            assert_no_serious_violations(page, "judge job page")
        context.close()
    assert len(endpoint.requests) == 10
