"""session versions of accounts, crowd entries; crowd raters lose return links and passwords

Revision ID: b7e2f1a4c9d0
Revises: c4d8a2e6f1b3
Create Date: 2026-11-27 16:40:00.000000
"""

from alembic import op
import sqlalchemy as sa
import sqlmodel


revision = 'b7e2f1a4c9d0'
down_revision = 'c4d8a2e6f1b3'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (no batch rebuild of the user table, which other
    # tables refer to); the server default back-fills existing accounts with
    # version 0. PostgreSQL then drops it, as the app always sets the column.
    op.add_column('user', sa.Column('session_version', sa.Integer(), nullable=False, server_default='0'))
    if op.get_bind().dialect.name == 'postgresql':
        op.alter_column('user', 'session_version', server_default=None)
    op.create_table(
        'crowdentry',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('browser', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('address', sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True),
        sa.Column('proof', sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
        sa.Column('platform_session_id', sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True),
        sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['user.id'], ),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index(op.f('ix_crowdentry_user_id'), 'crowdentry', ['user_id'], unique=False)
    # A crowd participant comes back only by the platform's link now: a
    # return link or a password (which anyone knowing the participant id
    # could have read or set) would bypass the browser binding.
    user = sa.table(
        'user',
        sa.column('source', sa.String),
        sa.column('return_token', sa.String),
        sa.column('return_token_issued_at', sqlmodel.sql.sqltypes.UTCDateTime()),
        sa.column('password_hash', sa.String),
    )
    op.execute(
        user.update()
        .where(user.c.source == 'crowd')
        .values(return_token=None, return_token_issued_at=None, password_hash=None)
    )


def downgrade() -> None:
    # The crowd raters' return links and passwords are not restored.
    op.drop_index(op.f('ix_crowdentry_user_id'), table_name='crowdentry')
    op.drop_table('crowdentry')
    op.drop_column('user', 'session_version')
