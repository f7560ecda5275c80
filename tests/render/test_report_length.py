"""Issue 34: a report as long as the study has something to say, and careful where its
numbers are weak, on the guide's 8-item rubric example and on the demo study."""

from __future__ import annotations

import pandas as pd
from lxml import html as lxml_html
from sqlmodel import select

from annotator.models import Study
from annotator.render.report.caution import MIN_ITEMS, weak_cells
from annotator.render.report.cells import frame_view
from annotator.services.report import build_report
from tests.conftest import ROOT
from tests.report_checks import report_problems

RUBRIC = (
    ["study", "create", ROOT / "examples" / "rubric-summeval.toml"],
    ["items", "import", "rubric-summeval", ROOT / "examples" / "rubric-items.jsonl"],
    ["ratings", "import", "rubric-summeval", ROOT / "examples" / "rubric-ratings.csv"],
    ["llm-scores", "import", "rubric-summeval", ROOT / "examples" / "rubric-llm-scores.csv"],
)


def _report(session, slug: str, **options):
    study = session.exec(select(Study).where(Study.slug == slug)).one()
    return build_report(session, study, **options)


def test_the_rubric_examples_report_says_each_thing_once(runner, session, monkeypatch):
    import matplotlib

    monkeypatch.setitem(matplotlib.rcParams, "savefig.dpi", 10)
    for args in RUBRIC:
        result = runner.invoke(args=[str(a) for a in args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    steps = []
    report = _report(session, "rubric-summeval", progress=lambda *a: steps.append(a))
    assert report_problems(report.html) == []
    tree = lxml_html.fromstring(report.html)
    # Real steps: reading, statistics, each of the 4 criteria's figures, the page, done.
    # (The number of criteria is known once the statistics are: 4 steps until then.)
    assert [done for done, _, _ in steps] == list(range(8))
    assert [total for _, total, _ in steps] == [4, 4] + [7] * 6 and steps[-1][2] == "Done"
    listed = [li.text_content() for li in tree.xpath("//ul[@class='not-computed']/li")]
    reasons = tree.xpath("//ul[@class='not-computed']/li/@data-reason")
    assert len(reasons) == len(set(reasons)) == len(listed)
    # The study asks no gender: no grouping by it, and nothing said about it.
    assert not any("gender" in line for line in listed)
    assert not tree.xpath("//table[@data-table[contains(., 'table5')]]")
    # The alt-test note of 8 model x criterion pairs, said once with what it is for,
    # in the lead's terms: the ratings still needed (each rater rated every item), not
    # the analysis option no lead page offers.
    (alttest,) = [line for line in listed if line.startswith("no rater has yet rated")]
    assert "judge-a" in alttest and "judge-b" in alttest and "fluency" in alttest
    n_items = len((ROOT / "examples" / "rubric-items.jsonl").read_text().splitlines())
    assert f"at most {n_items} so far" in alttest
    assert f"about {30 - n_items} more items per rater" in alttest
    assert not any("min_items_per_human" in line or "Lower" in line for line in listed)
    # 8 items, each in its criterion's table of the worst: no per-item figure repeats it.
    (items,) = [line for line in listed if line.startswith("the table of the worst items")]
    assert "per-item disagreement" in items and "relevance" in items
    assert not tree.xpath("//figure[contains(@id, 'items')]")
    # One benchmark: Figure 2 has its panel, not the pooled one repeating it.
    alts = [img.get("alt") for img in tree.xpath("//figure//img")]
    pooled = [alt for alt in alts if "the pooled (all) left out" in alt]
    assert len(pooled) == 4 and all("1 benchmark (summeval)" in alt for alt in pooled)
    # 8 items: every ICC, alpha, kappa and correlation of the summary is greyed, none best.
    summary = tree.xpath("//table[@data-table='criteria-summary']")[0]
    columns = [th.get("data-column") for th in summary.xpath("./thead/tr/th")]
    for tr in summary.xpath("./tbody/tr"):
        cells = dict(zip(columns, tr.xpath("./td"), strict=True))
        for name in ("icc_a1_human", "icc_human_llm", "pearson_r", "fleiss_kappa"):
            if cells[name].get("data-value") != "nan":
                assert cells[name].get("class") == "weak", name
    assert "Grey: on fewer than 16 items" in summary.getparent().getparent().text_content()
    # The CSV names are listed once, as words beside names, not as headers.
    glossary = dict(
        zip(
            tree.xpath("//ul[@class='columns']/li/code/text()"),
            tree.xpath("//ul[@class='columns']/li/span/text()"),
            strict=True,
        )
    )
    assert glossary["icc_a1_human"] == "human ICC(A,1)"
    assert glossary["n_items"] == "items"


def test_the_demos_report_draws_only_figures_with_data(app, session, tmp_path, monkeypatch):
    import matplotlib

    from annotator.demo import load_demo

    monkeypatch.setitem(matplotlib.rcParams, "savefig.dpi", 10)
    load_demo(session, base_url="http://localhost", instance_path=str(tmp_path))
    session.commit()
    report = _report(session, "demo")
    assert report_problems(report.html) == []
    tree = lxml_html.fromstring(report.html)
    drawn = {f.get("id").removeprefix("figure-") for f in tree.xpath("//figure")}
    # 40 items per rater: the alt-test decides, so its figures have data and are drawn.
    assert {"alttest", "icc", "distributions"} <= drawn
    assert len(tree.xpath("//section")) >= 8


def test_weak_rows_rest_on_few_items_or_a_wide_interval():
    # 15 items: the 95% Fisher-z interval of r = 0 is wider than 1 (2 tanh(1.96/sqrt(12))
    # = 1.03); at 16 it is 0.99.
    frame = pd.DataFrame(
        {
            "scale": ["a", "b", "c"],
            "n_items": [15, MIN_ITEMS, 40],
            "n_raters": [3, 3, 2],
            "icc_a1_human": [0.9, 0.8, 0.7],
            "icc_human_llm": [0.9, 0.8, 0.7],
            "icc_human_llm_low": [0.5, 0.6, -0.6],
            "icc_human_llm_high": [1.0, 0.9, 0.9],
            "nmae": [0.1, 0.1, 0.1],
        }
    )
    weak = weak_cells(frame)
    assert weak["icc_a1_human"].tolist() == [True, False, True]  # 2 raters: weak
    assert weak["icc_human_llm"].tolist() == [True, False, True]  # width 1.5: weak
    assert weak["icc_human_llm_low"].tolist() == [True, False, True]
    assert not weak["nmae"].any() and not weak["n_items"].any()
    assert (15 - 3) ** 0.5 < 1.96 / 0.5493 < (16 - 3) ** 0.5  # atanh(0.5) = 0.5493


def test_a_one_row_table_and_a_weak_cell_mark_nothing_best():
    frame = pd.DataFrame({"scale": ["a"], "n_items": [40], "icc_a1": [0.0]})
    best = pd.DataFrame({"icc_a1": [True]})
    assert [c.css for c in frame_view(frame, best=best).rows[0]] == ["text", "", ""]
    two = pd.DataFrame({"scale": ["a", "b"], "n_items": [4, 40], "icc_a1": [0.9, 0.5]})
    view = frame_view(two, best=pd.DataFrame({"icc_a1": [True, False]}))
    assert [row[2].css for row in view.rows] == ["weak", ""]
    assert view.weak


def test_the_dashboard_greys_a_number_whose_interval_is_wider_than_half_the_range(app):
    from annotator.render.dashboard_types import Shown

    wide = Shown(0.5, "0.500 [−0.600, 0.900]", low=-0.6, high=0.9)
    narrow = Shown(0.5, "0.500 [0.300, 0.700]", low=0.3, high=0.7)
    assert wide.weak and not narrow.weak and not Shown(None, "n/a", reason="x").weak
    macros = app.jinja_env.get_template("lead/_stat.html").module
    assert 'class="weak"' in str(macros.cell(wide))
    assert "weak" not in str(macros.cell(narrow))
    assert "stat weak" in str(macros.stat("ICC(A,1)", wide))
