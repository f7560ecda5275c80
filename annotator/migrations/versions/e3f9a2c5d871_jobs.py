"""jobs: long work off the request path (reports, exports, ...) and their results

Revision ID: e3f9a2c5d871
Revises: b7e2f1a4c9d0
Create Date: 2026-11-27 19:50:00.000000
"""

from alembic import op
import sqlalchemy as sa
import sqlmodel


revision = 'e3f9a2c5d871'
down_revision = 'b7e2f1a4c9d0'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'job',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('study_id', sa.Integer(), nullable=False),
        sa.Column('kind', sqlmodel.sql.sqltypes.AutoString(length=50), nullable=False),
        sa.Column('params', sa.JSON(), nullable=True),
        sa.Column('params_key', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('data_version', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('status', sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
        sa.Column('progress_done', sa.Integer(), nullable=False),
        sa.Column('progress_total', sa.Integer(), nullable=False),
        sa.Column('progress_message', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column('error', sa.Text(), nullable=True),
        sa.Column('result_filename', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
        sa.Column('result_mimetype', sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True),
        sa.Column('result_size', sa.Integer(), nullable=True),
        sa.Column('created_by', sa.Integer(), nullable=True),
        sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column('started_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column('finished_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column('heartbeat_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column('attempt', sa.Integer(), nullable=False),
        sa.Column('worker', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
        sa.ForeignKeyConstraint(['created_by'], ['user.id'], ),
        sa.ForeignKeyConstraint(['study_id'], ['study.id'], ),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_job_lookup', 'job', ['study_id', 'kind', 'params_key', 'data_version'], unique=False)
    op.create_index(op.f('ix_job_study_id'), 'job', ['study_id'], unique=False)
    op.create_table(
        'jobresult',
        sa.Column('job_id', sa.Integer(), nullable=False),
        sa.Column('data', sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(['job_id'], ['job.id'], ),
        sa.PrimaryKeyConstraint('job_id'),
    )


def downgrade() -> None:
    op.drop_table('jobresult')
    op.drop_index(op.f('ix_job_study_id'), table_name='job')
    op.drop_index('ix_job_lookup', table_name='job')
    op.drop_table('job')
