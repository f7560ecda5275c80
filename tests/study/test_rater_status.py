"""Withdrawn and excluded raters leave every export and statistic."""

from __future__ import annotations

import csv
import io
import json

import pytest
from sqlmodel import select

from annotator.data.exporters import render_export
from annotator.data.frames import data_version, study_frames
from annotator.db import session_scope
from annotator.models import (
    AuditAction,
    AuditEvent,
    Demographics,
    RaterStatus,
    Rating,
    RatingChange,
    User,
)
from annotator.services.overview import study_overviews
from annotator.study.studies import get_study
from tests.conftest import DATA

FORMATS = [
    ("long", {}),
    ("matrix", {"scale": "0-5"}),
    ("alttest", {"scale": "0-5"}),
    ("demographics", {}),
]


def _exports(app, slug="small") -> dict[str, str]:
    with session_scope(app) as session:
        study = get_study(session, slug)
        return {fmt: render_export(session, study, fmt, **options).text for fmt, options in FORMATS}


def _raters_in(exports: dict[str, str]) -> dict[str, set[str]]:
    """The rater codes each export names, read back from the files."""
    found = {}
    for fmt in ("long", "demographics"):
        rows = csv.DictReader(io.StringIO(exports[fmt]))
        found[fmt] = {r["rater"] for r in rows if r["rater"]}
    header = next(csv.reader(io.StringIO(exports["matrix"])))
    found["matrix"] = {c for c in header if c not in ("item_id", "benchmark")}
    found["alttest"] = set(json.loads(exports["alttest"])["humans"])
    return found


def _statistics_raters(app, slug="small") -> dict[str, set[str]]:
    with session_scope(app) as session:
        frames = study_frames(session, get_study(session, slug))
    return {
        "ratings": set(frames.ratings["rater"]),
        "demographics": set(frames.demographics["rater"]),
    }


def _overview(app, slug="small") -> dict:
    with session_scope(app) as session:
        row = next(r for r in study_overviews(session) if r["study"].slug == slug)
        return {"raters": row["raters"], "ratings": row["ratings"]}


def _set_withdrawn_ratings(app, value: str) -> None:
    with session_scope(app) as session:
        get_study(session, "small").withdrawn_ratings = value


@pytest.mark.parametrize(
    ("command", "status"),
    [
        (["raters", "withdraw", "small", "BOB", "--reason", "asked by email"], "withdrawn"),
        (["raters", "exclude", "small", "bob", "--reason", "pilot rater"], "excluded"),
    ],
)
def test_rater_leaves_every_export_and_statistic(app, runner, small_study, command, status):
    before = _exports(app)
    assert all("bob" in codes for codes in _raters_in(before).values())
    assert _statistics_raters(app) == {
        "ratings": {"ann", "bob", "cy"},
        "demographics": {"ann", "bob", "cy"},
    }
    assert _overview(app) == {"raters": 3, "ratings": 12}
    with session_scope(app) as session:
        version = data_version(session, get_study(session, "small"))

    result = runner.invoke(args=command)
    assert result.exit_code == 0, result.output

    after = _exports(app)
    for fmt, codes in _raters_in(after).items():
        assert codes == {"ann", "cy"}, fmt
    assert _statistics_raters(app) == {"ratings": {"ann", "cy"}, "demographics": {"ann", "cy"}}
    assert _overview(app) == {"raters": 2, "ratings": 8}
    with session_scope(app) as session:
        assert data_version(session, get_study(session, "small")) != version
        bob = session.exec(select(User).where(User.rater_code == "bob")).one()
        assert bob.status == status
        # Kept (the study's default): the ratings are still in the database.
        assert len(session.exec(select(Rating).where(Rating.rater_id == bob.id)).all()) == 4
        event = session.exec(select(AuditEvent).where(AuditEvent.subject_id == bob.id)).one()
        assert event.action == f"rater-{status}"
        assert event.details["via"] == "cli" and event.details["reason"]


def test_the_other_raters_rows_are_unchanged(app, runner, small_study):
    """Leaving a rater out removes exactly their rows: the rest of the long export is
    byte for byte what it was."""
    before = _exports(app)["long"].splitlines()
    runner.invoke(args=["raters", "exclude", "small", "cy", "--reason", "test rater"])
    after = _exports(app)["long"].splitlines()
    header = before[0].split(",")
    rater = header.index("rater")
    assert after == [line for line in before if line.split(",")[rater] != "cy"]


def test_withdrawal_with_deletion_deletes_ratings_history_and_answers(app, runner, small_study):
    _set_withdrawn_ratings(app, "delete")
    with session_scope(app) as session:
        bob = session.exec(select(User).where(User.rater_code == "bob")).one()
        rating_ids = list(session.exec(select(Rating.id).where(Rating.rater_id == bob.id)))
        assert len(rating_ids) == 4
        changes_before = len(session.exec(select(RatingChange)).all())
    result = runner.invoke(args=["raters", "withdraw", "small", "bob"])
    assert result.exit_code == 0, result.output
    assert "4 ratings deleted" in result.output
    with session_scope(app) as session:
        bob = session.exec(select(User).where(User.rater_code == "bob")).one()
        assert session.exec(select(Rating).where(Rating.rater_id == bob.id)).all() == []
        # No orphan: the history of the deleted ratings went with them.
        assert (
            session.exec(select(RatingChange).where(RatingChange.rating_id.in_(rating_ids))).all()
            == []
        )
        assert len(session.exec(select(RatingChange)).all()) == changes_before - 4
        assert session.exec(select(Demographics).where(Demographics.user_id == bob.id)).all() == []
        # The audit history keeps its subject.
        event = session.exec(select(AuditEvent).where(AuditEvent.subject_id == bob.id)).one()
        assert event.action == AuditAction.RATER_WITHDRAWN
        assert event.details == {
            "via": "cli",
            "reason": "",
            "ratings": "delete",
            "deleted_ratings": 4,
        }
    assert _overview(app) == {"raters": 2, "ratings": 8}


def test_a_withdrawal_is_final_and_an_exclusion_can_be_undone(app, runner, small_study):
    before = _exports(app)
    assert (
        runner.invoke(args=["raters", "exclude", "small", "ann"]).exit_code == 2
    )  # --reason required
    assert (
        runner.invoke(args=["raters", "exclude", "small", "ann", "--reason", "pilot"]).exit_code
        == 0
    )
    again = runner.invoke(args=["raters", "exclude", "small", "ann", "--reason", "pilot"])
    assert again.exit_code == 1 and "excluded already" in again.output
    result = runner.invoke(args=["raters", "include", "small", "ann"])
    assert result.exit_code == 0, result.output
    assert _exports(app) == before

    assert runner.invoke(args=["raters", "withdraw", "small", "ann"]).exit_code == 0
    for args in (["include"], ["withdraw"], ["exclude", "--reason", "x"]):
        result = runner.invoke(args=["raters", args[0], "small", "ann", *args[1:]])
        assert result.exit_code == 1, args
        assert "withdrawn" in result.output
    unknown = runner.invoke(args=["raters", "withdraw", "small", "nobody"])
    assert unknown.exit_code == 1 and "no rater with code 'nobody'" in unknown.output
    with session_scope(app) as session:
        actions = session.exec(select(AuditEvent.action).order_by(AuditEvent.id)).all()
    assert [a for a in actions if a.startswith("rater-")] == [
        "rater-excluded",
        "rater-included",
        "rater-withdrawn",
    ]


def test_withdrawn_rater_is_refused_at_their_return_link(app, runner, small_study):
    with session_scope(app) as session:
        ann = session.exec(select(User).where(User.rater_code == "ann")).one()
        ann.return_token = "token-of-ann-1234567890"
    runner.invoke(args=["raters", "withdraw", "small", "ann"])
    with session_scope(app) as session:
        ann = session.exec(select(User).where(User.rater_code == "ann")).one()
        assert ann.status == RaterStatus.WITHDRAWN
    # The link only recognises the rater, to say that they withdrew.
    refused = app.test_client().get("/r/token-of-ann-1234567890")
    assert refused.status_code == 403 and "You have withdrawn" in refused.text


def test_lead_withdraws_and_excludes_from_the_raters_page(app, lead_client, small_study):
    with session_scope(app) as session:
        ids = dict(session.exec(select(User.rater_code, User.id).where(User.role == "rater")).all())
    page = lead_client.get("/lead/studies/small/raters").get_data(as_text=True)
    assert f"/lead/studies/small/raters/{ids['bob']}/exclude" in page
    assert f"/lead/studies/small/raters/{ids['bob']}/withdraw" in page

    # Without a reason an exclusion is refused; with one it asks first and stores nothing.
    empty = lead_client.post(
        f"/lead/studies/small/raters/{ids['bob']}/exclude", data={"reason": " "}
    )
    assert empty.status_code == 302
    ask = lead_client.post(
        f"/lead/studies/small/raters/{ids['bob']}/exclude", data={"reason": "pilot"}
    )
    assert ask.status_code == 200 and "Exclude rater bob?" in ask.get_data(as_text=True)
    assert 'name="reason" value="pilot"' in ask.get_data(as_text=True)
    assert _overview(app)["raters"] == 3
    done = lead_client.post(
        f"/lead/studies/small/raters/{ids['bob']}/exclude",
        data={"reason": "pilot", "confirmed": "yes"},
        follow_redirects=True,
    )
    assert "Rater bob excluded" in done.get_data(as_text=True)
    assert "excluded</strong>: pilot" in done.get_data(as_text=True)
    assert _overview(app)["raters"] == 2

    ask = lead_client.post(f"/lead/studies/small/raters/{ids['cy']}/withdraw", data={})
    assert "cannot be undone" in ask.get_data(as_text=True)
    lead_client.post(f"/lead/studies/small/raters/{ids['cy']}/withdraw", data={"confirmed": "yes"})
    include = lead_client.post(
        f"/lead/studies/small/raters/{ids['bob']}/include", data={"confirmed": "yes"}
    )
    assert include.status_code == 302
    assert _raters_in(_exports(app))["matrix"] == {"ann", "bob"}
    with session_scope(app) as session:
        lead = session.exec(select(User).where(User.role == "lead")).one()
        events = session.exec(select(AuditEvent).where(AuditEvent.actor_id == lead.id)).all()
    assert sorted(e.action for e in events) == [
        "rater-excluded",
        "rater-included",
        "rater-withdrawn",
    ]
    # Another study's rater id is not found under this study.
    assert lead_client.post("/lead/studies/small/raters/999999/withdraw").status_code == 404


def test_the_study_file_setting(tmp_path):
    from annotator.study.studyfile import StudyFileError, load_study_file

    text = (DATA / "small-study.toml").read_text()
    path = tmp_path / "s.toml"
    path.write_text(text.replace("consent =", 'withdrawn_ratings = "delete"\nconsent ='))
    assert load_study_file(path).withdrawn_ratings == "delete"
    assert load_study_file(DATA / "small-study.toml").withdrawn_ratings == "keep"
    path.write_text(text.replace("consent =", 'withdrawn_ratings = "hide"\nconsent ='))
    with pytest.raises(StudyFileError, match="withdrawn_ratings"):
        load_study_file(path)


def test_the_cached_dashboard_is_recomputed_without_the_withdrawn_rater(
    app, session, make_study, runner
):
    from annotator.analysis.settings import study_settings
    from annotator.data.frames import study_frames
    from annotator.render.dashboard import study_dashboard
    from annotator.services.dashboards import cached_dashboard

    study = make_study(n_items=12, n_raters=4)
    before = cached_dashboard(session, study)
    raters = sorted(r.rater for r in before.scales[0].raters)
    assert len(raters) == 4
    result = runner.invoke(args=["raters", "withdraw", study.slug, raters[0]])
    assert result.exit_code == 0, result.output
    session.expire_all()
    after = cached_dashboard(session, study)
    assert sorted(r.rater for r in after.scales[0].raters) == raters[1:]
    assert after.scales[0].n_ratings < before.scales[0].n_ratings
    # The same as computed afresh.
    fresh = study_dashboard(study_frames(session, study), settings=study_settings(study))
    assert [s.n_ratings for s in fresh.scales] == [s.n_ratings for s in after.scales]


def test_ratings_of_a_withdrawn_rater_cannot_be_imported_again(app, runner, small_study):
    _set_withdrawn_ratings(app, "delete")
    assert runner.invoke(args=["raters", "withdraw", "small", "bob"]).exit_code == 0
    result = runner.invoke(args=["ratings", "import", "small", str(DATA / "ratings.csv")])
    assert result.exit_code == 1
    assert "rater 'bob' has withdrawn from the study" in result.output
    assert _overview(app) == {"raters": 2, "ratings": 8}
    with session_scope(app) as session:
        assert len(session.exec(select(Rating)).all()) == 8
