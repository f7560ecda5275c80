"""The README and the user guide (``docs/*.md``) as the tests read them.

Tests that run a command shown in the documentation find its section by its
heading wherever it lives, so moving a section from the README to the guide (or
between pages) keeps the test on it; a heading found twice is an error, since the
test could then check the wrong copy.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEADING = re.compile(r"^(#{1,6}) +(.+?) *#*$")
FENCE = re.compile(r"^(```|~~~)")


def documents() -> list[Path]:
    """README.md and every page of the guide."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def headings(text: str) -> list[tuple[int, int, str]]:
    """(line index, level, title) of every heading outside fenced code."""
    found, fenced = [], False
    for number, line in enumerate(text.splitlines()):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and (match := HEADING.match(line)):
            found.append((number, len(match.group(1)), match.group(2)))
    return found


def section(title: str) -> str:
    """The text under the one heading called ``title`` in the README or the guide,
    up to the next heading of the same or a higher level."""
    hits = []
    for path in documents():
        lines = path.read_text(encoding="utf-8").splitlines()
        marks = headings("\n".join(lines))
        for at, (number, level, name) in enumerate(marks):
            if name == title:
                end = next((n for n, lv, _ in marks[at + 1 :] if lv <= level), len(lines))
                hits.append((path, "\n".join(lines[number + 1 : end]) + "\n"))
    assert len(hits) == 1, f"heading {title!r} found {len(hits)} times: {[p for p, _ in hits]}"
    return hits[0][1]


def first_block(text: str, language: str) -> str:
    """The body of the first fenced block of ``language`` in ``text``."""
    match = re.search(rf"^```{language}\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    assert match, f"no {language} block"
    return match.group(1)


def command_lines(block: str) -> list[str]:
    """The non-empty lines of a shell block."""
    return [line for line in block.splitlines() if line.strip()]
