"""The rater's item page: its response, with one score field per criterion in
a rubric study."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from flask import current_app, make_response, redirect, render_template, url_for
from flask_login import current_user
from markupsafe import Markup
from sqlmodel import Session

from ...collect.block_states import BlockState, count_blocks
from ...collect.item_pages import ItemPage, report_unshown_item
from ...collect.rubric import item_criteria, position_ratings
from ...collect.scores import format_number, scale_hint
from ...db import get_session
from ...study.criteria import criteria_for
from ..display import instructions_for, render_item_text
from ..markdown import render_markdown
from .current import current_criteria, current_study, is_htmx

__all__ = ["RubricField", "rubric_fields", "item_text", "item_response", "go"]


@dataclass(frozen=True)
class RubricField:
    """One criterion's score field on a rubric study's item page."""

    name: str
    definition: Markup
    # The field's id (criterion names may hold any character) and form name.
    field_id: str
    input_name: str
    value: str
    error: str | None


def rubric_fields(
    session: Session,
    page: ItemPage,
    *,
    values: Mapping[str, str] | None = None,
    errors: Mapping[str, str] | None = None,
) -> list[RubricField]:
    """The score fields of ``page``'s criteria, filled with what was typed
    (``values`` by form name) or else the stored scores; none without criteria."""
    study = current_study()
    if page.item.study_id == study.id:
        # Read once per request: a score post has read them for the posted item.
        criteria = criteria_for(current_criteria(study), page.benchmark.name)
    else:
        criteria = item_criteria(session, page.item.study_id, benchmark=page.benchmark.name)
    if not criteria:
        return []
    stored = position_ratings(session, page.block, page.position) if page.existing else {}
    fields = []
    for index, criterion in enumerate(criteria, start=1):
        name = f"score:{criterion.name}"
        if values is not None:
            value = values.get(name, "")
        else:
            rating = stored.get(criterion.name)
            value = format_number(rating.value) if rating is not None else ""
        fields.append(
            RubricField(
                name=criterion.name,
                definition=render_markdown(criterion.definition),
                field_id=f"score-{index}",
                input_name=name,
                value=value,
                error=(errors or {}).get(criterion.name),
            )
        )
    return fields


def item_text(page: ItemPage):
    """The item as its template renders it; ``None`` if the template fails: the rater then
    reads why, the lead is told (audit ``item-not-shown``), and ``unshown`` lets them on."""
    try:
        return render_item_text(page.benchmark, page.item)
    except Exception as exc:  # a study's template may raise anything on some fields
        current_app.logger.warning(
            "item %s of benchmark %s cannot be shown: %r",
            page.item.external_id,
            page.benchmark.name,
            exc,
        )
        session = get_session()
        if report_unshown_item(session, page, exc):
            session.commit()
        return None


def item_response(
    state: BlockState,
    page: ItemPage,
    *,
    error=None,
    value=None,
    status=200,
    values: Mapping[str, str] | None = None,
    errors: Mapping[str, str] | None = None,
):
    """The item page (the full page, or its fragment for htmx).

    ``error`` and ``value``: a refused score and what was typed; for a rubric
    study ``errors`` and ``values`` by criterion name.
    """
    block = state.block
    scale = state.scale
    if value is None and page.existing is not None:
        value = format_number(page.existing.value)
    position = page.position
    context = {
        "study": current_study(),
        "state": state,
        "blocks_total": state.blocks_total
        if state.blocks_total is not None
        else count_blocks(get_session(), current_user),
        "scale": scale,
        "benchmark": page.benchmark,
        "instructions": instructions_for(page.benchmark, scale),
        # Here rather than a Jinja filter over the order in the template: the
        # filter, run on every score post, cost a twentieth of its CPU.
        "has_repeats": any(entry["repeat"] for entry in block.item_order),
        "item_text": item_text(page),
        "position": position,
        "total": page.total,
        "rated": page.rated,
        "existing_value": format_number(page.existing.value) if page.existing else None,
        "revising": page.existing is not None,
        "frontier": page.frontier,
        "value": value or "",
        "error": error,
        "hint": scale_hint(scale),
        "break_due": page.break_due,
        "action": url_for("rate.item", block_id=block.id, position=position),
        # A place passed over (its item could not be shown) stays so, unrated.
        "passed_over": page.existing is None and page.passed_over,
        "frontier_url": url_for("rate.item", block_id=block.id, position=page.frontier)
        if page.frontier is not None
        else None,
        "previous_url": url_for("rate.item", block_id=block.id, position=position - 1)
        if position > 1
        else None,
        "min": format_number(scale.min),
        "max": format_number(scale.max),
        "step": format_number(scale.step),
    }
    # A rubric study's item: one score field per criterion (rubric_fields).
    context["criteria"] = rubric_fields(get_session(), page, values=values, errors=errors)
    template = "rate/_item.html" if is_htmx() else "rate/item.html"
    response = make_response(render_template(template, **context), status)
    response.headers["Vary"] = "HX-Request"
    response.headers["Cache-Control"] = "no-store"
    return response


def go(target: str):
    """Redirect, the htmx way (a full page load) or the plain way."""
    if is_htmx():
        response = make_response("", 200)
        response.headers["HX-Redirect"] = target
        return response
    return redirect(target)
