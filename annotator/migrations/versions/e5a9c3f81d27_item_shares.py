"""item shares: the places of an item on a scale in an overlap design

Revision ID: e5a9c3f81d27
Revises: b7e2f1a4c9d0
Create Date: 2026-11-27 19:50:00.000000
"""

from alembic import op
import sqlalchemy as sa
import sqlmodel


revision = 'e5a9c3f81d27'
down_revision = 'b7e2f1a4c9d0'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'itemshare',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('study_id', sa.Integer(), nullable=False),
        sa.Column('item_id', sa.Integer(), nullable=False),
        sa.Column('scale_id', sa.Integer(), nullable=False),
        sa.Column('slot', sa.Integer(), nullable=False),
        sa.Column('block_id', sa.Integer(), nullable=False),
        sa.Column('taken_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(['block_id'], ['block.id'], ),
        sa.ForeignKeyConstraint(['item_id'], ['item.id'], ),
        sa.ForeignKeyConstraint(['scale_id'], ['scale.id'], ),
        sa.ForeignKeyConstraint(['study_id'], ['study.id'], ),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('block_id', 'item_id'),
        sa.UniqueConstraint('item_id', 'scale_id', 'slot'),
    )
    op.create_index(op.f('ix_itemshare_study_id'), 'itemshare', ['study_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_itemshare_study_id'), table_name='itemshare')
    op.drop_table('itemshare')
