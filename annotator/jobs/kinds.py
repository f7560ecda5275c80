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

__all__ = ["DASHBOARD", "KINDS", "register_kind", "kind_body", "is_kind"]

# The stored dashboard's kind, named here so that a caller that only queues one (a
# CLI import) need not import the analysis, and with it pandas and scipy.
DASHBOARD = "dashboard"

# kind -> "module:function" (or the function itself, once registered so).
KINDS: dict[str, str | Callable[..., Any]] = {
    "report": "annotator.services.report:build_report_job",
    "export": "annotator.services.report:build_export_job",
    DASHBOARD: "annotator.services.dashboards:build_dashboard_job",
    "judge": "annotator.judge.job:judge_job_body",
}


def register_kind(kind: str, body: str | Callable[..., Any]) -> None:
    """Make ``kind`` runnable: ``body`` is the function or its ``"module:function"`` path.

    Register at import time of a module both the web app and the worker import
    (or add the kind to :data:`KINDS`): the worker process looks kinds up here.
    """
    if not kind or len(kind) > 50:
        raise ValueError(f"kind: a name of 1 to 50 characters, got {kind!r}")
    KINDS[kind] = body


def _kinds(config: dict | None) -> dict[str, str | Callable[..., Any]]:
    # JOBS_KINDS (a mapping kind -> "module:function", e.g. from ANNOTATOR_JOBS_KINDS as
    # JSON) adds kinds of a deployment's own, in the web app and its workers alike.
    return {**KINDS, **((config or {}).get("JOBS_KINDS") or {})}


def is_kind(kind: str, config: dict | None = None) -> bool:
    """Whether ``kind`` is registered (in :data:`KINDS` or the app's ``JOBS_KINDS``)."""
    return kind in _kinds(config)


def kind_body(kind: str, config: dict | None = None) -> Callable[..., Any]:
    """The function that does a job of ``kind`` (ValueError naming unknown kinds)."""
    kinds = _kinds(config)
    try:
        body = kinds[kind]
    except KeyError:
        raise ValueError(
            f"kind: no job kind {kind!r} is registered (known: {', '.join(sorted(kinds))})"
        ) from None
    if isinstance(body, str):
        module, name = body.split(":")
        body = getattr(importlib.import_module(module), name)
    return body
