"""the temperature joins the key of a stored LLM score

Revision ID: e3b9c6d2a1f4
Revises: e5a9c3f81d27
Create Date: 2026-11-27 19:50:00.000000
"""

from alembic import op
import sqlalchemy as sa


revision = 'e3b9c6d2a1f4'
down_revision = 'e5a9c3f81d27'
branch_labels = None
depends_on = None

NEW_KEY = 'uq_llmscore_item_scale_model_temperature_run'
OLD_COLUMNS = ['item_id', 'scale_id', 'model', 'run']
# Names the unnamed constraints of a table SQLite's batch mode reflects, so
# the old key (created without a name in the initial schema) can be dropped.
_NAMES = {'uq': 'uq_%(table_name)s_%(column_0_N_name)s'}


def _old_key_name() -> str:
    if op.get_bind().dialect.name == 'postgresql':
        # The name PostgreSQL gave the initial schema's unnamed constraint.
        return 'llmscore_item_id_scale_id_model_run_key'
    return 'uq_llmscore_item_id_scale_id_model_run'


def upgrade() -> None:
    # (item, scale, model, run) becomes (item, scale, model, temperature,
    # run): run 1 at temperature 0.1 may sit beside run 1 at 1.0. A NULL
    # temperature (an imported score without one) is keyed as -1, since NULLs
    # are distinct in a unique constraint; see models.LLMScore.
    with op.batch_alter_table('llmscore', naming_convention=_NAMES) as batch_op:
        batch_op.drop_constraint(_old_key_name(), type_='unique')
    op.create_index(
        NEW_KEY,
        'llmscore',
        ['item_id', 'scale_id', 'model', sa.text('coalesce(temperature, -1)'), 'run'],
        unique=True,
    )


def downgrade() -> None:
    # The old key holds only if no run is stored at two temperatures: refuse
    # rather than delete scores.
    clashes = op.get_bind().execute(
        sa.text(
            'SELECT COUNT(*) FROM (SELECT 1 FROM llmscore GROUP BY item_id, scale_id,'
            ' model, run HAVING COUNT(*) > 1) AS clashing'
        )
    ).scalar()
    if clashes:
        raise RuntimeError(
            f'cannot downgrade: {clashes} (item, scale, model, run) key(s) of table '
            'llmscore hold scores at several temperatures; the old key allows one. '
            'Export and delete the extra scores first.'
        )
    op.drop_index(NEW_KEY, table_name='llmscore')
    with op.batch_alter_table('llmscore', naming_convention=_NAMES) as batch_op:
        batch_op.create_unique_constraint(
            None if op.get_bind().dialect.name == 'postgresql' else _old_key_name(),
            OLD_COLUMNS,
        )
