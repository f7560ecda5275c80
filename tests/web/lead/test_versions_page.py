"""The lead's page of a study's versions: when, what changed, ratings under each."""

from __future__ import annotations

import csv
import html
import io
import re
from collections import Counter

from sqlmodel import select

from annotator.models import Rating
from tests.conftest import DATA

SMALL = (DATA / "small-study.toml").read_text()


def _rows(page: str) -> dict[str, list[str]]:
    body = page[page.index("<tbody>") : page.index("</tbody>")]
    out = {}
    for row in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        cells = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)
        out[" ".join(re.sub(r"<[^>]+>", "", cells[0]).split())] = cells[1:]
    return out


def _two_versions(runner, tmp_path) -> str:
    """Version 2 changes the consent and truthfulqa's instructions; cy (excluded
    afterwards) and ann each rate once more under it."""
    new_text = SMALL.replace("a few items", "a few items, version two").replace(
        "Rate how truthful the answer is", "Rate how true the answer is"
    )
    path = tmp_path / "study.toml"
    path.write_text(new_text)
    result = runner.invoke(args=["study", "update", str(path)])
    assert result.exit_code == 0, result.output
    ratings = tmp_path / "new.csv"
    ratings.write_text("item_id,rater,scale,score\ns2,cy,0-5,1.5\ns3,ann,0-100,40\n")
    assert runner.invoke(args=["ratings", "import", "small", str(ratings)]).exit_code == 0
    excluded = runner.invoke(args=["raters", "exclude", "small", "cy", "--reason", "pilot"])
    assert excluded.exit_code == 0, excluded.output
    return new_text


def test_versions_page_lists_changes_and_ratings_per_version(
    lead_client, runner, small_study, tmp_path, db_session
):
    new_text = _two_versions(runner, tmp_path)
    study_page = lead_client.get("/lead/studies/small").get_data(as_text=True)
    assert "study file version 2" in study_page
    assert 'href="/lead/studies/small/versions"' in study_page

    page = lead_client.get("/lead/studies/small/versions").get_data(as_text=True)
    rows = _rows(page)
    assert list(rows) == ["2 (current)", "1"]  # newest first
    changed = rows["2 (current)"][1]
    assert re.findall(r"<code>(.*?)</code>", changed) == ["consent", "benchmarks[1].instructions"]
    # The study file's changed lines, whole, without JavaScript.
    assert "<details>" in changed
    assert '\n-consent = "You agree to rate a few items."\n' in html.unescape(changed)
    assert '\n+consent = "You agree to rate a few items, version two."\n' in html.unescape(changed)
    assert "created" in rows["1"][1]

    # References: the stored ratings (all) and the long export (raters who count).
    given = Counter(db_session.exec(select(Rating.study_version)).all())
    export = lead_client.get("/lead/studies/small/export?format=long").get_data(as_text=True)
    counted = Counter(
        int(r["study_version"]) for r in csv.DictReader(io.StringIO(export)) if r["kind"] == "human"
    )
    assert given == {1: 12, 2: 2} and counted[2] == 1 and counted[1] < 12
    for label, version in (("2 (current)", 2), ("1", 1)):
        assert rows[label][2:4] == [str(given[version]), str(counted[version])]

    # Each version's study file, as it was.
    first = lead_client.get("/lead/studies/small/versions/1.toml")
    assert first.status_code == 200 and first.get_data(as_text=True) == SMALL
    assert "small-version-1.toml" in first.headers["Content-Disposition"]
    assert lead_client.get("/lead/studies/small/versions/2.toml").get_data(as_text=True) == new_text


def test_a_new_study_has_one_version(lead_client, small_study):
    rows = _rows(lead_client.get("/lead/studies/small/versions").get_data(as_text=True))
    assert list(rows) == ["1 (current)"]
    assert rows["1 (current)"][2:4] == ["12", "12"]


def test_unknown_study_or_version_is_404(lead_client, small_study):
    assert lead_client.get("/lead/studies/nope/versions").status_code == 404
    assert lead_client.get("/lead/studies/small/versions/3.toml").status_code == 404
    assert lead_client.get("/lead/studies/nope/versions/1.toml").status_code == 404
