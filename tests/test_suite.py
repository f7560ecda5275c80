"""The test suite itself on a fresh clone: no ../shared beside the repository."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _pytest_without_shared_data(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    clean = {
        key: value
        for key, value in os.environ.items()
        if key not in ("ANNOTATOR_REQUIRE_ALL_TESTS", "ANNOTATOR_TEST_DATABASE_URL")
    }
    # An empty folder stands for the missing ../shared of a fresh clone.
    clean.update(ANNOTATOR_SHARED_DIR=str(tmp_path / "no-shared"), **env)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "tests/metrics/test_alttest.py",
            "-k",
            "reproduces or per_annotator or t_test_is_scipys",
        ],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("require_all", [False, True])
def test_tests_needing_shared_data_skip_and_say_how_to_get_it(tmp_path, require_all):
    env = {"ANNOTATOR_REQUIRE_ALL_TESTS": "1"} if require_all else {}
    result = _pytest_without_shared_data(tmp_path, **env)
    output = result.stdout + result.stderr
    assert "error" not in output.lower(), output
    assert "skipped" in output
    assert "clone the shared folder next to the repository (../shared)" in output
    assert "set ANNOTATOR_SHARED_DIR" in output
    # Tests that need no shared data still ran.
    assert " passed" in output, output
    if require_all:
        # CI sets ANNOTATOR_REQUIRE_ALL_TESTS: there a skip fails the run.
        assert result.returncode == 1, output
        assert "skipped where all must run" in output
    else:
        assert result.returncode == 0, output


def test_the_postgresql_pass_runs_the_tests_that_use_a_database():
    """With ANNOTATOR_TEST_DATABASE_URL set, only tests whose fixtures reach the database
    are collected (tests/conftest.py); collecting connects to no server."""
    env = {k: v for k, v in os.environ.items() if k != "ANNOTATOR_REQUIRE_ALL_TESTS"}
    env["ANNOTATOR_TEST_DATABASE_URL"] = "postgresql://nobody@127.0.0.1:9/never-reached"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist"]
        + ["--collect-only", "-q", "tests/test_app.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    collected = {line.split("::")[1] for line in result.stdout.splitlines() if "::" in line}
    # Through app, client, lead_client, make_app; and the PostgreSQL-only test.
    assert collected == {
        "test_database_settings",
        "test_front_page_sends_anonymous_users_to_login",
        "test_building_an_app_leaves_the_environment_alone",
        "test_a_postgresql_connection_the_server_ended_is_replaced_without_a_ping_per_request",
    }, output
    # The factory's own tests build apps from the environment, on no test database.
    assert "test_environment_overrides" not in output
    assert "tests use the database" in output and "deselected" in output
