"""crowd entry and waves: platform ids of raters, platform study and session of blocks

Revision ID: c7a1e0d5b3f2
Revises: a7d3c91e5b20
Create Date: 2026-11-23 02:20:00.000000
"""

from alembic import op
import sqlalchemy as sa
import sqlmodel


revision = 'c7a1e0d5b3f2'
down_revision = 'a7d3c91e5b20'
branch_labels = None
depends_on = None


# Plain ALTER TABLE statements, not batch mode: SQLite would rebuild the
# user table, which other tables' foreign keys refer to.


def upgrade() -> None:
    op.add_column('study', sa.Column('crowd', sa.JSON(), nullable=True))
    op.add_column('user', sa.Column('platform_id', sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True))
    op.add_column('user', sa.Column('screened_out_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))
    op.create_index('ix_user_study_platform', 'user', ['study_id', 'platform_id'], unique=True)
    op.add_column('block', sa.Column('platform_study_id', sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True))
    op.add_column('block', sa.Column('platform_session_id', sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True))


def downgrade() -> None:
    op.drop_column('block', 'platform_session_id')
    op.drop_column('block', 'platform_study_id')
    op.drop_index('ix_user_study_platform', table_name='user')
    op.drop_column('user', 'screened_out_at')
    op.drop_column('user', 'platform_id')
    op.drop_column('study', 'crowd')
