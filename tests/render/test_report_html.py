"""The report's HTML: every table cell is the value of k1's frames, the figures are real
PNGs, nothing is fetched from outside, and what cannot be computed is said."""

from __future__ import annotations

import base64
import dataclasses
import io
import math
import re
from datetime import UTC, datetime

import pandas as pd
import pytest
from lxml import html as lxml_html
from sqlmodel import Session, SQLModel

from annotator import create_app
from annotator.analysis.settings import AnalysisSettings
from annotator.analysis.study_analysis import report_tables
from annotator.data.frames import study_frames
from annotator.data.synthetic import SyntheticSpec, build_synthetic_study
from annotator.db import get_engine
from annotator.render.report.cells import frame_view
from annotator.render.report.html import render_report
from annotator.render.report.sections import TABLE1_AVERAGE

# Report table id -> (ReportTables attribute, the columns shown).
SHOWN = {
    "raters": ("rater_quality", None),
    "retest": ("retest", None),
    "statistics": (
        "statistics",
        ["scale", "statistic", "model", "value", "low", "high", "n_items"],
    ),
    "table2": (
        "scales",
        [
            "scale",
            "n_items",
            "n_raters",
            "n_models",
            "icc_a1_human",
            "icc_ak_human",
            "icc_a1_llm",
            "icc_ak_llm",
            "icc_human_llm",
            "nmae",
            "pearson_r",
        ],
    ),
    "table3": (
        "benchmarks",
        [
            "benchmark",
            "scale",
            "n_items",
            "n_raters",
            "n_models",
            "icc_a1_human",
            "icc_ak_human",
            "icc_a1_llm",
            "icc_ak_llm",
            "delta_a1",
            "delta_ak",
        ],
    ),
    "table4a": (
        "benchmarks",
        ["benchmark", "scale", "n_items", "icc_human_llm", "nmae", "pearson_r"],
    ),
    "table5": ("groups", None),
    "table6": ("temperatures", None),
    "alttest": ("alttest", None),
    "items": ("worst_items", None),
    # annotator.analysis.agreement_tables
    "consistency": ("consistency", None),
    "correlations": ("correlations", None),
    "kappa": ("kappa", None),
    "cross_alpha": ("cross_alpha", None),
}
FIGURES = {"alttest", "items", "bootstrap", "distributions", "icc", "figure2"}
FIGURES |= {"alttest_epsilon_curve", "alttest_items_curve"}
SETTINGS = AnalysisSettings(n_resamples=200)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """One rendered report shared by the tests that only read it (rendering takes seconds).

    On its own SQLite file: these tests check the layout, not the database.
    """
    folder = tmp_path_factory.mktemp("report")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ANNOTATOR_INSTANCE_PATH", str(folder / "instance"))
        app = create_app(
            {
                "TESTING": True,
                "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite'}",
                "SECRET_KEY": "t",
            }
        )
    SQLModel.metadata.create_all(get_engine(app))
    try:
        with Session(get_engine(app)) as session:
            study = build_synthetic_study(session, SyntheticSpec(n_items=40, n_raters=6, seed=4))
            session.commit()
            tables = report_tables(study_frames(session, study), settings=SETTINGS)
    finally:
        get_engine(app).dispose()
    page = render_report(tables, study=study.slug, generated_at=datetime(2026, 3, 2, tzinfo=UTC))
    return tables, page


def _shown(page: str) -> dict[str, pd.DataFrame]:
    """Each table of the page as a frame of its cells' full-precision values (strings)."""
    tree = lxml_html.fromstring(page)
    out = {}
    for table in tree.xpath("//table[@data-table]"):
        columns = [th.get("data-column") for th in table.xpath("./thead/tr/th")]
        rows = [
            [td.get("data-value") for td in tr.xpath("./td")] for tr in table.xpath("./tbody/tr")
        ]
        out[table.get("data-table")] = pd.DataFrame(rows, columns=columns)
    return out


def _equal(want, got: str) -> bool:
    if want is None or (isinstance(want, float) and math.isnan(want)):
        return got == "nan"
    if isinstance(want, bool):
        return got == str(want).lower()
    if isinstance(want, int | float):
        return float(got) == float(want)
    return got == str(want)


def _same(expected: pd.DataFrame, shown: pd.DataFrame, where: str) -> None:
    assert list(shown.columns) == [str(c) for c in expected.columns], where
    assert len(shown) == len(expected), where
    for column in expected.columns:
        for i, (want, got) in enumerate(zip(expected[column], shown[column], strict=True)):
            assert _equal(want.item() if hasattr(want, "item") else want, got), (
                where,
                column,
                i,
                want,
                got,
            )


def test_every_table_holds_the_frames_values(report):
    tables, page = report
    shown = _shown(page)
    assert set(shown) == {
        "table1",
        "table2",
        "table3",
        "table4a",
        "table4b",
        "table5",
        "table6",
        "alttest",
        "items",
        "bootstrap",
        "raters",
        "retest",
        *("consistency", "correlations", "kappa", "cross_alpha"),
        *("alttest_epsilon_curve", "alttest_items_curve"),
        "statistics",
    }
    curves = tables.alttest_curves
    for against in ("epsilon", "items"):
        part = curves[curves["against"] == against]
        assert not part.empty, against
        _same(
            part[list(shown[f"alttest_{against}_curve"].columns)],
            shown[f"alttest_{against}_curve"],
            against,
        )
    for key, (attribute, columns) in SHOWN.items():
        frame = getattr(tables, attribute)
        assert not frame.empty, attribute
        _same(frame[columns] if columns else frame, shown[key], key)

    # Table 4b is grouped by model; every row is one row of the models frame.
    models = tables.models.set_index(["model", "scale"])
    for _, row in shown["table4b"].iterrows():
        source = models.loc[(row["model"], row["scale"])]
        for column in ("icc_human_llm", "icc_human_llm_low", "icc_human_llm_high", "nmae"):
            assert _equal(source[column], row[column]), column
    assert len(shown["table4b"]) == len(tables.models)

    # Table 1 is the long inter-scale table laid out per model, plus the average.
    long = tables.inter_scale.set_index(["benchmark", "comparison", "model"])["icc_a1"]
    average = tables.inter_scale_average.set_index(["benchmark", "comparison"])["icc_a1_mean"]
    models_shown = [c for c in shown["table1"].columns if c not in {"benchmark", "comparison"}]
    assert models_shown == [*dict.fromkeys(tables.inter_scale["model"]), TABLE1_AVERAGE]
    cells = 0
    for _, row in shown["table1"].iterrows():
        key = (row["benchmark"], row["comparison"])
        assert _equal(average[key], row[TABLE1_AVERAGE])
        for model in models_shown[:-1]:
            assert _equal(long[(*key, model)], row[model])
            cells += 1
    assert cells == len(tables.inter_scale)

    bootstrap = shown["bootstrap"]
    for column in ("estimate", "low", "high", "n_items", "n_resamples"):
        _same(tables.bootstrap[[column]], bootstrap[[column]], f"bootstrap {column}")
    # Three decimals on the page, the full value in the cell.
    value = float(tables.scales["icc_a1_human"].iloc[0])
    assert f'data-value="{value!r}">{value:.3f}<' in page


def _marked(page: str, table: str) -> dict[str, list[int]]:
    tree = lxml_html.fromstring(page)
    columns = [th.get("data-column") for th in tree.xpath(f"//table[@data-table='{table}']//th")]
    out: dict[str, list[int]] = {}
    for i, tr in enumerate(tree.xpath(f"//table[@data-table='{table}']/tbody/tr")):
        for column, td in zip(columns, tr.xpath("./td"), strict=True):
            if "best" in (td.get("class") or "").split():
                out.setdefault(column, []).append(i)
    return out


def test_best_value_per_column_is_marked(report):
    tables, page = report
    scales = tables.scales.reset_index(drop=True)
    expected = {}
    for column in ("icc_a1_human", "icc_ak_human", "icc_a1_llm", "icc_ak_llm", "icc_human_llm"):
        expected[column] = list(scales.index[scales[column] == scales[column].max()])
    expected["nmae"] = list(scales.index[scales["nmae"] == scales["nmae"].min()])
    assert _marked(page, "table2") == expected
    # Table 4a: the best scale within each benchmark.
    bench = tables.benchmarks.reset_index(drop=True)
    best = bench.groupby("benchmark")["icc_human_llm"].transform("max")
    assert _marked(page, "table4a")["icc_human_llm"] == list(
        bench.index[bench["icc_human_llm"] == best]
    )
    assert _marked(page, "alttest") == {}


def test_figures_are_inline_pngs(report):
    from matplotlib.image import imread

    _, page = report
    tree = lxml_html.fromstring(page)
    found = set()
    for figure in tree.xpath("//figure"):
        (img,) = figure.xpath("./a/img")
        src = img.get("src")
        assert src.startswith("data:image/png;base64,")
        data = base64.b64decode(src.split(",", 1)[1], validate=True)
        assert data.startswith(PNG_SIGNATURE)
        height, width, _ = imread(io.BytesIO(data), format="png").shape
        assert (width, height) == (int(img.get("width")), int(img.get("height")))
        assert img.get("alt")
        found.add(figure.get("id").removeprefix("figure-"))
    assert found == FIGURES


def test_every_figures_alt_text_says_what_it_shows_from_the_data(report):
    tables, page = report
    tree = lxml_html.fromstring(page)
    alts = {
        figure.get("id").removeprefix("figure-"): figure.xpath("./a/img")[0].get("alt")
        for figure in tree.xpath("//figure")
    }
    scales = [str(s) for s in tables.scales["scale"]]
    for key, alt in alts.items():
        assert alt.endswith("."), key
        caption = tree.xpath(f"string(//figure[@id='figure-{key}']/figcaption)")
        assert alt != caption, key
        for scale in scales:  # every figure shows every scale
            assert scale in alt, (key, scale)
    for column, key in (("benchmark", "figure2"), ("model", "figure2"), ("model", "alttest")):
        for name in dict.fromkeys(getattr(tables, key)[column]):
            assert str(name) in alts[key], (key, name)
    assert f"{tables.items['item'].nunique()} items" in alts["items"]


def test_nothing_is_fetched_from_outside(report):
    _, page = report
    tree = lxml_html.fromstring(page)
    for element in tree.iter():
        for attribute in ("src", "href", "srcset", "action", "data", "poster"):
            value = element.get(attribute)
            if value is not None:
                assert value.startswith(("#", "data:image/png;base64,")), (element.tag, value)
    assert not tree.xpath("//link | //script | //iframe | //object | //embed | //base")
    style = "".join(tree.xpath("//style/text()"))
    assert not re.search(r"url\(|@import|https?:|//", style)
    assert "http://" not in page and "https://" not in page


def test_a_study_with_too_little_data_says_why(session, make_study):
    study = make_study(n_items=3, n_raters=2, models=("gpt",), seed=5)
    tables = report_tables(study_frames(session, study), settings=SETTINGS)
    assert tables.notes  # the generated study is too small for some statistics
    tables = dataclasses.replace(
        tables,
        notes=[*tables.notes, "a <b>note</b> & more"],
        temperatures=tables.temperatures.iloc[0:0],
    )
    page = render_report(tables, study=study.slug)
    tree = lxml_html.fromstring(page)
    listed = [li.text_content() for li in tree.xpath("//ul[@class='not-computed']/li")]
    # Every note's reason is said, once: a reason shared by several scales or models
    # is one line naming them all.
    for note in tables.notes:
        reason = note.partition(": ")[2] or note
        assert sum(line.startswith(reason) for line in listed) == 1, note
    assert len(listed) == len(set(listed)) < len(tables.notes)
    assert "a &lt;b&gt;note&lt;/b&gt; &amp; more" in page
    # An empty table is not drawn: the list says why.
    assert not tree.xpath("//table[@data-table='table6']")
    assert any("Table 6" in line for line in listed)
    settings = dict(
        zip(
            tree.xpath("//dl[@class='settings']/dt/text()"),
            tree.xpath("//dl[@class='settings']/dd/text()"),
            strict=True,
        )
    )
    assert settings["epsilon"] == f"{tables.settings['epsilon']:g}"
    assert settings["n resamples"] == "200"
    assert settings["runs"] == "mean"
    # A NaN cell is shown as missing, never as a number.
    for td in tree.xpath("//td[@data-value='nan']"):
        assert td.text == "–" and "missing" in td.get("class")


def test_frame_view_marks_the_given_cells_and_keeps_a_named_index():
    frame = pd.DataFrame({"icc": [0.5, 0.7]}, index=pd.Index(["gpt", "llama"], name="model"))
    best = pd.DataFrame({"icc": [False, True]}, index=frame.index)
    view = frame_view(frame, best=best)
    assert view.columns == ["model", "icc"]
    assert [[c.raw for c in row] for row in view.rows] == [["gpt", "0.5"], ["llama", "0.7"]]
    assert [row[1].css for row in view.rows] == ["", "best"]


def test_html_and_latex_bold_by_one_rule(report, tmp_path, monkeypatch):
    """Changing the shared rule of a table changes the HTML report and the LaTeX alike."""
    from annotator.render import table_files
    from annotator.render.table_files import BestRule, write_latex_tables

    tables, _ = report
    monkeypatch.setitem(table_files.BEST_RULES, "scales", BestRule(("icc_a1_human",), ()))
    page = render_report(tables, study="s", generated_at=datetime(2026, 3, 2, tzinfo=UTC))
    scales = tables.scales.reset_index(drop=True)
    top = list(scales.index[scales["icc_a1_human"] == scales["icc_a1_human"].max()])
    assert _marked(page, "table2") == {"icc_a1_human": top}
    write_latex_tables(tables, tmp_path)
    latex = (tmp_path / "scales.tex").read_text()
    assert latex.count("\\bfseries") == len(top)
    best = scales["icc_a1_human"].max()
    assert f"\\bfseries {best:.3f}" in latex
