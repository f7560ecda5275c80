"""A metric's reason for a NaN: a RuntimeWarning, or collected in this context only."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

from annotator.metrics import cohen_kappa, icc
from annotator.metrics.notes import collect_notes, quiet

CONSTANT = np.full((5, 2), 3.0)


def test_outside_a_collection_the_reason_is_a_runtime_warning():
    with pytest.warns(RuntimeWarning, match="ratings are constant"):
        assert np.isnan(icc(CONSTANT).icc_a1)


def test_a_collection_takes_the_reasons_in_order_and_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with collect_notes() as caught:
            icc(CONSTANT)
            cohen_kappa([1, 1, 1], [1, 1, 1])
    assert [m.split(" (")[0].split(":")[0] for m in caught] == [
        "ratings are constant",
        "both raters gave one and the same score to every item",
    ]


def test_quiet_drops_the_reasons_of_its_block_only():
    with collect_notes() as caught:
        with quiet():
            icc(CONSTANT)
        icc(CONSTANT)
    assert len(caught) == 1


def test_another_threads_collection_is_not_this_ones():
    seen: list[list[str]] = []

    def other() -> None:
        with collect_notes() as theirs:
            icc(CONSTANT)
        seen.append(theirs)

    with collect_notes() as ours:
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert ours == [] and len(seen[0]) == 1
