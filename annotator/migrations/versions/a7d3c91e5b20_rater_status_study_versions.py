"""rater status (withdrawn, excluded), study versions, the version of each rating

Revision ID: a7d3c91e5b20
Revises: 160690878d0b
Create Date: 2026-11-23 02:20:00.000000
"""

from alembic import op
import sqlalchemy as sa
import sqlmodel


revision = 'a7d3c91e5b20'
down_revision = '160690878d0b'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'studyversion',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('study_id', sa.Integer(), nullable=False),
        sa.Column('version', sa.Integer(), nullable=False),
        sa.Column('source_toml', sa.Text(), nullable=False),
        sa.Column('changes', sa.JSON(), nullable=True),
        sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(['study_id'], ['study.id'], ),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('study_id', 'version'),
    )
    op.create_index(op.f('ix_studyversion_study_id'), 'studyversion', ['study_id'], unique=False)

    # Plain ADD COLUMN (no batch rebuild: SQLite would have to drop and copy
    # the study and user tables, which other rows refer to). The server
    # defaults back-fill the existing rows: everything so far is version 1,
    # every rater active. PostgreSQL then drops them, as the app always sets
    # these columns; SQLite cannot drop a default without a rebuild.
    op.add_column('study', sa.Column('version', sa.Integer(), nullable=False, server_default='1'))
    op.add_column('study', sa.Column('withdrawn_ratings', sqlmodel.sql.sqltypes.AutoString(length=10), nullable=False, server_default='keep'))
    op.add_column('user', sa.Column('status', sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False, server_default='active'))
    op.add_column('user', sa.Column('status_reason', sqlmodel.sql.sqltypes.AutoString(length=500), nullable=True))
    op.add_column('user', sa.Column('status_changed_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))
    op.add_column('rating', sa.Column('study_version', sa.Integer(), nullable=False, server_default='1'))
    if op.get_bind().dialect.name == 'postgresql':
        for table, column in (
            ('study', 'version'),
            ('study', 'withdrawn_ratings'),
            ('user', 'status'),
            ('rating', 'study_version'),
        ):
            op.alter_column(table, column, server_default=None)

    study = sa.table(
        'study',
        sa.column('id', sa.Integer),
        sa.column('source_toml', sa.Text),
        sa.column('created_at', sqlmodel.sql.sqltypes.UTCDateTime()),
    )
    versions = sa.table(
        'studyversion',
        sa.column('study_id', sa.Integer),
        sa.column('version', sa.Integer),
        sa.column('source_toml', sa.Text),
        sa.column('changes', sa.JSON),
        sa.column('created_at', sqlmodel.sql.sqltypes.UTCDateTime()),
    )
    connection = op.get_bind()
    rows = connection.execute(sa.select(study.c.id, study.c.source_toml, study.c.created_at)).all()
    if rows:
        connection.execute(
            versions.insert(),
            [
                {'study_id': id_, 'version': 1, 'source_toml': toml, 'changes': [], 'created_at': created}
                for id_, toml, created in rows
            ],
        )


def downgrade() -> None:
    # SQLite 3.35 and later drop a column in place.
    op.drop_column('rating', 'study_version')
    op.drop_column('user', 'status_changed_at')
    op.drop_column('user', 'status_reason')
    op.drop_column('user', 'status')
    op.drop_column('study', 'withdrawn_ratings')
    op.drop_column('study', 'version')
    op.drop_index(op.f('ix_studyversion_study_id'), table_name='studyversion')
    op.drop_table('studyversion')
