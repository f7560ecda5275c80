"""ratingsession becomes block, rating.session_id becomes rating.block_id

Revision ID: 160690878d0b
Revises: ef4333975625
Create Date: 2026-11-22 23:45:00.000000

A rename only: no row changes. Written by hand, because autogenerate sees
a dropped and a new table. SQLite (3.25 and later) and PostgreSQL both
rename tables and columns in place, and SQLite rewrites the foreign keys
that name the old table; the indexes are recreated under the names the
models give them, and on PostgreSQL the named constraints and the id
sequence follow too, so a migrated database looks like a new one.
"""

from alembic import op


revision = '160690878d0b'
down_revision = 'ef4333975625'
branch_labels = None
depends_on = None

# PostgreSQL names of what the old table and column created implicitly.
_POSTGRESQL_NAMES = [
    ('ALTER TABLE {new} RENAME CONSTRAINT {old}_pkey TO {new}_pkey'),
    ('ALTER TABLE {new} RENAME CONSTRAINT {old}_rater_id_scale_id_key TO {new}_rater_id_scale_id_key'),
    ('ALTER TABLE {new} RENAME CONSTRAINT {old}_rater_id_position_key TO {new}_rater_id_position_key'),
    ('ALTER SEQUENCE {old}_id_seq RENAME TO {new}_id_seq'),
]


def _rename(old: str, new: str, old_column: str, new_column: str) -> None:
    op.drop_index(f'ix_{old}_rater_id', table_name=old)
    op.drop_index(f'ix_{old}_scale_id', table_name=old)
    op.drop_index(f'ix_rating_{old_column}', table_name='rating')
    op.rename_table(old, new)
    op.execute(f'ALTER TABLE rating RENAME COLUMN {old_column} TO {new_column}')
    op.create_index(f'ix_{new}_rater_id', new, ['rater_id'], unique=False)
    op.create_index(f'ix_{new}_scale_id', new, ['scale_id'], unique=False)
    op.create_index(f'ix_rating_{new_column}', 'rating', [new_column], unique=False)
    if op.get_bind().dialect.name == 'postgresql':
        for statement in _POSTGRESQL_NAMES:
            op.execute(statement.format(old=old, new=new))
        op.execute(
            f'ALTER TABLE rating RENAME CONSTRAINT rating_{old_column}_fkey'
            f' TO rating_{new_column}_fkey'
        )


def upgrade() -> None:
    _rename('ratingsession', 'block', 'session_id', 'block_id')


def downgrade() -> None:
    _rename('block', 'ratingsession', 'block_id', 'session_id')
