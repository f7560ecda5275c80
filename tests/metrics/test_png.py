"""``png_bytes``: the canvas's pixels as a PNG (RGB when opaque), readable by Pillow."""

import io

import numpy as np
import pytest
from PIL import Image

from annotator.metrics.plotting import PNG_SIGNATURE, new_figure, png_bytes


def _figure(alpha=1.0):
    fig = new_figure(1, width=2.0, height=1.5)
    fig.patch.set_alpha(alpha)
    ax = fig.axes[0]
    ax.plot([0.0, 1.0, 2.0], [0.0, 1.0, 0.5], marker=".")
    ax.fill_between([0.0, 2.0], [0.0, 0.2], [0.5, 0.9], alpha=0.15)
    ax.set_title("t")
    return fig


@pytest.mark.parametrize(("alpha", "mode"), [(1.0, "RGB"), (0.0, "RGBA")])
def test_the_png_holds_the_canvas_pixels(alpha, mode):
    fig = _figure(alpha)
    png = png_bytes(fig)
    assert png.startswith(PNG_SIGNATURE)
    image = Image.open(io.BytesIO(png))
    image.load()  # checks every chunk's CRC
    assert (image.mode, image.size) == (mode, (200, 150))
    canvas = np.asarray(fig.canvas.buffer_rgba())
    assert np.array_equal(np.asarray(image), canvas[:, :, : len(mode)])
    assert image.info["dpi"] == pytest.approx((100.0, 100.0), abs=0.01)
