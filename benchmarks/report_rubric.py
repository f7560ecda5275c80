"""``annotator report`` on the guide's 8-item, 4-criterion rubric example
(docs/rubrics.md), against an earlier version, side by side (issue 34).

Run with ``.venv/bin/python benchmarks/report_rubric.py --baseline DIR`` where DIR holds
the earlier version's ``annotator/`` (``git archive COMMIT annotator | tar -x -C DIR``,
or a checkout). Each version builds the study with its own CLI (four commands of the
guide) in its own SQLite file, then the two reports run interleaved (baseline, this
version, baseline, ...), ``--repeat`` times each (default 5), each in its own process
under ``/usr/bin/time -v``; the command's start-up (the same command on an unknown
study, fastest of three) is subtracted, as in ``report.py``. Prints the medians, their
ratio, and whether the ``--tables`` CSV files of the two versions are identical (no
statistic changed). Goal (issue 34): this version's report at most half the baseline's.

Second, labelled "in a warmed process": the report job as a job worker runs it, its
modules imported before the job comes. Each version's report runs in a process that
has first imported the same modules (pandas, scipy.stats, matplotlib's figure, Agg and
image writer, Pillow's formats, and every module of that version's own ``annotator``
package but its migrations), then the ``report`` command is timed in that process
(wall and CPU of the command alone, app built and study read included); interleaved,
``--repeat`` processes each, medians and their ratio.
"""

from __future__ import annotations

import filecmp
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import Recorder, arguments, run_timed
from harness.bulk import CLI

ROOT = Path(__file__).resolve().parent.parent
SLUG = "rubric-summeval"
GUIDE = (
    ["init"],
    ["study", "create", "examples/rubric-summeval.toml"],
    ["items", "import", SLUG, "examples/rubric-items.jsonl"],
    ["ratings", "import", SLUG, "examples/rubric-ratings.csv"],
    ["llm-scores", "import", SLUG, "examples/rubric-llm-scores.csv"],
)


def build(folder: Path, label: str, env: dict) -> dict:
    """The environment of ``label``'s study, built by its own CLI."""
    name = label.replace(" ", "-")
    env = dict(env, ANNOTATOR_DATABASE_URL=f"sqlite:///{folder / name}.sqlite")
    env["ANNOTATOR_INSTANCE_PATH"] = str(folder / f"instance-{name}")
    env["ANNOTATOR_SECRET_KEY"] = "bench"
    for args in GUIDE:
        subprocess.run([CLI, *args], env=env, cwd=ROOT, check=True, capture_output=True)
    return env


def run_cli(args: list[str], env: dict) -> tuple[float, float]:
    """Wall and CPU seconds of one ``annotator`` process."""
    timing = run_timed([CLI, *args], env)
    return timing.wall, timing.cpu


def startup_time(args: list[str], env: dict, repeat: int = 3) -> tuple[float, float]:
    """The fastest of ``repeat`` runs of a command that fails at once (its start-up)."""
    runs = [run_timed([CLI, *args], env, check=False) for _ in range(repeat)]
    return min(r.wall for r in runs), min(r.cpu for r in runs)


def compare_tables(before: Path, now: Path) -> str:
    """How the ``--tables`` files of two versions compare: those of both versions that
    differ byte for byte, and those of one version only (a table added since)."""
    old, new = {p.name for p in before.iterdir()}, {p.name for p in now.iterdir()}
    _, mismatch, errors = filecmp.cmpfiles(before, now, sorted(old & new), shallow=False)
    # notes.txt says why a statistic is missing, in words issue 34 changed; the CSV
    # files hold the statistics.
    changed = [name for name in sorted(mismatch + errors) if name != "notes.txt"]
    same = len(old & new) - len(mismatch) - len(errors)
    parts = [f"{same} identical"] + ([f"DIFFERENT: {', '.join(changed)}"] if changed else [])
    if "notes.txt" in mismatch:
        parts.append("notes.txt differs")
    if new - old:
        parts.append(f"new in this version: {', '.join(sorted(new - old))}")
    if old - new:
        parts.append(f"only in the baseline: {', '.join(sorted(old - new))}")
    return "; ".join(parts)


# The warmed process's script: the same imports for both versions, then the command.
WARMED = """
import importlib, json, pkgutil, sys, time
for name in ("pandas", "scipy.stats", "scipy.special", "matplotlib.figure",
             "matplotlib.backends.backend_agg", "matplotlib.image", "PIL.Image"):
    importlib.import_module(name)
from PIL import Image
Image.preinit()
import annotator
failed = []
for info in pkgutil.walk_packages(annotator.__path__, "annotator.", onerror=failed.append):
    if ".migrations" not in info.name:
        try:
            importlib.import_module(info.name)
        except Exception:
            failed.append(info.name)
from annotator.cli import main
wall, cpu = time.perf_counter(), time.process_time()
main(["report", *sys.argv[1:]], prog_name="annotator", standalone_mode=False)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
print(json.dumps({"wall": wall, "cpu": cpu, "modules": len(sys.modules), "failed": failed,
                  "package": annotator.__path__[0]}))
"""


def run_warmed(args: list[str], env: dict) -> dict:
    """Wall and CPU seconds of ``annotator report`` in a process that imported its
    modules first (:data:`WARMED`), with the number of modules it held."""
    # -P: no current folder first on sys.path, or `python -c` run from a checkout would
    # import that checkout's annotator in place of the baseline's on PYTHONPATH.
    timing = run_timed([sys.executable, "-P", "-c", WARMED, *args], env, output=True)
    result = json.loads(timing.output.strip().splitlines()[-1])
    expected = env.get("PYTHONPATH")
    if expected and not Path(result["package"]).resolve().is_relative_to(Path(expected).resolve()):
        raise RuntimeError(
            f"the warmed run imported {result['package']}, not {expected}'s annotator"
        )
    return result


def load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def page_sizes(path: Path) -> str:
    """Height at 1280 px (headless Chromium's ``scrollHeight``), figures and contents
    entries of a report; with its criteria unfolded too."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(path.as_uri())
        height = page.evaluate("document.documentElement.scrollHeight")
        figures = page.evaluate("document.querySelectorAll('figure').length")
        toc = page.evaluate("document.querySelectorAll('nav.toc li').length")
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        unfolded = page.evaluate("document.documentElement.scrollHeight")
        browser.close()
    return f"{height} px ({unfolded} px unfolded), {figures} figures, {toc} contents entries"


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--baseline", type=Path, help="folder with an earlier annotator/")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each report (medians)")
    args = parser.parse_args()
    if args.quick:  # proves the script runs (tests/test_benchmarks.py)
        args.repeat = 1
    recorder = Recorder("report_rubric", args)
    folder = Path(tempfile.mkdtemp())
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANNOTATOR_")}
    versions = {"this version": dict(env, PYTHONPATH=str(ROOT))}
    if args.baseline:
        before = dict(env, PYTHONPATH=str(args.baseline.resolve()))
        versions = {"baseline": before, **versions}
    versions = {label: build(folder, label, e) for label, e in versions.items()}
    print(f"annotator report {SLUG} (8 items, 3 raters, 4 criteria, 2 judges; {load()})")
    startups = {
        label: startup_time(["report", "nosuchstudy", "--out", str(folder / "x.html")], e)
        for label, e in versions.items()
    }
    runs: dict[str, list] = {label: [] for label in versions}
    for _ in range(args.repeat):
        for label, e in versions.items():
            name = label.replace(" ", "-")
            out = ["--out", str(folder / f"{name}.html"), "--tables", str(folder / name)]
            runs[label].append(run_cli(["report", SLUG, *out], e))
    times = {}
    for label, done in runs.items():
        startup, startup_cpu = startups[label]
        times[label] = statistics.median(r[0] for r in done) - startup
        cpu = statistics.median(r[1] for r in done) - startup_cpu
        spread = ", ".join(f"{r[0] - startup:.2f}" for r in done)
        print(
            f"{label:<12}: {times[label]:6.2f} s (CPU {cpu:6.2f} s), start-up {startup:.2f} s "
            f"subtracted; runs {spread}   {load()}",
            flush=True,
        )
    warmed: dict[str, list] = {label: [] for label in versions}
    for _ in range(args.repeat):
        for label, e in versions.items():
            name = label.replace(" ", "-")
            out = ["--out", str(folder / f"{name}-warmed.html")]
            warmed[label].append(run_warmed([SLUG, *out], e))
    warm_times = {}
    for label, done in warmed.items():
        warm_times[label] = statistics.median(r["wall"] for r in done)
        cpu = statistics.median(r["cpu"] for r in done)
        failed = sorted({name for r in done for name in r["failed"]})
        spread = ", ".join(f"{r['wall']:.2f}" for r in done)
        print(
            f"{label:<12}: {warm_times[label]:6.2f} s (CPU {cpu:6.2f} s) in a warmed process "
            f"({done[0]['modules']} modules imported first; failed to import: "
            f"{', '.join(failed) or 'none'}); runs {spread}   {load()}",
            flush=True,
        )
    recorder.record(
        "report of the 8-item rubric example, less the start-up",
        round(times["this version"], 3),
        "s",
        rounds=args.repeat,
    )
    if not args.quick:
        for label in versions:
            name = label.replace(" ", "-")
            print(f"{label:<12}: the page at 1280 px: {page_sizes(folder / f'{name}.html')}")
    if args.baseline:
        tables = compare_tables(folder / "baseline", folder / "this-version")
        ratio = times["this version"] / times["baseline"]
        warm_ratio = warm_times["this version"] / warm_times["baseline"]
        print(f"in a warmed process: this version {warm_ratio:.2f}x the baseline")
        recorder.record(
            "report of the 8-item rubric example in a warmed process against the baseline",
            round(warm_ratio, 3),
            "x",
            ratio_of="the baseline's report in a process with the same modules imported",
            rounds=args.repeat,
        )
        print(
            f"this version: {ratio:.2f}x the baseline (goal: at most 0.5x); --tables files "
            f"against the baseline's: {tables}"
        )
        recorder.record(
            "report of the 8-item rubric example against the baseline",
            round(ratio, 3),
            "x",
            goal="<= 0.5",
            ratio_of="the baseline's report",
            rounds=args.repeat,
        )
    recorder.save()


if __name__ == "__main__":
    main()
