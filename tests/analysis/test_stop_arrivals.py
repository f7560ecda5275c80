"""validation/stop_arrivals.py, small: ratings arriving as in the app (interleaved, late
raters, leavers whose ratings vanish); its shortcut agrees with complete_items and
judge_verdict at every look, and at the boundary of H0 the level holds."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "validation" / "stop_arrivals.py"


@pytest.fixture(scope="module")
def sim():
    spec = importlib.util.spec_from_file_location("stop_arrivals", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_shortcut_gives_the_library_verdict_at_every_look(sim):
    rng = np.random.default_rng(5)
    small = sim.Design("overlap R=4, k=2, N=40", False, 4, 40, 2)
    crossed = sim.Design("crossed R=4, N=30", True, 4, 30, 3)
    for design in (small, crossed):
        assert sim.check_against_library(rng, design, 0.4, reps=1) == 0


def test_arrivals_follow_the_design(sim):
    rng = np.random.default_rng(6)
    design = sim.DESIGNS[0]
    a = sim.arrivals(rng, design)
    assert np.all(np.diff(a.time) >= 0)
    gone = set(a.left_at)
    counted = ~np.isin(a.rater, list(gone))
    # No counted rater rates an item twice, and no item gets more than k counted raters.
    pairs = set(zip(a.rater[counted].tolist(), a.item[counted].tolist(), strict=True))
    assert len(pairs) == int(counted.sum())
    assert np.bincount(a.item[counted], minlength=design.items).max() <= design.k


def test_the_boundary_holds_the_level(sim):
    rng = np.random.default_rng(8)
    design, reps = sim.DESIGNS[0], 150
    at = sim.boundary_sd(rng, design.k, 20_000)
    row = sim.simulate(rng, design, at, reps)
    assert row["pass"] <= sim.Q + 3 * math.sqrt(sim.Q * (1 - sim.Q) / reps)
    bound = 1 / sim.secure_threshold(design.seats, sim.Q)
    raters = reps * design.seats  # at least
    assert row["secured_per_rater"] <= bound + 3 * math.sqrt(bound / raters)
