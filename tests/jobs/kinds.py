"""A job kind for the tests: steps that report progress, wait on a file, or fail.

Registered through the apps' ``JOBS_KINDS`` (``ANNOTATOR_JOBS_KINDS`` for worker
processes), as a deployment adds its own kinds.
"""

from __future__ import annotations

import time
from pathlib import Path

from annotator.jobs import JobContext, JobOutput

KINDS = {"steps": "tests.jobs.kinds:steps"}


def steps(ctx: JobContext) -> JobOutput:
    """``params``: ``steps`` (count), ``hold`` (a file to wait for after the first
    step), ``fail_at`` (the step that raises, with ``message`` if given), ``crash_at`` (the step that meets a
    bug, not bad input), ``delay`` (seconds per step)."""
    params = ctx.params
    total = int(params.get("steps", 3))
    for step in range(total):
        ctx.progress(step, total, f"step {step + 1} of {total}")
        if step == params.get("fail_at"):
            raise ValueError(params.get("message") or f"step {step + 1} met a bad value")
        if step == params.get("crash_at"):
            raise OverflowError(f"a bug in {__file__}")
        if step == 0 and params.get("hold"):
            while not Path(params["hold"]).exists():
                ctx.check_cancelled()
                time.sleep(0.02)
        time.sleep(float(params.get("delay", 0)))
    ctx.progress(total, total, "done")
    text = f"{ctx.study.slug}: {total} steps, attempt {ctx.attempt}"
    return JobOutput(text.encode(), "steps.txt", "text/plain")
