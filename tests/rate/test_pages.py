"""Page details: labels on every field, the thank-you page, htmx back navigation."""

from __future__ import annotations

from html.parser import HTMLParser

from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.models import User

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
