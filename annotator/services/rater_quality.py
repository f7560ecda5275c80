"""The raters page's quality tables of a stored study, kept while its data is unchanged."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..analysis.rater_quality import RaterQualityTable, rater_quality_table
from ..data.frames import data_version, study_frames
from ..data.selection import describe_where, parse_where, select_frames
from .cache import VersionedCache

__all__ = ["cached_rater_quality", "clear_rater_quality_cache", "study_rater_quality"]

# The tables are small: a few per process.
_TABLES = VersionedCache(8)


def study_rater_quality(
    session: Any, study: Any, *, scale: str | None = None, where: Any = None
) -> RaterQualityTable:
    """:func:`~annotator.analysis.rater_quality.rater_quality_table` of a stored study,
    its raters chosen by ``where``.

    ``where``: ``--where`` clauses or the form's text
    (:func:`annotator.data.selection.parse_where`); ``ValueError`` for an unknown key,
    value or scale.
    """
    chosen = parse_where(where)
    frames = select_frames(study_frames(session, study), chosen, questions=study.demographics)
    table = rater_quality_table(frames, scale=scale)
    return replace(table, where=describe_where(chosen))


def cached_rater_quality(session: Any, study: Any, *, where: Any = None) -> RaterQualityTable:
    """:func:`study_rater_quality`, reused while the study's data is unchanged.

    The raters page would otherwise read the whole study on every view (3-5 s on
    5,000 items x 12 raters x 3 scales, ``benchmarks/rater_quality.py``): one
    :class:`~annotator.services.cache.VersionedCache` per process, keyed on the
    database, the study and the raters chosen.
    """
    chosen = parse_where(where)
    database = session.get_bind().url.render_as_string(hide_password=True)
    return _TABLES.get(
        (database, study.id, ("rater quality", tuple(chosen.items()))),
        lambda: data_version(session, study),
        lambda: study_rater_quality(session, study, where=chosen),
    )


def clear_rater_quality_cache() -> None:
    """Forget this process's kept tables (tests; after a schema reset)."""
    _TABLES.clear()
