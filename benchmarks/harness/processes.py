"""Whole processes timed: wall time, CPU (user + system) and peak memory.

A command's cost to its user includes its start-up (imports), so the goals stated
for commands are measured on whole processes, through ``os.wait4``'s resource use.

The command is started by a small launcher process (:data:`_LAUNCHER`), not by the
benchmark itself: Linux starts a new process's peak memory (``ru_maxrss``) at the
memory of the process that forked it, kept across ``exec``, so a command forked by a
benchmark that held 250 MiB of its own reference's frames reported a peak of at least
250 MiB (a 20 MiB process measured 415 MiB beside a 400 MiB parent). The launcher, a
Python started with ``-I -S`` (about 10 MiB), spawns the command, waits for it with
``wait4`` and writes its wall time, CPU and peak to a file; its own start-up is in none
of the figures. GNU ``/usr/bin/time`` would do the same, but is not on every machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass

__all__ = ["Timing", "run_timed"]


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float
    peak_mib: float
    returncode: int
    output: str = ""  # the standard output, with ``output=True``


_LAUNCHER = """
import json, os, sys, time
report, argv = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
try:
    pid = os.posix_spawnp(argv[0], argv, os.environ)
except OSError as error:
    sys.stderr.write(f"{argv[0]}: {error}\\n")
    sys.exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
code = os.waitstatus_to_exitcode(status)
with open(report, "w") as out:
    json.dump({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
               "peak_kib": usage.ru_maxrss, "returncode": code}, out)
"""


def run_timed(
    argv: list[str], env: dict | None = None, *, check: bool = True, output: bool = False
) -> Timing:
    """Run ``argv`` to its end; raise RuntimeError with its errors if it fails and
    ``check``. Its standard output is kept only with ``output``."""
    # Files, not pipes: the launcher reaps the command before anything is read, and a
    # command writing more than a pipe's buffer would block forever.
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile("r", suffix=".json") as report,
    ):
        launcher = [sys.executable, "-I", "-S", "-c", _LAUNCHER, report.name, *argv]
        subprocess.run(launcher, env=env, stdout=out if output else subprocess.DEVNULL, stderr=err)
        out.seek(0)
        err.seek(0)
        text = out.read().decode(errors="replace")
        measured = report.read()
        if not measured:  # the command could not be started
            raise RuntimeError(f"{' '.join(argv)}: {err.read().decode(errors='replace')}")
        figures = json.loads(measured)
        code = figures["returncode"]
        if check and code != 0:
            error = err.read().decode(errors="replace")
            raise RuntimeError(f"{' '.join(argv)} failed ({code}):\n{text}\n{error[-3000:]}")
    return Timing(
        wall=figures["wall"],
        cpu=figures["cpu"],
        peak_mib=figures["peak_kib"] / 1024,
        returncode=code,
        output=text,
    )
