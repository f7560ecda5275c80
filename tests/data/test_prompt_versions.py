"""Scores asked under two prompts of one judge are never averaged: the newest wins."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sqlmodel import select

from annotator.data.exporters import long_export, matrix_export
from annotator.data.frames import study_frames
from annotator.data.prompt_versions import latest_prompt_version
from annotator.judge.runner import JudgeSettings, run_judge
from annotator.metrics.matrix import LLM_PREFIX
from annotator.models import Study
from annotator.render.dashboard import study_dashboard


def test_the_version_stored_last_wins_within_each_judge():
    frame = pd.DataFrame(
        [
            # model, benchmark, temperature, prompt, order
            ("m", "b", 1.0, "v1", 1),
            ("m", "b", 1.0, "v1", 2),
            ("m", "b", 1.0, "v2", 3),
            ("m", "c", 1.0, "v1", 4),  # benchmark c has only v1: kept
            ("m", "b", 0.1, "v1", 5),  # another temperature: another judge
            ("n", "b", np.nan, None, 6),  # imported, no temperature
            ("n", "b", np.nan, None, 7),
            ("m", "b", 1.0, "v1", 8),  # v1 used again after v2: v1 is newest
        ],
        columns=["model", "benchmark", "temperature", "prompt", "order"],
    )
    kept, dropped = latest_prompt_version(frame, keys=["model", "benchmark", "temperature"])
    assert list(kept["order"]) == [1, 2, 4, 5, 6, 7, 8]
    assert list(dropped["order"]) == [3]
    kept, dropped = latest_prompt_version(
        frame.iloc[:4], keys=["model", "benchmark", "temperature"]
    )
    assert list(kept["order"]) == [3, 4] and list(dropped["order"]) == [1, 2]


def _study(session) -> Study:
    return session.exec(select(Study).where(Study.slug == "small")).one()


def _change_sts_prompt(session, study) -> None:
    study.source_toml = study.source_toml.replace(
        'name = "sts-b"\n',
        'name = "sts-b"\njudge_template = "New wording: {{ sentence1 }} / {{ sentence2 }} '
        '(\\"{min}\\"\u2013\\"{max}\\")"\n',
    )
    session.add(study)
    session.commit()


def test_exports_and_frames_use_the_newest_prompt_only(session, small_study, fake_endpoint):
    endpoint = fake_endpoint()
    study = _study(session)
    settings = JudgeSettings(model="judge", base_url=endpoint.url, scales=("0-5",))
    run_judge(session, study, settings)
    first = dict(endpoint.answers)
    _change_sts_prompt(session, study)
    # The new prompt for one sts-b item only: a half-finished new version.
    run_judge(session, study, JudgeSettings(**{**settings.__dict__, "limit": 1}))
    new = {p: v for p, v in endpoint.answers if p.startswith("New wording")}
    assert len(new) == 1
    ((new_prompt, new_value),) = new.items()

    export = matrix_export(session, study, scale="0-5")
    column = export.frame.set_index("item_id")[LLM_PREFIX + "judge"]
    assert column["s1"] == float(new_value) and "A cat sits" in new_prompt
    # The other sts-b items have only old-prompt scores: left out, not mixed in.
    assert column[["s2", "s3"]].isna().all()
    (truthful,) = [p for p in first if "Question:" in p]
    assert column["t1"] == float(first[truthful])
    assert export.superseded == 3
    assert "3 LLM scores asked under an older prompt left out" in export.missing_summary()

    frames = study_frames(session, study)
    llm = frames.llm.set_index("item")
    assert frames.llm_superseded == {"0-5": 3}
    assert sorted(llm.index) == ["s1", "t1"]
    assert llm.loc["s1", "value"] == float(new_value)
    notes = study_dashboard(frames).scale("0-5").notes
    assert "3 LLM scores asked under an older prompt are left out" in " ".join(notes)

    # The long export keeps every score with its prompt version.
    long = long_export(session, study)
    judged = long[long["kind"] == "llm"]
    assert len(judged) == 5 and set(judged["source"]) == {"judge"}
    assert judged["prompt_hash"].nunique() == 3  # sts-b old and new, truthfulqa


def test_imported_scores_have_no_prompt_and_stay_as_they_were(runner, session, small_study):
    from tests.conftest import DATA

    result = runner.invoke(args=["llm-scores", "import", "small", str(DATA / "llm_scores.csv")])
    assert result.exit_code == 0, result.output
    frames = study_frames(session, _study(session))
    assert len(frames.llm) > 0 and frames.llm_superseded == {}
    assert set(frames.llm["prompt"]) == {""}
    long = long_export(session, _study(session))
    assert long[long["kind"] == "llm"]["prompt_hash"].isna().all()
