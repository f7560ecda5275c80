"""Overlap designs: each item dealt to exactly k raters per scale (annotator.collect.dealing)."""

from __future__ import annotations

import statistics
import threading

import pytest
from sqlmodel import Session, select

from annotator.collect.dealing import StudyFull, overlap_spec, study_pool
from annotator.db import get_engine
from annotator.models import ItemShare, RaterStatus, Scale, User
from tests.collect import overlap_sim as sim


@pytest.fixture
def db(app):
    with app.app_context(), Session(get_engine(app), expire_on_commit=False) as session:
        yield session


def _pool(db, study):
    return study_pool(db, study, overlap_spec(study))


def _check_exact(db, study, k):
    pool = _pool(db, study)
    counts = sim.counted_per_item(db, study)
    scales = db.exec(select(Scale.id).where(Scale.study_id == study.id)).all()
    for scale in scales:
        got = sorted({counts[(item, scale)] for item in pool.pool})
        assert got == [k], f"scale {scale}: counted ratings per item {got}"
    return pool


@pytest.mark.parametrize(
    ("n_items", "k", "per_rater", "quitters"),
    [
        (30, 2, 10, {}),
        (31, 3, 10, {1: 4}),  # 93 shares over 10 seats: loads 9 and 10
        (40, 3, 12, {0: 0, 2: 5, 5: 11}),
    ],
)
def test_every_item_gets_exactly_k_ratings_and_loads_stay_within_one(
    db, tmp_path, n_items, k, per_rater, quitters
):
    study = sim.make_overlap_study(
        db, tmp_path, sim.overlap_toml(k=k, per_rater=per_rater), n_items
    )
    stayed = sim.run_study(db, study, raters=n_items * k // per_rater, quitters=quitters)
    pool = _check_exact(db, study, k)
    loads = sim.loads(db, study, pool.anchors)
    by_scale = {}
    for (_rater, scale), load in loads.items():
        by_scale.setdefault(scale, []).append(load)
    for scale, values in by_scale.items():
        assert len(values) == len(stayed)
        assert max(values) - min(values) <= 1, (scale, sorted(values))
        assert max(values) <= per_rater
    withdrawn = db.exec(select(User).where(User.status != RaterStatus.ACTIVE)).all()
    assert len(withdrawn) == len(quitters)


def test_a_block_left_past_the_deadline_gives_its_items_back(db, tmp_path, clock):
    study = sim.make_overlap_study(db, tmp_path, sim.overlap_toml(k=2, per_rater=10), 20)
    stayed = sim.run_study(
        db, study, raters=4, quitters={1: 3}, clock=clock, withdraw_quitters=False
    )
    assert len(stayed) == 4
    _check_exact(db, study, 2)
    counts = sim.counted_per_item(db, study)
    left = db.exec(select(User).where(User.status == RaterStatus.EXCLUDED)).one()
    assert "left block 1 unfinished for 3 days" in left.status_reason
    # The leaver holds no shares any more, and cannot start another block.
    blocks = sim.blocks(db, left)
    assert not db.exec(
        select(ItemShare).where(ItemShare.block_id.in_([b.id for b in blocks]))
    ).all()
    from annotator.collect.block_states import BlockUnavailable

    db.refresh(left)
    # Finishing the block they left is harmless (their ratings count nowhere).
    sim.rate(db, left, blocks[0])
    assert sim.counted_per_item(db, study) == counts
    with pytest.raises(BlockUnavailable, match="went to other raters"):
        sim.start(db, left, blocks[1])


def test_anchor_items_are_rated_by_every_rater_on_every_scale(db, tmp_path):
    study = sim.make_overlap_study(db, tmp_path, sim.overlap_toml(k=2, anchors=4, per_rater=8), 24)
    stayed = sim.run_study(db, study, raters=5, quitters={})
    pool = _check_exact(db, study, 2)
    assert len(pool.anchors) == 4 and len(pool.pool) == 20
    counts = sim.counted_per_item(db, study)
    for (item, _scale), count in counts.items():
        if item in pool.anchors:
            assert count == len(stayed)


def test_listed_anchor_items(db, tmp_path):
    toml = sim.overlap_toml(k=2, anchors='["i0003", "i0007"]', per_rater=5)
    study = sim.make_overlap_study(db, tmp_path, toml, 12)
    pool = _pool(db, study)
    external = {i.id: i.external_id for i in study_items(db, study)}
    assert sorted(external[i] for i in pool.anchors) == ["i0003", "i0007"]


def study_items(db, study):
    from annotator.models import Item

    return db.exec(select(Item).where(Item.study_id == study.id)).all()


def test_a_full_study_admits_no_one_and_says_so(app, db, tmp_path):
    study = sim.make_overlap_study(db, tmp_path, sim.overlap_toml(k=2, per_rater=5), 10)
    sim.run_study(db, study, raters=4, quitters={})
    with pytest.raises(StudyFull):
        sim.join(db, study)
    db.rollback()
    from annotator.study.studies import create_invites

    token = create_invites(db, study, 1)[0].token
    db.commit()
    client = app.test_client()
    page = client.get(f"/invite/{token}")
    assert page.status_code == 403 and "This study is full" in page.text
    assert client.post(f"/invite/{token}", data={"decision": "agree"}).status_code == 403


def test_crowd_entry_is_full_once_every_seat_is_taken(app, db, tmp_path):
    crowd = '[crowd]\nplatform = "generic"\nid_param = "pid"\nmax_raters = 3\n'
    toml = sim.overlap_toml(k=2, extra=crowd)
    study = sim.make_overlap_study(db, tmp_path, toml, 9)
    client = app.test_client()
    for n in range(3):
        response = client.post(f"/s/{study.slug}?pid=p{n}", data={"decision": "agree"})
        assert response.status_code in (200, 302), response.text
    page = app.test_client().get(f"/s/{study.slug}?pid=late")
    assert page.status_code == 403 and "This study is full" in page.text


@pytest.mark.parametrize(("n", "k", "seats"), [(60, 3, 12), (600, 3, 30), (100, 2, 10)])
def test_pairs_overlap_more_evenly_than_a_random_deal(n, k, seats):
    """The greedy choice against dealing the same loads at random (the reference)."""
    greedy = sim.simulate_deal(n, k, seats, greedy=True)
    spread = [
        statistics.pstdev(sim.simulate_deal(n, k, seats, greedy=False, seed=seed))
        for seed in range(10)
    ]
    assert statistics.pstdev(greedy) < 0.7 * min(spread)
    # Nearly every pair shares items, so pairwise statistics exist.
    assert greedy.count(0) <= 0.05 * len(greedy)


def test_two_raters_starting_at_once_never_take_a_place_beyond_k(app, db, tmp_path):
    # One scale, 6 items x 2 = 12 places over 2 seats: each rater must get
    # all 6 items, so a race that let both take one slot would show.
    one_scale = '[[scales]]\nname = "0-5"\nmin = 0\nmax = 5\nstep = 0.01\n'
    toml = sim.overlap_toml(k=2, per_rater=6, scales=one_scale)
    study = sim.make_overlap_study(db, tmp_path, toml, 6)
    users = [sim.join(db, study) for _ in range(2)]
    first_blocks = [sim.blocks(db, u)[0] for u in users]
    barrier = threading.Barrier(2)
    errors = []

    def start(user_id, block_id):
        with app.app_context(), Session(get_engine(app), expire_on_commit=False) as session:
            user = session.get(User, user_id)
            block = session.get(type(first_blocks[0]), block_id)
            barrier.wait()
            try:
                sim.start(session, user, block)
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

    threads = [
        threading.Thread(target=start, args=(u.id, b.id))
        for u, b in zip(users, first_blocks, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    shares = db.exec(select(ItemShare)).all()
    assert len(shares) == 12
    per_item = {}
    for share in shares:
        per_item.setdefault((share.item_id, share.scale_id), set()).add(share.block_id)
    assert len(per_item) == 6
    assert all(len(blocks) == 2 for blocks in per_item.values())
    assert sorted({s.slot for s in shares}) == [0, 1]


def test_the_design_is_fixed_once_a_block_has_started(db, tmp_path):
    from annotator.study.studyfile import parse_study_file
    from annotator.study.versions import StudyUpdateError, update_study

    toml = sim.overlap_toml(k=2, per_rater=5)
    study = sim.make_overlap_study(db, tmp_path, toml, 10)
    changed = toml.replace("raters_per_item = 2", "raters_per_item = 3")
    # Before any block: the design may change.
    assert (
        "assignment"
        in update_study(
            db, study, parse_study_file(changed), source_toml=changed, actor=None
        ).changes
    )
    db.commit()
    user = sim.join(db, study)
    sim.start(db, user, sim.blocks(db, user)[0])
    with pytest.raises(StudyUpdateError, match="assignment: the design cannot change"):
        update_study(db, study, parse_study_file(toml), source_toml=toml, actor=None)
    db.rollback()


def test_exports_and_analysis_of_an_overlap_study(db, tmp_path):
    """The matrix keeps the missing cells, --complete gives the anchor block, and the
    analysis computes ICC on the anchor block and alpha and the alt-test on every rating."""
    from annotator.analysis.settings import study_settings
    from annotator.analysis.study_analysis import analyse
    from annotator.data.frames import study_frames
    from annotator.data.matrix_export import matrix_export
    from annotator.metrics import krippendorff_alpha

    toml = sim.overlap_toml(k=2, anchors=3, per_rater=6)
    study = sim.make_overlap_study(db, tmp_path, toml, 15)
    stayed = sim.run_study(db, study, raters=4, quitters={})
    assert len(stayed) == 4
    pool = _check_exact(db, study, 2)
    external = {i.id: i.external_id for i in study_items(db, study)}
    anchors = sorted(external[i] for i in pool.anchors)

    full = matrix_export(db, study, scale="0-5")
    humans = full.frame[full.raters]
    assert humans.shape == (15, 4)
    # Pool rows: exactly 2 ratings, the other cells left empty; anchors: all 4.
    per_row = humans.notna().sum(axis=1).set_axis(full.frame["item_id"])
    assert sorted(per_row[anchors]) == [4, 4, 4]
    assert set(per_row.drop(anchors)) == {2}

    block = matrix_export(db, study, scale="0-5", complete=True)
    assert sorted(block.frame["item_id"]) == anchors
    assert block.frame[block.raters].notna().all().all() and len(block.raters) == 4

    settings = study_settings(study)
    analysis = analyse(study_frames(db, study), settings, parts=("reliability",))
    part = analysis.scale("0-5")
    assert sorted(part.panel.humans.index) == anchors and part.panel.humans.shape[1] == 4
    # alpha over every rating, missing cells in (the metric's own check).
    assert part.alpha == pytest.approx(krippendorff_alpha(part.ratings, level="interval"))
    assert part.ratings.shape == (15, 4)
    assert "anchor block" in settings.statistics_note()
    from annotator.render.dashboard import study_dashboard

    dashboard = study_dashboard(study_frames(db, study), settings=settings)
    assert dashboard.statistics_note == settings.statistics_note()
    assert study_settings(study).design == "overlap"
