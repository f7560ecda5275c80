"""A figure drawn in layers, the frame's kept for the next drawing of the same frame.

:func:`~annotator.metrics.plotting.panel_grid` makes its figures with
:class:`LayeredFigure`. The report draws three figures on one grid of panels, one after
the other (``reuse``): the alt-test against epsilon, its curves against epsilon, and
against the number of items. Their panels have the same y-axes, y labels and titles,
and the first two the same x-axes too; drawing that frame (tick labels' text, mostly)
is about half of the time of drawing one of these figures. A :class:`LayeredFigure`
keeps the pixels of its frame without the x-axes, then with them, and draws the
plotted artists over the frame; the next drawing starts from the frame it can reuse.
A figure drawn over a kept frame gives the same PNG as a new one
(``tests/metrics/test_panel_grid.py``).

The layers change the order matplotlib draws in (by ``zorder``, panel after panel).
The frame is black on white: drawing its parts in another order changed no pixel of
the report's figures. The plotted artists come after the spines and ticks rather than
between the panel's background and them, which changes only the few pixels where they
meet: the ends of a line across the panel, a marker at 0 or 1 on the report's y-axis
of [-0.02, 1.02] (42 pixels of the 1,000 x 960 of the report's alt-test figure).

This module imports matplotlib: it is imported when a grid is made, not before.
"""

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure

__all__ = ["LayeredFigure"]


class LayeredFigure(Figure):
    """A :class:`~matplotlib.figure.Figure` drawn frame first, plotted artists second.

    The frame is everything but the panels' plotted artists: the figure's and panels'
    backgrounds, spines, axes (ticks, tick labels, axis labels) and titles, and any
    artist of the figure itself. The plotted artists are each panel's children (lines,
    collections, patches, texts, images) and legend, drawn panel after panel in
    matplotlib's order (by ``zorder``, then as added).

    Two images of the frame are kept: without the panels' x-axes (the base), and with
    them; each with what identifies it (:func:`_base_key`, :func:`_x_key`: the
    figure's size, and each panel's position, limits, ticks, tick labels, axis labels
    and title). A drawing starts from the whole frame when its keys match, else from
    the base when its key matches, drawing the x-axes over it, else from nothing. What
    the keys leave out (colours, fonts, tick and spine parameters, the figure's own
    artists) must not change between two drawings of one figure; the report's figures
    set none of it.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._kept_base: tuple[Any, Any] | None = None
        self._kept_frame: tuple[Any, Any] | None = None

    def draw(self, renderer) -> None:
        base_key, x_key = _base_key(self), _x_key(self)
        frame_key = (base_key, x_key)
        plotted = [(ax, _plotted(ax)) for ax in self.axes]
        x_axes = [part for ax in self.axes for part in _x_parts(ax)]
        if _matches(self._kept_frame, frame_key):
            renderer.restore_region(self._kept_frame[1])
        else:
            if _matches(self._kept_base, base_key):
                renderer.restore_region(self._kept_base[1])
            else:
                hidden = [a for _, artists in plotted for a in artists] + x_axes
                with _hidden(hidden):
                    super().draw(renderer)
                self._kept_base = (base_key, renderer.copy_from_bbox(self.bbox))
            for part in x_axes:
                part.draw(renderer)
            self._kept_frame = (frame_key, renderer.copy_from_bbox(self.bbox))
        for ax, artists in plotted:
            if ax.get_visible():
                for artist in sorted(artists, key=lambda a: a.get_zorder()):
                    artist.draw(renderer)
        self.stale = False


def _matches(kept: tuple[Any, Any] | None, key: tuple) -> bool:
    return kept is not None and kept[0] == key


class _hidden:
    """The visible ones of ``artists`` hidden within the block."""

    def __init__(self, artists: list) -> None:
        self._shown = [artist for artist in artists if artist.get_visible()]

    def __enter__(self) -> None:
        for artist in self._shown:
            artist.set_visible(False)

    def __exit__(self, *exc: object) -> None:
        for artist in self._shown:
            artist.set_visible(True)


def _plotted(ax) -> list:
    """``ax``'s plotted artists, in the order it would draw them (as added, the legend
    last) before sorting them by ``zorder``."""
    lists = (ax.lines, ax.collections, ax.patches, ax.texts, ax.images, ax.artists, ax.tables)
    plotted = {id(artist) for artists in lists for artist in artists}
    legend = ax.get_legend()
    return [a for a in ax.get_children() if id(a) in plotted or a is legend]


def _x_parts(ax) -> list:
    """The parts of ``ax``'s frame drawn where its x-limits say: its x-axis, and the
    spines along it (their ends are data coordinates: drawn with other limits, the
    corners of the frame differ by a shade)."""
    if not (ax.get_visible() and ax.axison):
        return []
    return [ax.spines[side] for side in ("bottom", "top") if side in ax.spines] + [ax.xaxis]


def _base_key(fig: Figure) -> tuple:
    """What the frame without the x-axes shows."""
    panels = tuple(
        (
            ax.get_visible(),
            ax.axison,
            ax.get_position().bounds,
            ax.get_ylim(),
            ax.get_title(),
            ax.get_ylabel(),
            _ticks(ax.yaxis),
        )
        for ax in fig.axes
    )
    return tuple(fig.get_size_inches()), fig.dpi, panels


def _x_key(fig: Figure) -> tuple:
    """What the x-axes show."""
    return tuple((ax.get_xlim(), ax.get_xlabel(), _ticks(ax.xaxis)) for ax in fig.axes)


def _ticks(axis) -> tuple:
    locs = axis.get_majorticklocs()
    return tuple(locs), tuple(axis.get_major_formatter().format_ticks(locs))
