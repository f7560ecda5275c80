"""Drawing helpers shared by ``annotator plan --plot`` and the study report.

matplotlib (headless, Agg) is imported inside the functions: ``annotator --help`` must
not pay for it. Figures are built on ``matplotlib.figure.Figure`` with the Agg canvas
rather than through ``pyplot``: no global figure registry, no GUI backend, safe in the
web server's threads. The functions only draw numbers computed elsewhere.

This module lives in ``annotator.metrics`` because the planning command does, and the
metrics import nothing from the rest of ``annotator``; the report's figures
(``annotator.analysis.report.plots``) build on the same helpers.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "PNG_SIGNATURE",
    "TITLE_Y",
    "UNIT_LIMITS",
    "UNIT_TICKS",
    "alt_test_power_figure",
    "data_uri",
    "empty_panel",
    "new_figure",
    "panel_grid",
    "plan_figure",
    "png_bytes",
    "png_data_uri",
    "tight",
    "unit_y",
    "warm_up",
]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

#: ``ax.set_title(..., y=TITLE_Y)``: where matplotlib puts a title anyway when no
#: tick labels sit above the panel, but given, so drawing the figure does not measure
#: every tick label to check (a fifth of the time of drawing a many-panel figure).
TITLE_Y = 1.0


#: The y-axis of :func:`unit_y`: a share or a probability, with a little room at the ends
#: so that lines at 0 and 1 stay clear of the panel's edges, and its ticks.
UNIT_LIMITS = (-0.02, 1.02)
UNIT_TICKS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
# What a number's tick label can hold: the x tick labels' height is this string's.
_DIGITS = "0123456789.\N{MINUS SIGN}"


def new_figure(n_panels: int = 1, *, width: float = 6.4, height: float = 3.6) -> Figure:
    """A figure with ``n_panels`` side by side, on the Agg canvas."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * n_panels if n_panels > 1 else width, height), dpi=100)
    FigureCanvasAgg(fig)
    fig.subplots(1, n_panels, squeeze=False)
    return fig


def panel_grid(
    rows: int,
    cols: int,
    *,
    width: float,
    row_height: float,
    left: float = 0.67,
    right: float = 0.15,
    bottom: float = 0.59,
    top: float = 0.37,
    col_gap: float = 0.67,
    row_gap: float = 0.8,
    reuse: Figure | None = None,
) -> tuple[Figure, Any]:
    """A figure of ``rows`` x ``cols`` panels with margins and gaps fixed in inches.

    For panels whose labels are known in advance (a y-axis fixed to [0, 1], one-line
    titles and axis labels), in place of ``tight_layout``: that measures every tick
    label's text to find the same margins, and costs as much as drawing the figure
    again (a third of the report's figure time). The defaults are what
    ``tight_layout`` gives a 0-1 y-axis with 10-point labels and a one-line title.

    ``reuse``: a figure this function returned before, already saved; when it has the
    same grid, its panels are emptied and returned instead of new ones (see
    :func:`_emptied`). The figure is a :class:`~annotator.metrics.layered.LayeredFigure`:
    drawn again, it starts from the frame (panels, ticks and text) it kept when that
    has not changed. Returns the figure and its 2-D array of axes.
    """
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from .layered import LayeredFigure

    height = row_height * rows
    panel_w = (width - left - right - col_gap * (cols - 1)) / cols
    panel_h = (height - bottom - top - row_gap * (rows - 1)) / rows
    grid = {
        "left": left / width,
        "right": 1.0 - right / width,
        "bottom": bottom / height,
        "top": 1.0 - top / height,
        "wspace": col_gap / panel_w,
        "hspace": row_gap / panel_h,
    }
    if reuse is not None and _same_grid(reuse, rows, cols, (width, height), grid):
        return _emptied(reuse), np.array(reuse.axes).reshape(rows, cols)
    fig = LayeredFigure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False, gridspec_kw=grid)
    return fig, axes


def _same_grid(fig: Figure, rows: int, cols: int, size: tuple, grid: dict) -> bool:
    axes = fig.axes
    if len(axes) != rows * cols or tuple(fig.get_size_inches()) != size:
        return False
    spec = axes[0].get_subplotspec()
    gridspec = spec.get_gridspec() if spec is not None else None
    return (
        gridspec is not None
        and gridspec.get_geometry() == (rows, cols)
        and all(getattr(gridspec, key) == value for key, value in grid.items())
    )


def _emptied(fig: Figure) -> Figure:
    """``fig`` with its panels' lines, fills and legends removed, ready to draw again.

    The axes stay, with their tick marks, spines and cached text layout: building
    the panels and their ticks is about a third of the time of a panel-grid figure,
    and the report draws three of the same grid one after the other. What the removed
    artists left behind is reset as new axes have it: the data limits the axes scale
    to (``relim``) and the colour cycle the next lines take their colours from. Limits
    and labels are set again by the caller, as on new axes; the PNG is the same
    (``tests/analysis/test_report_apart.py`` compares the pages).
    """
    for ax in fig.axes:
        for artist in [*ax.lines, *ax.collections, *ax.patches, *ax.texts]:
            artist.remove()
        if ax.get_legend() is not None:
            ax.get_legend().remove()
        ax.relim()
        ax.set_prop_cycle(None)
    return fig


def unit_y(axes) -> None:
    """Fix the y-axes of ``axes`` (panels of one figure) to :data:`UNIT_LIMITS`, ticked
    at :data:`UNIT_TICKS`, and their axis labels where matplotlib would put them.

    The ticks are those matplotlib would choose, without the one beyond each end that
    it would make and update at every drawing but not draw. The axis labels are put at
    fixed offsets from the panel, as the titles at :data:`TITLE_Y`: drawing would place
    each one beyond its tick labels by measuring them all again (a tenth of the time of
    drawing a panel grid). The offsets are matplotlib's: the tick's length and pad,
    the widest y tick label or the height of a number (the x-axes' tick labels must be
    numbers), and the axis label's pad.
    """
    import numpy as np
    from matplotlib.ticker import FixedLocator

    from .row_layout import pin_label, text_size

    axes = list(np.ravel(axes))
    fig = axes[0].get_figure(root=True)
    for ax in axes:
        ax.set_ylim(*UNIT_LIMITS)
        ax.yaxis.set_major_locator(FixedLocator(UNIT_TICKS))
    yaxis, xaxis = axes[0].yaxis, axes[0].xaxis
    ytick, xtick = yaxis.get_major_ticks(1)[0], xaxis.get_major_ticks(1)[0]
    labels = yaxis.get_major_formatter().format_ticks(UNIT_TICKS)
    width = max(text_size(ytick.label1, label)[0] for label in labels)
    height = text_size(xtick.label1, _DIGITS)[1]
    points = 72 / fig.dpi
    for ax in axes:
        pin_label(ax.yaxis, ytick.get_pad() + ytick.get_tick_padding() + width * points)
        pin_label(ax.xaxis, xtick.get_pad() + xtick.get_tick_padding() + height * points)


def tight(fig: Figure) -> None:
    """``fig.tight_layout()``, without leaving a layout engine on the figure.

    ``Figure.tight_layout`` leaves a placeholder engine behind, and ``savefig`` draws a
    figure that has one twice (once without rendering, to let the engine lay it out):
    the engine's own ``execute`` sets the same margins and spares that draw. ``rect=None``
    as ``Figure.tight_layout`` passes it: the engine's default, the whole figure, makes
    it measure every panel's labels a second time to fit them into that rectangle, and
    find the same margins.
    """
    from matplotlib.layout_engine import TightLayoutEngine

    TightLayoutEngine(rect=None).execute(fig)


def warm_up() -> None:
    """Draw a small figure with text and a legend to PNG, and throw it away.

    The first figure a process draws loads the font files and fills matplotlib's font
    and text caches (0.1 s); a process about to fork children that draw does this once,
    so that they start with it done.
    """
    fig = new_figure(1, width=1.0, height=1.0)
    ax = fig.axes[0]
    ax.plot([0.0, 1.0], [0.0, 1.0], marker=".", label="a")
    ax.set_title("a", y=TITLE_Y)
    ax.legend(fontsize="small")
    png_bytes(fig)


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG bytes: its pixels as drawn on the canvas, without the alpha
    channel when every pixel is opaque (:func:`_png`).

    Not ``savefig``: its PNG (through Pillow) keeps the alpha channel, which the
    report's figures do not need (their white background is opaque, and so is every
    pixel drawn over it), picks a filter for every row and compresses at level 6. This
    takes a quarter of its time (0.07 s of CPU against 0.28 s for the report's eight
    figures at 150 items) for files 6% smaller. The pixels are the same: ``savefig``
    draws the figure on the same canvas (and would draw it twice with
    ``bbox_inches="tight"``; the layout is set before).
    """
    import numpy as np

    canvas = fig.canvas
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())
    opaque = rgba[:, :, 3].min() == 255
    return _png(rgba[:, :, :3] if opaque else rgba, dpi=fig.dpi)


def _png(pixels, *, dpi: float) -> bytes:
    """A PNG of ``pixels`` (height x width x 3 or 4, 8 bits), each row unfiltered, the
    whole compressed at zlib level 1.

    Pillow tries five filters on every row and keeps the best: on figures (large areas
    of one colour, thin lines) no filter at level 1 compresses as well (files 2%
    smaller than Pillow's at level 1 for the report's figures), in 60% of the time.
    """
    import struct
    import zlib

    import numpy as np

    height, width, channels = pixels.shape
    rows = np.zeros((height, 1 + width * channels), dtype=np.uint8)  # 0: no filter
    rows[:, 1:] = pixels.reshape(height, -1)
    per_metre = round(dpi / 0.0254)
    colour = {3: 2, 4: 6}[channels]  # RGB, RGBA

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    return b"".join(
        [
            PNG_SIGNATURE,
            chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)),
            chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1)),
            chunk(b"IDAT", zlib.compress(rows.tobytes(), 1)),
            chunk(b"IEND", b""),
        ]
    )


def data_uri(fig: Figure) -> str:
    """The figure as a ``data:image/png;base64,...`` URI, for a self-contained page."""
    return png_data_uri(png_bytes(fig))


def png_data_uri(png: bytes) -> str:
    """PNG bytes as a ``data:image/png;base64,...`` URI."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def empty_panel(ax, message: str) -> None:
    ax.set_axis_off()
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, wrap=True)


# --------------------------------------------------------------- planning (issue 9)


def plan_figure(
    raters: Sequence[int],
    absolute: Sequence[float],
    relative: Sequence[float],
    *,
    target: float,
    needed_by_target: Mapping[float, int | None],
    widths: Sequence[Mapping[str, Any]] | None = None,
) -> Figure:
    """Planning curves of a D-study: reliability and raters needed, and CI widths.

    Parameters
    ----------
    raters, absolute, relative : sequence
        ``DStudy.raters``, ``DStudy.absolute`` (ICC(A,k')) and ``DStudy.relative``.
    target : float
        The wanted ICC(A,k'), drawn as a horizontal line.
    needed_by_target : mapping
        Target ICC(A,k') -> raters needed (``None`` when none reaches it), as given by
        ``annotator.metrics.raters_needed``.
    widths : sequence of dict, optional
        ``IntervalWidths.rows``: a third panel with the median width of the ICC(A,1)
        interval against the number of items, one line per number of raters.
    """
    fig = new_figure(3 if widths else 2, width=5.0, height=3.6)
    ax_rel, ax_need = fig.axes[0], fig.axes[1]
    ax_rel.plot(raters, absolute, marker="o", label="ICC(A,k')")
    ax_rel.plot(raters, relative, marker="s", linestyle="--", label="ICC(C,k')")
    ax_rel.axhline(target, color="grey", linewidth=1, linestyle=":", label=f"target {target:g}")
    ax_rel.set_xlabel("raters k'")
    ax_rel.set_ylabel("predicted reliability")
    ax_rel.set_title("Reliability of the mean of k' raters")
    ax_rel.legend(loc="lower right", fontsize="small")

    reached = [(t, n) for t, n in sorted(needed_by_target.items()) if n is not None]
    if reached:
        ax_need.step([t for t, _ in reached], [n for _, n in reached], where="post", marker=".")
        from matplotlib.ticker import MaxNLocator

        ax_need.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax_need.set_xlabel("target ICC(A,k')")
        ax_need.set_ylabel("raters needed")
        ax_need.set_title("Raters needed against the target")
    else:
        empty_panel(ax_need, "no number of raters reaches these targets")
    if widths:
        ax_w = fig.axes[2]
        for k in sorted({row["n_raters"] for row in widths}):
            rows = sorted((r for r in widths if r["n_raters"] == k), key=lambda r: r["n_items"])
            ax_w.plot(
                [r["n_items"] for r in rows],
                [r["width_a1"] for r in rows],
                marker="o",
                label=f"{k} raters",
            )
        ax_w.set_xlabel("items")
        ax_w.set_ylabel("median 95% CI width, ICC(A,1)")
        ax_w.set_title("Interval width against items")
        ax_w.legend(fontsize="small")
    fig.tight_layout()
    return fig


def alt_test_power_figure(rows: Sequence[Mapping[str, Any]], *, epsilon: float) -> Figure:
    """Pass probability of the alt-test against items, one line per number of raters.

    ``rows`` are ``AltTestPower.rows``.
    """
    fig = new_figure(1, width=5.6)
    ax = fig.axes[0]
    for k in sorted({row["n_raters"] for row in rows}):
        mine = sorted((r for r in rows if r["n_raters"] == k), key=lambda r: r["n_items"])
        ax.plot(
            [r["n_items"] for r in mine],
            [r["pass_probability"] for r in mine],
            marker="o",
            label=f"{k} raters",
        )
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("items")
    ax.set_ylabel("pass probability")
    ax.set_title(f"Alt-test pass probability (epsilon {epsilon:g})")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig
