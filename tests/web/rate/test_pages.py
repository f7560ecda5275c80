"""Page details: labels on every field, the thank-you page, htmx back navigation."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.models import Demographics, User

from .conftest import blocks_of, item_url, join, new_invite, rate_all, start, study_toml


class _Fields(HTMLParser):
    """Collects form fields and the ids that labels point at."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: list[dict] = []
        self.label_for: set[str] = set()
        self._label_depth = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "label":
            self._label_depth += 1
            if attrs.get("for"):
                self.label_for.add(attrs["for"])
        if tag in ("input", "select", "textarea") and attrs.get("type") != "hidden":
            if "hidden" in attrs and tag == "input":
                return  # the username hint for password managers
            self.fields.append({**attrs, "_wrapped": self._label_depth > 0})

    def handle_endtag(self, tag):
        if tag == "label":
            self._label_depth -= 1


def _unlabelled(html: str) -> list[dict]:
    parser = _Fields()
    parser.feed(html)
    return [
        f
        for f in parser.fields
        if not f["_wrapped"] and f.get("id") not in parser.label_for and not f.get("aria-label")
    ]


def test_every_field_on_every_rater_page_has_a_label(app, client, study):
    token = new_invite(app, study.slug)
    pages = {"consent": client.get(f"/invite/{token}").text}
    client.post(f"/invite/{token}", data={"decision": "agree"})
    pages["demographics"] = client.get("/rate/demographics").text
    pages["demographics, refused"] = client.post("/rate/demographics", data={}).text
    client.post("/rate/demographics", data={"gender": "male", "age": "30"})
    pages["dashboard"] = client.get("/rate/").text
    pages["account"] = client.get("/rate/account").text
    with Session(get_engine(app)) as session:
        rater = session.exec(select(User).where(User.role == "rater")).one().id
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    pages["item"] = client.get(item_url(block.id, 1)).text
    pages["item, refused"] = client.post(item_url(block.id, 1), data={"score": "x"}).text
    rate_all(client, block.id, 10)
    pages["block done"] = client.get(f"/rate/blocks/{block.id}/done").text
    for name, html in pages.items():
        assert _unlabelled(html) == [], name
        assert 'name="csrf_token"' in html or "<form" not in html, name


def test_thank_you_page_with_completion_url_and_code(app, client, make_study, clock):
    extra = 'completion_url = "https://platform.example/done?c=XYZ"\ncompletion_code = "C0DE-77"'
    scales = '[[scales]]\nname = "only"\nmin = 1\nmax = 7\nstep = 0.1\n'
    study = make_study(study_toml(slug="crowd", extra=extra, scales=scales))
    rater = join(app, client, study.slug)
    (block,) = blocks_of(app, rater)
    assert client.get("/rate/thanks").headers["Location"].endswith("/rate/")
    start(client, block.id)
    rate_all(client, block.id, 10, value="6.5")
    done = client.get(f"/rate/blocks/{block.id}/done")
    assert done.headers["Location"].endswith("/rate/thanks")
    page = client.get("/rate/thanks")
    assert "C0DE-77" in page.text
    assert 'href="https://platform.example/done?c=XYZ"' in page.text
    assert "completed every block" in client.get("/rate/").text


def test_htmx_previous_item_is_a_fragment(app, client, rater):
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    rate_all(client, block.id, 2, value="3")
    response = client.get(item_url(block.id, 1), headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert "<html" not in response.text
    assert 'value="3"' in response.text and "You rated this item 3." in response.text
    assert 'hx-push-url="true"' in client.get(item_url(block.id, 2)).text


# ------------------------------------------------- Markdown, dates, errors

MARKDOWN_CONSENT = '''"""
By taking part you agree that:

- your ratings are stored under a *code*, never your name;
- you may stop at any time.

<script>alert("consent")</script> **Thank you.**
"""'''

MARKDOWN_BENCHMARKS = '''
[[benchmarks]]
name = "sts-b"
instructions = """Rate the similarity from {min} to {max}.

1. Read both sentences.
2. Ignore *spelling*. <img src=x onerror=alert(1)>
"""
template = "{{ sentence1 }} / {{ sentence2 }}"

[[benchmarks]]
name = "truthfulqa"
instructions = "Rate truthfulness from {min} to {max}."
template = "{{ question }} {{ answer }}"
'''


def test_consent_and_instructions_render_markdown_without_raw_html(app, client, make_study):
    study = make_study(
        study_toml(slug="md", consent=MARKDOWN_CONSENT, benchmarks=MARKDOWN_BENCHMARKS)
    )
    token = new_invite(app, study.slug)
    consent = client.get(f"/invite/{token}").text
    assert "<ul>\n<li>your ratings are stored under a <em>code</em>, never your name;</li>" in (
        consent
    )
    assert "<p>By taking part you agree that:</p>" in consent
    assert "<strong>Thank you.</strong>" in consent
    assert "<script>alert" not in consent
    assert "&lt;script&gt;alert(&quot;consent&quot;)&lt;/script&gt;" in consent

    client.post(f"/invite/{token}", data={"decision": "agree"})
    client.post("/rate/demographics", data={"gender": "male", "age": "30"})
    with Session(get_engine(app)) as session:
        rater = session.exec(select(User).where(User.role == "rater")).one().id
    sts_pages = []
    for block in blocks_of(app, rater)[:1]:
        start(client, block.id)
        for position in range(1, 11):
            page = client.get(item_url(block.id, position)).text
            if "Read both sentences" in page:
                sts_pages.append(page)
            client.post(item_url(block.id, position), data={"score": "1"})
    assert sts_pages
    page = sts_pages[0]
    assert "<ol>\n<li>Read both sentences.</li>" in page
    assert "<em>spelling</em>" in page and "<img" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page


def test_every_date_on_the_rater_pages_is_one_time_element(app, client, rater, clock):
    first = blocks_of(app, rater)[0]
    start(client, first.id)
    rate_all(client, first.id, 10)
    dashboard = client.get("/rate/").text
    times = re.findall(r'<time datetime="([^"]+)" class="local-time">([^<]+)</time>', dashboard)
    # When block 1 was done and when block 2 opens, both in the one format.
    assert times == [
        ("2026-03-02T09:00:00Z", "Monday 2 March 2026 at 09:00 UTC"),
        ("2026-03-09T09:00:00Z", "Monday 9 March 2026 at 09:00 UTC"),
    ]
    # No date outside a <time> element.
    assert dashboard.count("2026") == 4
    assert "local-time.js" in dashboard
    done = client.get(f"/rate/blocks/{first.id}/done").text
    assert '<time datetime="2026-03-09T09:00:00Z" class="local-time">' in done
    script = client.get("/static/local-time.js")
    assert script.status_code == 200
    assert b"Intl.DateTimeFormat" in script.data and b"timeZoneName" in script.data


@pytest.mark.parametrize(
    ("url", "code", "title"),
    [
        ("/no/such/page", 404, "Page not found"),
        ("/lead/", 403, "You may not open this page"),
        ("/rate/blocks/999999", 404, "Page not found"),
    ],
)
def test_error_pages_are_styled_with_a_way_back(client, rater, url, code, title):
    response = client.get(url)
    assert response.status_code == code
    assert f"<h1>{title}</h1>" in response.text
    assert 'href="/"' in response.text and "Back to your home page" in response.text
    assert "style.css" in response.text


def test_used_invite_and_server_errors_are_styled(make_app, study):
    app = make_app(TESTING=False, PROPAGATE_EXCEPTIONS=False)

    def broken():
        raise RuntimeError("boom")

    app.add_url_rule("/broken", "broken", broken)
    client = app.test_client()
    response = client.get("/broken")
    assert response.status_code == 500
    assert "Something went wrong on our side" in response.text
    assert "Go to the login page" in response.text
    token = new_invite(app, study.slug)
    client.post(f"/invite/{token}", data={"decision": "agree"})
    used = app.test_client().get(f"/invite/{token}")
    assert used.status_code == 410 and "style.css" in used.text


# ---------------------------------------------------- slider and choices


def test_the_slider_starts_without_a_value_or_thumb(app, client, rater):
    block = blocks_of(app, rater)[0]
    start(client, block.id)
    page = client.get(item_url(block.id, 1)).text
    slider = re.search(r'<input id="score-slider"[^>]*>', page).group(0)
    # No name (never submitted), no value, and the class that hides the thumb.
    assert "name=" not in slider and "value=" not in slider
    assert 'class="untouched"' in slider
    assert re.search(r'<input id="score" name="score"[^>]*value=""', page)
    css = client.get("/static/style.css").text
    rules = re.findall(r"\.untouched::-(?:webkit-slider|moz-range)-thumb \{ ([^}]*)\}", css)
    assert len(rules) == 2 and all("opacity: 0;" in rule for rule in rules)


def test_choices_show_labels_and_store_keys(app, client, make_study):
    demographics = """
[[demographics]]
key = "gender"
label = "Gender"
choices = ["female", "male", "non-binary", "prefer-not-to-say"]
labels = { "non-binary" = "Non-binary" }

[[demographics]]
key = "age_group"
label = "Age group"
choices = ["18-24", "25-34", "prefer-not-to-say"]
"""
    study = make_study(study_toml(slug="labels", demographics=demographics))
    token = new_invite(app, study.slug)
    client.post(f"/invite/{token}", data={"decision": "agree"})
    page = client.get("/rate/demographics").text
    labels = re.findall(r'value="([^"]+)"\s*(?:required)?>\s*([^<]+?)\s*</label>', page)
    assert labels == [
        ("female", "Female"),
        ("male", "Male"),
        ("non-binary", "Non-binary"),
        ("prefer-not-to-say", "Prefer not to say"),
        ("18-24", "18-24"),
        ("25-34", "25-34"),
        ("prefer-not-to-say", "Prefer not to say"),
    ]
    assert "prefer-not-to-say</label>" not in page
    client.post("/rate/demographics", data={"gender": "non-binary", "age_group": "18-24"})
    with Session(get_engine(app)) as session:
        (stored,) = session.exec(select(Demographics)).all()
        assert stored.answers == {"gender": "non-binary", "age_group": "18-24"}
