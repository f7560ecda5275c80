"""live_dashboard serves the last dashboard at once and refreshes it in one background job;
the report is kept until the data changes."""

from __future__ import annotations

import threading
from concurrent.futures import Executor, Future, ThreadPoolExecutor

import pytest
from sqlmodel import select

from annotator.analysis import report as report_package
from annotator.analysis.dashboard import study_dashboard
from annotator.analysis.live import cached_dashboard, live_dashboard
from annotator.analysis.settings import study_settings
from annotator.data.frames import study_frames
from annotator.models import Rating, RatingChange
from annotator.study.studies import create_lead
from tests.conftest import download_report

LEAD = ("lead@example.org", "lead-password-1")


class ManualExecutor(Executor):
    """Keeps the submitted calls until the test runs them."""

    def __init__(self) -> None:
        self.jobs: list[tuple[Future, tuple]] = []

    def submit(self, fn, /, *args, **kwargs):
        future: Future = Future()
        self.jobs.append((future, (fn, args, kwargs)))
        return future

    def run_all(self) -> None:
        for future, (fn, args, kwargs) in self.jobs:
            future.set_result(fn(*args, **kwargs))


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


def test_stale_dashboard_at_once_then_fresh_after_one_background_job(
    app, lead, session, make_study
):
    executor = ManualExecutor()
    app.config["DASHBOARD_EXECUTOR"] = executor
    study = make_study(slug="live", n_items=12, n_raters=3, seed=5)
    taken = _take_ratings(session, study, 2)
    first = lead.get("/lead/studies/live").get_data(as_text=True)
    # The first view computed synchronously: no job, nothing stale.
    assert executor.jobs == [] and "updating" not in first
    old = cached_dashboard(session, study)
    _put_back(session, taken)

    stale = lead.get("/lead/studies/live").get_data(as_text=True)
    assert f"As of {old.computed_at:%H:%M} UTC" in stale
    assert "(2 new ratings since; updating…)" in stale
    assert old.computed_at.isoformat() in stale
    assert 'hx-trigger="every 5s"' in stale
    partial = lead.get("/lead/studies/live", headers={"HX-Request": "true"})
    assert "updating…" in partial.get_data(as_text=True)
    # Two requests, one computation.
    assert len(executor.jobs) == 1

    executor.run_all()
    fresh = lead.get("/lead/studies/live", headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "updating" not in fresh and "As of" not in fresh
    assert 'hx-trigger="every 45s"' in fresh
    assert len(executor.jobs) == 1
    new = cached_dashboard(session, study)
    assert new.computed_at > old.computed_at and new.computed_at.isoformat() in fresh
    direct = study_dashboard(study_frames(session, study), settings=study_settings(study))
    for name in ("0-5", "0-10", "0-100"):
        assert new.scale(name).icc_a1.value == direct.scale(name).icc_a1.value
        assert new.scale(name).n_ratings == direct.scale(name).n_ratings
    assert sum(p.n_ratings for p in new.scales) == sum(p.n_ratings for p in old.scales) + 2


def test_background_thread_uses_its_own_session(session, make_study):
    study = make_study(n_items=10, n_raters=3, seed=6)
    taken = _take_ratings(session, study, 1)
    first = live_dashboard(session, study)
    _put_back(session, taken)
    futures: list[Future] = []
    go = threading.Event()

    class Held(ThreadPoolExecutor):
        """A real thread that starts computing when the test says so."""

        def submit(self, fn, /, *args, **kwargs):
            def held():
                assert go.wait(timeout=120)
                return fn(*args, **kwargs)

            futures.append(super().submit(held))
            return futures[-1]

    with Held(max_workers=1) as pool:
        try:
            stale = live_dashboard(session, study, executor=pool)
        finally:
            # Even when live_dashboard fails, the thread must not wait out its timeout.
            go.set()
        assert stale.stale and stale.updating and stale.new_ratings == 1
        assert stale.dashboard is first.dashboard
        (future,) = futures
        future.result(timeout=120)
    after = live_dashboard(session, study, executor=pool)
    assert not after.stale and after.dashboard.computed_at > first.dashboard.computed_at
    assert after.dashboard is cached_dashboard(session, study)


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
