"""A finished import or judge run queues the dashboard's job: the lead's next view of
the study shows the new numbers, not the old ones with "updating…"."""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from annotator.analysis.settings import study_settings
from annotator.db import get_engine
from annotator.jobs import Job, JobStatus, version_key
from annotator.models import LLMScore, Rating
from annotator.services.dashboards import live_dashboard
from annotator.services.fresh import queue_dashboards
from annotator.study.studies import get_study
from tests.conftest import DATA


def _invoke(runner, *args) -> str:
    result = runner.invoke(args=[str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _current(app, slug: str) -> tuple[list[Job], str]:
    """The study's dashboard jobs and its current data version's key."""
    with Session(get_engine(app)) as session:
        study = get_study(session, slug)
        jobs = list(session.exec(select(Job).where(Job.kind == "dashboard").order_by(Job.id)))
        return jobs, version_key(session, study)


@pytest.fixture
def viewed(runner, lead_client):
    """The small study with items and the first half of its ratings, its dashboard
    viewed once by the lead (computed in that request and kept)."""
    _invoke(runner, "study", "create", DATA / "small-study.toml")
    _invoke(runner, "items", "import", "small", DATA / "items.csv")
    page = lead_client.get("/lead/studies/small")
    assert page.status_code == 200
    return lead_client


def test_a_finished_import_leaves_the_dashboard_current(app, runner, viewed):
    (first,), before = _current(app, "small")
    assert first.status == JobStatus.DONE and first.data_version == before

    _invoke(runner, "ratings", "import", "small", DATA / "ratings.csv")
    jobs, after = _current(app, "small")
    assert after != before
    # The import queued (here: ran) the dashboard of the data it left.
    assert [j.data_version for j in jobs if j.status == JobStatus.DONE][-1] == after
    with Session(get_engine(app)) as session:
        study = get_study(session, "small")
        live = live_dashboard(session, study, settings=study_settings(study))
        stored = session.exec(select(Rating)).all()
    assert not live.stale and not live.updating
    assert len(stored) > 0
    page = viewed.get("/lead/studies/small").get_data(as_text=True)
    assert "updating…" not in page


def test_a_finished_judge_run_leaves_the_dashboard_current(
    app, runner, viewed, fake_endpoint, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    _invoke(runner, "ratings", "import", "small", DATA / "ratings.csv")
    endpoint = fake_endpoint()
    _invoke(runner, "judge", "small", "--model", "m", "--base-url", endpoint.url)
    jobs, after = _current(app, "small")
    with Session(get_engine(app)) as session:
        assert session.exec(select(LLMScore)).first() is not None
    assert jobs[-1].status == JobStatus.DONE and jobs[-1].data_version == after
    assert "updating…" not in viewed.get("/lead/studies/small").get_data(as_text=True)


def test_a_study_never_viewed_queues_nothing(app, runner):
    _invoke(runner, "study", "create", DATA / "small-study.toml")
    _invoke(runner, "items", "import", "small", DATA / "items.csv")
    _invoke(runner, "ratings", "import", "small", DATA / "ratings.csv")
    # Its first view computes in the request, as before.
    assert _current(app, "small")[0] == []


def test_one_job_per_viewed_dashboard_and_data(app, runner, viewed):
    _invoke(runner, "ratings", "import", "small", DATA / "ratings.csv")
    with app.app_context(), Session(get_engine(app)) as session:
        study = get_study(session, "small")
        # Asked again on the same data: the done job is joined, nothing new.
        again = queue_dashboards(session, study)
        assert len(again) == 1 and again[0].status == JobStatus.DONE
        with pytest.raises(ValueError, match="recent"):
            queue_dashboards(session, study, recent=0)
