"""The studies the accessibility sweep and benchmarks/rating_keyboard.py rate: a
fine-scaled study with a test-retest share, a one-scale study that ends quickly and a
crowd study with room for one participant."""

from __future__ import annotations

from tests.data.studies import FINE_SCALES_TOML, STS_B_TOML, study_toml

A11Y_STUDY = study_toml(
    name="Accessible study",
    slug="a11y",
    scales=FINE_SCALES_TOML,
    benchmarks=STS_B_TOML,
    consent='"You agree to rate short pairs of sentences."',
    extra="[test_retest]\nshare = 0.07\nmin_distance = 3\n",
)
PAIRS = [
    ("A man is playing a guitar on a street corner.", "A man plays an instrument outside."),
    ("Two dogs are running through a snowy field.", "The dogs play in the snow together."),
    ("A woman is slicing an onion in the kitchen.", "Someone is cutting a vegetable."),
    ("The train left the station ten minutes late.", "The train was delayed by ten minutes."),
    ("A child is reading a book under a tree.", "A kid sits in the shade with a story book."),
    ("The committee approved the budget on Monday.", "On Monday the budget was rejected."),
    ("A cyclist rides along a narrow mountain road.", "A person is riding a bike uphill."),
]
A11Y_ITEMS = [
    {
        "item_id": f"p{i}",
        "benchmark": "sts-b",
        "sentence1": PAIRS[i % len(PAIRS)][0],
        "sentence2": PAIRS[i % len(PAIRS)][1],
    }
    for i in range(14)
]
# One scale, no gap, no questionnaire: a rater reaches the thanks page quickly.
SOLO_SCALE = '\n[[scales]]\nname = "0-5"\nmin = 0\nmax = 5\nstep = 0.5\n'
SOLO_STUDY = study_toml(
    name="Short study",
    slug="solo",
    scales=SOLO_SCALE,
    benchmarks=STS_B_TOML,
    gap_days=0,
    demographics="",
    extra='completion_code = "A11Y-2026"\ndemographics = []\n',
)
# Entry by a crowd platform's URL, room for one participant.
CROWD_STUDY = study_toml(
    name="Crowd study",
    slug="crowd",
    scales=SOLO_SCALE,
    benchmarks=STS_B_TOML,
    extra='[crowd]\nplatform = "prolific"\nmax_raters = 1\n[crowd.completion_codes]\n'
    'waves = ["WAVE1"]\nscreen_out = "SCREENED"\n',
)
