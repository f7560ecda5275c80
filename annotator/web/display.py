"""An item and its benchmark's instructions as the rater reads them."""

from __future__ import annotations

from functools import lru_cache

from jinja2.sandbox import SandboxedEnvironment
from markupsafe import Markup

from ..collect.scores import format_number
from ..models import Benchmark, Item, Scale
from ..study.placeholders import fill_bounds
from .markdown import render_markdown

__all__ = ["render_item_text", "instructions_for"]


@lru_cache(maxsize=64)
def _item_template(source: str):
    # Sandboxed and autoescaped: item fields are data, never markup.
    return SandboxedEnvironment(autoescape=True).from_string(source)


def render_item_text(benchmark: Benchmark, item: Item) -> Markup:
    return Markup(_item_template(benchmark.template).render(**item.fields))


def instructions_for(benchmark: Benchmark, scale: Scale) -> Markup:
    return render_markdown(
        fill_bounds(benchmark.instructions, format_number(scale.min), format_number(scale.max))
    )
