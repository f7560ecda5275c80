"""The ``annotator`` command line (also ``flask --app annotator ...``).

Start-up matters here: ``annotator --help`` and a command's ``--help`` must not
wait for SQLAlchemy, pandas or scipy (seconds on a small machine). So this
package imports only click and Flask at the top (its modules group the commands
by job: setup, study, imports, judge, raters, export, report, verdict, serve, worker,
and the statistics commands reliability, alttest, plan); each command imports what it
uses when it runs, and the statistics commands are :class:`LazyCommand` s
(``benchmarks/startup.py`` measures it, ``tests/cli/test_startup.py`` checks
the imports).
"""

from __future__ import annotations

import importlib

import click
from flask import Flask
from flask.cli import FlaskGroup

from .agreement import agreement_command, consistency_command
from .export import export_command
from .imports import items_group, llm_group, ratings_group
from .judge import judge_group
from .raters import raters_group
from .report import report_command
from .serve import serve_command
from .setup import db_group, init_command, lead_group
from .study import study_group
from .validation import validation_group
from .verdict import verdict_command
from .worker import worker_command

__all__ = ["main", "register_commands", "LazyCommand", "COMMANDS"]


class LazyCommand(click.Command):
    """A command imported only when it runs or shows its own help.

    Listing the commands needs only their one-line help, given here; importing
    the statistics commands for it would import numpy, scipy and pandas (about
    a second). Click's own recipe (a "LazyGroup") still imports every command
    for ``--help``; this proxy avoids that and works in any group, including
    the app's ``app.cli`` behind ``flask --app annotator``.
    ``tests/cli/test_startup.py`` checks that ``short_help`` matches the command's.
    """

    def __init__(self, name: str, import_path: str, short_help: str) -> None:
        super().__init__(name, help=short_help, add_help_option=False)
        self.import_path = import_path

    def load(self) -> click.Command:
        module, attribute = self.import_path.split(":")
        return getattr(importlib.import_module(module), attribute)

    def make_context(self, info_name, args, parent=None, **extra) -> click.Context:
        # The context (and so the parsing, --help and invoke) is the real command's.
        return self.load().make_context(info_name, args, parent=parent, **extra)


def _statistics_commands() -> list[click.Command]:
    # The statistics commands of annotator.cli.reliability, .alttest and .plan.
    return [
        LazyCommand(
            "alt-test",
            "annotator.cli.alttest:alt_test_command",
            "Run the alt-test: may an LLM judge replace the human annotators?",
        ),
        LazyCommand(
            "icc",
            "annotator.cli.reliability:icc_command",
            "ICC(A,1), ICC(A,k), ICC(C,1), ICC(C,k) of the matrix export MATRIX (a CSV).",
        ),
        LazyCommand(
            "alpha",
            "annotator.cli.reliability:alpha_command",
            "Krippendorff's alpha of the matrix export MATRIX (a CSV); empty cells are missing.",
        ),
        LazyCommand(
            "plan",
            "annotator.cli.plan:plan_command",
            "Plan a study from a PILOT export (matrix CSV; alttest JSON with --alttest).",
        ),
    ]


COMMANDS: tuple[click.Command, ...] = (
    init_command,
    db_group,
    lead_group,
    study_group,
    items_group,
    ratings_group,
    llm_group,
    judge_group,
    raters_group,
    validation_group,
    export_command,
    serve_command,
    worker_command,
    report_command,
    consistency_command,
    agreement_command,
    verdict_command,
    *_statistics_commands(),
)


def register_commands(app: Flask) -> None:
    """The commands of ``flask --app annotator``: the same as ``annotator``'s."""
    for command in COMMANDS:
        app.cli.add_command(command)


# The commands whose app needs its pages: `serve` serves them, and `worker` runs
# jobs on the app the server's own worker shares. Every other command gets the app
# without them (create_app's ``web=False``), a tenth of an export's start-up.
WEB_COMMANDS = frozenset({"serve", "worker"})


def _command_name(ctx: click.Context | None) -> str | None:
    """The top-level command of ``ctx`` (``db`` for ``annotator db upgrade``)."""
    while ctx is not None and ctx.parent is not None and ctx.parent.parent is not None:
        ctx = ctx.parent
    if ctx is None or ctx.parent is None:
        return None
    return ctx.info_name


def _create_app_for_cli() -> Flask:
    from .. import create_app

    # A command serves no request; `annotator serve` prepares what serving needs.
    name = _command_name(click.get_current_context(silent=True))
    return create_app(serving=False, web=name is None or name in WEB_COMMANDS)


class _AnnotatorGroup(FlaskGroup):
    """Flask's command group, with the commands on the group itself.

    Flask's group lists the commands of ``app.cli``, so ``annotator --help``
    built the whole app (database engine, blueprints) just to print a list.
    Here listing and finding a command build nothing; a command that needs the
    app loads it itself (``with_appcontext``).
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.commands)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return self.commands.get(name) or super().get_command(ctx, name)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except Exception as exc:
            message = _schema_problem(exc)
            if message is None:
                raise
            raise click.ClickException(message) from exc


# SQLSTATEs of PostgreSQL's "relation does not exist" and "column does not exist".
_MISSING_SCHEMA_STATES = {"42P01", "42703"}


def _schema_problem(exc: BaseException) -> str | None:
    """What to tell someone whose database lacks this version's tables or columns.

    A command run before ``annotator db upgrade`` (or ``serve``, which upgrades)
    met a driver error and a traceback; this names the cause and the fix instead.
    """
    import sys

    # Without SQLAlchemy loaded the error cannot be a database error; importing it
    # here would cost every failing command its start-up.
    sa_exc = sys.modules.get("sqlalchemy.exc")
    if sa_exc is None or not isinstance(exc, sa_exc.DBAPIError):
        return None
    original = exc.orig
    state = getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)
    detail = str(original).strip().splitlines()[0] if str(original).strip() else ""
    if state in _MISSING_SCHEMA_STATES or detail.startswith(("no such table", "no such column")):
        return (
            f"the database does not have this version's tables ({detail}). "
            "Run `annotator db upgrade` first (`annotator serve` also does it)."
        )
    return None


main = _AnnotatorGroup(
    name="annotator",
    create_app=_create_app_for_cli,
    add_version_option=False,
    help="Rating studies with humans and LLM judges.",
)
for _command in COMMANDS:
    main.add_command(_command)
