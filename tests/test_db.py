"""commit_retrying runs a unit again after a lost lock race, and only then."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import OperationalError

from annotator.db import commit_retrying


class _DriverError(Exception):
    def __init__(self, message: str, sqlstate: str | None) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


def _failing_once(message: str, sqlstate: str | None):
    calls: list[int] = []

    def work() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("UPDATE study", {}, _DriverError(message, sqlstate))
        return "stored"

    return work, calls


@pytest.mark.parametrize(
    ("message", "sqlstate"),
    [("deadlock detected", "40P01"), ("database is locked", None)],
    ids=["postgresql-deadlock", "sqlite-locked"],
)
def test_a_lost_lock_race_is_run_again(session, message, sqlstate):
    work, calls = _failing_once(message, sqlstate)
    assert commit_retrying(session, work) == "stored"
    assert len(calls) == 2


def test_another_operational_error_propagates(session):
    work, calls = _failing_once("could not connect", "08006")
    with pytest.raises(OperationalError, match="could not connect"):
        commit_retrying(session, work)
    assert len(calls) == 1
