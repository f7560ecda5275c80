"""Driving an overlap study through the data functions the rate views call.

Shared by tests/collect/test_overlap.py and benchmarks/overlap_study.py:
raters join by invite, start each block, rate all or part of it; a rater
quits mid-block by withdrawing or by leaving it past the deadline.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path

from sqlmodel import Session, select

from annotator.collect.block_states import block_state, start_block
from annotator.collect.dealing import StudyFull
from annotator.collect.enrolment import enrol
from annotator.collect.scoring import submit_score
from annotator.data.importers import import_items
from annotator.models import Block, Rating, User
from annotator.study.raters import counted_rater, withdraw_rater
from annotator.study.studies import create_invites, create_study
from annotator.study.studyfile import parse_study_file
from tests.data.studies import study_toml


def overlap_toml(
    *,
    k: int = 3,
    anchors: int | str = 0,
    per_rater: int | None = None,
    slug: str = "ov",
    extra: str = "",
    **study,
) -> str:
    lines = [
        "[assignment]",
        'design = "overlap"',
        f"raters_per_item = {k}",
        f"anchor_items = {anchors}",
    ]
    if per_rater is not None:
        lines.append(f"items_per_rater = {per_rater}")
    return study_toml(slug=slug, gap_days=0, extra="\n".join(lines) + "\n" + extra, **study)


def make_overlap_study(session: Session, folder: Path, toml: str, n_items: int):
    path = folder / "items.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "item_id": f"i{i:04d}",
                    "benchmark": "sts-b",
                    "sentence1": f"a {i}",
                    "sentence2": f"b {i}",
                }
            )
            + "\n"
            for i in range(n_items)
        ),
        "utf-8",
    )
    study = create_study(session, parse_study_file(toml), source_toml=toml)
    import_items(session, study, path)
    session.commit()
    return study


def join(session: Session, study) -> User:
    invite = create_invites(session, study, 1)[0]
    session.flush()
    user = enrol(session, invite)
    session.commit()
    return user


def blocks(session: Session, user: User) -> list[Block]:
    return list(
        session.exec(select(Block).where(Block.rater_id == user.id).order_by(Block.position))
    )


def start(session: Session, user: User, block: Block) -> Block:
    state = block_state(session, user, block.id)
    started = start_block(session, user, state)
    session.commit()
    return started


def rate(session: Session, user: User, block: Block, count: int | None = None) -> None:
    """Rate the first ``count`` places of a started block (all by default)."""
    state = block_state(session, user, block.id)
    order = state.block.item_order
    for position in range(1, (len(order) if count is None else count) + 1):
        # An item's true score plus the rater's bias, so statistics have variance.
        item = order[position - 1]["item"]
        score = min(state.scale.max, state.scale.min + (item * 7 + user.id) % 5)
        submit_score(session, user, state.block, state.scale, position, f"{score:g}")
    session.commit()


def withdraw(session: Session, study, user: User) -> None:
    withdraw_rater(session, study, user, actor=None, via="test")
    session.commit()


def _first_ratings(session: Session, study) -> list[tuple[int, int, int]]:
    """(rater, scale, item) of every counted first rating of the study, checks left out."""
    return session.exec(
        select(Rating.rater_id, Rating.scale_id, Rating.item_id)
        .join(User, User.id == Rating.rater_id)
        .where(
            User.study_id == study.id,
            counted_rater(Rating.rater_id),
            Rating.is_attention_check.is_(False),
            Rating.is_repeat.is_(False),
        )
    ).all()


def counted_per_item(session: Session, study) -> dict[tuple[int, int], int]:
    """Counted ratings per (item, scale) of the study."""
    return Counter((item, scale) for _rater, scale, item in _first_ratings(session, study))


def loads(session: Session, study, anchors: set[int]) -> dict[tuple[int, int], int]:
    """Pool items per (counted rater, scale), from the ratings."""
    rows = _first_ratings(session, study)
    return Counter((r, s) for r, s, item in rows if item not in anchors)


def pair_overlaps(session: Session, study, anchors: set[int]) -> dict[int, list[int]]:
    """For each scale: the number of pool items each pair of counted raters shares."""
    raters_of: dict[tuple[int, int], set[int]] = defaultdict(set)
    everyone: dict[int, set[int]] = defaultdict(set)
    for rater, scale, item in _first_ratings(session, study):
        if item not in anchors:
            raters_of[(scale, item)].add(rater)
        everyone[scale].add(rater)
    shared: dict[int, Counter] = defaultdict(Counter)
    for (scale, _item), raters in raters_of.items():
        for pair in combinations(sorted(raters), 2):
            shared[scale][pair] += 1
    return {
        scale: [shared[scale][pair] for pair in combinations(sorted(raters), 2)]
        for scale, raters in everyone.items()
    }


def run_study(
    session: Session,
    study,
    *,
    raters: int,
    quitters: dict[int, int],
    clock=None,
    withdraw_quitters: bool = True,
    abandon_days: float = 3.0,
):
    """Raters join one after another and do all their blocks; rater ``i`` in
    ``quitters`` rates ``quitters[i]`` items of their first block and leaves
    (withdrawn, or the clock moved past the deadline). Newcomers keep coming
    until the study is full. Returns the raters who stayed."""
    stayed = []
    index = 0
    while True:
        try:
            user = join(session, study)
        except StudyFull:
            session.rollback()
            break
        first = start(session, user, blocks(session, user)[0])
        if index in quitters:
            rate(session, user, first, quitters[index])
            if withdraw_quitters:
                withdraw(session, study, user)
            else:
                clock.advance(days=abandon_days + 0.5)
        else:
            rate(session, user, first)
            for block in blocks(session, user)[1:]:
                rate(session, user, start(session, user, block))
            stayed.append(user)
        index += 1
        if index > 4 * raters:
            raise RuntimeError("the study never filled")
    return stayed


def simulate_deal(n: int, k: int, seats: int, *, greedy: bool, seed: int = 5) -> list[int]:
    """The dealing alone, no database: ``seats`` raters one after another on one
    scale, each taking the even split of the open places; with ``greedy`` as
    :func:`annotator.collect.dealing._pick` chooses, else the items that need
    every remaining seat first and the rest at random (the reference).
    Returns the number of items each pair of raters shares."""
    from annotator.collect.dealing import _pick

    rng = random.Random(seed)
    target = n * k * (k - 1) / (seats * (seats - 1))
    holders: dict[int, list[int]] = {item: [] for item in range(n)}
    for rater in range(seats):
        open_places = {item: k - len(holders[item]) for item in range(n)}
        seats_open = seats - rater
        load = -(-sum(open_places.values()) // seats_open)
        if greedy:
            chosen = _pick(
                rng, open_places, holders, load, seats_open=seats_open, pair_target=target
            )
        else:
            chosen = sorted(
                (i for i in open_places if open_places[i]),
                key=lambda i: (open_places[i] < seats_open, rng.random()),
            )[:load]
        for item in chosen:
            holders[item].append(rater)
    if any(len(h) != k for h in holders.values()):
        raise AssertionError("an item did not get its k raters")
    shared = Counter(pair for raters in holders.values() for pair in combinations(raters, 2))
    return [shared[pair] for pair in combinations(range(seats), 2)]
