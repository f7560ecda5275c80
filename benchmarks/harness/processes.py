"""Whole processes timed: wall time, CPU (user + system) and peak memory.

A command's cost to its user includes its start-up (imports), so the goals stated
for commands are measured on whole processes; os.wait4 gives the child's own
resource use without a /usr/bin/time wrapper.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass

__all__ = ["Timing", "run_timed"]


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float
    peak_mib: float
    returncode: int
    output: str = ""  # the standard output, with ``output=True``


def run_timed(
    argv: list[str], env: dict | None = None, *, check: bool = True, output: bool = False
) -> Timing:
    """Run ``argv`` to its end; raise RuntimeError with its errors if it fails and
    ``check``. Its standard output is kept only with ``output``."""
    # Files, not pipes: wait4 reaps the child before anything is read, and a child
    # writing more than a pipe's buffer would block forever.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(
            argv, env=env, stdout=out if output else subprocess.DEVNULL, stderr=err
        )
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = out.read().decode(errors="replace")
        if check and code != 0:
            error = err.read().decode(errors="replace")
            raise RuntimeError(f"{' '.join(argv)} failed ({code}):\n{text}\n{error[-3000:]}")
    return Timing(
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        peak_mib=usage.ru_maxrss / 1024,
        returncode=code,
        output=text,
    )
