"""``panel_grid``'s ``reuse``: a figure of the same grid drawn again on its own panels."""

from annotator.metrics.plotting import panel_grid, png_bytes


def _draw(reuse=None, *, rows=2, shift=0.0):
    fig, axes = panel_grid(rows, 2, width=8.0, row_height=3.0, reuse=reuse)
    for row in range(rows):
        for col in range(2):
            ax = axes[row][col]
            for k in range(3):
                ax.plot([0, 1 + shift, 2], [k, k + 1, k + shift], marker=".", label=f"m{k}")
            ax.fill_between([0.0, 1.0], [0.0, 0.1], [0.5, 0.6 + shift], alpha=0.15)
            ax.axhline(0.5, linestyle=":")
            ax.set_title(f"{row}, {col}")
        axes[row][1].legend(loc="lower right")
    return fig


def test_a_reused_grid_gives_the_png_of_a_new_one():
    first = _draw(shift=3.0)
    png_bytes(first)
    again = _draw(first)
    assert again is first
    # Colours restart, limits follow the new data only, one legend per panel.
    assert png_bytes(again) == png_bytes(_draw())
    assert len(again.axes[1].lines) == 4


def test_another_grid_is_not_reused():
    first = _draw()
    assert _draw(first, rows=3) is not first
    assert panel_grid(2, 2, width=9.0, row_height=3.0, reuse=first)[0] is not first
