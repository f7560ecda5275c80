"""The matrices of a study's frames are built once per frames and handed out as copies."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from annotator.analysis.matrices import caching_frames, human_ratings, llm_matrix
from annotator.data.frames import study_frames


def test_matrices_are_built_once_and_handed_out_as_copies(session, make_study):
    study = make_study(n_items=20, n_raters=4, models=("gpt", "llama"), runs=2, seed=3)
    plain = study_frames(session, study)
    frames = caching_frames(plain)
    assert caching_frames(frames) is frames
    scale = frames.scale_names[0]
    temperature = float(frames.llm["temperature"].dropna().iloc[0])
    for function, options in (
        (human_ratings, {}),
        (llm_matrix, {"temperature": temperature}),
        (llm_matrix, {"temperature": temperature, "runs": "each"}),
    ):
        first = function(frames, scale, **options)
        assert first.size
        # The computation without the cache, on the same frames.
        pd.testing.assert_frame_equal(first, function.__wrapped__(frames, scale, **options))
        pd.testing.assert_frame_equal(first, function(plain, scale, **options))
        first.iloc[0, 0] = -99.0  # a caller's change stays in its copy
        again = function(frames, scale, **options)
        assert again is not first
        pd.testing.assert_frame_equal(again, function.__wrapped__(frames, scale, **options))
    assert len(frames.matrices) == 3
    # Plain frames keep nothing; other frames (a selection of raters) start empty.
    assert not hasattr(plain, "matrices")
    fewer = replace(frames, ratings=frames.ratings.iloc[:10])
    assert fewer.matrices == {}
    narrowed = human_ratings(fewer, scale)
    pd.testing.assert_frame_equal(narrowed, human_ratings.__wrapped__(fewer, scale))
    assert narrowed.notna().sum().sum() < human_ratings(frames, scale).notna().sum().sum()
    other = llm_matrix(frames, scale, temperature=temperature, runs="first")
    pd.testing.assert_frame_equal(
        other, llm_matrix.__wrapped__(frames, scale, temperature=temperature, runs="first")
    )
