"""Fixtures of the analysis tests: generated studies on the test database."""

from __future__ import annotations

import pytest
from sqlmodel import Session

from annotator.analysis.live import clear_dashboard_cache
from annotator.data.synthetic import SyntheticSpec, build_synthetic_study
from annotator.db import get_engine


@pytest.fixture
def session(app):
    with Session(get_engine(app)) as session:
        yield session


@pytest.fixture
def make_study(session):
    """``make_study(**spec)``: a committed generated study (see SyntheticSpec)."""
    clear_dashboard_cache()

    def factory(**spec):
        study = build_synthetic_study(session, SyntheticSpec(**spec))
        session.commit()
        return study

    yield factory
    clear_dashboard_cache()
