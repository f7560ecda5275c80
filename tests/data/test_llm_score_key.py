"""The key of a stored LLM score is (item, scale, model, temperature, run)."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import IntegrityError
from sqlmodel import select

from annotator.data.frames import study_frames
from annotator.data.importers import import_llm_scores
from annotator.data.readers import InputError
from annotator.models import Item, LLMScore, Scale, Study


def _study(session) -> Study:
    return session.exec(select(Study).where(Study.slug == "small")).one()


def _import(session, tmp_path, text: str):
    path = tmp_path / "llm.csv"
    path.write_text("item_id,model,scale,score,run,temperature\n" + text)
    report = import_llm_scores(session, _study(session), path)
    session.commit()
    return report


def _stored(session) -> list[tuple]:
    rows = session.exec(
        select(Item.external_id, LLMScore.model, LLMScore.temperature, LLMScore.run, LLMScore.value)
        .join(Item, Item.id == LLMScore.item_id)
        .order_by(LLMScore.id)
    ).all()
    return [tuple(row) for row in rows]


def test_one_run_at_two_temperatures_is_two_scores(session, small_study, tmp_path):
    report = _import(session, tmp_path, "s1,m,0-5,4,1,0.1\ns1,m,0-5,2,1,1.0\ns1,m,0-5,3,1,\n")
    assert report.created == 3
    assert _stored(session) == [
        ("s1", "m", 0.1, "1", 4.0),
        ("s1", "m", 1.0, "1", 2.0),
        ("s1", "m", None, "1", 3.0),
    ]
    # The analysis keeps them apart: one row each, by temperature.
    llm = study_frames(session, _study(session)).llm
    assert sorted(llm["temperature"].fillna(-9).tolist()) == [-9, 0.1, 1.0]


def test_the_same_key_again_is_unchanged_or_refused(session, small_study, tmp_path):
    _import(session, tmp_path, "s1,m,0-5,4,1,0.1\ns1,m,0-5,3,1,\n")
    again = _import(session, tmp_path, "s1,m,0-5,4,1,0.1\ns1,m,0-5,3,1,\ns1,m,0-5,1,1,1\n")
    assert (again.unchanged, again.created) == (2, 1)
    for changed in ("s1,m,0-5,5,1,0.1\n", "s1,m,0-5,5,1,\n"):
        with pytest.raises(InputError, match="already stored with value"):
            _import(session, tmp_path, changed)
        session.rollback()
    assert [row[-1] for row in _stored(session)] == [4.0, 3.0, 1.0]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("s1,m,0-5,4,1,0.1\ns1,m,0-5,3,1,0.1\n", "in run '1' at temperature 0.1 already on line 2"),
        ("s1,m,0-5,4,1,\ns1,m,0-5,3,1,\n", "in run '1' already on line 2"),
        ("s1,m,0-5,4,1,-1\n", "line 2, column 'temperature': -1 is not a temperature"),
    ],
)
def test_a_key_twice_in_a_file_and_a_negative_temperature_are_refused(
    session, small_study, tmp_path, rows, message
):
    with pytest.raises(InputError, match=message):
        _import(session, tmp_path, rows)
    session.rollback()
    assert _stored(session) == []


def _add(session, temperature: float | None, run: str = "1") -> None:
    item = session.exec(select(Item).where(Item.external_id == "s1")).one()
    scale = session.exec(select(Scale).where(Scale.name == "0-5")).one()
    session.add(
        LLMScore(
            item_id=item.id, scale_id=scale.id, model="m", run=run, temperature=temperature, value=1
        )
    )
    session.commit()


@pytest.mark.parametrize("temperature", [0.1, None])
def test_the_database_refuses_a_key_twice_even_without_a_temperature(
    session, small_study, temperature
):
    """NULLs are distinct in a unique constraint; the key's coalesce makes them one."""
    _add(session, 0.1)
    _add(session, None)
    _add(session, 1.0)
    with pytest.raises(IntegrityError):
        _add(session, temperature)
    session.rollback()
    _add(session, temperature, run="2")
    assert len(_stored(session)) == 4


def test_exports_keep_one_run_number_at_each_temperature_apart(session, small_study, tmp_path):
    """The temperature ablation: run 1 at 0.1 and run 1 at 1.0, exported one at a time."""
    from annotator.data.exporters import matrix_export
    from annotator.metrics.matrix import LLM_PREFIX

    rows = "".join(
        f"{item},m,0-5,{low},1,0.1\n{item},m,0-5,{high},1,1.0\n"
        for item, low, high in (("s1", 1, 4), ("s2", 2, 5))
    )
    _import(session, tmp_path, rows)
    study = _study(session)
    for temperature, expected in ((0.1, [1.0, 2.0]), (1.0, [4.0, 5.0])):
        export = matrix_export(session, study, scale="0-5", temperature=temperature, runs="each")
        frame = export.frame.set_index("item_id")
        assert frame.loc[["s1", "s2"], f"{LLM_PREFIX}m#1"].tolist() == expected
