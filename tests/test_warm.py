"""A fresh worker's warm-up (annotator.warm): the study page's reads, nothing
written. Its speed is measured by benchmarks/first_request.py."""

import logging

from annotator.db import get_engine, session_scope
from annotator.demo import load_demo
from annotator.warm import warm_up
from tests.web.lead.conftest import snapshot


def test_the_warm_up_compiles_the_study_pages_reads_and_changes_nothing(app, lead_client):
    with session_scope(app) as session:
        load_demo(session, base_url="http://localhost", instance_path=app.instance_path)
    assert lead_client.get("/lead/studies/demo").status_code == 200  # the first view
    cache = get_engine(app)._compiled_cache
    # The statements a cold worker's study page compiles (its dashboard is stored now).
    cache.clear()
    assert lead_client.get("/lead/studies/demo").status_code == 200
    cold = len(cache)
    cache.clear()
    before = snapshot(app)
    assert warm_up(app) is True
    assert snapshot(app) == before
    warmed = len(cache)
    assert lead_client.get("/lead/studies/demo").status_code == 200
    # Most of the page's statements were compiled by the warm-up (the rest: the
    # logged-in user's, the stored dashboard's).
    assert len(cache) - warmed <= cold / 3, (cold, warmed, len(cache))


def test_the_warm_up_of_an_empty_database_does_nothing(app):
    assert warm_up(app) is False


def test_a_failed_warm_up_is_logged_and_leaves_the_worker_serving(make_app, caplog):
    app = make_app(create_schema=False)  # no tables: every read fails
    with caplog.at_level(logging.WARNING, logger="annotator.warm"):
        assert warm_up(app) is False
    assert "Warm-up of the lead's pages failed" in caplog.text
    assert app.test_client().get("/login").status_code == 200
