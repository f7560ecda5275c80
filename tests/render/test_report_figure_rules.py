"""Which of the report's figures are drawn: not one repeating a table that shows all
its numbers, nor a pooled panel repeating the only benchmark's."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from annotator.render.report.figures import missing, pooled_repeats


def _points(benchmark: str, icc: float) -> list[dict]:
    return [
        {
            "benchmark": benchmark,
            "scale": "1-5",
            "model": model,
            "icc_human_llm": icc + i / 10,
            "nmae": 0.1 + i / 20,
            "pearson_r": 0.8,
        }
        for i, model in enumerate(("ensemble", "gpt"))
    ]


def test_the_pooled_panel_is_left_out_only_when_it_repeats_the_one_benchmark():
    same = pd.DataFrame(_points("summeval", 0.5) + _points("(all)", 0.5))
    assert pooled_repeats(same) == "summeval"
    # Items outside the benchmark make the pooled points differ: both are drawn.
    other = pd.DataFrame(_points("summeval", 0.5) + _points("(all)", 0.6))
    assert pooled_repeats(other) is None
    two = pd.DataFrame(_points("a", 0.5) + _points("b", 0.5) + _points("(all)", 0.5))
    assert pooled_repeats(two) is None
    assert pooled_repeats(pd.DataFrame(_points("summeval", 0.5))) is None


def _items(n_items: int, worst: int) -> SimpleNamespace:
    items = pd.DataFrame({"scale": "1-5", "item": [f"i{k}" for k in range(n_items)], "nmae": 0.1})
    return SimpleNamespace(items=items, worst_items=items.head(worst))


def test_the_per_item_figure_is_left_to_a_table_listing_every_item():
    assert missing("items", _items(8, 8)) == (
        "the table of the worst items lists every item, worst first"
    )
    assert missing("items", _items(40, 10)) is None
    empty = _items(0, 0)
    assert missing("items", empty) == "no item has both human and LLM scores"
