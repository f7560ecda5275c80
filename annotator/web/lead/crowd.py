"""The lead's view of a crowd study's waves: who is due for the next wave,
overdue or finished, and the platform ids to allow into the next wave."""

from __future__ import annotations

from dataclasses import dataclass

from flask import make_response
from flask_login import current_user

from ...collect import crowd, waves
from ...db import get_session
from ...models import Study
from ..auth.access import lead_required
from . import bp
from .common import get_study_or_404

__all__ = ["crowd_waves"]


@dataclass
class Waves:
    rows: list[waves.WaveRow]
    eligible: list[str]
    # Counts per status, in WaveStatus order, zeros left out.
    counts: dict[str, int]


def crowd_waves(study: Study) -> Waves | None:
    """The raters page's wave list (a template global); ``None`` without ``[crowd]``."""
    if not current_user.is_authenticated or not current_user.is_lead:
        return None
    if crowd.study_crowd(study) is None:
        return None
    rows = waves.wave_rows(get_session(), study)
    counts = {status.value: 0 for status in waves.WaveStatus}
    for row in rows:
        counts[row.status.value] += 1
    return Waves(
        rows=rows,
        eligible=[row.user.platform_id for row in rows if row.eligible],
        counts={status: n for status, n in counts.items() if n},
    )


@bp.record_once
def _register(state) -> None:
    state.app.add_template_global(crowd_waves, "crowd_waves")


@bp.route("/studies/<slug>/raters/eligible.txt")
@lead_required
def eligible_download(slug: str):
    """The platform ids whose next block is open now, one per line (the next allowlist)."""
    study = get_study_or_404(slug, owner=True)
    ids = waves.eligible_ids(get_session(), study)
    response = make_response("".join(f"{pid}\n" for pid in ids))
    response.headers["Content-Type"] = "text/plain; charset=utf-8"
    response.headers["Content-Disposition"] = f'attachment; filename="{slug}-eligible.txt"'
    response.headers["Cache-Control"] = "no-store"
    return response
