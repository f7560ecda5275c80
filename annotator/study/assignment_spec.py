"""The study file's ``[assignment]`` table: who rates which items.

``design = "crossed"`` (the default) is the seed protocol: every rater rates
every item on every scale. ``design = "overlap"`` deals each item to
``raters_per_item`` raters per scale (see :mod:`annotator.collect.dealing`),
plus ``anchor_items`` items that every rater rates on every scale, so that
ICC has a complete block.

Kept in the stored study file (``Study.source_toml``) and read back with
:func:`annotator.study.studyfile.assignment_settings`, so it needs no column of its own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Annotated, Literal

from pydantic import Field, model_validator

from .strict import Strict

__all__ = ["AssignmentSpec", "anchor_item_ids"]


class AssignmentSpec(Strict):
    design: Literal["crossed", "overlap"] = "crossed"
    # k: completed ratings each (non-anchor) item gets on each scale.
    raters_per_item: Annotated[int, Field(ge=2)] | None = None
    # Items every rater rates on every scale: a count (a seeded draw, see
    # annotator.collect.dealing.anchor_ids) or a list of item ids.
    anchor_items: Annotated[int, Field(ge=0)] | list[Annotated[str, Field(min_length=1)]] = 0
    # The most items of the pool a rater is dealt per block (anchors come on top).
    items_per_rater: Annotated[int, Field(ge=1)] | None = None
    # A rater who leaves a block unfinished (no rating), or does not start an
    # open block, for this many days has left: their shares go back.
    abandon_after_days: Annotated[float, Field(gt=0)] = 3.0

    @model_validator(mode="after")
    def _overlap_keys(self) -> AssignmentSpec:
        overlap_only = ("raters_per_item", "items_per_rater")
        if self.design == "crossed":
            given = [key for key in overlap_only if getattr(self, key) is not None]
            if self.anchor_items:
                given.append("anchor_items")
            if given:
                raise ValueError(
                    f'{", ".join(given)}: only for design = "overlap" '
                    "(a crossed study has every rater rate every item)"
                )
            return self
        if self.raters_per_item is None:
            raise ValueError(
                'raters_per_item: required for design = "overlap" (k, at least 2, '
                "so that every item has a pair of ratings)"
            )
        if isinstance(self.anchor_items, list) and len(set(self.anchor_items)) != len(
            self.anchor_items
        ):
            raise ValueError("anchor_items: an item id appears twice")
        return self


def anchor_item_ids(spec: AssignmentSpec, slug: str, item_ids: Iterable[str]) -> set[str]:
    """The anchor items among a study's regular ``item_ids`` (the items' own ids).

    A list in the study file names them. A count ``n`` takes the ``n`` items
    whose SHA-256 of ``"<study slug>/<item id>"`` sorts first: a seeded draw
    that depends only on the study and the item ids, so the dealing, the
    exports and the analysis find the same anchors, and anyone can recompute
    them from an export. Import every item before raters start: an item
    imported later may enter the draw of a count.
    """
    ids = list(item_ids)
    if spec.design != "overlap":
        return set()
    if isinstance(spec.anchor_items, list):
        return set(spec.anchor_items) & set(ids)
    ranked = sorted(ids, key=lambda item: hashlib.sha256(f"{slug}/{item}".encode()).hexdigest())
    return set(ranked[: spec.anchor_items])
