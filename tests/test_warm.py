"""A fresh worker's warm-up (annotator.warm): the study page's reads, nothing
written. Its speed is measured by benchmarks/first_request.py."""

import json
import logging
import os
import subprocess
import sys
import textwrap

from annotator.db import get_engine, session_scope
from annotator.demo import load_demo
from annotator.jobs import get_queue
from annotator.study.studies import create_lead
from annotator.warm import warm_up
from tests.conftest import LEAD_EMAIL, LEAD_PASSWORD
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
    assert warmed >= cold > 0
    page = lead_client.get("/lead/studies/demo")
    assert page.status_code == 200
    # Every statement of the page was compiled by the warm-up.
    assert len(cache) == warmed, (cold, warmed, len(cache))


def test_the_warm_up_compiles_the_report_posts_statements_and_queues_nothing(make_app):
    # Jobs queued, not run in the request: only the POST's own statements count.
    app = make_app(JOBS_IMMEDIATE=False)
    with session_scope(app) as session:
        create_lead(session, LEAD_EMAIL, LEAD_PASSWORD)  # the demo's lead, as for lead_client
        load_demo(session, base_url="http://localhost", instance_path=app.instance_path)
    client = app.test_client()
    client.post("/login", data={"username": LEAD_EMAIL, "password": LEAD_PASSWORD})
    assert client.get("/lead/studies/demo").status_code == 200  # the first view
    cache = get_engine(app)._compiled_cache
    cache.clear()
    before = snapshot(app)
    assert warm_up(app) is True
    assert snapshot(app) == before  # the warm-up's job request was rolled back
    assert get_queue(app).pending_count() == 0  # and nothing was queued
    warmed = len(cache)
    response = client.post("/lead/studies/demo/report")
    assert response.status_code == 302 and "/jobs/" in response.headers["Location"]
    assert len(cache) == warmed
    assert get_queue(app).pending_count() == 1  # the lead's own job was queued


def test_the_warm_up_of_an_empty_database_does_nothing(app):
    assert warm_up(app) is False


def test_a_failed_warm_up_is_logged_and_leaves_the_worker_serving(make_app, caplog):
    app = make_app(create_schema=False)  # no tables: every read fails
    with caplog.at_level(logging.WARNING, logger="annotator.warm"):
        assert warm_up(app) is False
    assert "Warm-up of the lead's pages failed" in caplog.text
    assert app.test_client().get("/login").status_code == 200


def test_after_a_job_workers_warm_up_a_report_imports_no_statistics_or_figures(
    small_study, database_url
):
    """A fresh interpreter (the test's has imported everything): after
    :func:`warm_up_jobs`, the report's statistics and figures import nothing more."""
    code = textwrap.dedent(
        """
        import json, sys
        from annotator import create_app
        from annotator.warm import warm_up_jobs

        app = create_app(serving=False)
        warm_up_jobs()
        before = set(sys.modules)
        from annotator.db import session_scope
        from annotator.services.report import build_report
        from annotator.study.studies import get_study

        with app.app_context(), session_scope() as session:
            report = build_report(session, get_study(session, "small"))
        assert "<figure" in report.html
        print(json.dumps(sorted(set(sys.modules) - before)))
        """
    )
    env = {**os.environ, "ANNOTATOR_DATABASE_URL": database_url}
    env["ANNOTATOR_SECRET_KEY"] = "test-secret"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr
    new = json.loads(result.stdout.splitlines()[-1])
    heavy = ("scipy", "matplotlib", "PIL", "annotator.analysis", "annotator.metrics")
    assert [name for name in new if name.startswith(heavy)] == []
