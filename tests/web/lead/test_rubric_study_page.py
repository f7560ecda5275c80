"""The lead's study page of a rubric study with ratings under several criteria: it
renders, each criterion's dashboard is a stored job result of its own, and the report
job builds every criterion's report whichever criterion the dashboard showed."""

from __future__ import annotations

import pickle

import lxml.html as lxml_html
from sqlmodel import select

from annotator.jobs import Job, JobResult, JobStatus, get_queue
from annotator.services.dashboards import cached_dashboard
from annotator.study.studies import get_study
from tests.conftest import download_report

CRITERIA = ("fluency", "coherence", "relevance")
# relevance is asked of sts-b items only (tests/data/studies.py's CRITERIA_TOML).
ITEMS = {"fluency": "s1 s2 s3 t1", "coherence": "s1 s2 s3 t1", "relevance": "s1 s2 s3"}
RATERS = ("ann", "bob", "cy")


def _ratings(raters=RATERS, criteria=CRITERIA) -> list[tuple]:
    """(item, rater, criterion, score) rows on the 0-5 scale, different per criterion:
    the raters agree on each criterion's order of the items, each a little apart."""
    return [
        (item, rater, criterion, (i * 1.5 + k) % 4 + 0.25 * j)
        for k, criterion in enumerate(criteria)
        for i, item in enumerate(ITEMS[criterion].split())
        for j, rater in enumerate(raters)
    ]


def _import(runner, tmp_path, rows: list[tuple]) -> None:
    lines = ["item_id,rater,scale,criterion,score"]
    lines += [f"{item},{rater},0-5,{criterion},{score}" for item, rater, criterion, score in rows]
    path = tmp_path / f"ratings-{len(rows)}.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(args=["ratings", "import", "rubric", str(path)])
    assert result.exit_code == 0, result.output


def _import_scores(runner, tmp_path) -> None:
    lines = ["item_id,model,scale,criterion,score"]
    for criterion in CRITERIA:
        for i, item in enumerate(ITEMS[criterion].split()):
            lines.append(f"{item},judge,0-5,{criterion},{(i * 2 + 1) % 6}")
    path = tmp_path / "scores.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(args=["llm-scores", "import", "rubric", str(path)])
    assert result.exit_code == 0, result.output


def _title(response) -> str:
    assert response.status_code == 200, response.get_data(as_text=True)[-2000:]
    tree = lxml_html.fromstring(response.get_data(as_text=True))
    return " ".join(tree.xpath("//h2[@id='dashboard-title']")[0].text_content().split())


def _dashboard_jobs(session) -> list[Job]:
    session.expire_all()
    return list(session.exec(select(Job).where(Job.kind == "dashboard").order_by(Job.id)))


def test_the_study_page_of_a_rubric_study_with_ratings(
    lead_client, runner, rubric_study, tmp_path, session
):
    rows = _ratings()
    _import(runner, tmp_path, rows)
    _import_scores(runner, tmp_path)
    assert (
        _title(lead_client.get("/lead/studies/rubric")) == "Validation dashboard: criterion fluency"
    )
    for criterion in CRITERIA:
        shown = _title(lead_client.get(f"/lead/studies/rubric?criterion={criterion}"))
        assert shown == f"Validation dashboard: criterion {criterion}"
        partial = lead_client.get(
            f"/lead/studies/rubric?criterion={criterion}", headers={"HX-Request": "true"}
        )
        assert _title(partial) == f"Validation dashboard: criterion {criterion}"
    study = get_study(session, "rubric")
    # Each criterion's dashboard counts its own ratings, as imported.
    for criterion in CRITERIA:
        dashboard = cached_dashboard(session, study, criterion=criterion)
        assert dashboard.criterion == criterion and dashboard.criteria == CRITERIA
        expected = sum(1 for row in rows if row[2] == criterion)
        assert dashboard.scale("0-5").n_ratings == expected


def test_each_criterion_dashboard_is_a_job_of_its_own(
    app, lead_client, runner, rubric_study, tmp_path, session
):
    # Jobs wait on the queue until the test runs them.
    app.config["JOBS_IMMEDIATE"] = False
    _import(runner, tmp_path, _ratings())
    assert lead_client.get("/lead/studies/rubric").status_code == 200
    assert lead_client.get("/lead/studies/rubric?criterion=coherence").status_code == 200
    # The default is the first criterion: picking it shows the same stored dashboard.
    assert lead_client.get("/lead/studies/rubric?criterion=fluency").status_code == 200
    jobs = _dashboard_jobs(session)
    assert [(job.status, job.params["criterion"]) for job in jobs] == [
        (JobStatus.DONE, "fluency"),
        (JobStatus.DONE, "coherence"),
    ]
    assert jobs[0].params_key != jobs[1].params_key

    # New coherence ratings: the import queued each viewed criterion's dashboard job
    # (annotator.services.fresh), one each; the stale page joins its criterion's.
    _import(runner, tmp_path, _ratings(raters=("dee",), criteria=("coherence",)))
    stale = lead_client.get("/lead/studies/rubric?criterion=coherence").get_data(as_text=True)
    assert "(4 new ratings since; updating…)" in stale
    queued = {job.params["criterion"]: job for job in _dashboard_jobs(session)[2:]}
    assert len(_dashboard_jobs(session)) == 4 and sorted(queued) == ["coherence", "fluency"]
    assert {job.status for job in queued.values()} == {JobStatus.QUEUED}
    huey = get_queue(app)
    huey.execute(huey.dequeue())
    huey.execute(huey.dequeue())
    assert huey.dequeue() is None
    session.expire_all()
    done = session.get(Job, queued["coherence"].id)
    assert done.status == JobStatus.DONE
    result = session.exec(select(JobResult).where(JobResult.job_id == done.id)).one()
    _, _, dashboard = pickle.loads(result.data)  # (format, ratings, dashboard)
    assert dashboard.criterion == "coherence"
    assert dashboard.scale("0-5").n_ratings == 4 * len(RATERS) + 4
    fresh = lead_client.get("/lead/studies/rubric?criterion=coherence").get_data(as_text=True)
    assert "updating" not in fresh
    # fluency's dashboard (the data version is the study's) was recomputed by its own job.
    assert session.get(Job, queued["fluency"].id).status == JobStatus.DONE
    assert "updating" not in lead_client.get("/lead/studies/rubric").get_data(as_text=True)


def test_the_report_job_has_every_criterion_whichever_is_shown(
    lead_client, runner, rubric_study, tmp_path, session
):
    _import(runner, tmp_path, _ratings())
    _import_scores(runner, tmp_path)
    report = download_report(lead_client, "rubric", "criterion=coherence")
    assert report.status_code == 200
    tree = lxml_html.fromstring(report.get_data(as_text=True))
    headings = [" ".join(h.text_content().split()) for h in tree.xpath("//h2 | //h3 | //summary")]
    assert "Criteria x scales" in headings
    for criterion in CRITERIA:
        # Each criterion's part is folded under a summary that names it.
        assert any(h.startswith(f"Criterion {criterion}: ") for h in headings), (
            criterion,
            headings,
        )
    # The dashboard's criterion is not a report option: the plain download joins the job.
    assert download_report(lead_client, "rubric").get_data() == report.get_data()
    reports = session.exec(select(Job).where(Job.kind == "report")).all()
    assert len(reports) == 1 and "criterion" not in reports[0].params
