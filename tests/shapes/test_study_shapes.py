"""The study-shape matrix: every shape of conftest.SHAPES through every lead page of
the study (``app.url_map``, as its owner), every job kind to completion and every
analysis command, with no error, no 5xx and no traceback anywhere.

Each test gathers every problem of its shape before failing, so one run lists them
all (the pages, jobs and commands that broke), not only the first.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlencode

from flask import url_for
from sqlmodel import select

from annotator.data.exporters import FORMATS
from annotator.jobs import Job, JobStatus
from annotator.models import Study, StudyVersion
from tests.helpers import code_words
from tests.report_checks import report_problems

# Words that mean a page or file shows a failure rather than a result.
FAILURE_WORDS = ("Traceback", "could not be computed", "Internal Server Error")
# The exports that need one criterion in a rubric study: asked without one they
# refuse, with a message naming the criteria (not a failure of the app).
ONE_CRITERION = ("matrix", "alttest")


# A temperature named as a lead would not understand it (now "not recorded").
UNCLEAR_WORDS = (">unknown<", "temperature unknown")


def _problems_in(text: str) -> list[str]:
    return [word for word in FAILURE_WORDS + UNCLEAR_WORDS if word in text]


def _check(problems: list[str], what: str, response) -> None:
    text = response.get_data(as_text=True) if response.mimetype.startswith("text") else ""
    if response.status_code >= 500:
        problems.append(f"{what}: HTTP {response.status_code} {text[:300]!r}")
    for word in _problems_in(text):
        at = text.index(word)
        problems.append(f"{what}: {word!r} in {text[max(0, at - 200) : at + 200]!r}")


def _export_queries(shape) -> list[dict]:
    """Every export format, without a criterion and with each of the study's."""
    out = []
    for fmt in FORMATS:
        for criterion in ("", *shape.criteria):
            query = {"format": fmt}
            if criterion:
                query["criterion"] = criterion
            if fmt in ONE_CRITERION and len(shape.scales) > 1:
                query["scale"] = shape.scales[0]
            out.append(query)
    return out


def _expected_refusal(shape, job: Job) -> bool:
    params = job.params or {}
    return (
        job.kind == "export"
        and bool(shape.criteria)
        and params.get("format") in ONE_CRITERION
        and not params.get("criterion")
        and "criterion" in (job.error or "")
    )


def _run_jobs(shape, client, problems: list[str]) -> None:
    """The report and every export, as jobs."""
    base = f"/lead/studies/{shape.slug}"
    _check(problems, "POST report", client.post(f"{base}/report"))
    for query in _export_queries(shape):
        response = client.post(f"{base}/export?{urlencode(query)}")
        _check(problems, f"POST export {query}", response)


def _route_values(app, session, study: Study) -> dict[str, list]:
    jobs = session.exec(select(Job.id).where(Job.study_id == study.id)).all()
    versions = session.exec(
        select(StudyVersion.version).where(StudyVersion.study_id == study.id)
    ).all()
    return {"slug": [study.slug], "job_id": list(jobs), "version": list(versions)}


def _urls(app, values: dict[str, list]) -> list[tuple[str, str]]:
    """(endpoint, url) of every GET route of a study's lead pages, its parameters
    filled with each of the study's objects."""
    out = []
    with app.test_request_context():
        for rule in app.url_map.iter_rules():
            if not rule.rule.startswith("/lead/studies/<") or "GET" not in rule.methods:
                continue
            combos = [{}]
            for name in rule.arguments:
                combos = [{**c, name: v} for c in combos for v in values.get(name, [])]
            out += [(rule.endpoint, url_for(rule.endpoint, **c)) for c in combos]
    return out


def _variants(shape) -> list[str]:
    """The query strings each page is also asked with."""
    variants = ["", "?runs=each", "?temperatures=judge-a%3Dnone"]
    variants += [f"?criterion={name}" for name in shape.criteria]
    return variants


VERDICT_WORDS = ("may replace the raters", "may not replace the raters", "not decided yet")


def _verdict_problems(judges: tuple[str, ...], text: str) -> list[str]:
    """The dashboard opens with the verdict table: every one of ``judges`` named in it
    with a verdict in words, before the first scale's tables."""
    if 'id="verdict"' not in text:
        return ["the dashboard has no verdict section"]
    section = text[text.index('id="verdict"') :]
    section = section[: section.index("</section>")]
    out = []
    if 'class="scale-card"' in text and text.index('class="scale-card"') < text.index(
        'id="verdict"'
    ):
        out.append("the verdict comes after a scale's tables")
    if not any(words in section for words in VERDICT_WORDS) and "no judge" not in section:
        out.append(f"the verdict section says no verdict: {section[:300]!r}")
    out += [f"judge {j} is not in the verdict table" for j in judges if j not in section]
    return out


def _stop_lines(shape) -> list[str]:
    """The start of each line the stop check gives: one per scale, criterion and judge."""
    return [
        f"scale {scale}" + (f", criterion {criterion}" if criterion else "") + f", judge {judge}: "
        for scale in shape.scales
        for criterion in shape.criteria or ("",)
        for judge in shape.stop_judges
    ]


def _stop_problems(shape, runner, lead_client) -> list[str]:
    """With stop when decided on, the check gives a verdict per scale, criterion and
    judge, and once it has stopped the study every one is on the study page."""
    result = runner.invoke(args=["validation", "check", shape.slug])
    out = [f"validation check: exit {result.exit_code}\n{_tail(result)}"] * bool(
        result.exit_code or _crashed(result)
    )
    out += [
        f"validation check does not say {line!r}"
        for line in _stop_lines(shape)
        if line not in result.output
    ]
    if result.output.startswith("decided"):
        page = lead_client.get(f"/lead/studies/{shape.slug}").get_data(as_text=True)
        out += [
            f"the study page does not say {line!r}"
            for line in _stop_lines(shape)
            if f"<li>{line}" not in page
        ]
    return out


def test_every_lead_page_and_job(study_shape, app, lead_client, session, runner):
    shape, problems = study_shape, []
    if shape.stop_judges:
        # The check first: every page then shows the study stopped, or still going.
        problems += _stop_problems(shape, runner, lead_client)
    _run_jobs(shape, lead_client, problems)
    session.expire_all()
    study = session.exec(select(Study).where(Study.slug == shape.slug)).one()
    for endpoint, url in _urls(app, _route_values(app, session, study)):
        for query in _variants(shape) if endpoint == "lead.study" else [""]:
            response = lead_client.get(url + query)
            _check(problems, f"GET {url}{query}", response)
            if response.mimetype == "text/html" and endpoint != "lead.job_file":
                # Sentences, not code: no "item(s)", no ['0-5'], no "limit: None".
                for words in code_words(response.get_data(as_text=True)):
                    problems.append(f"GET {url}{query}: code words in {words!r}")
            if endpoint != "lead.export" and 'aria-invalid="true"' in response.get_data(
                as_text=True
            ):
                # Nothing the lead typed was wrong: no field may be marked.
                problems.append(f"GET {url}{query}: a field is marked invalid")
            if endpoint == "lead.study":
                # A judge moved to a temperature it has no scores at is rightly absent.
                judges = () if "temperatures" in query else shape.judges
                for problem in _verdict_problems(judges, response.get_data(as_text=True)):
                    problems.append(f"GET {url}{query}: {problem}")
            if endpoint == "lead.study" and not query:
                # The fragment the page refreshes itself with (the same dashboard).
                htmx = lead_client.get(url + query, headers={"HX-Request": "true"})
                _check(problems, f"GET {url}{query} (htmx)", htmx)
    for query in _export_queries(shape):
        url = f"/lead/studies/{shape.slug}/export?{urlencode({**query, 'notes': '1'})}"
        _check(problems, f"GET {url}", lead_client.get(url))
    session.expire_all()
    jobs = session.exec(select(Job).where(Job.study_id == study.id)).all()
    assert {job.kind for job in jobs} >= {"report", "export", "dashboard"}
    for job in jobs:
        if job.status != JobStatus.DONE and not _expected_refusal(shape, job):
            problems.append(f"job {job.kind} {job.params}: {job.status}: {job.error}")
        if job.status == JobStatus.DONE and job.kind != "dashboard":
            response = lead_client.get(f"/lead/studies/{shape.slug}/jobs/{job.id}/file")
            _check(problems, f"file of job {job.kind} {job.params}", response)
    assert not problems, "\n".join(problems)


def _commands(shape, folder: Path) -> list[list[str]]:
    slug = shape.slug
    commands = [
        ["report", slug, "--out", folder / "report.html", "--tables", folder / "tables"],
        ["agreement", slug],
        ["agreement", slug, "--json"],
        ["consistency", slug],
        ["consistency", slug, "--json"],
        ["raters", "quality", slug],
        ["raters", "quality", slug, "--json"],
    ]
    for query in _export_queries(shape):
        name = "-".join(query.values())
        out = folder / f"{name}.{'json' if query['format'] == 'alttest' else 'csv'}"
        args = ["export", slug, "--out", out]
        for key, value in query.items():
            args += [f"--{key}", value]
        commands.append(args)
    return commands


def _other_commands(slug: str, folder: Path) -> list[list[str]]:
    """The commands that read an export (each criterion's, when any), and the stop
    check (a message when the study file does not ask for it)."""
    out = []
    for matrix in sorted(folder.glob("matrix*.csv")):
        out += [
            ["icc", matrix],
            ["alpha", matrix],
            ["alt-test", "--matrix", matrix],
            ["plan", matrix],
        ]
    # Needs [validation] stop_when_decided: a message otherwise.
    out.append(["validation", "check", slug])
    for data in sorted(folder.glob("alttest*.json")):
        out.append(["alt-test", "--humans", data])
    return out


def test_every_analysis_command(study_shape, runner, tmp_path):
    """Commands on the study end with their result (exit 0); those reading an export
    end with it or a message, never a traceback. A rubric study's matrix and alttest
    exports without a criterion refuse with a message naming the criteria."""
    shape, problems = study_shape, []
    for args in _commands(shape, tmp_path):
        result = runner.invoke(args=[str(a) for a in args])
        refusal = (
            shape.criteria
            and args[0] == "export"
            and args[args.index("--format") + 1] in ONE_CRITERION
            and "--criterion" not in args
        )
        if refusal:
            ok = result.exit_code != 0 and "criterion" in result.output
        else:
            ok = result.exit_code == 0
        if not ok or _problems_in(result.output) or _crashed(result):
            problems.append(f"{' '.join(map(str, args))}: exit {result.exit_code}\n{_tail(result)}")
        elif args[0] == "agreement" and "--json" in args and shape.judges:
            # Every judge in the agreement tables (the one rule of temperatures).
            models = {row["model"] for row in json.loads(result.output)["correlations"]}
            if not set(shape.judges) <= models:
                problems.append(f"agreement: judges {sorted(models)}, not {list(shape.judges)}")
    for args in _other_commands(shape.slug, tmp_path):
        result = runner.invoke(args=[str(a) for a in args])
        if _crashed(result) or _problems_in(result.output):
            problems.append(f"{' '.join(map(str, args))}: exit {result.exit_code}\n{_tail(result)}")
    for written in tmp_path.rglob("*"):
        if written.is_file() and written.suffix in (".html", ".csv", ".json"):
            found = _problems_in(written.read_text(encoding="utf-8"))
            if found:
                problems.append(f"{written.name}: {found}")
    # The report draws no figure without data, says each reason once, names its
    # columns in words and marks no one-row or weak number best (issue 34).
    report = tmp_path / "report.html"
    if report.exists():
        problems += [f"report.html: {p}" for p in report_problems(report.read_text("utf-8"))]
    assert not problems, "\n".join(problems)


def _crashed(result) -> bool:
    """An exception other than click's exit (a traceback for the user)."""
    return result.exception is not None and not isinstance(result.exception, SystemExit)


def _tail(result) -> str:
    if _crashed(result):
        return f"{type(result.exception).__name__}: {result.exception}"
    return result.output[-600:]
