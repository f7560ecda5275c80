"""Command-line front ends: ``annotator alt-test``, ``icc``, ``alpha`` and ``plan``.

Plain click commands, registered on the application's command group by
:func:`register`; they import nothing from the web application. Each lives
with its job: the alt-test in :mod:`.alttest_cli`, ICC and alpha in
:mod:`.reliability_cli`, planning in :mod:`.plan_cli`, what they share in
:mod:`.cli_options`; the names stay importable from here.
"""

from __future__ import annotations

import click

from .alttest_cli import alt_test_command
from .reliability_cli import alpha_command, icc_command

# The statistics (numpy, pandas, scipy) are imported inside the commands: the module is
# imported to build ``annotator --help``, which must start fast.

__all__ = ["alpha_command", "alt_test_command", "icc_command", "register"]


def register(group: click.Group) -> None:
    """Add ``alt-test``, ``icc``, ``alpha`` and ``plan`` to a click group (the app's CLI)."""
    from .plan_cli import plan_command

    group.add_command(alt_test_command)
    group.add_command(icc_command)
    group.add_command(alpha_command)
    group.add_command(plan_command)
