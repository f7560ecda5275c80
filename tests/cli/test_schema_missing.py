"""A command run against a database that was never upgraded says so, without a traceback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from annotator.cli import main


@pytest.mark.parametrize(
    "args",
    [
        ["export", "somestudy", "--format", "long", "--out", "-"],
        ["study", "list"],
    ],
    ids=["export", "study-list"],
)
def test_a_database_without_tables_gets_the_upgrade_command(args, database_url, tmp_path):
    # database_url is an empty database (a new SQLite file, or an empty PostgreSQL schema).
    env = {
        "ANNOTATOR_DATABASE_URL": database_url,
        "ANNOTATOR_INSTANCE_PATH": str(tmp_path / "instance"),
    }
    result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == 1, result.output
    assert "annotator db upgrade" in result.output
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)


def test_after_the_upgrade_the_same_command_runs(database_url, tmp_path):
    env = {
        "ANNOTATOR_DATABASE_URL": database_url,
        "ANNOTATOR_INSTANCE_PATH": str(tmp_path / "instance"),
    }
    runner = CliRunner()
    assert runner.invoke(main, ["db", "upgrade"], env=env).exit_code == 0
    result = runner.invoke(main, ["study", "list"], env=env)
    assert result.exit_code == 0, result.output
    assert "annotator db upgrade" not in result.output
