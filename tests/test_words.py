"""annotator.words: counts with the right plural, lists without brackets."""

from __future__ import annotations

import pytest

from annotator.words import listing, noun, number, plural

from .conftest import ROOT


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


@pytest.mark.parametrize(
    ("count", "expected"), [(0, "scales"), (1, "scale"), (2, "scales"), (0.5, "scales")]
)
def test_noun_is_the_word_plural_puts_after_the_count(count, expected):
    assert noun(count, "scale") == expected
    assert plural(count, "scale").endswith(f" {expected}")


def _message_texts(tree):
    """The string constants of a module but its docstrings (f-strings' parts included)."""
    import ast

    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
        if is_text and id(node) not in docstrings:
            yield node.lineno, node.value


def test_no_message_of_the_package_says_a_noun_with_s_in_brackets():
    """What a page, the CLI or an error says counts with the right plural
    (:func:`annotator.words.plural`, or metrics' own ``counted``): "3 problems",
    never "problem(s)". Old migrations keep their words; "http(s)" is a scheme."""
    import ast
    import re

    found = []
    for path in sorted((ROOT / "annotator").rglob("*.py")):
        if "migrations" in path.parts:
            continue
        for line, text in _message_texts(ast.parse(path.read_text("utf-8"))):
            if re.search(r"[a-z]\(s\)", text.replace("http(s)", "")):
                found.append(f"{path.relative_to(ROOT)}:{line}: {text!r}")
    assert found == []
