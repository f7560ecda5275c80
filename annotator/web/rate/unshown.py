"""Going on past an item that cannot be shown (see annotator.collect.unshown_items).

The item page of such an item offers a plain form (CSRF, no JavaScript
needed) that posts here. Whether the item still fails to render is checked
here, on the server: an item that renders cannot be passed over, whatever
the form says.
"""

from __future__ import annotations

from flask import abort, current_app, flash, redirect, url_for

from ...collect.block_states import BlockStatus, BlockUnavailable
from ...collect.item_pages import item_page
from ...collect.rated_places import ratings_by_position
from ...collect.unshown_items import pass_over
from ...db import get_session
from ...services.fresh import queue_dashboards_after
from ..auth.access import rater_required
from ..display import render_item_text
from .blueprint import bp
from .views import _own_block, _study, questionnaire_first


@bp.route("/rate/blocks/<id:block_id>/items/<id:position>/pass-over", methods=["POST"])
@rater_required
@questionnaire_first
def pass_over_item(block_id: int, position: int):
    session = get_session()
    state = _own_block(block_id, rated_places=True)
    if state.status == BlockStatus.DONE:
        flash("This block is complete; nothing was changed.", "error")
        return redirect(url_for("rate.block_done", block_id=block_id))
    if state.status != BlockStatus.IN_PROGRESS:
        flash("This block has not been started; nothing was changed.", "error")
        return redirect(url_for("rate.dashboard"))
    block = state.block
    if not 1 <= position <= len(block.item_order):
        abort(404)
    rated = ratings_by_position(session, block, state.rated_places)
    page = item_page(session, block, position, rated, break_every=None)
    try:
        render_item_text(page.benchmark, page.item)
    except Exception as exc:  # a study's template may raise anything on some fields
        error = exc
    else:
        flash("This item can be shown, so it cannot be passed over; nothing was changed.", "error")
        return redirect(url_for("rate.item", block_id=block_id, position=position))
    try:
        passed = pass_over(session, page, rated, error)
    except BlockUnavailable as exc:
        session.rollback()
        flash(str(exc), "error")
        return redirect(url_for("rate.block", block_id=block_id))
    session.commit()
    if passed.block_completed:
        queue_dashboards_after(current_app._get_current_object(), _study().id, "a block")
        return redirect(url_for("rate.block_done", block_id=block_id))
    return redirect(url_for("rate.item", block_id=block_id, position=passed.following))
