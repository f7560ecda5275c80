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


def test_crowd_codes_are_hidden_too_wherever_they_stand():
    from annotator.web.lead.versions import HIDDEN, hide_completion_codes

    old = (
        'name = "x"\n[crowd]\nplatform = "prolific"\n[crowd.completion_codes]\n'
        'waves = [\'WAVE-A1\', "WAVE-B2"]\nscreen_out = "OUT-C3"\n'
    )
    new = old.replace("OUT-C3", "OUT-D4")
    diff = '-screen_out = "OUT-C3"\n+screen_out = "OUT-D4"\n'
    hidden_old, hidden_new, hidden_diff = hide_completion_codes(old, new, diff)
    for code in ("WAVE-A1", "WAVE-B2", "OUT-C3", "OUT-D4"):
        assert code not in hidden_old + hidden_new + hidden_diff
    assert hidden_diff == f'-screen_out = "{HIDDEN}"\n+screen_out = "{HIDDEN}"\n'
    # The rest of the file is untouched.
    assert hidden_old.startswith('name = "x"\n[crowd]\nplatform = "prolific"\n')
