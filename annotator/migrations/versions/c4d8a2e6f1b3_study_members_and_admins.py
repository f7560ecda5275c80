"""study members (owner, analyst) and instance admins: existing leads own existing studies

Revision ID: c4d8a2e6f1b3
Revises: 5e2b7c41d0a9
Create Date: 2026-11-27 16:30:00.000000
"""

from datetime import UTC, datetime

from alembic import op
import sqlalchemy as sa
import sqlmodel


revision = 'c4d8a2e6f1b3'
down_revision = '5e2b7c41d0a9'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'studymember',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('study_id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('role', sqlmodel.sql.sqltypes.AutoString(length=10), nullable=False),
        sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(['study_id'], ['study.id'], ),
        sa.ForeignKeyConstraint(['user_id'], ['user.id'], ),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('study_id', 'user_id'),
    )
    op.create_index(op.f('ix_studymember_user_id'), 'studymember', ['user_id'], unique=False)
    # Plain ADD COLUMN (no batch rebuild of the user table, which other tables
    # refer to); the server default back-fills the existing rows, and
    # PostgreSQL then drops it, as the app always sets the column.
    op.add_column('user', sa.Column('is_admin', sa.Boolean(), nullable=False, server_default=sa.false()))
    if op.get_bind().dialect.name == 'postgresql':
        op.alter_column('user', 'is_admin', server_default=None)

    # Until now every lead saw and changed every study: each existing lead
    # becomes an owner of each existing study, so nobody loses access, and the
    # first lead becomes the instance admin (as the first lead created is from
    # now on). Each membership is logged as a new one would be.
    connection = op.get_bind()
    user = sa.table(
        'user', sa.column('id', sa.Integer), sa.column('role', sa.String), sa.column('is_admin', sa.Boolean)
    )
    study = sa.table('study', sa.column('id', sa.Integer))
    member = sa.table(
        'studymember',
        sa.column('study_id', sa.Integer),
        sa.column('user_id', sa.Integer),
        sa.column('role', sa.String),
        sa.column('created_at', sqlmodel.sql.sqltypes.UTCDateTime()),
    )
    audit = sa.table(
        'auditevent',
        sa.column('actor_id', sa.Integer),
        sa.column('subject_id', sa.Integer),
        sa.column('study_id', sa.Integer),
        sa.column('action', sa.String),
        sa.column('details', sa.JSON),
        sa.column('created_at', sqlmodel.sql.sqltypes.UTCDateTime()),
    )
    leads = connection.execute(sa.select(user.c.id).where(user.c.role == 'lead').order_by(user.c.id)).scalars().all()
    studies = connection.execute(sa.select(study.c.id).order_by(study.c.id)).scalars().all()
    if not leads:
        return
    connection.execute(user.update().where(user.c.id == leads[0]).values(is_admin=True))
    moment = datetime.now(UTC)
    pairs = [(study_id, lead_id) for study_id in studies for lead_id in leads]
    if pairs:
        connection.execute(
            member.insert(),
            [{'study_id': s, 'user_id': u, 'role': 'owner', 'created_at': moment} for s, u in pairs],
        )
        connection.execute(
            audit.insert(),
            [
                {
                    'actor_id': None,
                    'subject_id': u,
                    'study_id': s,
                    'action': 'study-shared',
                    'details': {'role': 'owner', 'previous_role': None, 'via': 'migration'},
                    'created_at': moment,
                }
                for s, u in pairs
            ],
        )
    connection.execute(
        audit.insert(),
        [{
            'actor_id': None,
            'subject_id': leads[0],
            'study_id': None,
            'action': 'lead-admin-granted',
            'details': {'via': 'migration'},
            'created_at': moment,
        }],
    )


def downgrade() -> None:
    # The audit events stay: they record what happened.
    op.drop_column('user', 'is_admin')
    op.drop_index(op.f('ix_studymember_user_id'), table_name='studymember')
    op.drop_table('studymember')
