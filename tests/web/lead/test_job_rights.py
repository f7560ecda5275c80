"""Rights on a job are checked against the member's role at the moment of the action
(issue 36, finding 5): an owner made analyst cannot cancel or rerun the judge runs
they started (a judge run spends the endpoint's money), but keeps their own exports."""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine, session_scope
from annotator.jobs import Job, JobStatus
from annotator.models import StudyRole, User
from annotator.study.members import share_study
from annotator.study.studies import create_lead, get_study

from .conftest import PASSWORD, csrf_token, login


def _former_owner_job(app, kind: str, status: str) -> int:
    """A job started by ``former@`` while an owner of ``small``, who is an analyst now."""
    with app.app_context(), session_scope(app) as session:
        study = get_study(session, "small")
        former = create_lead(session, "former@example.org", PASSWORD)
        share_study(session, study, former, StudyRole.OWNER, actor=None, via="cli")
        session.flush()
        job = Job(
            study_id=study.id,
            kind=kind,
            params={"endpoint": "hosted", "model": "m", "scales": ["0-5"], "runs": 1}
            | {"temperature": 1.0, "limit": None},
            params_key="1" * 64,
            data_version="1" * 64,
            status=status,
            error="ValueError: refused" if status == JobStatus.FAILED else None,
            created_by=former.id,
        )
        session.add(job)
        session.flush()
        job_id = job.id
        share_study(session, study, former, StudyRole.ANALYST, actor=None, via="cli")
    return job_id


def _job(app, job_id: int) -> Job:
    with Session(get_engine(app)) as session:
        return session.get(Job, job_id)


@pytest.mark.parametrize(
    ("action", "status"), [("rerun", JobStatus.FAILED), ("cancel", JobStatus.QUEUED)]
)
def test_a_demoted_owner_cannot_rerun_or_cancel_a_judge_run(team, action, status):
    job_id = _former_owner_job(team.app, "judge", status)
    former = login(team.app, "former@example.org")
    url = f"/lead/studies/small/jobs/{job_id}"
    page = former.get(url).get_data(as_text=True)
    assert "Run again" not in page and f"{url}/cancel" not in page
    response = former.post(f"{url}/{action}", data={"csrf_token": csrf_token(former, url)})
    assert response.status_code == 403
    job = _job(team.app, job_id)
    assert (job.status, job.attempt) == (status, 1)
    # A current owner may.
    owner = login(team.app, "owner@example.org")
    response = owner.post(f"{url}/cancel", data={"csrf_token": csrf_token(owner, url)})
    assert response.status_code == 302


def test_a_demoted_owner_still_cancels_their_own_export(team):
    job_id = _former_owner_job(team.app, "export", JobStatus.QUEUED)
    former = login(team.app, "former@example.org")
    url = f"/lead/studies/small/jobs/{job_id}"
    response = former.post(f"{url}/cancel", data={"csrf_token": csrf_token(former, url)})
    assert response.status_code == 302
    assert _job(team.app, job_id).status == JobStatus.CANCELLED
    with Session(get_engine(team.app)) as session:
        user = session.exec(select(User).where(User.email == "former@example.org")).one()
        assert user.id == _job(team.app, job_id).created_by
