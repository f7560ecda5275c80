"""Migration e5a9c3f81d27: the itemshare table of overlap designs, and back."""

from __future__ import annotations

from sqlalchemy import inspect

from annotator import migrate
from annotator.db import get_engine

BEFORE = "b7e2f1a4c9d0"


def test_item_shares_come_and_go(make_app):
    from tests.helpers import downgrade

    app = make_app(create_schema=False)
    engine = get_engine(app)
    migrate.upgrade(engine, BEFORE)
    assert "itemshare" not in inspect(engine).get_table_names()
    migrate.upgrade(engine)
    inspector = inspect(engine)
    assert "itemshare" in inspector.get_table_names()
    unique = {tuple(u["column_names"]) for u in inspector.get_unique_constraints("itemshare")}
    assert ("item_id", "scale_id", "slot") in unique and ("block_id", "item_id") in unique
    downgrade(engine, BEFORE)
    assert "itemshare" not in inspect(engine).get_table_names()
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.head_revision()
