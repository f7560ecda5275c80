"""Why a statistic is NaN, said in a way that is safe in threads.

``warnings.catch_warnings`` swaps module-wide state (Python documents it as not
thread-safe), so in the web server's and the job queue's threads one analysis's
caught warnings could be lost or land in another's notes. The metrics say why
a value is undefined through :func:`degenerate` instead: a context-local list
collects the reasons where :func:`collect_notes` is active (each thread has its
own context), and elsewhere they are ``RuntimeWarning`` as before. numpy's own
floating-point warnings are kept out with ``numpy.errstate``, which is
thread-local, where the code checks the degenerate case itself.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

__all__ = ["collect_notes", "degenerate", "quiet"]

_SINK: ContextVar[list[str] | None] = ContextVar("annotator_metrics_notes", default=None)


def degenerate(message: str, *, stacklevel: int = 2) -> None:
    """Say why a statistic is undefined (NaN): collected, or a ``RuntimeWarning``.

    ``stacklevel`` as for :func:`warnings.warn`, counted from the caller.
    """
    sink = _SINK.get()
    if sink is not None:
        sink.append(message)
    else:
        warnings.warn(message, RuntimeWarning, stacklevel=stacklevel + 1)


@contextmanager
def collect_notes() -> Iterator[list[str]]:
    """Collect the reasons :func:`degenerate` gives in this context, in order."""
    caught: list[str] = []
    token = _SINK.set(caught)
    try:
        yield caught
    finally:
        _SINK.reset(token)


@contextmanager
def quiet() -> Iterator[None]:
    """Drop the reasons :func:`degenerate` gives in this context, and numpy's
    floating-point warnings (a NaN is expected and shown as such)."""
    with collect_notes(), np.errstate(divide="ignore", invalid="ignore"):
        yield
