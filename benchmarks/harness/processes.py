"""Whole processes timed: wall time, CPU (user + system) and peak memory.

A command's cost to its user includes its start-up (imports), so the goals stated
for commands are measured on whole processes; os.wait4 gives the child's own
resource use without a /usr/bin/time wrapper.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass

__all__ = ["Timing", "run_timed"]


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float
    peak_mib: float
    returncode: int


def run_timed(argv: list[str], env: dict | None = None, *, check: bool = True, cwd=None) -> Timing:
    """Run ``argv`` to its end, its output discarded; raise if it fails and ``check``."""
    start = time.perf_counter()
    process = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    # wait4 before communicate: it reaps the child and returns its rusage; the
    # pipe is read afterwards (a command that fills the pipe's buffer with errors
    # first would block, so stderr of a benchmarked command must stay short).
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    error = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if process.stderr:
        process.stderr.close()
    if check and process.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({process.returncode}):\n{error[-2000:]}")
    return Timing(
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        peak_mib=usage.ru_maxrss / 1024,
        returncode=process.returncode,
    )
