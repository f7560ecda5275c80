"""``annotator report`` on two cores: the alt-test tables and their figures in a forked process.

The alt-test table and curves (:func:`annotator.analysis.tables.alttest_tables`) and
their three figures are about half of the report's work and need nothing of the other
tables, so the command computes and draws them in a second process while this one does
the rest; the page and the tables are the same as when one process does it all
(``tests/analysis/test_report_apart.py``).

A process rather than a thread: the work is Python (pandas, matplotlib's artists), which
holds the GIL. ``fork`` rather than ``spawn``: the child starts with the study already
read and the libraries already imported (a spawned one would import them again and be
sent the frames, 20 MB pickled for 5,000 items). Forking is only done from the command
line: the web server's "Download report" stays in one process, since forking a threaded
gunicorn worker is unsafe. The child uses no database connection (the frames are in
memory) and leaves through ``os._exit`` as every ``multiprocessing`` child does, so the
connection it inherits is neither used nor closed.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from .figures import ALTTEST_FIGURES, FIGURES, Drawn, draw

__all__ = ["Apart", "can_fork"]

# What the forked worker runs, set by its initializer: under ``fork`` the initializer's
# arguments reach the child as they are in memory, without being pickled.
_JOB: tuple[Callable[..., Any], tuple] | None = None


def can_fork() -> bool:
    """Whether a second process can help: a second core, and ``fork`` (Linux; macOS
    offers it but forking there after some system libraries are loaded is unsafe)."""
    return sys.platform == "linux" and (os.cpu_count() or 1) > 1


def _keep(function: Callable[..., Any], args: tuple) -> None:
    global _JOB
    _JOB = (function, args)


def _run() -> tuple[Any, dict[str, Drawn]]:
    function, args = _JOB
    part = function(*args)
    return part, {key: draw(make(part)) for key, make in ALTTEST_FIGURES.items()}


class Apart:
    """``apart`` of :func:`~annotator.analysis.tables.report_tables`: runs the alt-test
    tables in a forked process that also draws their figures, and draws the other
    figures here while it waits; all are kept in :attr:`drawn` for
    :func:`~annotator.analysis.report.html.render_report`."""

    def __init__(self) -> None:
        self.drawn: dict[str, Drawn] = {}
        self._executor: ProcessPoolExecutor | None = None

    def __call__(self, function: Callable[..., Any], *args: Any) -> Callable[[Any], Any]:
        # Both processes draw: imported once here, matplotlib is imported for both
        # (0.2 s of CPU each otherwise).
        import matplotlib.backends.backend_agg  # noqa: F401
        import matplotlib.figure  # noqa: F401

        self._executor = ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_keep,
            initargs=(function, args),
        )
        future = self._executor.submit(_run)

        def wait(tables: Any) -> Any:
            for key, make in FIGURES.items():
                if key not in ALTTEST_FIGURES:
                    self.drawn[key] = draw(make(tables))
            part, drawn = future.result()
            self.drawn.update(drawn)
            return part

        return wait

    def __enter__(self) -> Apart:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._executor is not None:
            self._executor.shutdown()
