"""Forms of the lead blueprint."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import IntegerField
from wtforms.validators import InputRequired, NumberRange, ValidationError

__all__ = ["InviteForm", "MAX_INVITES_AT_ONCE"]

MAX_INVITES_AT_ONCE = 500
_DIGITS_ONLY = "Write the number with the digits 0-9."


class AsciiIntegerField(IntegerField):
    """An ``IntegerField`` of the digits 0-9 only.

    ``int()`` also reads other scripts' digits ("١٠" is 10, "３" is 3); a
    count typed that way is refused rather than read.
    """

    def process_formdata(self, valuelist):
        if valuelist and valuelist[0] and not _ascii_integer(valuelist[0]):
            self.data = None
            raise ValidationError(_DIGITS_ONLY)
        super().process_formdata(valuelist)


def _ascii_integer(text: str) -> bool:
    text = text.strip().removeprefix("-").removeprefix("+")
    return text.isascii() and text.isdigit()


class InviteForm(FlaskForm):
    # The validators also give the field's min, max and required attributes.
    count = AsciiIntegerField(
        "Number of new links",
        default=1,
        validators=[InputRequired(), NumberRange(min=1, max=MAX_INVITES_AT_ONCE)],
    )

    def count_problem(self) -> str:
        problem = f"Give a number of invites from 1 to {MAX_INVITES_AT_ONCE}."
        if _DIGITS_ONLY in self.count.errors:
            problem += " " + _DIGITS_ONLY
        return problem
