"""The winning rate and the advantage probability of a batch (:mod:`._core`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ._core import _Batch


def _rates(batch: _Batch, rejected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The winning rate and the advantage probability (R, E), NaN where none is tested.

    Rows with as many tested annotators are reduced together: a row-wise sum or mean of
    a 2-D array is, bit for bit, that of the row on its own. Unweighted, the winning
    rate's sums count ones, exactly in any order.
    """
    tested = batch.tested.transpose(1, 0, 2)  # (R, E, k)
    if tested.shape[:2] == (1, 1):
        # A batch of one: the 1-D reductions of its row.
        mask, weights = tested[0, 0], batch.weights[0][tested[0, 0]]
        if not mask.any():
            return np.full((1, 1), np.nan), np.full((1, 1), np.nan)
        won = np.sum(weights * rejected[0, 0][mask]) / np.sum(weights)
        return np.full((1, 1), won), np.full((1, 1), np.mean(batch.rho_f[0][mask]))
    counts = tested.sum(axis=2)
    winning_rate = np.full(counts.shape, np.nan)
    advantage = np.full(counts.shape, np.nan)
    live = counts > 0
    won = rejected.transpose(1, 0, 2) & tested
    if batch.opts[0].weights is None:
        winning_rate[live] = won.sum(axis=2)[live] / counts[live]
    weighted = batch.opts[0].weights is not None
    # The advantage depends on the option set only through min_items_per_human.
    minimum = [o.min_items_per_human for o in batch.opts]
    for e, low in enumerate(minimum):
        again = low in minimum[:e]
        if again:
            advantage[:, e] = advantage[:, minimum.index(low)]
            if not weighted:
                continue
        mask, count = tested[:, e], counts[:, e]
        for size in np.unique(count[count > 0]).tolist():
            same = count == size
            mine = mask[same]
            if not again:
                advantage[same, e] = batch.rho_f[same][mine].reshape(-1, size).mean(axis=1)
            if weighted:
                weights = batch.weights[same]
                total = weights[mine].reshape(-1, size).sum(axis=1)
                gained = (weights * won[same, e])[mine].reshape(-1, size).sum(axis=1)
                winning_rate[same, e] = gained / total
    return winning_rate, advantage
