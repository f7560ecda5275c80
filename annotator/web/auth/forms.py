"""Forms of the auth blueprint."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import PasswordField, StringField
from wtforms.validators import InputRequired, Length

__all__ = ["LoginForm"]


class LoginForm(FlaskForm):
    # The longest email a User row holds; rater codes are shorter.
    username = StringField(
        "Email or rater code",
        validators=[InputRequired(), Length(max=320)],
        filters=[lambda text: text.strip() if text else text],
    )
    password = PasswordField("Password", validators=[InputRequired()])
