"""A rater's score post runs as many SQL statements with 10 prior ratings as with 1,000."""

from __future__ import annotations

from sqlmodel import Session, select

from annotator.clock import now
from annotator.data._bulk import _insert_rows
from annotator.db import get_engine, session_scope
from annotator.models import ChangeReason, Rating, RatingChange, RatingSource, Study, User
from tests.data.studies import study_toml

from .conftest import HTMX, blocks_of, item_url, join, ratings_of, start, statements


def _prior_ratings(app, block, count: int) -> None:
    """Ratings of the block's first ``count`` places, as the app stores them
    (a rating and its first value in the history), written in bulk."""
    at = now()
    with session_scope(app) as session:
        # The study's current version, which every rating records.
        version = session.exec(
            select(Study.version)
            .join(User, User.study_id == Study.id)
            .where(User.id == block.rater_id)
        ).one()
        rows = [
            {
                "rater_id": block.rater_id,
                "item_id": entry["item"],
                "scale_id": block.scale_id,
                "block_id": block.id,
                "value": 2.5,
                "position": position,
                "is_repeat": bool(entry["repeat"]),
                "is_attention_check": bool(entry["attention"]),
                "served_at": at,
                "submitted_at": at,
                "source": RatingSource.APP.value,
                "study_version": version,
            }
            for position, entry in enumerate(block.item_order[:count], start=1)
        ]
        _insert_rows(session, Rating, rows)
        ids = session.connection().exec_driver_sql(
            f"SELECT id, value FROM rating WHERE block_id = {int(block.id)}"
        )
        _insert_rows(
            session,
            RatingChange,
            [
                {"rating_id": rid, "value": value, "changed_at": at, "reason": ChangeReason.CREATE}
                for rid, value in ids
            ],
        )


def _post_statements(app, make_study, prior: int) -> list[str]:
    """The statements of one htmx score post after ``prior`` ratings in the block."""
    slug = f"count{prior}"
    make_study(study_toml(slug=slug, name=f"Count {prior}"), n_items=prior + 5)
    client = app.test_client()
    rater = join(app, client, slug)
    block = blocks_of(app, rater)[0]
    assert start(client, block.id).status_code == 302
    block = blocks_of(app, rater)[0]
    assert len(block.item_order) > prior + 1
    _prior_ratings(app, block, prior)
    position = prior + 1
    assert client.get(item_url(block.id, position)).status_code == 200
    with statements(app) as seen:
        response = client.post(item_url(block.id, position), data={"score": "3"}, headers=HTMX)
    assert response.status_code == 200, response.text
    assert response.headers["HX-Push-Url"].endswith(item_url(block.id, position + 1))
    stored = ratings_of(app, rater)
    assert len(stored) == prior + 1 and stored[-1].position == position and stored[-1].value == 3
    return list(seen)


def test_a_score_post_runs_the_same_statements_with_10_and_1000_prior_ratings(app, make_study):
    few = _post_statements(app, make_study, 10)
    many = _post_statements(app, make_study, 1000)
    with Session(get_engine(app)) as session:
        assert session.connection().exec_driver_sql("SELECT count(*) FROM rating").scalar() == 1012
    assert len(few) == len(many), (few, many)
    # The same statements, not only as many (the ids in them differ).
    assert [s.split()[0] for s in few] == [s.split()[0] for s in many]


def _reads_of(statements: list[str], table: str) -> int:
    """How many of ``statements`` read rows of ``table`` (the user loader's EXISTS
    on the criteria is part of its own statement, not a read of this kind)."""
    return sum(1 for s in statements if s.lstrip().startswith(f"SELECT {table}."))


def test_a_score_post_reads_its_items_once_and_no_criteria_without_a_rubric(app, make_study):
    # The posted item (its shown-item check) and the next one (the htmx answer's page)
    # come in one statement; a study without [[criteria]] reads no criterion at all.
    seen = _post_statements(app, make_study, 10)
    assert _reads_of(seen, "item") == 1, seen
    assert _reads_of(seen, "criterion") == 0, seen
