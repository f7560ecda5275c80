"""The lead's view of the LLM judge runs: the study page's summary and the failures page."""

from __future__ import annotations

import html
import re

from sqlalchemy import func
from sqlmodel import select

from annotator.models import Benchmark, Item, LLMScore, Scale
from tests.conftest import DATA
from tests.judge.judged import LONG_REPLY, SHORT_REPLY, judge_with_failures


def _section(page: str, heading_id: str) -> str:
    start = page.index(f'id="{heading_id}"')
    return page[start : page.index("<h2", start)]


def _rows(section: str) -> dict[tuple[str, str], list[str]]:
    """The summary table's rows by (model, scale): the text of each cell."""
    out = {}
    for row in re.findall(r"<tr>(.*?)</tr>", section, re.S)[1:]:
        cells = [
            " ".join(re.sub(r"<[^>]+>", "", c).split())
            for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)
        ]
        out[cells[0], cells[1]] = cells[2:]
    return out


def test_study_page_summarises_each_model_and_scale(
    lead_client, runner, small_study, fake_endpoint, db_session
):
    empty = lead_client.get("/lead/studies/small").get_data(as_text=True)
    assert "No scores from <code>annotator judge</code> yet" in _section(empty, "judge-runs")

    judge_with_failures(runner, fake_endpoint)
    page = lead_client.get("/lead/studies/small").get_data(as_text=True)
    rows = _rows(_section(page, "judge-runs"))
    counted = dict(
        ((model, scale), n)
        for model, scale, n in db_session.exec(
            select(LLMScore.model, Scale.name, func.count(LLMScore.id))
            .join(Scale, Scale.id == LLMScore.scale_id)
            .group_by(LLMScore.model, Scale.name)
        ).all()
    )
    assert counted == {("m", "0-5"): 4}
    # scores, temperatures, prompt versions, failures
    assert rows[("m", "0-5")] == ["4", "1", "one per benchmark", "1 (0 still without a score)"]
    assert rows[("m2", "0-100")] == ["0", "–", "–", "1"]
    assert 'href="/lead/studies/small/judge-failures?model=m2&amp;scale=0-100"' in page
    assert 'href="/lead/studies/small/judge-failures"' in page


def test_a_changed_prompt_shows_as_a_second_version(
    lead_client, runner, small_study, fake_endpoint, db_session, tmp_path
):
    endpoint = fake_endpoint()
    judge = ["judge", "small", "--model", "m", "--base-url", endpoint.url, "--scale", "0-5"]
    assert runner.invoke(args=judge).exit_code == 0
    changed = tmp_path / "study.toml"
    changed.write_text(
        (DATA / "small-study.toml")
        .read_text()
        .replace("semantic similarity of the two sentences", "similarity in meaning")
    )
    assert runner.invoke(args=["study", "update", str(changed)]).exit_code == 0
    assert runner.invoke(args=judge).exit_code == 0
    # The newest version of each benchmark's prompt: that of its last stored score.
    newest = {
        bench: db_session.exec(
            select(LLMScore.prompt_hash)
            .join(Item, Item.id == LLMScore.item_id)
            .join(Benchmark, Benchmark.id == Item.benchmark_id)
            .where(Benchmark.name == bench)
            .order_by(LLMScore.id.desc())
        ).first()
        for bench in ("sts-b", "truthfulqa")
    }
    page = lead_client.get("/lead/studies/small").get_data(as_text=True)
    scores, _, versions, _ = _rows(_section(page, "judge-runs"))[("m", "0-5")]
    # 3 sts-b items asked twice, the truthfulqa item once (its prompt did not change).
    assert scores == "7"
    assert versions == (
        f"sts-b: 2 (newest {newest['sts-b'][:12]}) truthfulqa: 1 (newest {newest['truthfulqa'][:12]})"
    )


def test_failures_page_lists_and_filters(lead_client, runner, small_study, fake_endpoint):
    judge_with_failures(runner, fake_endpoint)
    page = lead_client.get("/lead/studies/small/judge-failures").get_data(as_text=True)
    assert "2 failures, 1 scored later." in page
    body = page[page.index("<tbody>") : page.index("</tbody>")]
    # Newest first: m2's failure, then m's.
    assert body.index("<code>s1</code>") < body.index("<code>s2</code>")
    # The long reply: cut in the summary, whole when opened (no JavaScript needed).
    assert f'<pre class="reply">{html.escape(LONG_REPLY)}</pre>' in body
    assert "<details>" in body
    assert f'<code class="reply">{html.escape(SHORT_REPLY)}</code>' in body
    assert "scored later" in body and "open" in body

    only_m2 = lead_client.get("/lead/studies/small/judge-failures?model=m2").get_data(as_text=True)
    assert "<code>s1</code>" in only_m2 and "<code>s2</code>" not in only_m2
    assert '<option value="m2" selected>' in only_m2
    still_open = lead_client.get("/lead/studies/small/judge-failures?open=1")
    text = still_open.get_data(as_text=True)
    assert "<code>s1</code>" in text and "<code>s2</code>" not in text
    assert "1 still without a score" in text


def test_failures_page_pages_through_every_failure_newest_first(
    app, lead_client, small_study, monkeypatch
):
    from datetime import UTC, datetime, timedelta

    from annotator.db import session_scope
    from annotator.models import JudgeFailure
    from annotator.web.lead import judge_runs

    start = datetime(2026, 1, 1, tzinfo=UTC)
    with session_scope(app) as session:
        item = session.exec(select(Item).order_by(Item.id)).first()
        scales = {s.name: s.id for s in session.exec(select(Scale))}
        for n in range(5):
            session.add(
                JudgeFailure(
                    item_id=item.id,
                    scale_id=scales["0-5"] if n != 2 else scales["0-100"],
                    model="m",
                    temperature=0.0,
                    run=f"r{n}",
                    prompt_hash="p" * 64,
                    raw_reply=f"reply {n}",
                    error="no score",
                    created_at=start + timedelta(minutes=n),
                )
            )
    monkeypatch.setattr(judge_runs, "PER_PAGE", 2)

    def page(query: str) -> str:
        return lead_client.get(f"/lead/studies/small/judge-failures{query}").get_data(as_text=True)

    def runs(text: str) -> list[str]:
        return re.findall(r"<td><code>(r\d)</code></td>", text)

    seen = [page(f"?page={n}") for n in (1, 2, 3)]
    assert [runs(text) for text in seen] == [["r4", "r3"], ["r2", "r1"], ["r0"]]
    assert "1–2 of 5 shown (page 1 of 3)" in seen[0]
    assert "5–5 of 5 shown (page 3 of 3)" in seen[2]
    assert 'href="/lead/studies/small/judge-failures?page=2" rel="next">older' in seen[0]
    assert 'rel="prev"' not in seen[0] and 'rel="next"' not in seen[2]
    assert 'href="/lead/studies/small/judge-failures?page=2" rel="prev">' in seen[2]
    # Past the last page, or not a number: the last page, the first.
    assert runs(page("?page=9")) == ["r0"] and runs(page("?page=x")) == ["r4", "r3"]
    # The filters ride along on the links.
    filtered = page("?scale=0-5&page=1")
    assert runs(filtered) == ["r4", "r3"]
    assert "/lead/studies/small/judge-failures?page=2&amp;scale=0-5" in filtered
    assert runs(page("?scale=0-5&page=2")) == ["r1", "r0"]
    # One page: no links, no page count.
    single = page("?scale=0-100")
    assert runs(single) == ["r2"] and "page 1 of" not in single and 'rel="next"' not in single


def test_failures_page_with_an_unknown_scale_says_so(lead_client, small_study):
    response = lead_client.get("/lead/studies/small/judge-failures?scale=1-7")
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert "Unknown scale &#39;1-7&#39; (the study has: 0-5, 0-100); showing every scale." in page
    assert "0 failures, 0 scored later." in page


def test_failures_page_of_an_unknown_study_is_404(lead_client, small_study):
    assert lead_client.get("/lead/studies/nope/judge-failures").status_code == 404


def test_the_summary_is_kept_until_a_score_or_a_failure_is_stored(
    lead_client, runner, small_study, fake_endpoint, db_session
):
    from annotator.models import JudgeFailure

    endpoint = fake_endpoint()
    judge = ["judge", "small", "--model", "m", "--base-url", endpoint.url, "--scale", "0-5"]
    assert runner.invoke(args=[*judge, "--limit", "2"]).exit_code == 0

    def row():
        page = lead_client.get("/lead/studies/small").get_data(as_text=True)
        return _rows(_section(page, "judge-runs"))[("m", "0-5")]

    assert row()[0] == "2" and row()[0] == "2"  # the second view from the cache
    assert runner.invoke(args=judge).exit_code == 0
    assert row()[0] == "4"
    # A failure alone (no new score) is seen too.
    scored = db_session.exec(select(LLMScore).where(LLMScore.model == "m")).first()
    db_session.add(
        JudgeFailure(
            item_id=scored.item_id,
            scale_id=scored.scale_id,
            model="m",
            temperature=1.0,
            run=scored.run,
            prompt_hash=scored.prompt_hash,
            raw_reply="no idea",
            error="the reply holds no number",
        )
    )
    db_session.commit()
    assert row()[3] == "1 (0 still without a score)"
