"""A rating given in the app records the study version the rater saw."""

from __future__ import annotations

from annotator.db import session_scope
from annotator.study.studies import get_study
from tests.data.studies import study_toml

from .conftest import blocks_of, item_url, ratings_of, start


def test_ratings_record_the_version_they_were_given_under(
    app, client, runner, study, rater, tmp_path
):
    block = blocks_of(app, rater)[0]
    assert start(client, block.id).status_code == 302
    for position in (1, 2):
        client.get(item_url(block.id, position))
        assert client.post(item_url(block.id, position), data={"score": "2"}).status_code == 302

    path = tmp_path / "study.toml"
    path.write_text(study_toml(consent='"You agree to rate ten short texts, as amended."'))
    result = runner.invoke(args=["study", "update", str(path)])
    assert result.exit_code == 0, result.output
    with session_scope(app) as session:
        assert get_study(session, study.slug).version == 2

    client.get(item_url(block.id, 3))
    assert client.post(item_url(block.id, 3), data={"score": "3"}).status_code == 302
    # Revising a rating keeps the version it was first given under.
    client.post(item_url(block.id, 1), data={"score": "4"})
    ratings = ratings_of(app, rater)
    assert [(r.position, r.value, r.study_version) for r in ratings] == [
        (1, 4.0, 1),
        (2, 2.0, 1),
        (3, 3.0, 2),
    ]
