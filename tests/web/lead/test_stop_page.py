"""The lead's study page says whether the study stops when decided, and when and why it did."""

from __future__ import annotations

from annotator.services.stopping import check_stop

STOP = '[validation]\nstop_when_decided = true\njudges = ["gpt"]\n'
SPEC = {
    "slug": "stopper",
    "n_items": 80,
    "n_raters": 4,
    "scales": (("0-5", 0.0, 5.0, 0.1),),
    "models": ("gpt",),
    "extra_temperatures": (),
    "runs": 1,
    "model_sd": 0.0,
    "llm_noise_sd": 0.0,
    "noise_sd": 0.15,
    "repeats": 0,
    "attention_items": 0,
    "study_toml_extra": STOP,
}


def test_the_page_says_when_and_why_the_study_stopped(lead_client, session, make_study):
    study = make_study(**SPEC)
    before = lead_client.get("/lead/studies/stopper").get_data(as_text=True)
    assert "Stop when decided is on for judge gpt" in before
    assert "Study complete" not in before
    check_stop(session, study)
    session.commit()
    page = lead_client.get("/lead/studies/stopper").get_data(as_text=True)
    assert "Study complete: stopped when decided" in page
    # An item enters the check with its first three ratings: the fourth rater, always
    # last, is never tested (and counts against the judge in the winning rate).
    assert "<li>scale 0-5, judge gpt: passes; 3 of 4 raters secured" in page
    assert "annotator validation check stopper --reopen" in page


def test_a_study_without_the_stop_says_nothing_of_it(lead_client, make_study):
    make_study(**{**SPEC, "study_toml_extra": ""})
    page = lead_client.get("/lead/studies/stopper").get_data(as_text=True)
    assert "Stop when decided" not in page and "Study complete" not in page
