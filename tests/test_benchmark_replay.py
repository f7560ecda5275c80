"""benchmarks/alttest_replay.py's shortcut against the library: the item at which the
replay says a judge passes is the first at which alt_test_sequential is decided."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from annotator.metrics import alt_test_sequential

ROOT = Path(__file__).resolve().parents[1]


def _data_dir() -> Path:
    shared = Path(os.environ.get("ANNOTATOR_SHARED_DIR") or ROOT.parent / "shared")
    folder = shared / "data" / "alttest"
    if not (folder / "published_results.json").is_file():
        pytest.skip(
            f"alt-test golden data not found at {folder}: clone the shared folder next to "
            "the repository (../shared) or set ANNOTATOR_SHARED_DIR to it"
        )
    return folder


@pytest.fixture(scope="module")
def replay():
    path = ROOT / "benchmarks" / "alttest_replay.py"
    spec = importlib.util.spec_from_file_location("alttest_replay", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("dataset", "model"), [("cebab_stars", "gpt-4o"), ("10k_prompts", "gpt-4o-mini")]
)
def test_the_replay_passes_where_the_library_is_first_decided(replay, dataset, model):
    folder = _data_dir()
    scoring, epsilon = replay.SETTINGS[dataset]
    humans = json.loads((folder / dataset / "human_annotations.json").read_text())
    llm = json.loads((folder / dataset / "llm_annotations.json").read_text())[model]
    names, rows, kept = replay.winning_x(humans, llm, scoring)
    order = np.random.default_rng(1).permutation(len(rows))
    pass_at, _ = replay.replay(names, rows, epsilon, "mixture", order[None], "half", 0.1)
    assert np.isfinite(pass_at[0])
    t = int(pass_at[0]) + 1  # items seen at the pass

    def decided(n_items):
        items = [kept[i] for i in order[:n_items]]
        sub = {h: {i: a[i] for i in items if i in a} for h, a in humans.items()}
        verdict = alt_test_sequential(
            humans=sub,
            llm={i: llm[i] for i in items},
            scoring=scoring,
            epsilon=epsilon,
            n_annotators=len(names),
        )
        return verdict.decided

    assert decided(t) and not decided(t - 1)
