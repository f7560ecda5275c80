"""The planning figures of ``annotator plan --plot``, drawn from given numbers (the
command's own tests are in ``tests/cli/test_plan_plot.py``)."""

from __future__ import annotations

import numpy as np

from annotator.render.figures import alt_test_power_figure, plan_figure


def test_plan_figure_draws_the_given_d_study(readable):
    from annotator.metrics import raters_needed
    from annotator.metrics.plan import VarianceComponents, d_study

    table = d_study(VarianceComponents(items=1.0, raters=0.25, residual=0.75), raters=range(1, 7))
    targets = (0.6, 0.7, 0.8, 0.9)
    needed = {t: raters_needed(table.absolute[0], target=t) for t in targets}
    widths = [
        {"n_raters": k, "n_items": n, "width_a1": 1.0 / (k * n) ** 0.5}
        for k in (2, 3)
        for n in (20, 60)
    ]
    fig = plan_figure(
        table.raters,
        table.absolute,
        table.relative,
        target=0.8,
        needed_by_target=needed,
        widths=widths,
    )
    readable(fig)
    reliability, need, width = fig.axes
    lines = {line.get_label(): line for line in reliability.get_lines()}
    np.testing.assert_allclose(lines["ICC(A,k')"].get_ydata(), table.absolute)
    np.testing.assert_allclose(lines["ICC(C,k')"].get_ydata(), table.relative)
    (step,) = need.get_lines()
    assert list(step.get_xdata()) == list(targets)
    assert list(step.get_ydata()) == [needed[t] for t in targets]
    assert sorted(line.get_label() for line in width.get_lines()) == ["2 raters", "3 raters"]
    (legend,) = fig.legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == ["ICC(A,k')", "ICC(C,k')", "target 0.8", "2 raters", "3 raters"]


def test_alt_test_power_figure_draws_the_pass_probability(readable):
    rows = [
        {"n_raters": k, "n_items": n, "pass_probability": p}
        for k, ps in ((3, (0.2, 0.6, 0.9)), (5, (0.3, 0.7, 0.95)))
        for n, p in zip((30, 60, 90), ps, strict=True)
    ]
    fig = alt_test_power_figure(rows, epsilon=0.15)
    readable(fig)
    (ax,) = fig.axes
    assert ax.get_title() == "Alt-test pass probability (epsilon 0.15)"
    three, five = ax.get_lines()
    assert list(three.get_xdata()) == [30, 60, 90]
    assert list(five.get_ydata()) == [0.3, 0.7, 0.95]
