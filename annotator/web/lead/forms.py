"""Forms of the lead blueprint."""

from __future__ import annotations

import re

from flask_wtf import FlaskForm
from wtforms import FloatField, IntegerField, SelectField, SelectMultipleField, StringField
from wtforms.validators import InputRequired, Length, NumberRange, Optional, ValidationError
from wtforms.widgets import CheckboxInput, ListWidget

__all__ = ["InviteForm", "JudgeRunForm", "MAX_INVITES_AT_ONCE", "MAX_JUDGE_RUNS"]

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


class AsciiFloatField(FloatField):
    """A ``FloatField`` of a plain decimal number (``0.7``, ``1``, ``.5``).

    ``float()`` also reads "nan", "inf", "1e3" and other scripts' digits; NaN
    would pass any range check (every comparison with it is false).
    """

    def process_formdata(self, valuelist):
        if valuelist and valuelist[0] and not _PLAIN_DECIMAL.fullmatch(valuelist[0].strip()):
            self.data = None
            raise ValidationError(
                f"{self.label.text}: write a number such as 0.7 with the digits 0-9."
            )
        super().process_formdata(valuelist)


_PLAIN_DECIMAL = re.compile(r"[0-9]+(\.[0-9]*)?|\.[0-9]+")


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


# Runs of one judge per score from the web (the command line takes any number).
MAX_JUDGE_RUNS = 20
# "Only the first N items": more than any study holds, less than a database integer.
MAX_JUDGE_ITEMS = 1_000_000


class JudgeRunForm(FlaskForm):
    """A judge run from the study page; the view fills the endpoint and scale choices.

    Every message names its field, as the page shows them together above the form.
    """

    endpoint = SelectField(
        "Endpoint",
        # A name not offered is refused by the view (400) before validation.
        validate_choice=False,
        validators=[InputRequired("Endpoint: choose one of the server's endpoints.")],
    )
    model = StringField(
        "Model",
        validators=[
            InputRequired("Model: give the model name the endpoint knows."),
            Length(max=200, message="Model: at most 200 characters."),
        ],
    )
    scales = SelectMultipleField(
        "Scales",
        widget=ListWidget(prefix_label=False),
        option_widget=CheckboxInput(),
        validators=[InputRequired("Scales: choose at least one scale.")],
    )
    runs = AsciiIntegerField(
        "Runs",
        default=1,
        validators=[
            InputRequired("Runs: give a number of runs."),
            NumberRange(1, MAX_JUDGE_RUNS, f"Runs: from 1 to {MAX_JUDGE_RUNS}."),
        ],
    )
    temperature = AsciiFloatField(
        "Temperature",
        validators=[
            InputRequired("Temperature: give a temperature from 0 to 2."),
            NumberRange(0, 2, "Temperature: from 0 to 2."),
        ],
    )
    limit = AsciiIntegerField(
        "Only the first N items",
        validators=[
            Optional(),
            # Bounded: a number past the database's integers (10**30) failed the job.
            NumberRange(
                1, MAX_JUDGE_ITEMS, f"Only the first N items: from 1 to {MAX_JUDGE_ITEMS:,}."
            ),
        ],
    )

    def problems(self) -> list[str]:
        """Every field's messages, each naming its field."""
        out = []
        for field in self:
            for error in field.errors:
                text = str(error)
                label = field.label.text
                out.append(text if text.startswith(f"{label}:") else f"{label}: {text}")
        return out
