"""A study without ``[[criteria]]`` exports byte for byte what it exported
before criteria existed.

The files under tests/data/golden/ were written by main's code (commit
23187f1, before rubrics) with ``python -m tests.data.test_exports_unchanged``
run in a checkout of that commit; the test rebuilds the same study with the
same frozen clock and seeds and compares every export with them.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

from tests.conftest import DATA

GOLDEN = DATA / "golden"

# Every export format, on each scale where the format needs one.
EXPORTS = {
    "long.csv": ["--format", "long"],
    "long-sts-b.csv": ["--format", "long", "--benchmark", "sts-b"],
    "matrix-0-5.csv": ["--format", "matrix", "--scale", "0-5"],
    "matrix-0-100.csv": ["--format", "matrix", "--scale", "0-100"],
    "matrix-0-5-runs-each.csv": ["--format", "matrix", "--scale", "0-5", "--runs", "each"],
    "alttest-0-5.json": ["--format", "alttest", "--scale", "0-5"],
    "alttest-0-100.json": ["--format", "alttest", "--scale", "0-100"],
    "demographics.csv": ["--format", "demographics"],
}

ANSWERS = {"gender": "female", "age_group": "25-34", "english": "native"}


def _invoke(runner, *args) -> str:
    result = runner.invoke(args=[str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    # The file's text alone (notes and "Wrote ..." go to standard error).
    return result.stdout


def build_study(app, runner, monkeypatch) -> None:
    """The small study: imported items, ratings and LLM scores, and one rater who
    rates three items in the app (served and submitted times, positions)."""
    from sqlmodel import select

    from annotator.collect import protocol
    from annotator.db import session_scope
    from annotator.models import Block, User
    from annotator.study.studies import create_invites, get_study

    seeds = itertools.count(11)
    monkeypatch.setattr(protocol, "new_seed", lambda: next(seeds))
    _invoke(runner, "study", "create", DATA / "small-study.toml")
    _invoke(runner, "items", "import", "small", DATA / "items.csv")
    _invoke(runner, "ratings", "import", "small", DATA / "ratings.csv")
    _invoke(runner, "llm-scores", "import", "small", DATA / "llm_scores.csv")
    with session_scope(app) as session:
        token = create_invites(session, get_study(session, "small"), 1)[0].token
    client = app.test_client()
    assert client.post(f"/invite/{token}", data={"decision": "agree"}).status_code == 302
    assert client.post("/rate/demographics", data=ANSWERS).status_code == 302
    with session_scope(app) as session:
        rater = session.exec(
            select(User).where(User.role == "rater", User.source == "invite")
        ).one()
        # Rater codes are drawn at random: a fixed one keeps the files fixed.
        rater.rater_code = "R-APP001"
        block = session.exec(
            select(Block).where(Block.rater_id == rater.id, Block.position == 1)
        ).one()
        block_id = block.id
    assert client.post(f"/rate/blocks/{block_id}/start").status_code == 302
    clock = app.config["CLOCK"]
    for position, score in ((1, "1.25"), (2, "3"), (3, "4.5")):
        assert client.get(f"/rate/blocks/{block_id}/items/{position}").status_code == 200
        clock.advance(seconds=7.5)
        response = client.post(f"/rate/blocks/{block_id}/items/{position}", data={"score": score})
        assert response.status_code == 302, response.text


def exports(runner) -> dict[str, str]:
    return {
        name: _invoke(runner, "export", "small", *args, "--out", "-")
        for name, args in EXPORTS.items()
    }


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_export_is_byte_identical_to_before_criteria(app, runner, monkeypatch, name):
    build_study(app, runner, monkeypatch)
    text = _invoke(runner, "export", "small", *EXPORTS[name], "--out", "-")
    assert text == (GOLDEN / name).read_text(encoding="utf-8")


def _write_golden(directory: Path) -> None:
    """Write the golden files from this checkout's code (see the module docstring)."""
    import tempfile
    from datetime import UTC, datetime

    from sqlmodel import SQLModel

    from annotator import create_app
    from annotator.clock import FrozenClock
    from annotator.db import get_engine

    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("ANNOTATOR_INSTANCE_PATH", f"{tmp}/instance")
        app = create_app(
            {
                "TESTING": True,
                "DATABASE_URL": f"sqlite:///{tmp}/golden.sqlite",
                "SECRET_KEY": "golden",
                "WTF_CSRF_ENABLED": False,
                "RATELIMIT_ENABLED": False,
                "CLOCK": FrozenClock(datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)),
            }
        )
        SQLModel.metadata.create_all(get_engine(app))
        runner = app.test_cli_runner()
        build_study(app, runner, monkeypatch)
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in exports(runner).items():
            (directory / name).write_text(text, encoding="utf-8")
        get_engine(app).dispose()


if __name__ == "__main__":
    _write_golden(Path(sys.argv[1]) if len(sys.argv) > 1 else GOLDEN)
