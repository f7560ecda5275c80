"""The job pages: the report built as a job, the page's states with and without htmx,
cancel and rerun, and who may see and change which job."""

from __future__ import annotations

import lxml.html as lxml_html
import pytest
from sqlmodel import Session

from annotator.db import get_engine
from annotator.jobs import Job, JobStatus
from annotator.study.studies import get_study
from tests.web.lead.conftest import csrf_token, login


def _job(app, **values) -> int:
    """A job of study ``small`` in the state ``values`` describe (the owner's)."""
    from sqlmodel import select

    from annotator.models import User

    with Session(get_engine(app)) as session:
        owner = session.exec(select(User).where(User.email == "owner@example.org")).one()
        job = Job(
            study_id=get_study(session, "small").id,
            kind="report",
            params_key="1" * 64,
            data_version="1" * 64,
            created_by=owner.id,
            **values,
        )
        session.add(job)
        session.commit()
        return job.id


def _tree(response):
    return lxml_html.fromstring(response.get_data(as_text=True))


def test_download_report_starts_a_job_and_its_page_gives_the_file(team):
    owner = login(team.app, "owner@example.org")
    token = csrf_token(owner, "/lead/studies/small")
    started = owner.post("/lead/studies/small/report", data={"csrf_token": token})
    assert started.status_code == 302
    page_url = started.headers["Location"]
    assert page_url.startswith("/lead/studies/small/jobs/")
    page = owner.get(page_url)
    tree = _tree(page)
    assert tree.xpath("string(//*[@class='job-status'])") == "done"
    link = tree.xpath("//a[starts-with(text(), 'Download small-report.html')]/@href")
    assert link == [f"{page_url}/file"]
    # A finished job's page no longer refreshes itself.
    assert not tree.xpath("//noscript/meta[@http-equiv='refresh']")
    assert not tree.xpath("//*[@id='job']/@hx-get")
    report = owner.get(link[0])
    assert report.mimetype == "text/html"
    assert report.headers["Content-Disposition"] == 'attachment; filename="small-report.html"'
    assert b"<h1>Report: Small test study" in report.data
    # The next "Download report" joins the done job; the study page lists it.
    again = owner.post("/lead/studies/small/report", data={"csrf_token": token})
    assert again.headers["Location"] == page_url
    assert owner.get("/lead/studies/small/report").headers["Location"] == page_url
    listed = _tree(owner.get("/lead/studies/small")).xpath("//ul[@class='jobs']//a/@href")
    assert page_url in listed


def test_a_running_job_page_refreshes_itself_and_htmx_gets_the_fragment(team):
    job_id = _job(
        team.app,
        status=JobStatus.RUNNING,
        progress_done=2,
        progress_total=5,
        progress_message="Drawing the figures",
    )
    owner = login(team.app, "owner@example.org")
    url = f"/lead/studies/small/jobs/{job_id}"
    page = owner.get(url)
    tree = _tree(page)
    # Without JavaScript: a meta refresh (inside noscript, so htmx users poll instead).
    assert tree.xpath("//noscript/meta[@http-equiv='refresh']/@content") == ["2"]
    assert tree.xpath("//progress/@value") == ["2"] and tree.xpath("//progress/@max") == ["5"]
    assert "Drawing the figures" in page.get_data(as_text=True)
    assert tree.xpath("//*[@id='job']/@hx-get") == [url]
    assert tree.xpath("//form[contains(@action, '/cancel')]//button/text()") == ["Cancel"]
    fragment = owner.get(url, headers={"HX-Request": "true"})
    text = fragment.get_data(as_text=True)
    assert text.lstrip().startswith('<section id="job"') and "<html" not in text
    assert "HX-Request" in fragment.headers["Vary"]


def test_a_failed_job_shows_its_error_and_runs_again(team):
    job_id = _job(team.app, status=JobStatus.FAILED, error="ValueError: no ratings yet")
    owner = login(team.app, "owner@example.org")
    url = f"/lead/studies/small/jobs/{job_id}"
    tree = _tree(owner.get(url))
    assert tree.xpath("string(//pre[@class='job-error'])") == "ValueError: no ratings yet"
    assert tree.xpath("//form[contains(@action, '/rerun')]//button/text()") == ["Run again"]
    token = csrf_token(owner, url)
    response = owner.post(f"{url}/rerun", data={"csrf_token": token})
    assert response.status_code == 302 and response.headers["Location"] == url
    with Session(get_engine(team.app)) as session:
        job = session.get(Job, job_id)
        # Test apps run jobs at once: the rerun built the report.
        assert job.attempt == 2 and job.status == JobStatus.DONE and job.error is None


def test_cancel_is_for_the_owners_and_the_starter(team):
    job_id = _job(team.app, status=JobStatus.QUEUED)
    url = f"/lead/studies/small/jobs/{job_id}"
    analyst = login(team.app, "analyst@example.org")
    page = analyst.get(url)
    assert page.status_code == 200 and not _tree(page).xpath("//section[@id='job']//form")
    token = csrf_token(analyst, "/lead/studies/small")
    assert analyst.post(f"{url}/cancel", data={"csrf_token": token}).status_code == 403
    owner = login(team.app, "owner@example.org")
    token = csrf_token(owner, url)
    assert owner.post(f"{url}/cancel", data={"csrf_token": token}).status_code == 302
    with Session(get_engine(team.app)) as session:
        assert session.get(Job, job_id).status == JobStatus.CANCELLED
    # Cancelling again says it had ended.
    page = owner.get(owner.post(f"{url}/cancel", data={"csrf_token": token}).headers["Location"])
    assert "already ended (cancelled)" in page.get_data(as_text=True)


def test_a_cancel_without_the_csrf_token_is_refused(team):
    job_id = _job(team.app, status=JobStatus.QUEUED)
    owner = login(team.app, "owner@example.org")
    assert owner.post(f"/lead/studies/small/jobs/{job_id}/cancel").status_code == 400
    with Session(get_engine(team.app)) as session:
        assert session.get(Job, job_id).status == JobStatus.QUEUED


@pytest.mark.parametrize("suffix", ["", "/file"])
def test_a_lead_of_another_study_gets_404_for_its_jobs(team, suffix):
    job_id = _job(team.app, status=JobStatus.DONE, result_filename="x.html")
    outsider = login(team.app, "outsider@example.org")
    # Not a member of "small": 404, as if there were no such study.
    assert outsider.get(f"/lead/studies/small/jobs/{job_id}{suffix}").status_code == 404
    # Through their own study's address: the job is not one of that study's.
    assert outsider.get(f"/lead/studies/other/jobs/{job_id}{suffix}").status_code == 404
    token = csrf_token(outsider, "/lead/studies/other")
    for action in ("cancel", "rerun"):
        url = f"/lead/studies/other/jobs/{job_id}/{action}"
        assert outsider.post(url, data={"csrf_token": token}).status_code == 404


@pytest.mark.parametrize("job_id", ["0", "abc", "99999999999999999999999"])
def test_a_malformed_or_unknown_job_id_is_404(team, job_id):
    owner = login(team.app, "owner@example.org")
    assert owner.get(f"/lead/studies/small/jobs/{job_id}").status_code == 404


def test_a_large_export_is_built_as_a_job(team):
    """Above EXPORT_JOB_MIN_RATINGS the export form offers a job; its file is the one
    the request would have made."""
    owner = login(team.app, "owner@example.org")
    query = "format=matrix&scale=0-5&temperature=0"
    direct = owner.get(f"/lead/studies/small/export?{query}")
    assert direct.status_code == 200 and direct.mimetype == "text/csv"
    team.app.config["EXPORT_JOB_MIN_RATINGS"] = 1
    offer = owner.get(f"/lead/studies/small/export?{query}")
    tree = _tree(offer)
    assert tree.xpath("//h1/text()") == ["The export of Small test study"]
    action = tree.xpath("//main//form[@method='post']/@action")[0]
    assert action.startswith("/lead/studies/small/export?")
    token = csrf_token(owner, f"/lead/studies/small/export?{query}")
    started = owner.post(action, data={"csrf_token": token})
    job_page = started.headers["Location"]
    assert "/jobs/" in job_page
    link = _tree(owner.get(job_page)).xpath("//a[starts-with(text(), 'Download ')]/@href")
    exported = owner.get(link[0])
    assert exported.data == direct.data
    assert exported.headers["Content-Disposition"] == direct.headers["Content-Disposition"]
    # The same export asked again: its job's page.
    assert owner.get(f"/lead/studies/small/export?{query}").headers["Location"] == job_page


def test_the_dashboards_jobs_are_not_pages_nor_files(team):
    """A dashboard job's result is a pickled object for the app, never a lead's download."""
    owner = login(team.app, "owner@example.org")
    owner.get("/lead/studies/small")  # the first view computes and keeps the dashboard
    with Session(get_engine(team.app)) as session:
        from sqlmodel import select

        (job,) = session.exec(select(Job).where(Job.kind == "dashboard")).all()
    for suffix in ("", "/file"):
        assert owner.get(f"/lead/studies/small/jobs/{job.id}{suffix}").status_code == 404
    listed = _tree(owner.get("/lead/studies/small")).xpath("//ul[@class='jobs']//a/text()")
    assert not any(text.startswith("dashboard") for text in listed)
