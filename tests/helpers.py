"""Helpers shared by test modules of different folders (a test module imports no other)."""

from __future__ import annotations

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
