"""rubric criteria: the criterion table, the criterion of ratings, LLM scores and judge failures

Revision ID: e5c3a9d27b14
Revises: b7e2f1a4c9d0
Create Date: 2026-11-27 19:50:00.000000
"""

from alembic import op
import sqlalchemy as sa
import sqlmodel


revision = 'e5c3a9d27b14'
down_revision = 'b7e2f1a4c9d0'
branch_labels = None
depends_on = None

# The unique keys that gain the criterion, before and after.
KEYS = {
    'rating': (['rater_id', 'item_id', 'scale_id', 'is_repeat'],
               ['rater_id', 'item_id', 'scale_id', 'criterion', 'is_repeat']),
    'llmscore': (['item_id', 'scale_id', 'model', 'run'],
                 ['item_id', 'scale_id', 'criterion', 'model', 'run']),
}
# SQLite keeps the keys unnamed; in a batch rebuild this convention names the
# reflected key so that it can be dropped (Alembic's documented way).
SQLITE_NAMES = {'uq': 'uq_%(table_name)s_%(column_0_N_name)s'}


def _criterion_column():
    # Existing rows are the study's single unnamed criterion, "", as is any row
    # written without one (the bulk imports list their columns).
    return sa.Column('criterion', sqlmodel.sql.sqltypes.AutoString(length=100),
                     nullable=False, server_default='')


def _postgres_key_name(table, columns):
    # PostgreSQL's own name for an unnamed unique key.
    return f"{table}_{'_'.join(columns)}_key"


def _upgrade_key(table, old, new):
    if op.get_bind().dialect.name == 'postgresql':
        op.add_column(table, _criterion_column())
        op.drop_constraint(_postgres_key_name(table, old), table, type_='unique')
        op.create_unique_constraint(f'uq_{table}_key', table, new)
        return

    def rebuild():
        with op.batch_alter_table(
            table, naming_convention=SQLITE_NAMES, recreate='always'
        ) as batch_op:
            batch_op.add_column(_criterion_column())
            batch_op.drop_constraint(f"uq_{table}_{'_'.join(old)}", type_='unique')
            batch_op.create_unique_constraint(f'uq_{table}_key', new)

    _rebuild_on_sqlite(table, rebuild)


def _downgrade_key(table, old):
    # The old key comes back unnamed, as the initial schema made it.
    if op.get_bind().dialect.name == 'postgresql':
        op.drop_constraint(f'uq_{table}_key', table, type_='unique')
        op.drop_column(table, 'criterion')
        op.create_unique_constraint(None, table, old)
        return

    def rebuild():
        table_args = (sa.UniqueConstraint(*old),)
        with op.batch_alter_table(table, recreate='always', table_args=table_args) as batch_op:
            batch_op.drop_constraint(f'uq_{table}_key', type_='unique')
            batch_op.drop_column('criterion')

    _rebuild_on_sqlite(table, rebuild)


def _rebuild_on_sqlite(table, changes):
    """Rebuild ``table`` in batch mode while rating changes refer to its rows.

    SQLite refuses to drop a table that rows of another table refer to while
    foreign keys are on, and they cannot be switched off inside the migration's
    transaction. The rating changes wait in a temporary table while the rating
    table is rebuilt (same ids), then come back.
    """
    keep = table == 'rating'
    if keep:
        op.execute(sa.text('CREATE TEMP TABLE ratingchange_kept AS SELECT * FROM ratingchange'))
        op.execute(sa.text('DELETE FROM ratingchange'))
    changes()
    if keep:
        op.execute(sa.text('INSERT INTO ratingchange SELECT * FROM ratingchange_kept'))
        op.execute(sa.text('DROP TABLE ratingchange_kept'))


def upgrade() -> None:
    op.create_table('criterion',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('study_id', sa.Integer(), nullable=False),
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
    sa.Column('definition', sa.Text(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('benchmarks', sa.JSON(), nullable=True),
    sa.ForeignKeyConstraint(['study_id'], ['study.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('study_id', 'name')
    )
    for table, (old, new) in KEYS.items():
        _upgrade_key(table, old, new)
    op.add_column('judgefailure', _criterion_column())


def downgrade() -> None:
    # Ratings and scores of named criteria cannot go back under the old keys.
    op.execute(sa.text(
        "DELETE FROM ratingchange WHERE rating_id IN (SELECT id FROM rating WHERE criterion <> '')"
    ))
    op.execute(sa.text("DELETE FROM rating WHERE criterion <> ''"))
    op.execute(sa.text("DELETE FROM llmscore WHERE criterion <> ''"))
    op.execute(sa.text("DELETE FROM judgefailure WHERE criterion <> ''"))
    with op.batch_alter_table('judgefailure') as batch_op:
        batch_op.drop_column('criterion')
    for table, (old, _new) in KEYS.items():
        _downgrade_key(table, old)
    op.drop_table('criterion')
