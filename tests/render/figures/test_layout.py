"""A figure drawn once (``png_once``) against ``savefig``, and a layout shared by
figures drawn alike: taken over only where every label fits."""

from __future__ import annotations

import io

import numpy as np
import pytest

from annotator.render.figures import figure_bytes, legend_below, new_figure, png_once


def _figure(values, *, title: str = "per item"):
    fig = new_figure(6.0, 3.0)
    ax = fig.subplots()
    ax.plot(range(1, len(values) + 1), values, label="scale 1-5")
    ax.axhline(0.1, color="firebrick", linestyle="--", label="0.1")
    ax.set_title(title)
    ax.set_xlabel("items, worst first")
    ax.set_ylabel("nMAE")
    legend_below(fig, ax.get_lines())
    return fig


def _pixels(png: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


def _draws(fig) -> list:
    seen = []
    fig.canvas.mpl_connect("draw_event", seen.append)
    return seen


SMALL = [0.25, 0.2, 0.1, 0.05]


def test_drawn_once_it_is_the_picture_savefig_draws_twice():
    fig, reference = _figure(SMALL), _figure(SMALL)
    drawn, saved = _draws(fig), _draws(reference)
    png, layout = png_once(fig)
    expected = figure_bytes(reference, "png")
    assert len(drawn) == 1 and len(saved) == 2  # savefig: its layout pass, then the file
    assert np.array_equal(_pixels(png), _pixels(expected))
    assert layout is not None and len(layout.positions) == 1


def test_a_figure_with_the_same_labels_takes_the_layout_and_looks_as_laid_out_alone():
    _, first = png_once(_figure(SMALL))
    # Other values, the same ticks: constrained layout would place the panel alike.
    again = [0.24, 0.18, 0.12, 0.01]
    png, layout = png_once(_figure(again), [first])
    assert layout is first
    assert np.array_equal(_pixels(png), _pixels(figure_bytes(_figure(again), "png")))


def test_labels_wider_than_the_layout_holds_are_laid_out_afresh():
    _, first = png_once(_figure(SMALL))
    wide = [250000.0, 120000.0, 60000.0, 1000.0]  # tick labels "250000": wider
    fig = _figure(wide)
    png, layout = png_once(fig, [first])
    assert layout is not None and layout is not first
    assert np.array_equal(_pixels(png), _pixels(figure_bytes(_figure(wide), "png")))
    # Laid out afresh, every label is inside the figure.
    renderer = fig.canvas.get_renderer()
    box = fig.axes[0].get_tightbbox(renderer)
    assert box.x0 >= 0 and box.y0 >= 0
    assert box.x1 <= fig.bbox.width and box.y1 <= fig.bbox.height


def test_narrower_labels_keep_the_layout_and_stay_inside_its_boxes():
    _, first = png_once(_figure([2.5, 2.0, 1.0, 0.5]))  # "2.5": as wide as "0.5"
    fig = _figure([0.5, 0.4, 0.1, 0.0], title="per")
    png, layout = png_once(fig, [first])
    assert layout is first
    renderer = fig.canvas.get_renderer()
    (old,) = first.panels
    new = fig.axes[0].get_tightbbox(renderer)
    assert old.x0 - 0.5 <= new.x0 and new.x1 <= old.x1 + 0.5
    assert _pixels(png).shape == (300, 600, 4)


@pytest.mark.parametrize("change", ["size", "panels"])
def test_a_layout_is_not_taken_by_a_figure_of_another_size_or_panels(change):
    _, first = png_once(_figure(SMALL))
    if change == "size":
        fig = new_figure(5.0, 3.0)
        fig.subplots().plot([1, 2], [0.1, 0.2])
    else:
        fig = new_figure(6.0, 3.0)
        for ax in fig.subplots(1, 2):
            ax.plot([1, 2], [0.1, 0.2])
    _, layout = png_once(fig, [first])
    assert layout is not first


def test_without_measuring_a_new_layout_is_not_returned():
    png, layout = png_once(_figure(SMALL), measure=False)
    assert layout is None
    assert np.array_equal(_pixels(png), _pixels(figure_bytes(_figure(SMALL), "png")))
