"""The generated rubric study of SummEval's shape: its rows, per criterion."""

from __future__ import annotations

import numpy as np

from annotator.data.frames import study_frames
from annotator.data.matrix_export import matrix_export
from annotator.data.synthetic import SyntheticSpec, build_synthetic_study, summeval_spec


def test_summeval_shape(session):
    spec = summeval_spec()
    study = build_synthetic_study(session, spec)
    session.commit()
    frames = study_frames(session, study)
    assert frames.criterion_names == ["coherence", "consistency", "fluency", "relevance"]
    ratings = frames.ratings
    # 1,600 summaries x 3 raters x 4 criteria; 6 judges x 1,600 x 4 criteria.
    assert len(ratings) == 1600 * 3 * 4 and len(frames.llm) == 1600 * 6 * 4
    per = ratings.groupby(["criterion", "rater"]).size()
    assert set(per) == {1600} and len(per) == 12
    assert set(ratings["value"]) <= {1.0, 2.0, 3.0, 4.0, 5.0}
    assert set(frames.llm.groupby(["criterion", "model"]).size()) == {1600}
    # Each criterion's matrix: 1,600 items x 3 raters and the 6 judges' columns,
    # the cells being that criterion's ratings.
    for name in frames.criterion_names:
        matrix = matrix_export(session, study, criterion=name)
        assert matrix.frame.shape == (1600, 2 + 3 + 6)
        mine = ratings[ratings["criterion"] == name].pivot(
            index="item", columns="rater", values="value"
        )
        got = matrix.frame.set_index("item_id")[matrix.raters]
        assert np.array_equal(got.loc[mine.index, mine.columns].to_numpy(), mine.to_numpy())


def test_criteria_differ_but_share_the_items_effect(session):
    study = build_synthetic_study(session, summeval_spec(slug="small-rubric", n_items=400))
    session.commit()
    ratings = study_frames(session, study).ratings
    means = ratings.groupby(["criterion", "item"])["value"].mean().unstack("criterion")
    correlation = means.corr().to_numpy()[np.triu_indices(4, 1)]
    # Correlated through the common item effect, not identical.
    assert (correlation > 0.3).all() and (correlation < 0.99).all()


def test_a_study_without_criteria_is_generated_as_before(session):
    study = build_synthetic_study(session, SyntheticSpec(slug="plain", n_items=20))
    session.commit()
    frames = study_frames(session, study)
    assert not frames.has_criteria and set(frames.ratings["criterion"]) == {""}
