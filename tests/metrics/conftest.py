"""Fixtures of the metrics tests: the alt-test golden data in ../shared/data/alttest."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

# Dataset -> (scoring, epsilon), as in the data's README and the reference notebook.
ALTTEST_SETTINGS = {
    "10k_prompts": ("neg_rmse", 0.15),
    "cebab_stars": ("neg_rmse", 0.1),
    "mtbench": ("accuracy", 0.2),
}


def shared_dir() -> Path:
    """The shared data folder: $ANNOTATOR_SHARED_DIR, else the repository's sibling ``shared``."""
    env = os.environ.get("ANNOTATOR_SHARED_DIR")
    return Path(env) if env else REPO_ROOT.parent / "shared"


def _published_file() -> Path:
    return shared_dir() / "data" / "alttest" / "published_results.json"


def missing_data_reason() -> str:
    return (
        f"alt-test golden data not found at {_published_file().parent}: clone the shared "
        "folder next to the repository (../shared) or set ANNOTATOR_SHARED_DIR to it"
    )


def alttest_dir() -> Path:
    """The golden data folder; skips the calling test where it is missing.

    A fresh clone has no ../shared: its tests that need the data skip and say how
    to get it, and every other test runs. CI requires them (ANNOTATOR_REQUIRE_ALL_TESTS
    turns skips into failures, see tests/conftest.py).
    """
    if not _published_file().is_file():
        pytest.skip(missing_data_reason())
    return _published_file().parent


@pytest.fixture(scope="session")
def alttest_data() -> dict[str, tuple[dict, dict]]:
    """Dataset name -> (human annotations, {llm: annotations})."""
    base = alttest_dir()
    out = {}
    for name in ALTTEST_SETTINGS:
        humans = json.loads((base / name / "human_annotations.json").read_text())
        llms = json.loads((base / name / "llm_annotations.json").read_text())
        out[name] = (humans, llms)
    return out


@pytest.fixture(scope="session")
def published() -> dict[str, list[float]]:
    """``dataset/llm`` -> [winning_rate, advantage_probability], as published."""
    return json.loads((alttest_dir() / "published_results.json").read_text())


def published_cases() -> list:
    """The (dataset, llm) pairs of the published results (read at collection time).

    Without the data, one skipped case stands for them all: collection must not fail.
    """
    if not _published_file().is_file():
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=missing_data_reason()))]
    data = json.loads(_published_file().read_text())
    return [tuple(key.split("/", 1)) for key in data]
