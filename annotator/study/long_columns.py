"""The long export's columns, in order.

A module of its own, importing nothing, because the study file's check of
demographic keys needs the list too (a question may not take a column's name)
and must not import the export's pandas and SQL.
"""

__all__ = ["LONG_COLUMNS", "long_columns"]

LONG_COLUMNS = [
    "kind",
    "study",
    "item_id",
    "benchmark",
    "scale",
    "rater",
    "model",
    "run",
    "temperature",
    "prompt_hash",
    "score",
    "block_position",
    "presentation_position",
    "served_at",
    "submitted_at",
    "duration_seconds",
    "is_repeat",
    "is_attention_check",
    "attention_passed",
    "revisions",
    "source",
    "study_version",
    # The crowd platform's study and session the block was done under
    # (Prolific STUDY_ID and SESSION_ID, MTurk hitId and assignmentId).
    "platform_study_id",
    "platform_session_id",
]


def long_columns(criteria: bool) -> list[str]:
    """The columns of a study's long export: a rubric study's (``criteria``) has
    the criterion after the scale; any other study's are :data:`LONG_COLUMNS`,
    as before criteria existed."""
    if not criteria:
        return list(LONG_COLUMNS)
    at = LONG_COLUMNS.index("scale") + 1
    return [*LONG_COLUMNS[:at], "criterion", *LONG_COLUMNS[at:]]
