"""Completion codes are for the study's owners (issue 36, finding 8): an analyst
reads the study's versions, their files and diffs, without them."""

from __future__ import annotations

from tests.conftest import DATA

from .conftest import login

CODE_1, CODE_2 = "PAYME-7731", "PAYME-9902"


def _update(team, tmp_path, code: str) -> None:
    text = f'completion_code = "{code}"\n' + (DATA / "small-study.toml").read_text()
    path = tmp_path / f"{code}.toml"
    path.write_text(text)
    runner = team.app.test_cli_runner()
    result = runner.invoke(args=["study", "update", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output


def test_an_analyst_reads_the_versions_without_completion_codes(team, tmp_path):
    _update(team, tmp_path, CODE_1)
    _update(team, tmp_path, CODE_2)
    analyst, owner = login(team.app, "analyst@example.org"), login(team.app, "owner@example.org")
    urls = ["/lead/studies/small/versions"]
    urls += [f"/lead/studies/small/versions/{n}.toml" for n in (2, 3)]
    for url in urls:
        response = analyst.get(url)
        assert response.status_code == 200, url
        text = response.get_data(as_text=True)
        assert CODE_1 not in text and CODE_2 not in text, url
        assert "shown to the study&#39;s owners only" in text or "owners only" in text
    # The owners read them, in the files and in the diff.
    assert CODE_1 in owner.get(urls[1]).get_data(as_text=True)
    page = owner.get(urls[0]).get_data(as_text=True)
    assert CODE_1 in page and CODE_2 in page
