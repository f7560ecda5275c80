"""Start-up of the command line: no heavy import for what does not need it.

Speed itself is measured by ``benchmarks/startup.py``; these tests check the
cause, the set of imported modules, which does not depend on the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import click
import pytest

from annotator.cli import COMMANDS, LazyCommand, main

HEAVY = ("pandas", "scipy", "numpy", "sqlalchemy", "sqlmodel", "alembic")


def _run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )


def test_help_of_annotator_and_of_every_command_imports_nothing_heavy():
    """``annotator --help`` and each command's ``--help``, in one fresh interpreter.

    The statistics commands (alt-test, icc, alpha, plan) included: their options
    come from :mod:`annotator.metrics._names`, which imports nothing heavy.
    """
    result = _run_python(
        f"""
        import contextlib, io, json, sys
        import click
        from annotator.cli import main

        HEAVY = {HEAVY!r}

        def paths(group, prefix):
            for name, command in sorted(group.commands.items()):
                yield [*prefix, name]
                if isinstance(command, click.Group):
                    yield from paths(command, [*prefix, name])

        found = {{}}
        for path in [[], *paths(main, [])]:
            with contextlib.redirect_stdout(io.StringIO()) as out:
                try:
                    main.main([*path, "--help"], prog_name="annotator", standalone_mode=False)
                except SystemExit:
                    pass
            assert "Usage:" in out.getvalue(), path
            found[" ".join(path) or "--help"] = [m for m in HEAVY if m in sys.modules]
        print(json.dumps(found))
        """
    )
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert "study list" in found and "lead create" in found and "export" in found
    assert {"icc", "alpha", "alt-test", "plan"} <= set(found)
    assert {path: heavy for path, heavy in found.items() if heavy} == {}


def _imported_by_init(tmp_path, names) -> tuple[list[str], str]:
    """Which of ``names`` a fresh `annotator init` process has imported, and its output."""
    result = _run_python(
        f"""
        import sys
        from annotator.cli import main
        try:
            main.main(["init"], prog_name="annotator")
        except SystemExit as exc:
            assert not exc.code, exc.code
        print(" ".join(m for m in {tuple(names)!r} if m in sys.modules))
        """,
        ANNOTATOR_INSTANCE_PATH=str(tmp_path / "instance"),
        ANNOTATOR_DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite'}",
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()[-1].split(), result.stdout


def test_a_command_that_needs_no_statistics_imports_no_pandas(tmp_path):
    imported, _ = _imported_by_init(tmp_path, HEAVY)
    assert "sqlalchemy" in imported  # it does need the database
    assert not {"pandas", "scipy", "numpy"} & set(imported)


@pytest.mark.parametrize(
    "command", [c for c in COMMANDS if isinstance(c, LazyCommand)], ids=lambda c: c.name
)
def test_lazy_commands_list_the_help_of_the_real_command(command):
    real = command.load()
    assert real.name == command.name
    limit = 200
    assert command.get_short_help_str(limit) == real.get_short_help_str(limit)


def test_the_statistics_command_modules_import_no_numeric_libraries():
    # Loading a statistics command (for its --help) loads no numpy, pandas or scipy;
    # the statistics load inside the commands.
    result = _run_python(
        """
        import sys
        import annotator.cli.alttest, annotator.cli.plan, annotator.cli.reliability
        print(sorted(m for m in ("numpy", "pandas", "scipy") if m in sys.modules))
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_lazy_commands_run_under_annotator_and_under_flask(app):
    from flask.cli import ScriptInfo

    runner = app.test_cli_runner()
    for group in (main, app.cli):
        result = runner.invoke(group, ["icc", "--help"], obj=ScriptInfo(create_app=lambda: app))
        assert result.exit_code == 0, result.output
        assert "Usage:" in result.output and "--raters" in result.output


def test_flask_app_has_the_same_commands_as_annotator(app):
    flask_defaults = {"run", "shell", "routes"}
    assert set(main.commands) - flask_defaults <= set(app.cli.commands)
    assert all(isinstance(c, click.Command) for c in COMMANDS)


PROBE = """
import atexit, gc, sys
from click.testing import CliRunner
from annotator.cli import main
threshold = gc.get_threshold()
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count() > 0))
atexit.register(lambda: print("threshold changed:", gc.get_threshold() != threshold))
if sys.argv[1] == "runner":
    CliRunner().invoke(main, ["--help"])
else:
    sys.argv = ["annotator", "--help"]
    try:
        main()
    except SystemExit:
        pass
"""


@pytest.mark.parametrize("how", ["program", "runner"])
def test_the_command_line_leaves_the_garbage_collector_alone(how):
    # Neither the program nor a caller's CliRunner freezes objects or retunes the
    # collector: start-up is not bought by tuning the interpreter.
    result = subprocess.run(
        [sys.executable, "-c", PROBE, how], capture_output=True, text=True, check=True
    )
    assert "frozen at exit: False" in result.stdout
    assert "threshold changed: False" in result.stdout


def test_a_command_builds_the_app_without_its_pages(tmp_path):
    # `init` needs the app (its settings and database), not its pages: no blueprint,
    # login, CSRF or rate-limit module is imported for it.
    pages = ("annotator.web.lead", "annotator.web.auth", "flask_limiter", "flask_login")
    imported, output = _imported_by_init(tmp_path, pages)
    assert "Schema at revision" in output
    assert imported == []


@pytest.mark.parametrize(
    ("path", "pages"),
    [
        (["export"], False),
        (["db", "upgrade"], False),
        (["raters", "invite"], False),
        (["serve"], True),
        (["worker"], True),
    ],
    ids=lambda value: "-".join(value) if isinstance(value, list) else f"pages={value}",
)
def test_only_serve_and_worker_get_the_app_with_its_pages(path, pages, tmp_path, monkeypatch):
    from annotator.cli import _create_app_for_cli

    monkeypatch.setenv("ANNOTATOR_INSTANCE_PATH", str(tmp_path / "instance"))
    monkeypatch.setenv("ANNOTATOR_DATABASE_URL", f"sqlite:///{tmp_path / 'db.sqlite'}")
    ctx = click.Context(main, info_name="annotator")
    for name in path:
        ctx = click.Context(ctx.command.commands[name], info_name=name, parent=ctx)
    with ctx:
        app = _create_app_for_cli()
    assert ("lead" in app.blueprints) is pages
    # Either way the commands and the database are there.
    assert "export" in app.cli.commands
    assert "annotator.engine" in app.extensions


def test_an_app_without_pages_cannot_serve():
    from annotator import create_app

    with pytest.raises(ValueError, match="serves"):
        create_app({"SECRET_KEY": "x"}, web=False)
