"""Reading the score out of a judge's reply.

Judges answer in many shapes even when told to give a single number: the
number alone, JSON (the paper's MT-Bench and SummEval prompts ask for it),
a tagged answer (``Score: 4.5``, ``<score>4.5</score>``, ``[[4.5]]``), or
``4/5``. The reply is read in that order of trust; a reply with several
numbers and no sign of which one is the score is refused rather than guessed.
The number comes back as text, so that the importers' score check
(:func:`annotator.collect.scores.parse_score`) decides the bounds.
"""

from __future__ import annotations

import json
import re

__all__ = [
    "MAX_LOGPROB_POINTS",
    "ReplyError",
    "expected_score",
    "parse_criteria_reply",
    "parse_reply",
]

# Scales of at most this many whole-number points (0-5, 0-10) get an expected
# score from log-probabilities: there every score is one token, so the
# alternatives for the reply's first token are the other scores. On 0-100 a
# tokenizer may split "85" into "8" and "5", and the first token's
# alternatives would be tens, not scores.
MAX_LOGPROB_POINTS = 11

_NUMBER = r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)"
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")
_TAGGED = [
    re.compile(rf"<score>\s*({_NUMBER})\s*</score>", re.IGNORECASE),
    re.compile(rf"\[\[\s*({_NUMBER})\s*\]\]"),
    re.compile(
        rf"\b(?:final\s+)?(?:score|rating|overall)\b\s*(?:is|=|:)?\s*\**\s*({_NUMBER})",
        re.IGNORECASE,
    ),
]
_OUT_OF = re.compile(rf"^({_NUMBER})\s*(?:/|out\s+of)\s*{_NUMBER}$", re.IGNORECASE)
_ALONE = re.compile(rf"^[\"'“”*\s]*({_NUMBER})[\"'“”*\s.]*$")
# Keys of a JSON answer that hold the score, in order of preference (the
# paper's SummEval prompt calls it "overall").
_KEYS = ("score", "overall", "rating", "final_score")


class ReplyError(ValueError):
    """A reply without a score that can be read."""


def _from_json(text: str) -> str | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    lowered = {str(k).lower(): v for k, v in data.items()}
    for key in _KEYS:
        number = _number_text(lowered.get(key))
        if number is not None:
            return number
    return None


def parse_reply(reply: str | None) -> str:
    """The score in ``reply`` as the text of a number, or :class:`ReplyError`.

    Examples
    --------
    >>> parse_reply("4.5")
    '4.5'
    >>> parse_reply('{"score": 3, "criteria_scores": {"depth": 2}}')
    '3'
    >>> parse_reply("Score: 7/10")
    '7'
    """
    if reply is None or not reply.strip():
        raise ReplyError("the reply is empty")
    text = _FENCE.sub("", _THINK.sub("", reply).strip()).strip()
    alone = _ALONE.match(text)
    if alone:
        return alone.group(1)
    out_of = _OUT_OF.match(text.strip(" .*\"'"))
    if out_of:
        return out_of.group(1)
    found = _from_json(text)
    if found is not None:
        return found
    for pattern in _TAGGED:
        matches = {m.group(1) for m in pattern.finditer(text)}
        if len(matches) == 1:
            return matches.pop()
        if len(matches) > 1:
            raise ReplyError(f"the reply gives several scores ({', '.join(sorted(matches))})")
    numbers = re.findall(rf"(?<![\w.]){_NUMBER}", text)
    if len(numbers) == 1:
        return numbers[0]
    if not numbers:
        raise ReplyError("the reply holds no number")
    raise ReplyError(f"the reply holds several numbers ({', '.join(numbers[:5])}) and no score")


def _number_text(value) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    if isinstance(value, str) and re.fullmatch(_NUMBER, value.strip()):
        return value.strip()
    return None


def parse_criteria_reply(
    reply: str | None, criteria: tuple[str, ...]
) -> dict[str, str | ReplyError]:
    """Each criterion's score in a reply to the prompt of several criteria.

    The reply is a JSON object of scores by criterion name (names matched without
    regard to case or surrounding space); a criterion it lacks, or gives no number
    for, gets a :class:`ReplyError` of its own, so the others' scores still count.
    A reply without a JSON object is a ``ReplyError`` for every criterion.

    Examples
    --------
    >>> parse_criteria_reply('{"Fluency": 4, "coherence": "2.5"}', ("coherence", "fluency"))
    {'coherence': '2.5', 'fluency': '4'}
    """
    if reply is None or not reply.strip():
        error = ReplyError("the reply is empty")
        return dict.fromkeys(criteria, error)
    text = _FENCE.sub("", _THINK.sub("", reply).strip()).strip()
    start, end = text.find("{"), text.rfind("}")
    data = None
    if 0 <= start < end:
        try:
            data = json.loads(text[start : end + 1])
        except json.JSONDecodeError:
            data = None
    if not isinstance(data, dict):
        error = ReplyError("the reply holds no JSON object of scores by criterion")
        return dict.fromkeys(criteria, error)
    lowered = {str(k).strip().lower(): v for k, v in data.items()}
    out: dict[str, str | ReplyError] = {}
    for name in criteria:
        if name.strip().lower() not in lowered:
            out[name] = ReplyError(f"the reply gives no score for criterion {name!r}")
            continue
        value = lowered[name.strip().lower()]
        if isinstance(value, dict):
            # {"coherence": {"score": 4, "reason": ...}}: GER-Eval's structured replies.
            value = next((value[k] for k in _KEYS if k in value), None)
        number = _number_text(value)
        out[name] = (
            number
            if number is not None
            else ReplyError(f"criterion {name!r}: {value!r} is not a number")
        )
    return out


def expected_score(
    top_logprobs: list[tuple[str, float]], *, low: float, high: float
) -> float | None:
    r"""The probability-weighted mean of the scores among a token's top alternatives.

    .. math:: \hat s = \frac{\sum_i p_i s_i}{\sum_i p_i}

    over the alternatives whose text is a whole number ``s_i`` within
    ``[low, high]``, with ``p_i = exp(logprob_i)`` (G-Eval's weighted score:
    Liu et al. 2023, "G-Eval: NLG Evaluation using GPT-4 with Better Human
    Alignment", section 2.3). None when the scale has more than
    :data:`MAX_LOGPROB_POINTS` whole-number points or no alternative is a score.

    Parameters
    ----------
    top_logprobs : list of (str, float)
        The first reply token's top alternatives: token text and natural-log probability.
    low, high : float
        The scale's bounds.
    """
    import math

    if not (float(low).is_integer() and float(high).is_integer()):
        return None
    if high - low + 1 > MAX_LOGPROB_POINTS:
        return None
    weights: dict[int, float] = {}
    for token, logprob in top_logprobs:
        text = token.strip()
        if not text.isdigit():
            continue
        value = int(text)
        if low <= value <= high and math.isfinite(logprob):
            weights[value] = weights.get(value, 0.0) + math.exp(logprob)
    total = sum(weights.values())
    if total <= 0:
        return None
    return sum(value * weight for value, weight in weights.items()) / total
