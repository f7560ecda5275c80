"""Consent texts and benchmark instructions written in Markdown.

markdown-it-py in its CommonMark preset with raw HTML switched off: a study
file gets paragraphs, lists, emphasis and links, and any ``<tag>`` in it is
shown as text. markdown-it also refuses ``javascript:`` and similar links.
"""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt
from markupsafe import Markup

__all__ = ["render_markdown"]

_MARKDOWN = MarkdownIt("commonmark", {"html": False})


@lru_cache(maxsize=256)
def render_markdown(text: str) -> Markup:
    return Markup(_MARKDOWN.render(text.strip()))
