"""Forms of the lead blueprint."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import IntegerField
from wtforms.validators import InputRequired, NumberRange

__all__ = ["InviteForm", "MAX_INVITES_AT_ONCE"]

MAX_INVITES_AT_ONCE = 500


class InviteForm(FlaskForm):
    # The validators also give the field's min, max and required attributes.
    count = IntegerField(
        "Number of new links",
        default=1,
        validators=[InputRequired(), NumberRange(min=1, max=MAX_INVITES_AT_ONCE)],
    )

    def count_problem(self) -> str:
        return f"Give a number of invites from 1 to {MAX_INVITES_AT_ONCE}."
