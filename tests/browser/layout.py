"""Layout checks shared by the browser tests."""

from __future__ import annotations

__all__ = ["assert_no_sideways_scroll"]

# The widest elements that stick out past the viewport's right edge, outermost
# first, so a failure names what to fix. Elements inside a box that scrolls
# on its own (.table-wrap, pre) do not widen the page and are left out, unless
# absolutely placed: those may escape the box and widen the page after all.
_WIDENERS = """() => {
    const width = document.documentElement.clientWidth;
    const scrolls = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
    const inScroller = el => { for (let p = el.parentElement; p; p = p.parentElement) {
        if (scrolls(p)) return true; } return false; };
    return [...document.body.querySelectorAll('*')]
        .filter(el => el.getBoundingClientRect().right > width + 1
                && (!inScroller(el) || getComputedStyle(el).position === 'absolute'))
        .slice(0, 5)
        .map(el => el.tagName.toLowerCase() + (el.className ? '.' + el.className : '')
             + ' right=' + Math.round(el.getBoundingClientRect().right));
}"""


def assert_no_sideways_scroll(page, where: str = "") -> None:
    """The page is no wider than the viewport (wide tables scroll in their own box)."""
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    if overflow > 1:
        width = page.viewport_size["width"] if page.viewport_size else "?"
        raise AssertionError(
            f"{where or page.url} scrolls sideways by {overflow}px at {width} px; "
            f"too wide: {page.evaluate(_WIDENERS)}"
        )
