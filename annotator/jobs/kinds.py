"""The kinds of job and the function that does each: the registry a worker looks in.

A kind's body is ``body(ctx: JobContext) -> JobOutput | None``; it reads what it
needs through ``ctx.session``, calls ``ctx.progress(...)`` between steps (which
also raises :class:`~annotator.jobs.context.JobCancelled` once the job was
cancelled) and returns the file it made. Bodies are named by import path so that
the web app and ``annotator --help`` import none of them until a job runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["KINDS", "register_kind", "kind_body"]

# kind -> "module:function" (or the function itself, once registered so).
KINDS: dict[str, str | Callable[..., Any]] = {
    "report": "annotator.jobs.bodies:build_report_job",
    "export": "annotator.jobs.bodies:build_export_job",
}


def register_kind(kind: str, body: str | Callable[..., Any]) -> None:
    """Make ``kind`` runnable: ``body`` is the function or its ``"module:function"`` path.

    Register at import time of a module both the web app and the worker import
    (or add the kind to :data:`KINDS`): the worker process looks kinds up here.
    """
    if not kind or len(kind) > 50:
        raise ValueError(f"kind: a name of 1 to 50 characters, got {kind!r}")
    KINDS[kind] = body


def kind_body(kind: str) -> Callable[..., Any]:
    """The function that does a job of ``kind`` (ValueError naming unknown kinds)."""
    try:
        body = KINDS[kind]
    except KeyError:
        raise ValueError(
            f"kind: no job kind {kind!r} is registered (known: {', '.join(sorted(KINDS))})"
        ) from None
    if isinstance(body, str):
        module, name = body.split(":")
        body = getattr(importlib.import_module(module), name)
    return body
