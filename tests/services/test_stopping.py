"""Stop when decided: a study whose data decide the alt-test stops serving blocks;
one that cannot decide yet goes on."""

from __future__ import annotations

import pytest
from sqlmodel import select

from annotator.collect.block_states import BlockStatus, BlockUnavailable, block_states, start_block
from annotator.models import Study, User
from annotator.services.stopping import check_stop

STOP = '[validation]\nstop_when_decided = true\njudges = ["gpt"]\n'
ONE_SCALE = (("0-5", 0.0, 5.0, 0.1),)


def _study(make_study, *, llm_noise: float, noise: float = 0.05, unfinished: int = 0, **more):
    spec = {
        "n_items": 80,
        "n_raters": 4,
        "scales": ONE_SCALE,
        "models": ("gpt",),
        "extra_temperatures": (),
        "runs": 1,
        "model_sd": 0.0,
        "llm_noise_sd": llm_noise,
        "noise_sd": noise,
        "repeats": 0,
        "attention_items": 0,
        "unfinished_raters": unfinished,
        "study_toml_extra": STOP,
    }
    return make_study(**{**spec, **more})


def _last_rater(session, study) -> User:
    return session.exec(
        select(User).where(User.study_id == study.id, User.role == "rater").order_by(User.id)
    ).all()[-1]


def test_an_exact_judge_passes_and_new_blocks_stop(session, make_study):
    # The judge gives the true scores, the raters are noisy: the LLM wins most items.
    # 80 items: the rater still to come counts in the family (m = 4, threshold 80),
    # and an item enters the check with its first three ratings.
    study = _study(make_study, llm_noise=0.0, noise=0.15, unfinished=1)
    waiting = _last_rater(session, study)
    assert block_states(session, waiting)[-1].status == BlockStatus.AVAILABLE
    check = check_stop(session, study)
    session.commit()
    assert check.stopped_now and [v.outcome for v in check.verdicts] == ["passes"]
    stored = session.get(Study, study.id)
    assert stored.stopped_at is not None
    assert stored.stop_reason.startswith("scale 0-5, judge gpt: passes; ")
    state = block_states(session, waiting)[-1]
    assert state.status == BlockStatus.CLOSED and state.over
    with pytest.raises(BlockUnavailable, match="This study is complete"):
        start_block(session, waiting, state)
    # A later check keeps the stop as it was.
    again = check_stop(session, study)
    assert again.stopped and not again.stopped_now and again.verdicts == []


def test_a_judge_that_cannot_pass_within_the_budget_stops_the_study(session, make_study):
    # A poor judge and every rater done with every item: no item is left to change it.
    study = _study(make_study, llm_noise=0.3)
    check = check_stop(session, study)
    assert [v.outcome for v in check.verdicts] == ["cannot pass"]
    assert "at most 0 of 4 raters can still be secured within the 0 items left" in check.summary()
    assert "futility" not in check.summary()  # impossible, whatever comes
    assert check.stopped_now


def test_an_undecided_study_goes_on(session, make_study):
    # The same poor judge, but two raters have not rated yet: they could still be
    # secured over 40 items each, so passing is still possible.
    study = _study(make_study, llm_noise=0.3, unfinished=2)
    check = check_stop(session, study)
    session.commit()
    assert [v.outcome for v in check.verdicts] == ["undecided"]
    assert not check.stopped and session.get(Study, study.id).stopped_at is None
    assert block_states(session, _last_rater(session, study))[-1].status == BlockStatus.AVAILABLE


def test_a_judge_without_scores_is_never_decided(session, make_study):
    study = _study(
        make_study,
        llm_noise=0.0,
        noise=0.15,
        study_toml_extra=STOP.replace('["gpt"]', '["gpt", "absent"]'),
    )
    check = check_stop(session, study)
    assert [v.outcome for v in check.verdicts] == ["passes", "undecided"]
    assert not check.stopped


def test_without_stop_when_decided_nothing_is_checked(session, make_study):
    study = _study(make_study, llm_noise=0.0, noise=0.15, study_toml_extra="")
    check = check_stop(session, study)
    assert not check.enabled and check.verdicts == []
    assert "stop_when_decided is not set" in check.summary()


def test_the_command_checks_reopens_and_says_why(runner, session, make_study):
    study = _study(make_study, llm_noise=0.0, noise=0.15)
    result = runner.invoke(args=["validation", "check", study.slug])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("decided: the study stops serving new blocks\n")
    result = runner.invoke(args=["validation", "check", study.slug])
    assert "the study had stopped already" in result.output
    result = runner.invoke(args=["validation", "check", study.slug, "--reopen"])
    assert "decided: the study stops serving new blocks" in result.output
    result = runner.invoke(args=["validation", "check", "nope"])
    assert result.exit_code != 0 and "no study with slug 'nope'" in result.output


def test_a_rubric_study_is_decided_criterion_by_criterion(session, make_study):
    # Two criteria on one scale: each is its own test, never one test on both
    # criteria's ratings mixed together (the check gave one verdict for both before).
    criteria = ("coherence", "fluency")
    study = _study(make_study, llm_noise=0.0, noise=0.15, unfinished=1, criteria=criteria)
    check = check_stop(session, study)
    assert [(v.scale, v.criterion, v.judge) for v in check.verdicts] == [
        ("0-5", "coherence", "gpt"),
        ("0-5", "fluency", "gpt"),
    ]
    assert all(f"criterion {v.criterion}," in v.line() for v in check.verdicts)
