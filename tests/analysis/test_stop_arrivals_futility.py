"""validation/stop_arrivals_futility.py, small: the app's whole stop check (futility
included, each rater's own budget) on ratings arriving as in the app. Its shortcut
gives judge_verdict's outcome at every check, the dealing keeps the app's promises,
a clearly worse judge is stopped early, and at the boundary of H0 the level holds."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "validation" / "stop_arrivals_futility.py"


@pytest.fixture(scope="module")
def sim():
    spec = importlib.util.spec_from_file_location("stop_arrivals_futility", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


def test_the_shortcut_gives_judge_verdicts_outcome_at_every_check(sim):
    rng = np.random.default_rng(5)
    small = sim.arr.Design("overlap R=4, k=2, N=40", False, 4, 40, 2)
    crossed = sim.arr.Design("crossed R=4, N=30", True, 4, 30, 3)
    for design in (small, crossed):
        for judge_sd in (0.4, 2.0):
            assert sim.check_against_library(rng, design, judge_sd, reps=1) == 0


def test_blocks_are_dealt_as_the_app_deals_them(sim):
    rng = np.random.default_rng(6)
    design = sim.DESIGNS[0]
    a = sim.app_arrivals(rng, design)
    counted = ~np.isin(a.rater, list(a.left_at))
    # Each counted rating is in its rater's block, no item gets more than k counted
    # raters, and a rater who stayed rated their whole block.
    assert all(i in a.block[r] for r, i in zip(a.rater, a.item, strict=True))
    assert np.bincount(a.item[counted], minlength=design.items).max() <= design.k
    stayed = set(a.rater[counted].tolist())
    for r in stayed:
        assert np.sum(a.rater == r) == len(a.block[r])
    # The stayers' blocks cover every place: each item ends with k counted ratings.
    assert np.all(np.bincount(a.item[counted], minlength=design.items) == design.k)


def test_a_worse_judge_is_stopped_and_the_boundary_holds_the_level(sim):
    rng = np.random.default_rng(8)
    design, reps = sim.arr.Design("crossed R=4, N=40", True, 4, 40, 3), 40
    worse = sim.simulate(rng, design, 2.5, reps)
    assert worse["stopped"] == 1.0 and worse["pass"] == 0.0
    at = sim.arr.boundary_sd(rng, design.k, 20_000)
    row = sim.simulate(rng, design, at, reps)
    assert row["pass"] <= sim.Q + 3 * math.sqrt(sim.Q * (1 - sim.Q) / reps)
