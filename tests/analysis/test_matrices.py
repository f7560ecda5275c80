"""The matrices of a study's frames are built once per frames and handed out as copies."""

from __future__ import annotations

import gc

import pandas as pd

from annotator.analysis import matrices
from annotator.analysis.matrices import human_ratings, llm_matrix
from annotator.data.frames import study_frames


def test_matrices_are_built_once_and_handed_out_as_copies(session, make_study):
    study = make_study(n_items=20, n_raters=4, models=("gpt", "llama"), runs=2, seed=3)
    frames = study_frames(session, study)
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
        first.iloc[0, 0] = -99.0  # a caller's change stays in its copy
        again = function(frames, scale, **options)
        assert again is not first
        pd.testing.assert_frame_equal(again, function.__wrapped__(frames, scale, **options))
    assert matrices._MATRICES[id(frames)]
    other = llm_matrix(frames, scale, temperature=temperature, runs="first")
    pd.testing.assert_frame_equal(
        other, llm_matrix.__wrapped__(frames, scale, temperature=temperature, runs="first")
    )
    key = id(frames)
    del frames
    gc.collect()
    assert key not in matrices._MATRICES
