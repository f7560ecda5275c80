"""annotator.words: counts with the right plural, lists without brackets."""

from __future__ import annotations

import pytest

from annotator.words import listing, number, plural


@pytest.mark.parametrize(
    "count, words, expected",
    [
        (0, ("block",), "0 blocks"),
        (1, ("block",), "1 block"),
        (2, ("block",), "2 blocks"),
        (1.0, ("day",), "1 day"),
        (7.0, ("day",), "7 days"),
        (0.5, ("day",), "0.5 days"),
        (2, ("quantity", "quantities"), "2 quantities"),
        (1, ("quantity", "quantities"), "1 quantity"),
        (12, ("invite link",), "12 invite links"),
    ],
)
def test_plural(count, words, expected):
    assert plural(count, *words) == expected


def test_number_drops_trailing_zeros_and_refuses_booleans():
    import numpy as np

    got = [number(3), number(3.0), number(0.25), number(1e-05), number(np.int64(1234567))]
    assert got == ["3", "3", "0.25", "1e-05", "1234567"]
    assert number(2_500_000.0) == "2500000"
    with pytest.raises(TypeError, match="value must be a number, got True"):
        number(True)


def test_listing_never_shows_a_python_list():
    assert listing(["0-5", "0-10"]) == "0-5, 0-10"
    assert listing(("a",)) == "a"
    assert listing([]) == ""
    assert listing([1, 2], sep=" and ") == "1 and 2"
