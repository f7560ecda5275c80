"""``annotator judge failures``: the replies that held no valid score, after the run."""

from __future__ import annotations

import json

from sqlmodel import select

from annotator.models import Item, JudgeFailure, LLMScore, Scale
from tests.judge.judged import LONG_REPLY, SHORT_REPLY, judge_with_failures


def _failures(runner, *args):
    result = runner.invoke(args=["judge", "failures", "small", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_json_lists_every_stored_failure_with_its_whole_reply(
    runner, small_study, fake_endpoint, db_session
):
    judge_with_failures(runner, fake_endpoint)
    listed = json.loads(_failures(runner, "--json"))
    stored = db_session.exec(
        select(JudgeFailure, Item.external_id, Scale.name)
        .join(Item, Item.id == JudgeFailure.item_id)
        .join(Scale, Scale.id == JudgeFailure.scale_id)
        .order_by(JudgeFailure.id)
    ).all()
    assert len(listed) == len(stored) == 2
    for row, (failure, item, scale) in zip(listed, stored, strict=True):
        assert (row["item"], row["scale"], row["model"]) == (item, scale, failure.model)
        assert (row["run"], row["temperature"]) == (failure.run, failure.temperature)
        assert row["prompt_hash"] == failure.prompt_hash and len(row["prompt_hash"]) == 64
        assert row["raw_reply"] == failure.raw_reply and row["error"] == failure.error
        assert row["created_at"].startswith(failure.created_at.strftime("%Y-%m-%dT%H:%M:%S"))
    first, second = listed
    # The whole reply, line break included, as the endpoint sent it.
    assert first["raw_reply"] == LONG_REPLY and second["raw_reply"] == SHORT_REPLY
    assert (first["item"], first["scale"], first["model"]) == ("s2", "0-5", "m")
    assert (second["item"], second["scale"], second["model"]) == ("s1", "0-100", "m2")
    # s2 got a score from the later run under the same run label and prompt; s1 did not.
    later = db_session.exec(
        select(LLMScore).join(Item).where(Item.external_id == "s2", LLMScore.model == "m")
    ).all()
    assert [(s.run, s.prompt_hash) for s in later] == [(first["run"], first["prompt_hash"])]
    assert first["scored_since"] is True and second["scored_since"] is False


def test_the_table_cuts_the_reply_to_one_line(runner, small_study, fake_endpoint):
    judge_with_failures(runner, fake_endpoint)
    output = _failures(runner)
    lines = output.splitlines()
    assert lines[0].split()[:4] == ["item", "scale", "model", "run"]
    s2 = next(line for line in lines if line.startswith("s2 "))
    # One line a failure: the reply cut short, its line breaks shown as \n.
    assert f"{LONG_REPLY[:20]}" in s2 and "…" in s2
    assert "the other about" not in output
    s1 = next(line for line in lines if line.startswith("s1 "))
    assert " m2 " in s1 and " open " in s1 and "no idea,\\nsorry |" in s1
    assert " scored " in s2 and "the reply holds no number" in s2
    assert lines[-1] == "2 failures, 1 still without a score."


def test_filters_by_model_scale_and_state(runner, small_study, fake_endpoint):
    judge_with_failures(runner, fake_endpoint)

    def items(*args):
        return [(r["item"], r["model"]) for r in json.loads(_failures(runner, "--json", *args))]

    assert items("--model", "m2") == [("s1", "m2")]
    assert items("--scale", "0-5") == [("s2", "m")]
    assert items("--open") == [("s1", "m2")]
    assert items("--model", "m", "--scale", "0-100") == []
    assert "No judge failures stored for small." in _failures(runner, "--model", "nobody")


def test_unknown_scale_and_study_say_what_exists(runner, small_study):
    result = runner.invoke(args=["judge", "failures", "small", "--scale", "1-7"])
    assert result.exit_code != 0
    assert "unknown scale '1-7' (the study has: 0-5, 0-100)" in result.output
    result = runner.invoke(args=["judge", "failures", "nope"])
    assert result.exit_code != 0 and "no study with slug 'nope'" in result.output


def test_judging_keeps_its_old_form_and_has_a_run_subcommand(runner, small_study, fake_endpoint):
    endpoint = fake_endpoint()
    old = ["judge", "small", "--model", "m", "--base-url", endpoint.url, "--limit", "1"]
    result = runner.invoke(args=old)
    assert result.exit_code == 0 and "2 stored" in result.output, result.output
    # Options before the study still reach the run command.
    reordered = ["judge", "--model", "m", "--base-url", endpoint.url, "--limit", "1", "small"]
    result = runner.invoke(args=reordered)
    assert result.exit_code == 0 and "2 already stored" in result.output, result.output
    result = runner.invoke(args=["judge", "run", *old[1:], "--runs", "2"])
    assert result.exit_code == 0 and "2 already stored, 2 stored" in result.output, result.output
    help_text = runner.invoke(args=["judge", "--help"]).output
    assert "failures" in help_text and "run" in help_text
