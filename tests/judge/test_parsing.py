"""Reading a score out of a judge's reply, and refusing replies without one."""

from __future__ import annotations

import pytest

from annotator.judge.parsing import ReplyError, parse_reply


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("4", "4"),
        ("4.5", "4.5"),
        ("  3.25\n", "3.25"),
        ('"3"', "3"),
        ("\u201c2.5\u201d", "2.5"),
        ("4.", "4"),
        ("**4.2**", "4.2"),
        (".5", ".5"),
        ("-1", "-1"),  # read; the scale's bounds refuse it when stored
        ("7/10", "7"),
        ("7 out of 10", "7"),
        # JSON, as the paper's MT-Bench and SummEval prompts ask for it.
        ('{"score": 3.5, "criteria_scores": {"helpfulness": 4, "depth": 2}}', "3.5"),
        ('{"relevance": 4, "coherence": 3, "fluency": 5, "consistency": 4, "overall": 4.1}', "4.1"),
        ('```json\n{"score": "2.75"}\n```', "2.75"),
        ('{"Score": 3}', "3"),
        # Tagged answers.
        ("Score: 4", "4"),
        ("After weighing everything, my rating is 3.5.", "3.5"),
        ("Final score = 62.5", "62.5"),
        ("<score>88</score>", "88"),
        ("Rating: [[8]]", "8"),
        ("[[8.5]]", "8.5"),
        # Reasoning models' thoughts are not the answer.
        ("<think>Maybe 2, maybe 3.</think>\n4", "4"),
        ("The sentences mean the same thing. Score: 5", "5"),
        ("It is mostly true. 3.5", "3.5"),
    ],
)
def test_scores_are_read(reply, score):
    assert parse_reply(reply) == score


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (None, "the reply is empty"),
        ("", "the reply is empty"),
        ("   ", "the reply is empty"),
        ("I cannot rate this.", "the reply holds no number"),
        ("Somewhere between 2 and 4.", "several numbers (2, 4)"),
        ("Score: 3. Actually, score: 4.", "several scores (3, 4)"),
        ('{"relevance": 4, "coherence": 3}', "several numbers"),
        ("<think>4</think>", "the reply holds no number"),
    ],
)
def test_replies_without_a_clear_score_are_refused(reply, problem):
    with pytest.raises(ReplyError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        parse_reply(reply)


def test_the_expected_score_weights_the_score_tokens():
    import math

    from annotator.judge.parsing import expected_score

    top = [(" 2", math.log(0.5)), ("3", math.log(0.25)), ("7", math.log(0.2)), ("x", -1.0)]
    # 7 is outside 0-5; 2 and 3 renormalised: (2 * 0.5 + 3 * 0.25) / 0.75.
    assert expected_score(top, low=0, high=5) == pytest.approx(7 / 3)
    assert expected_score(top, low=0, high=10) == pytest.approx((1 + 0.75 + 1.4) / 0.95)
    assert expected_score(top, low=0, high=100) is None
    assert expected_score(top, low=0, high=2.5) is None
    assert expected_score([("x", -0.1)], low=0, high=5) is None
