"""``annotator report``: the file, the CSV and LaTeX tables, and a light ``--help``."""

from __future__ import annotations

import os
import subprocess
import sys


def test_help_lists_report_without_loading_matplotlib(tmp_path):
    code = (
        "import sys\n"
        "from annotator.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))\n"
    )
    env = {"ANNOTATOR_INSTANCE_PATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert "report" in out.stdout
    assert "LOADED []" in out.stdout


def test_report_writes_the_page_and_the_tables(runner, make_study, tmp_path):
    import csv

    from lxml import html as lxml_html

    make_study(slug="cli", n_items=30, n_raters=4, seed=7)
    out = tmp_path / "out" / "report.html"
    tables, latex = tmp_path / "tables", tmp_path / "latex"
    result = runner.invoke(
        args=["report", "cli", "--out", str(out), "--tables", str(tables), "--latex", str(latex)]
    )
    assert result.exit_code == 0, result.output
    tree = lxml_html.fromstring(out.read_text("utf-8"))
    assert tree.xpath("//h1")[0].text == "Report: Synthetic cli"
    # 10 of the paper and the alt-test, 1 of rater quality, 6 of
    # annotator.analysis.agreement_tables.
    assert len(tree.xpath("//table[@data-table]")) == 17
    # No temporary file left next to the report, and the report is an ordinary
    # file (not the private 0600 of the temporary file it was written through).
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask
    required = {
        "scales.csv": "scale, n_items, icc_a1_human, icc_ak_human, icc_a1_llm, icc_ak_llm, "
        "icc_human_llm, nmae",
        "models.csv": "scale, model, temperature, icc_human_llm, nmae",
        "alttest.csv": "scale, model, epsilon, winning_rate, advantage_probability, passed",
    }
    for name, columns in required.items():
        with (tables / name).open(newline="") as fh:
            header = next(csv.reader(fh))
        assert set(columns.split(", ")) <= set(header), name
    assert (latex / "scales.tex").read_text().count("\\bfseries") >= 1
    assert f"Wrote the report of 'cli' to {out}." in result.output


def test_report_of_an_unknown_study_fails_clearly(runner, tmp_path):
    out = tmp_path / "report.html"
    result = runner.invoke(args=["report", "nope", "--out", str(out)])
    assert result.exit_code != 0
    assert "no study with slug 'nope'" in result.output
    assert not out.exists()


def test_report_takes_runs_and_where(runner, make_study, tmp_path):
    from lxml import html as lxml_html

    make_study(slug="sel", n_items=30, n_raters=4, seed=7)
    out = tmp_path / "report.html"
    result = runner.invoke(
        args=["report", "sel", "--out", str(out), "--runs", "majority", "--where", "gender=female"]
    )
    assert result.exit_code == 0, result.output
    tree = lxml_html.fromstring(out.read_text("utf-8"))
    assert "Runs aggregated by: majority." in tree.xpath("string(//*[@id='caption-table4b'])")
    raters = set(tree.xpath("//table[@data-table='raters']/tbody/tr/td[2]/text()"))
    assert raters == {"sel-r00", "sel-r02"}
    bad = runner.invoke(args=["report", "sel", "--out", str(out), "--where", "gender=robot"])
    assert bad.exit_code != 0
    assert "no rater answered gender=robot (known values of gender: " in bad.output
