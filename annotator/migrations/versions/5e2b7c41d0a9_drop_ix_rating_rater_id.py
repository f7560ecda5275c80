"""drop ix_rating_rater_id: the unique key (rater_id, item_id, scale_id, is_repeat) leads with rater_id

Revision ID: 5e2b7c41d0a9
Revises: a97d83560d79
Create Date: 2026-11-23 05:05:00.000000
"""

from alembic import op


revision = '5e2b7c41d0a9'
down_revision = 'a97d83560d79'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Every query on rater_id alone (a rater's ratings, the import's lookup,
    # withdrawing a rater) is served by the unique key, whose leading column
    # it is; the separate index only cost each insert another index entry.
    with op.batch_alter_table('rating', schema=None) as batch_op:
        batch_op.drop_index('ix_rating_rater_id')


def downgrade() -> None:
    with op.batch_alter_table('rating', schema=None) as batch_op:
        batch_op.create_index('ix_rating_rater_id', ['rater_id'], unique=False)
