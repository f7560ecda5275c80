"""live_dashboard serves the last dashboard at once and refreshes it by one dashboard job,
whose result every server shares; the report is kept until the data changes."""

from __future__ import annotations

import pytest
from sqlmodel import select

from annotator.analysis.settings import study_settings
from annotator.data.frames import study_frames
from annotator.jobs import Job, JobStatus, get_queue
from annotator.models import Rating, RatingChange
from annotator.render.dashboard import study_dashboard
from annotator.services import report as report_package
from annotator.services.dashboards import cached_dashboard, live_dashboard
from annotator.study.studies import create_lead
from tests.conftest import download_report

LEAD = ("lead@example.org", "lead-password-1")


@pytest.fixture
def lead(app, client, session):
    create_lead(session, *LEAD)
    session.commit()
    assert client.post("/login", data={"username": LEAD[0], "password": LEAD[1]}).status_code == 302
    return client


def _take_ratings(session, study, n: int) -> list[dict]:
    """Delete ``n`` first ratings (to store them again later as new ones)."""
    rows = session.exec(
        select(Rating)
        .where(~Rating.is_repeat, ~Rating.is_attention_check)
        .where(Rating.id.not_in(select(RatingChange.rating_id)))
        .order_by(Rating.id)
    ).all()[:n]
    fields = [r.model_dump(exclude={"id"}) for r in rows]
    for row in rows:
        session.delete(row)
    session.commit()
    return fields


def _put_back(session, fields: list[dict]) -> None:
    for data in fields:
        session.add(Rating(**data))
    session.commit()


def _dashboard_jobs(session) -> list[Job]:
    session.expire_all()
    return list(session.exec(select(Job).where(Job.kind == "dashboard").order_by(Job.id)))


def test_stale_dashboard_at_once_then_fresh_after_one_job(app, lead, session, make_study):
    # Jobs go to the queue (a SQLite file) and wait there until the test runs them.
    app.config["JOBS_IMMEDIATE"] = False
    study = make_study(slug="live", n_items=12, n_raters=3, seed=5)
    taken = _take_ratings(session, study, 2)
    first = lead.get("/lead/studies/live").get_data(as_text=True)
    # The first view computed in the request and kept the result: no job queued.
    (kept,) = _dashboard_jobs(session)
    assert kept.status == JobStatus.DONE and "updating" not in first
    old = cached_dashboard(session, study)
    _put_back(session, taken)

    stale = lead.get("/lead/studies/live").get_data(as_text=True)
    assert f"As of {old.computed_at:%H:%M} UTC" in stale
    assert "(2 new ratings since; updating…)" in stale
    assert old.computed_at.isoformat() in stale
    assert 'hx-trigger="every 5s"' in stale
    partial = lead.get("/lead/studies/live", headers={"HX-Request": "true"})
    assert "updating…" in partial.get_data(as_text=True)
    # Two requests, one job, one task on the queue.
    (_, queued) = _dashboard_jobs(session)
    assert queued.status == JobStatus.QUEUED
    huey = get_queue(app)
    huey.execute(huey.dequeue())
    assert huey.dequeue() is None

    fresh = lead.get("/lead/studies/live", headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "updating" not in fresh and "As of" not in fresh
    assert 'hx-trigger="every 45s"' in fresh
    assert [job.status for job in _dashboard_jobs(session)] == ["done", "done"]
    new = cached_dashboard(session, study)
    assert new.computed_at > old.computed_at and new.computed_at.isoformat() in fresh
    direct = study_dashboard(study_frames(session, study), settings=study_settings(study))
    for name in ("0-5", "0-10", "0-100"):
        assert new.scale(name).icc_a1.value == direct.scale(name).icc_a1.value
        assert new.scale(name).n_ratings == direct.scale(name).n_ratings
    assert sum(p.n_ratings for p in new.scales) == sum(p.n_ratings for p in old.scales) + 2


def test_every_server_shows_the_one_dashboard_computed(make_app, session, make_study, monkeypatch):
    """A second app on the same database (another server, or another gunicorn worker)
    reads the dashboard the first computed, and computes nothing itself."""
    from sqlmodel import Session

    from annotator.db import get_engine
    from annotator.services import dashboards as live

    study = make_study(n_items=10, n_raters=3, seed=6)
    first = live_dashboard(session, study)
    session.commit()
    other = make_app(create_schema=False)

    def refuse(*args, **kwargs):
        raise AssertionError("the second server computed the dashboard again")

    monkeypatch.setattr(live, "study_dashboard", refuse)
    with other.app_context(), Session(get_engine(other)) as other_session:
        shown = live_dashboard(other_session, other_session.get(type(study), study.id))
    assert not shown.stale and shown.dashboard.computed_at == first.dashboard.computed_at
    assert shown.dashboard.scale("0-5").icc_a1.value == first.dashboard.scale("0-5").icc_a1.value


def test_second_report_download_is_not_built_again(lead, session, make_study, monkeypatch):
    study = make_study(slug="rep", n_items=30, n_raters=4, seed=9)
    built = []
    original = report_package.build_report

    def counting(*args, **kwargs):
        built.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(report_package, "build_report", counting)
    first = download_report(lead, "rep")
    second = download_report(lead, "rep")
    assert first.status_code == second.status_code == 200
    assert first.get_data() == second.get_data() and len(built) == 1
    _put_back(session, _take_ratings(session, study, 1))
    assert download_report(lead, "rep").status_code == 200
    assert len(built) == 2


@pytest.fixture(
    params=[
        # Written before results carried a format: (ratings, dashboard).
        "unversioned",
        # Another format: a release that changed a dashboard class's fields.
        "other-format",
        # A class renamed by an upgrade: unpickling raises AttributeError.
        "renamed-class",
        # Not a pickle at all.
        "garbage",
    ]
)
def planted(request):
    return request.param


def test_stored_dashboard_of_another_format_is_recomputed(lead, session, make_study, planted):
    import pickle

    from annotator.jobs import JobResult
    from annotator.services import dashboards as live

    study = make_study(slug="old", n_items=10, n_raters=3, seed=4)
    computed = cached_dashboard(session, study)
    (job,) = _dashboard_jobs(session)
    result = session.get(JobResult, job.id)
    stored_format, ratings, dashboard = pickle.loads(result.data)
    assert stored_format == live.DASHBOARD_FORMAT
    result.data = {
        "unversioned": pickle.dumps((ratings, dashboard)),
        "other-format": pickle.dumps(("an older format", ratings, dashboard)),
        "renamed-class": b"cannotator.render.dashboard_types\nRetestRowBeforeRename\n(tR.",
        "garbage": b"not a pickle",
    }[planted]
    session.add(result)
    session.commit()

    page = lead.get("/lead/studies/old")
    assert page.status_code == 200, page.get_data(as_text=True)[:2000]
    assert "Traceback" not in page.get_data(as_text=True)
    again = cached_dashboard(session, study)
    assert again.computed_at >= computed.computed_at
    assert again.scale("0-5").icc_a1.value == computed.scale("0-5").icc_a1.value
    # The unreadable result was replaced by one of this format.
    job = _dashboard_jobs(session)[-1]
    session.expire_all()
    assert pickle.loads(session.get(JobResult, job.id).data)[0] == live.DASHBOARD_FORMAT


def test_dashboard_format_follows_the_classes_fields(monkeypatch):
    """Renaming a field of a dashboard class changes the format, so older results are
    not read by the renamed class (the defect: AttributeError until the data changed)."""
    import dataclasses

    from annotator.render import dashboard_types
    from annotator.services import dashboards as live

    before = live._dashboard_format()
    renamed = dataclasses.make_dataclass(
        "RetestRow",
        [("renamed_" + f.name, f.type) for f in dataclasses.fields(dashboard_types.RetestRow)],
        frozen=True,
    )
    monkeypatch.setattr(dashboard_types, "RetestRow", renamed)
    assert live._dashboard_format() != before
