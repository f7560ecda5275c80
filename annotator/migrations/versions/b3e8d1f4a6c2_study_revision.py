"""a revision counter on the study, the key of its cached results

Revision ID: b3e8d1f4a6c2
Revises: e3f9a2c5d871
Create Date: 2026-11-28 12:00:00.000000
"""

from alembic import op
import sqlalchemy as sa


revision = 'b3e8d1f4a6c2'
down_revision = 'e3f9a2c5d871'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN with a server default (every existing study starts at 0;
    # its cached results were keyed by the old aggregates and are recomputed
    # once); no batch rebuild of the study table, which other tables refer to.
    op.add_column(
        'study', sa.Column('revision', sa.Integer(), nullable=False, server_default='0')
    )


def downgrade() -> None:
    op.drop_column('study', 'revision')
