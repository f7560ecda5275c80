"""The matrix and alt-test exports never average a model's runs at different temperatures."""

from __future__ import annotations

import pytest
from sqlmodel import select

from annotator.data.exporters import alttest_export, matrix_export
from annotator.metrics.matrix import LLM_PREFIX
from annotator.models import Item, LLMScore, Scale


def _direct_means(session, study, scale: str, temperature: float) -> dict[str, dict[str, float]]:
    """{model: {item: mean of its runs at temperature}} straight from the table."""
    rows = session.exec(
        select(Item.external_id, LLMScore.model, LLMScore.value, LLMScore.temperature)
        .join(Item, Item.id == LLMScore.item_id)
        .join(Scale, Scale.id == LLMScore.scale_id)
        .where(Scale.study_id == study.id, Scale.name == scale, Item.gold_score.is_(None))
    ).all()
    values: dict[str, dict[str, list[float]]] = {}
    for item, model, value, temp in rows:
        if temp is not None and abs(temp - temperature) < 1e-9:
            values.setdefault(model, {}).setdefault(item, []).append(value)
    return {m: {i: sum(v) / len(v) for i, v in d.items()} for m, d in values.items()}


def _approx(nested: dict[str, dict[str, float]]) -> dict:
    return {key: pytest.approx(inner, rel=1e-12) for key, inner in nested.items()}


def _columns(export) -> dict[str, dict[str, float]]:
    frame = export.frame.set_index("item_id")
    return {m: frame[LLM_PREFIX + m].dropna().to_dict() for m in export.models}


def test_without_a_choice_each_judge_is_at_its_own_main_temperature(session, make_study):
    # gpt has as many scores at its extra temperature 0.1 as at 1: the tie goes to
    # the study's most common, 1 (docs/analysis.md); the others have scores at 1 only.
    study = make_study(n_items=8, n_raters=3, runs=2, extra_temperatures=(0.1,))
    gpt = _direct_means(session, study, "0-5", 1.0)["gpt"]
    others = _direct_means(session, study, "0-5", 1.0)
    for export in (matrix_export, alttest_export):
        got = export(session, study, scale="0-5")
        columns = got["llm"] if isinstance(got, dict) else _columns(got)
        assert columns["gpt"] == pytest.approx(gpt, rel=1e-12)
        for model in ("llama", "mistral"):
            assert columns[model] == pytest.approx(others[model], rel=1e-12)


@pytest.mark.parametrize("temperature", [0.1, 1.0])
def test_the_chosen_temperature_only(session, make_study, temperature):
    study = make_study(n_items=8, n_raters=3, runs=2, extra_temperatures=(0.1,))
    export = matrix_export(session, study, scale="0-5", temperature=temperature)
    expected = _direct_means(session, study, "0-5", temperature)
    got = _columns(export)
    assert set(got) == set(expected)
    for model, items in expected.items():
        assert got[model] == pytest.approx(items, rel=1e-12)
    alt = alttest_export(session, study, scale="0-5", temperature=temperature)
    assert set(alt["llm"]) == set(expected)
    for model, items in expected.items():
        assert alt["llm"][model] == pytest.approx(items, rel=1e-12)


def test_the_study_main_temperature_is_the_default(session, make_study):
    study = make_study(n_items=8, n_raters=3, runs=2, extra_temperatures=(0.1,))
    study.source_toml += "\n[validation]\ntemperature = 0.1\n"
    session.add(study)
    session.commit()
    export = matrix_export(session, study, scale="0-5")
    assert export.temperature == 0.1
    assert _columns(export) == _approx(_direct_means(session, study, "0-5", 0.1))
    assert "LLM scores at temperature 0.1" in export.missing_summary()


def test_one_temperature_per_model_needs_no_choice(session, make_study):
    study = make_study(n_items=8, n_raters=3, runs=2, extra_temperatures=())
    export = matrix_export(session, study, scale="0-5")
    assert _columns(export) == _approx(_direct_means(session, study, "0-5", 1.0))


def test_cli_and_web_name_their_own_choice(app, session, make_study, lead_client):
    study = make_study(slug="temps", n_items=8, n_raters=3, runs=2, extra_temperatures=(0.1,))
    result = app.test_cli_runner().invoke(
        args=["export", study.slug, "--format", "matrix", "--scale", "0-5", "--out", "-"]
    )
    assert result.exit_code == 0, result.output
    assert "LLM scores at temperature 1 (gpt" in result.output
    result = app.test_cli_runner().invoke(
        args=["export", "temps", "--format", "matrix", "--scale", "0-5", "--temperature", "0.1"]
        + ["--out", "-"]
    )
    assert result.exit_code == 0, result.output
    assert "LLM scores at temperature 0.1" in result.output

    response = lead_client.get("/lead/studies/temps/export?format=matrix&scale=0-5")
    assert response.status_code == 200
    response = lead_client.get("/lead/studies/temps/export?format=matrix&scale=0-5&temperature=x")
    assert response.status_code == 422
    assert "at least 0, got &#39;x&#39;: choose one under “Temperature”." in response.get_data(
        as_text=True
    )
    response = lead_client.get("/lead/studies/temps/export?format=matrix&scale=0-5&temperature=0.1")
    assert response.status_code == 200
    notes = lead_client.get(
        "/lead/studies/temps/export?format=matrix&scale=0-5&temperature=0.1&notes=1"
    )
    assert "LLM scores at temperature 0.1" in notes.get_data(as_text=True)
