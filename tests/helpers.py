"""Helpers shared by test modules of different folders (a test module imports no other)."""

from __future__ import annotations

import re
import shlex

from annotator import migrate


def downgrade(engine, target: str) -> None:
    """Alembic's downgrade of ``engine``'s database to revision ``target``."""
    from alembic import command

    config = migrate._config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, target)


def annotator_args(line: str) -> tuple[list[str], str | None]:
    """Arguments of an ``annotator`` line and the file its output is sent to."""
    words = shlex.split(line, comments=True)
    assert words[0] == "annotator", line
    if ">" in words:
        at = words.index(">")
        assert len(words) == at + 2, f"only a trailing '> FILE' is supported: {line}"
        return words[1:at], words[at + 1]
    return words[1:], None


# What a page shows when code, not a sentence, wrote it: "rating(s)" for a plural,
# a Python list or dict ("['0-5']", "{'runs': ...}"), or a None/True/False after a
# colon, an equals sign, a bracket or a comma ("limit: None", "complete=True").
_CODE_WORDS = re.compile(
    r"\w\(s\)|\[['\"]|\{['\"]|[:=(\[,] ?(?:None|True|False)\b|\bNoneType\b|\bnan\b"
)


def code_words(html: str) -> list[str]:
    """The code words in the text a reader sees of ``html`` (not in its ``<code>``
    and ``<pre>``, which show the lead's own input and machine output as typed),
    each with a little of its context."""
    import lxml.html

    tree = lxml.html.fromstring(html)
    for element in tree.xpath("//code | //pre | //script | //style"):
        element.drop_tree()
    text = " ".join(tree.text_content().split())
    return [text[max(0, m.start() - 60) : m.end() + 60] for m in _CODE_WORDS.finditer(text)]
