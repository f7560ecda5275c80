"""validation/stop_when_decided.py, small: its shortcut agrees with the library at every
look, the error rate at the boundary of H0 stays at q, and a good judge stops early."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "validation" / "stop_when_decided.py"


@pytest.fixture(scope="module")
def sim():
    spec = importlib.util.spec_from_file_location("stop_when_decided", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shortcut_gives_the_library_verdict_at_every_look(sim):
    rng = np.random.default_rng(7)
    # A judge that passes in some looks and not others, and one that cannot pass.
    for judge_sd in (0.5, 2.0):
        assert sim.check_against_library(rng, 4, 30, judge_sd, reps=2) == 0


def test_the_boundary_holds_the_level_and_a_good_judge_saves_ratings(sim):
    rng = np.random.default_rng(11)
    m, n, reps = 5, 100, 400
    boundary = sim.boundary_sd(rng, m, 20_000)
    at = sim.simulate(rng, reps, n, m, boundary)
    assert at["d"] == pytest.approx(sim.EPSILON, abs=0.02)
    # At most q, with three Monte Carlo standard errors of room.
    assert at["pass_item"] <= sim.Q + 3 * math.sqrt(sim.Q * (1 - sim.Q) / reps)
    good = sim.simulate(rng, reps, n, m, 0.4)
    assert good["pass_item"] > 0.9 and good["median_ratings"] < 0.5 * n * m
