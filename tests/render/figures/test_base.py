"""The shared pieces: the file formats as other readers see them, and the panel grid."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET

import pytest

from annotator.render.figures import (
    MAX_WIDTH,
    figure_bytes,
    legend_below,
    new_figure,
    panel_grid,
)

SVG = "{http://www.w3.org/2000/svg}"


def _sample():
    fig = new_figure(5.0, 3.0)
    ax = fig.subplots()
    ax.plot([0, 1, 2], [0.2, 0.8, 0.5], label="gpt")
    ax.set_title("winning rate")
    ax.set_xlabel("epsilon")
    legend_below(fig, ax.get_lines())
    return fig


def test_png_is_read_by_pillow_at_the_figures_size():
    from PIL import Image

    image = Image.open(io.BytesIO(figure_bytes(_sample(), "png")))
    assert image.format == "PNG"
    assert image.size == (500, 300)


def test_svg_is_xml_with_the_text_as_text():
    root = ET.fromstring(figure_bytes(_sample(), "svg"))
    assert root.tag == f"{SVG}svg"
    assert root.get("width") == "360pt" and root.get("height") == "216pt"  # 5 x 3 inches
    texts = {"".join(t.itertext()).strip() for t in root.iter(f"{SVG}text")}
    # Text stays text (searchable and editable in a paper), not outlines.
    assert {"winning rate", "epsilon", "gpt"} <= texts


def test_pdf_has_one_page_of_the_figures_size_and_embeds_truetype_fonts():
    data = figure_bytes(_sample(), "pdf")
    assert data.startswith(b"%PDF-")
    assert data.rstrip().endswith(b"%%EOF")
    assert len(re.findall(rb"/Type\s*/Page\b", data)) == 1
    (box,) = re.findall(rb"/MediaBox\s*\[\s*([\d.\s]+)\]", data)
    assert [float(v) for v in box.split()] == [0.0, 0.0, 360.0, 216.0]
    # Type 3 fonts (matplotlib's default) are refused by some publishers' checks.
    assert b"/Subtype /TrueType" in data or b"/Subtype /Type0" in data
    assert b"/Subtype /Type3" not in data


def test_an_unknown_format_or_a_figure_too_wide_is_refused():
    with pytest.raises(ValueError, match="fmt: 'jpeg' is not one of png, svg, pdf"):
        figure_bytes(_sample(), "jpeg")
    with pytest.raises(ValueError, match="width: 12 inches is wider than 11"):
        new_figure(12.0, 3.0)
    assert MAX_WIDTH * 100 <= 1120  # the report's column: never scaled down


def test_panels_wrap_onto_rows_and_keep_their_x_labels_when_nothing_is_below():
    fig, axes = panel_grid(7, columns=4, panel_width=2.5, panel_height=2.5, sharex=True)
    assert len(axes) == len(fig.axes) == 7
    for ax in axes:
        ax.plot([0, 1], [0, 1])
    figure_bytes(fig, "png")
    rows = [round(ax.get_position().y0, 3) for ax in axes]
    assert rows[:4] == [rows[0]] * 4 and rows[4:] == [rows[4]] * 3 and rows[4] < rows[0]
    shown = [any(t.get_visible() for t in ax.get_xticklabels()) for ax in axes]
    # The fourth panel of the first row has nothing below it.
    assert shown == [False, False, False, True, True, True, True]


def test_a_legend_below_leaves_out_unlabelled_artists():
    fig = new_figure(5.0, 3.0)
    ax = fig.subplots()
    ax.errorbar([0, 1], [0.5, 0.6], yerr=0.1, fmt="none")  # caps: unlabelled lines
    ax.plot([0, 1], [0.5, 0.6], "o", label="ICC")
    legend_below(fig, ax.get_lines())
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["ICC"]


def test_nothing_under_the_metrics_imports_matplotlib():
    """The plotting lives here; the statistics package draws nothing."""
    import ast
    from pathlib import Path

    import annotator.metrics

    package = Path(annotator.metrics.__file__).parent
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            assert not any(n.split(".")[0] == "matplotlib" for n in names), path
