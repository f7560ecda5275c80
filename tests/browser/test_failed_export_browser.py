"""In Debian's Chromium: a refused export opens the study page at the export form, with
its message in view (not at the top of a long page), without JavaScript too."""

from __future__ import annotations

import pytest

from annotator.data.synthetic import SyntheticSpec, build_synthetic_study
from annotator.db import session_scope
from annotator.study.studies import create_lead

from .conftest import wait_until

LEAD = ("lead@example.org", "lead-password-1")
IN_VIEW = """(id) => {
  const box = document.getElementById(id).getBoundingClientRect();
  return box.top >= 0 && box.bottom <= window.innerHeight;
}"""


@pytest.mark.browser
@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_a_refused_export_is_shown_where_the_lead_is_looking(served_app, browser, javascript):
    from playwright.sync_api import expect

    app, base = served_app
    with app.app_context(), session_scope(app) as session:
        create_lead(session, *LEAD)
        build_synthetic_study(session, SyntheticSpec(slug="long", n_items=12, seed=3))
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, java_script_enabled=javascript
    )
    context.set_default_timeout(20_000)
    page = context.new_page()
    page.goto(f"{base}/login")
    page.get_by_label("Email or rater code").fill(LEAD[0])
    page.get_by_label("Password").fill(LEAD[1])
    page.get_by_role("button", name="Log in").click()
    page.goto(f"{base}/lead/studies/long")
    form = page.locator("form", has=page.locator("#format"))
    # The form is far below the page's top: the problem this test is about.
    assert page.evaluate("document.getElementById('export').getBoundingClientRect().top") > 900
    form.locator("#format").select_option("matrix")
    form.locator("#scale").select_option("")
    form.get_by_role("button", name="Download").click()
    alert = page.locator("#export-error")
    expect(alert).to_contain_text("Scale")
    assert page.url.endswith("#export")
    # The browser scrolls to the fragment once the page has loaded, which on a busy
    # machine can come after the alert is found: wait for it (a timeout fails the test).
    # Not ``wait_for_function``: it polls a string through eval, which the app's CSP
    # refuses whenever the first check is false.
    wait_until(page, "window.scrollY > 0", timeout=30)
    assert page.evaluate(IN_VIEW, "export-error")
    context.close()
