"""The lead picks the criterion the dashboard shows (a GET form: no JavaScript needed)."""

from __future__ import annotations

from lxml import html as lxml_html

from tests.fake_openai import Reply, score_for


def _judge(runner, fake_endpoint) -> None:
    endpoint = fake_endpoint(
        lambda request, n: Reply(content=score_for(request["messages"][-1]["content"]))
    )
    args = ["judge", "rubric", "--model", "m", "--base-url", endpoint.url]
    result = runner.invoke(args=args)
    assert result.exit_code == 0, result.output


def _page(client, query: str = "", **headers):
    response = client.get(f"/lead/studies/rubric{query}", headers=headers)
    assert response.status_code == 200
    return lxml_html.fromstring(response.get_data(as_text=True))


def _title(tree) -> str:
    return " ".join(tree.xpath("//h2[@id='dashboard-title']")[0].text_content().split())


def test_the_dashboard_shows_the_criterion_picked(lead_client, runner, rubric_study, fake_endpoint):
    _judge(runner, fake_endpoint)
    tree = _page(lead_client)
    assert _title(tree) == "Validation dashboard: criterion fluency"
    select = tree.xpath("//form[@method='get']//select[@name='criterion']")[0]
    options = select.xpath("./option")
    assert [o.get("value") for o in options] == ["fluency", "coherence", "relevance"]
    assert [o.get("value") for o in options if o.get("selected") is not None] == ["fluency"]
    # The form's GET with another criterion; the htmx refresh keeps it.
    tree = _page(lead_client, "?criterion=coherence")
    assert _title(tree) == "Validation dashboard: criterion coherence"
    selected = tree.xpath("//select[@name='criterion']/option[@selected]/@value")
    assert selected == ["coherence"]
    assert "criterion=coherence" in tree.xpath("//section[@id='dashboard']/@hx-get")[0]
    partial = _page(lead_client, "?criterion=relevance", **{"HX-Request": "true"})
    assert _title(partial) == "Validation dashboard: criterion relevance"


def test_an_unknown_criterion_is_named_and_the_first_shown(lead_client, rubric_study):
    tree = _page(lead_client, "?criterion=tone")
    error = " ".join(tree.xpath("//p[@id='criterion-error']")[0].text_content().split())
    assert error == (
        "The study has no criterion 'tone' (its criteria: fluency, coherence, relevance); "
        "showing the first."
    )
    assert tree.xpath("//select[@name='criterion']/@aria-invalid") == ["true"]
    assert _title(tree) == "Validation dashboard: criterion fluency"


def test_a_study_without_criteria_has_nothing_to_pick(lead_client, small_study):
    response = lead_client.get("/lead/studies/small?criterion=fluency")
    tree = lxml_html.fromstring(response.get_data(as_text=True))
    assert not tree.xpath("//select[@name='criterion']")
    error = " ".join(tree.xpath("//p[@id='criterion-error']")[0].text_content().split())
    assert error == "The study has no criteria ([[criteria]]); 'fluency' is ignored."
    assert _title(tree) == "Validation dashboard"
