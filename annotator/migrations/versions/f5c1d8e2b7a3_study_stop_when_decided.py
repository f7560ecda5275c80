"""when and why a study stopped serving blocks (stop when decided)

Revision ID: f5c1d8e2b7a3
Revises: e3b9c6d2a1f4
Create Date: 2026-11-27 20:00:00.000000
"""

from alembic import op
import sqlalchemy as sa
import sqlmodel


revision = 'f5c1d8e2b7a3'
down_revision = 'e3b9c6d2a1f4'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (nullable: every existing study is still collecting);
    # no batch rebuild of the study table, which other tables refer to.
    op.add_column('study', sa.Column('stopped_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))
    op.add_column('study', sa.Column('stop_reason', sa.Text(), nullable=True))


def downgrade() -> None:
    # Plain DROP COLUMN (SQLite 3.35+), as the earlier migrations drop theirs.
    op.drop_column('study', 'stop_reason')
    op.drop_column('study', 'stopped_at')
