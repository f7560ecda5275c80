"""rubric criteria: the criterion table, the criterion of ratings, LLM scores and judge failures, gold per criterion

Revision ID: e5c3a9d27b14
Revises: f5c1d8e2b7a3
Create Date: 2026-11-27 19:50:00.000000
"""

from alembic import op
import sqlalchemy as sa
import sqlmodel


revision = 'e5c3a9d27b14'
down_revision = 'f5c1d8e2b7a3'
branch_labels = None
depends_on = None

# The unique keys that gain the criterion, before and after.
KEYS = {
    'rating': (['rater_id', 'item_id', 'scale_id', 'is_repeat'],
               ['rater_id', 'item_id', 'scale_id', 'criterion', 'is_repeat']),
}
# The LLM scores' key is a unique expression index since e3b9c6d2a1f4 (a NULL
# temperature keyed as -1). It is dropped and made again with the criterion, and
# the column added in place: a batch rebuild of llmscore on SQLite would lose the
# expression index.
LLM_KEY_BEFORE = 'uq_llmscore_item_scale_model_temperature_run'
LLM_KEY = 'uq_llmscore_key'


def _llm_key(name, criterion):
    columns = ['item_id', 'scale_id', *(['criterion'] if criterion else []), 'model',
               sa.text('coalesce(temperature, -1)'), 'run']
    op.create_index(name, 'llmscore', columns, unique=True)
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
    op.add_column('llmscore', _criterion_column())
    op.drop_index(LLM_KEY_BEFORE, table_name='llmscore')
    _llm_key(LLM_KEY, criterion=True)
    op.add_column('judgefailure', _criterion_column())
    op.add_column('item', sa.Column('criterion_gold', sa.JSON(), nullable=True))


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
    # A plain DROP COLUMN (SQLite 3.35+): ratings refer to the item table,
    # which a batch rebuild would have to drop.
    op.drop_column('item', 'criterion_gold')
    for table, (old, _new) in KEYS.items():
        _downgrade_key(table, old)
    op.drop_index(LLM_KEY, table_name='llmscore')
    op.drop_column('llmscore', 'criterion')
    _llm_key(LLM_KEY_BEFORE, criterion=False)
    op.drop_table('criterion')
