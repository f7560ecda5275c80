"""Forms of the rate blueprint whose fields are fixed (the questionnaire's
questions come from the study file and are read in ``collect/questionnaire.py``)."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import PasswordField
from wtforms.validators import EqualTo, InputRequired, Length

from ...models import MIN_PASSWORD_LENGTH

__all__ = ["PasswordForm"]

_TOO_SHORT = f"Please choose a password of at least {MIN_PASSWORD_LENGTH} characters."


class PasswordForm(FlaskForm):
    """A rater's password, so they can log in with their rater code.

    ``current`` is asked for (by the view) when the rater has a password
    already: a browser left logged in must not be enough to change it.
    """

    current = PasswordField("Your current password")
    password = PasswordField(
        f"Password (at least {MIN_PASSWORD_LENGTH} characters)",
        validators=[InputRequired(_TOO_SHORT), Length(min=MIN_PASSWORD_LENGTH, message=_TOO_SHORT)],
    )
    confirm = PasswordField(
        "The same password again",
        validators=[
            InputRequired("The two passwords differ; please type the same password twice."),
            EqualTo("password", "The two passwords differ; please type the same password twice."),
            Length(min=MIN_PASSWORD_LENGTH, message=_TOO_SHORT),
        ],
    )

    @property
    def error(self) -> str | None:
        """The one message shown: the password's own problem first."""
        for field in (self.current, self.password, self.confirm):
            if field.errors:
                return field.errors[0]
        return None
