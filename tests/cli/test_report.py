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
    # 10 of the paper and the alt-test, 1 of rater quality, 1 of test-retest,
    # 6 of annotator.analysis.agreement_tables, 1 of the further statistics.
    assert len(tree.xpath("//table[@data-table]")) == 19
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


def test_report_writes_each_figure_as_a_file_by_its_key(runner, make_study, tmp_path):
    """``--figures DIR --figure-format svg|pdf``: one file per figure of the page, named
    by the figure's key, each a whole file of its format (for a paper); the page keeps
    its inline PNGs."""
    import re
    import xml.etree.ElementTree as ET

    from lxml import html as lxml_html

    from annotator.render.report.figures import FIGURES

    make_study(slug="figs", n_items=30, n_raters=4, seed=7)
    for fmt in ("svg", "pdf"):
        out, folder = tmp_path / f"{fmt}.html", tmp_path / fmt
        args = ["report", "figs", "--out", str(out), "--figures", str(folder)]
        result = runner.invoke(args=[*args, "--figure-format", fmt])
        assert result.exit_code == 0, result.output
        assert sorted(p.name for p in folder.iterdir()) == sorted(f"{k}.{fmt}" for k in FIGURES)
        assert f"Wrote {len(FIGURES)} {fmt.upper()} figures to {folder}." in result.output
        for path in folder.iterdir():
            data = path.read_bytes()
            if fmt == "svg":
                root = ET.fromstring(data)
                assert root.tag == "{http://www.w3.org/2000/svg}svg", path.name
                texts = [
                    "".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")
                ]
                assert texts, path.name
            else:
                assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
                assert len(re.findall(rb"/Type\s*/Page\b", data)) == 1, path.name
        tree = lxml_html.fromstring(out.read_text("utf-8"))
        sources = [img.get("src") for img in tree.xpath("//figure/a/img")]
        assert len(sources) == len(FIGURES)
        assert all(src.startswith("data:image/png;base64,") for src in sources)
    svg = ET.fromstring((tmp_path / "svg" / "figure2.svg").read_bytes())
    titles = {"".join(t.itertext()) for t in svg.iter("{http://www.w3.org/2000/svg}text")}
    assert {"sts-b", "summeval", "(all)"} <= titles  # the study's benchmarks


def test_an_unknown_figure_format_is_refused(runner, tmp_path):
    out = tmp_path / "report.html"
    result = runner.invoke(
        args=[
            "report",
            "x",
            "--out",
            str(out),
            "--figures",
            str(tmp_path),
            "--figure-format",
            "gif",
        ]
    )
    assert result.exit_code != 0
    assert "Invalid value for '--figure-format': 'gif' is not one of 'png', 'svg', 'pdf'" in (
        result.output
    )
    assert not out.exists()


def test_report_says_each_reason_once_with_what_it_holds_for(runner, make_study, tmp_path):
    # 12 items: the alt-test of every scale and judge lacks items per rater.
    make_study(slug="few", n_items=12, n_raters=3, models=("judge-a", "judge-b"))
    out = tmp_path / "report.html"
    result = runner.invoke(args=["report", "few", "--out", str(out), "--tables", str(tmp_path)])
    assert result.exit_code == 0, result.output
    said = [line for line in result.output.splitlines() if line.startswith("not computed")]
    reasons = [line.split("): ", 1)[1] for line in said if "): " in line]
    assert said and len(reasons) == len(set(reasons)) == len(said)
    (alttest,) = [line for line in said if "more items per rater" in line]
    assert "model judge-a" in alttest and "model judge-b" in alttest
    # Every note of notes.txt is in one of the lines.
    for note in (tmp_path / "notes.txt").read_text().splitlines():
        subject, _, why = note.rpartition(": ")
        assert any(why in line for line in said), note
