"""``annotator validation check STUDY``: stop serving blocks once the judges are decided."""

from __future__ import annotations

import click
from flask.cli import AppGroup

from ._common import fail, study_or_fail

__all__ = ["validation_group"]

validation_group = AppGroup(
    "validation", help="Stop when decided: check a study's judges with the anytime-valid alt-test."
)


@validation_group.command("check")
@click.argument("study")
@click.option(
    "--reopen", is_flag=True, help="Serve blocks again in a study that stopped (checks again)."
)
def validation_check(study: str, reopen: bool) -> None:
    """Check STUDY's judges; stop serving new blocks once every scale and judge is decided.

    Needs ``stop_when_decided = true`` and ``judges`` in the study file's
    ``[validation]`` table. Safe to run often (from cron, say): a stop is recorded
    once, with its time and reasons, and shown on the lead's study page.
    """
    from ..collect.stopping import reopen as reopen_study
    from ..db import session_scope
    from ..services.stopping import check_stop

    with session_scope() as session:
        the_study = study_or_fail(session, study)
        if reopen:
            if the_study.stopped_at is None:
                fail(f"study {study!r} has not stopped; nothing to reopen")
            reopen_study(session, the_study)
            session.flush()
        check = check_stop(session, the_study)
        if not check.enabled:
            fail(f"study {study!r}: {check.summary()}")
        click.echo(check.summary())
