"""``annotator plan --plot``: the planning curves drawn from the numbers the command prints."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from click.testing import CliRunner
from matplotlib.figure import Figure

from annotator.cli.plan import plan_command

# The first bytes of every PNG file (the PNG specification, section 5.2).
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def drawn(monkeypatch):
    """The figures the command saves, captured as they are saved."""
    figures = []
    original = Figure.savefig

    def capture(fig, *args, **kwargs):
        figures.append(fig)
        return original(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", capture)
    return figures


def _png_shape(path) -> tuple[int, ...]:
    from matplotlib.image import imread

    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    return imread(io.BytesIO(data), format="png").shape


def test_plan_plot_draws_the_d_study_and_raters_needed(tmp_path, drawn):
    from annotator.metrics import raters_needed

    out = tmp_path / "plan.png"
    args = ["--components", "1,0.25,0.75", "--target", "0.8", "--max-raters", "6"]
    result = CliRunner().invoke(plan_command, [*args, "--json", "--plot", str(out)])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    height, width, _ = _png_shape(out)
    assert width > height > 100

    (fig,) = drawn
    reliability, needed = fig.axes
    assert reliability.get_xlabel() == "raters k'"
    lines = {line.get_label(): line for line in reliability.get_lines()}
    # The curves are the printed D-study, not something recomputed for the picture.
    assert list(lines["ICC(A,k')"].get_xdata()) == [row["raters"] for row in payload["rows"]]
    np.testing.assert_allclose(
        lines["ICC(A,k')"].get_ydata(), [row["absolute"] for row in payload["rows"]]
    )
    np.testing.assert_allclose(
        lines["ICC(C,k')"].get_ydata(), [row["relative"] for row in payload["rows"]]
    )
    assert list(lines["target 0.8"].get_ydata()) == [0.8, 0.8]

    assert (needed.get_xlabel(), needed.get_ylabel()) == ("target ICC(A,k')", "raters needed")
    (step,) = needed.get_lines()
    single = payload["rows"][0]["absolute"]
    targets = list(step.get_xdata())
    assert targets[0] == 0.5 and targets[-1] == 0.95
    assert list(step.get_ydata()) == [raters_needed(single, target=t) for t in targets]
    # The curve passes through the answer the command prints.
    assert dict(zip(targets, step.get_ydata(), strict=True))[0.8] == payload["raters_needed"]


def test_plan_plot_adds_the_interval_widths(tmp_path, drawn):
    out = tmp_path / "widths.png"
    args = ["--components", "1,0.25,0.75", "--ci-items", "20,60", "--ci-raters", "2,3"]
    result = CliRunner().invoke(plan_command, [*args, "--reps", "10", "--json", "--plot", str(out)])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["interval_widths"]["rows"]
    _png_shape(out)
    widths = drawn[0].axes[2]
    assert widths.get_xlabel() == "items"
    for line in widths.get_lines():
        k = int(line.get_label().split()[0])
        mine = [r for r in rows if r["n_raters"] == k]
        assert list(line.get_xdata()) == [r["n_items"] for r in mine]
        assert list(line.get_ydata()) == [r["width_a1"] for r in mine]
    assert sorted(line.get_label() for line in widths.get_lines()) == ["2 raters", "3 raters"]


def test_plan_alt_test_plot_draws_the_pass_probability(tmp_path, drawn):
    rng = np.random.default_rng(3)
    truth = rng.uniform(0, 5, 30)
    humans = {
        f"h{j}": {f"i{i}": float(truth[i] + rng.normal(0, 0.5)) for i in range(30)}
        for j in range(3)
    }
    llm = {"gpt": {f"i{i}": float(truth[i]) for i in range(30)}}
    pilot = tmp_path / "pilot.json"
    pilot.write_text(json.dumps({"humans": humans, "llm": llm}))
    out = tmp_path / "power.png"
    args = ["--alttest", "--items", "10,30", "--study-raters", "3", "--reps", "5"]
    args += ["--min-items-per-human", "10", "--json", "--plot", str(out)]
    result = CliRunner().invoke(plan_command, [str(pilot), *args])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    _png_shape(out)
    (ax,) = drawn[0].axes
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("items", "pass probability")
    (line,) = ax.get_lines()
    assert list(line.get_xdata()) == [r["n_items"] for r in rows]
    assert list(line.get_ydata()) == [r["pass_probability"] for r in rows]


def test_plan_plot_reports_an_unwritable_file(tmp_path):
    target = tmp_path / "missing" / "plan.png"
    result = CliRunner().invoke(
        plan_command, ["--components", "1,0.25,0.75", "--plot", str(target)]
    )
    assert result.exit_code != 0
    assert f"--plot {target}" in result.output
