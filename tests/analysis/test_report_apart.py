"""``annotator report`` on several processes (``annotator.analysis.report.apart``): the
same page, tables and notes as one process; a child's errors reach the parent; the web
path and a one-core machine stay in one process; the command's GC settings are put back.
"""

from __future__ import annotations

import gc
import os
from datetime import UTC, datetime

import pandas as pd
import pytest

from annotator.analysis.report import apart as apart_module
from annotator.analysis.report import build_report
from annotator.analysis.report.apart import Apart
from annotator.analysis.report.html import render_report
from annotator.analysis.settings import AnalysisSettings
from annotator.analysis.table_files import write_csv_tables
from annotator.analysis.tables import report_tables
from annotator.data.frames import study_frames

STAMP = datetime(2026, 3, 2, tzinfo=UTC)
# A grouping answer and a temperature no score has: notes from several tables, before
# and after the alt-test's, so their merged order is tested too.
SETTINGS = AnalysisSettings(n_resamples=40, group_by="gender", epsilons=(0.1, 0.2))


def _files(folder) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_forked_processes_give_the_page_tables_and_notes_of_one(session, make_study, tmp_path):
    study = make_study(slug="apart", n_items=40, n_raters=5, seed=3)
    frames = study_frames(session, study)
    one = report_tables(frames, settings=SETTINGS)
    with Apart() as apart:
        two = report_tables(frames, settings=SETTINGS, apart=apart)
    # Every figure was drawn before the page: the alt-test ones by the child.
    assert set(apart.drawn) == {
        "alttest",
        "alttest_epsilon_curve",
        "alttest_items_curve",
        "items",
        "bootstrap",
        "distributions",
        "icc",
        "figure2",
    }
    assert two.notes == one.notes
    assert not two.alttest.empty and not two.alttest_curves.empty
    pd.testing.assert_frame_equal(two.alttest, one.alttest)
    pd.testing.assert_frame_equal(two.alttest_curves, one.alttest_curves)
    write_csv_tables(one, tmp_path / "one")
    write_csv_tables(two, tmp_path / "two")
    assert _files(tmp_path / "two") == _files(tmp_path / "one")
    page_one = render_report(one, study="apart", generated_at=STAMP)
    page_two = render_report(two, study="apart", generated_at=STAMP, drawn=apart.drawn)
    assert page_two == page_one


def test_the_alt_test_figures_drawn_on_one_grid_are_the_figures_drawn_apart(session, make_study):
    # The child draws the three on one figure's panels, emptied in between.
    from annotator.analysis.report.figures import ALTTEST_FIGURES, draw

    study = make_study(slug="grid", n_items=40, n_raters=5, seed=3)
    tables = report_tables(study_frames(session, study), settings=SETTINGS)
    makers = {key: make for figures in ALTTEST_FIGURES.values() for key, make in figures.items()}
    assert len(makers) == 3
    fig, figures = None, set()
    for key, make in [*makers.items(), *makers.items()]:
        fig = make(tables, reuse=fig)
        figures.add(id(fig))
        assert draw(fig).png == draw(make(tables)).png, key
    assert len(figures) == 1


def _notes_in_one_pass(frames, settings) -> list[str]:
    """The notes as one list filled table after table, in the report's order (the way
    ``report_tables`` filled them before the alt-test tables were computed apart)."""
    from annotator.analysis.agreement_tables import agreement_tables
    from annotator.analysis.matrices import Notes, main_temperature
    from annotator.analysis.panels import build_panel
    from annotator.analysis.study_tables import (
        alttest_rows,
        bootstrap_rows,
        group_rows,
        inter_scale_rows,
        temperature_rows,
    )

    notes = Notes()
    temperature, _ = main_temperature(frames, settings.temperature)
    options = {"temperature": temperature, "settings": settings, "notes": notes}
    pooled = {s: build_panel(frames, s, benchmark=None, **options) for s in frames.scale_names}
    for benchmark in frames.benchmark_names:
        for s in frames.scale_names:
            build_panel(frames, s, benchmark=benchmark, **options)
    inter_scale_rows(frames, temperature, notes, runs=settings.runs)
    group_rows(frames, pooled, settings, notes)
    temperature_rows(frames, pooled, settings, notes)
    alttest_rows(frames, temperature, settings, notes)
    bootstrap_rows(frames, pooled, settings, notes)
    agreement_tables(frames, temperature, settings, notes)
    return list(notes)


@pytest.mark.parametrize("spec", [dict(n_items=12, n_raters=1), dict(n_items=4, n_raters=2)])
def test_the_notes_keep_the_order_of_the_tables(session, make_study, spec):
    # One rater, or 4 items: notes from the tables before the alt-test's, from the
    # alt-test and from its curves (one rater) or from the panels and Table 1.
    study = make_study(slug="few", seed=2, **spec)
    frames = study_frames(session, study)
    settings = AnalysisSettings(n_resamples=20, group_by="gender")
    one = report_tables(frames, settings=settings)
    with Apart() as apart:
        two = report_tables(frames, settings=settings, apart=apart)
    assert any(line.startswith("alt-test, ") for line in one.notes)
    assert len(one.notes) > 10
    assert one.notes == _notes_in_one_pass(frames, settings)
    assert two.notes == one.notes


def test_an_error_in_the_child_reaches_the_parent(session, make_study):
    study = make_study(slug="boom", n_items=20, n_raters=3, seed=1)
    frames = study_frames(session, study)

    def broken(*args):
        raise RuntimeError("the child failed")

    with Apart() as apart:
        wait = apart(broken, ["alttest", "alttest_curves"], frames)
        with pytest.raises(RuntimeError, match="the child failed"):
            wait(report_tables(frames, settings=AnalysisSettings(n_resamples=20)))


def test_build_report_forks_only_when_asked_and_able(session, make_study, monkeypatch):
    study = make_study(slug="where", n_items=20, n_raters=3, seed=1)
    started = []
    real = Apart.__call__

    def counting(self, function, *args):
        started.append(os.getpid())
        return real(self, function, *args)

    monkeypatch.setattr(Apart, "__call__", counting)
    settings = AnalysisSettings(n_resamples=20)
    # The web server's download: one process.
    serial = build_report(session, study, settings=settings, generated_at=STAMP)
    assert started == []
    # One core: nothing to gain from a second process.
    monkeypatch.setattr(apart_module.os, "cpu_count", lambda: 1)
    assert not apart_module.can_fork()
    build_report(session, study, settings=settings, generated_at=STAMP, fork=True)
    assert started == []
    monkeypatch.setattr(apart_module.os, "cpu_count", lambda: 2)
    if not apart_module.can_fork():
        pytest.skip("fork is used on Linux only")
    forked = build_report(session, study, settings=settings, generated_at=STAMP, fork=True)
    assert started == [os.getpid()]
    assert forked.html == serial.html


def test_the_command_puts_the_collector_back(runner, make_study, tmp_path):
    make_study(slug="gc", n_items=20, n_raters=3, seed=1)
    before = gc.get_threshold(), gc.get_freeze_count()
    result = runner.invoke(args=["report", "gc", "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
    # And on failure too.
    result = runner.invoke(args=["report", "nope", "--out", str(tmp_path / "x.html")])
    assert result.exit_code != 0
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
