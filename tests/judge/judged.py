"""A study with judge scores and failures, made by `annotator judge` against
fake endpoints: shared by the CLI's and the lead page's tests of the failures."""

from __future__ import annotations

from tests.fake_openai import Reply, default_reply

# No digit in it (so no score), longer than a table cell, with a line break.
LONG_REPLY = (
    "I would rather not rate these two sentences: one is about leaving early,\n"
    "the other about arriving late, and similarity is a matter of taste here."
)

SHORT_REPLY = "no idea,\nsorry"


def judge_with_failures(runner, fake_endpoint) -> dict:
    """Judge the small study so that its failures are, oldest first:

    * model ``m``, scale 0-5, item s2: LONG_REPLY, then scored by a later run;
    * model ``m2``, scale 0-100, item s1: SHORT_REPLY, still without a score.
    """

    def judge(url, model, *options):
        args = ["judge", "small", "--model", model, "--base-url", url, "--attempts", "1"]
        result = runner.invoke(args=[*args, *options])
        assert result.exit_code == 0, result.output
        return result

    def s2_refused(request, n):
        if "He left early" in request["messages"][-1]["content"]:
            return Reply(content=LONG_REPLY)
        return default_reply(request, n)

    first = fake_endpoint(s2_refused)
    assert "1 failed" in judge(first.url, "m", "--scale", "0-5").output
    judge(
        fake_endpoint(lambda request, n: Reply(content=SHORT_REPLY)).url,
        "m2",
        "--scale",
        "0-100",
        "--limit",
        "1",
    )
    later = judge(fake_endpoint().url, "m", "--scale", "0-5")
    assert "3 already stored, 1 stored" in later.output
    return {"first": first}
