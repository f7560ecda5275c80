"""``annotator report`` on two cores: the alt-test tables and their figures in a forked
process.

The alt-test table and its curves (:func:`annotator.analysis.tables.alttest_table`)
and their three figures are about half of the report's work and need nothing of the
other tables, so the command computes and draws them in a process of its own while this
one computes the other tables and draws the other figures; the page, the tables and the
notes are the same as when one process does it all
(``tests/analysis/test_report_apart.py``). One child for both tables: its three figures
share one grid of panels, which it builds once and draws each figure on in turn
(``reuse`` of :func:`~annotator.metrics.plotting.panel_grid`: the second and third
start from the frame the first kept, :class:`~annotator.metrics.layered.LayeredFigure`;
the three took 0.84 s of CPU instead of 1.52 s at 150 items on the 2-core machine), and
its half is then about as long as this process's. A child per table instead (three parts of
about a third each for the scheduler to share out, as before the grid was shared) took
the same wall time within that machine's noise, side by side.

Processes rather than threads: the work is Python (pandas, matplotlib's artists), which
holds the GIL. ``fork`` rather than ``spawn``: a child starts with the study already
read and the libraries already imported (a spawned one would import them again and be
sent the frames, 20 MB pickled for 5,000 items). The child is forked before this
process starts any thread. Forking is only done from the command line: the
web server's "Download report" stays in one process, since forking a threaded gunicorn
worker is unsafe. The child uses no database connection (the frames are in memory) and
leaves through ``os._exit`` as every ``multiprocessing`` child does, so the connection
it inherits is neither used nor closed.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from types import SimpleNamespace
from typing import Any

from .figures import FIGURES, Drawn, draw

ALTTEST_FIGURES = {
    "alttest": ("alttest",),
    "alttest_curves": ("alttest_epsilon_curve", "alttest_items_curve"),
}

__all__ = ["Apart", "can_fork"]

# What the forked worker runs, set by its initializer: under ``fork`` the initializer's
# arguments reach the child as they are in memory, not pickled.
_JOB: tuple[Callable[..., Any], tuple] | None = None


def can_fork() -> bool:
    """Whether other processes can help: a second core, and ``fork`` (Linux; macOS
    offers it but forking there after some system libraries are loaded is unsafe)."""
    return sys.platform == "linux" and (os.cpu_count() or 1) > 1


def _keep(function: Callable[..., Any], args: tuple) -> None:
    global _JOB
    _JOB = (function, args)


def _run(names: Sequence[str]) -> list[tuple[Any, dict[str, Drawn]]]:
    """``function(name, *args)`` for each name, and the figures of each table drawn
    from its result, each on the panels of the one before (``reuse``)."""
    function, args = _JOB
    done = []
    for name in names:
        result = function(name, *args)
        tables = SimpleNamespace(**{name: result[0]})
        drawn = {}
        for key in ALTTEST_FIGURES[name]:
            drawn[key] = draw(FIGURES[key](tables))
        done.append((result, drawn))
    return done


class Apart:
    """``apart`` of :func:`~annotator.analysis.tables.report_tables`: computes the
    alt-test tables in a forked process that also draws their figures, and draws the
    other figures here while it waits; all are kept in :attr:`drawn` for
    :func:`~annotator.analysis.report.html.render_report`."""

    def __init__(self) -> None:
        self.drawn: dict[str, Drawn] = {}
        self._executor: ProcessPoolExecutor | None = None

    def __call__(
        self, function: Callable[..., Any], names: Sequence[str], *args: Any
    ) -> Callable[[Any], list[Any]]:
        import matplotlib.figure  # noqa: F401  imported once, for both processes

        # Under fork the pool starts its worker at the first submit, before its own
        # threads.
        self._executor = ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_keep,
            initargs=(function, args),
        )
        future = self._executor.submit(_run, tuple(names))

        def wait(tables: Any) -> list[Any]:
            mine = set(FIGURES) - {key for name in names for key in ALTTEST_FIGURES[name]}
            for key in FIGURES:
                if key in mine:
                    self.drawn[key] = draw(FIGURES[key](tables))
            results = []
            for result, drawn in future.result():
                self.drawn.update(drawn)
                results.append(result)
            return results

        return wait

    def __enter__(self) -> Apart:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._executor is not None:
            self._executor.shutdown()
