r"""Futility by conditional power: how likely can the judge still pass within the budget?

The futility bet (:func:`~annotator.metrics.alttest.alt_test_sequential`'s
``futility_margin``) gives a rater up only when the judge is shown clearly *worse* than
the margin allows; a judge close to the boundary, or better than it but with too few
items left to show it, is never stopped by it. This module bounds instead the chance
that the sequential test still passes within the items left, over every distribution of
the rater's :math:`x = (W^h - W^f + 1)/2 \in \{0, 1/2, 1\}` the data so far allow:

1. A confidence sequence at level :math:`\alpha_j` for :math:`p_0 = P(x = 0)` (upper
   bound :math:`u_0`) and one for :math:`P(x < 1)` (upper bound :math:`u_1`, so
   :math:`p_1 = P(x = 1) \ge 1 - u_1`): one-sided Beta(1/2, 1/2) mixtures of Bernoulli
   likelihood ratios over the alternatives below the bound (Robbins 1970), test
   supermartingales for the composite null :math:`p \ge u`, valid at every sample size
   (Ville). The distribution most favourable to the judge inside both is
   :math:`P = (u_0, 1 - u_0 - p_1, p_1)`: every other one is stochastically larger in
   :math:`x`, so (coupled path by path) its capital is never higher.
2. Under :math:`P`, the mixture capital :math:`\frac{1}{S}\sum_s K^{(s)}` reaches the
   threshold :math:`c` only if some stake's :math:`K^{(s)}` does, and for each stake
   Doob's maximal inequality applied to :math:`(K^{(s)})^\theta` gives, with :math:`r`
   items left and :math:`\phi(\theta) = E_P[(1 + \lambda_s (m_0 - x))^\theta]`,

   .. math::

       P\bigl(\max_{k \le r} K^{(s)}_{t+k} \ge c\bigr) \le
       \min_{\theta > 0} \Bigl(\frac{K^{(s)}_t}{c}\Bigr)^{\theta}
       \max\bigl(1, \phi(\theta)\bigr)^{r}.

3. The judge passes only if ``need`` more raters are secured; by Markov's inequality
   the chance is at most the sum of the raters' bounds over ``need`` (each rater still
   to come counts 1).

If the rule stops only when that bound is at most :math:`\gamma`, a judge that would
pass within the budget is stopped with probability at most :math:`\gamma + \sum_j 2
\alpha_j` (the bound holds whenever the confidence sequences cover, and they all cover
but with that probability): ``FUTILITY_CHANCE`` + ``FUTILITY_COVER`` = 0.05.
Stopping rejects nothing, so the false-pass rate stays at ``q``. The assumptions are the
test's own: items come in random order, so each rater's future :math:`x` follow the
distribution of the past ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import special

from ._betting import BET_CAP, MIXTURE_SHARES

__all__ = [
    "FUTILITY_CHANCE",
    "FUTILITY_COVER",
    "bernoulli_upper_bounds",
    "hit_chance_bound",
    "pass_chance_bound",
    "reach_chance_bound",
]

# gamma: the largest bounded chance of a pass at which the rule stops.
FUTILITY_CHANCE = 0.025
# The confidence sequences' total miscoverage (split over the raters and two bounds).
FUTILITY_COVER = 0.025
# Grid of the confidence sequences (a bound is rounded up to the next point).
_GRID = np.linspace(0.0025, 0.9975, 200)
_STEP = _GRID[1] - _GRID[0]
_THETAS = np.concatenate([np.linspace(0.02, 2.0, 100), np.linspace(2.1, 40.0, 120)])
_X = np.array([0.0, 0.5, 1.0])


def bernoulli_upper_bounds(b: np.ndarray, alpha: float) -> np.ndarray:
    r"""Upper confidence sequence for :math:`P(b = 1)` from 0/1 observations ``b``.

    For each :math:`u` on a grid, the one-sided mixture

    .. math::

        K_t(u) = \frac{\int_0^u p^{S_t} (1-p)^{t-S_t} \pi(p)\,dp / \Pi(u)}
                      {u^{S_t} (1-u)^{t-S_t}},\quad \pi = \mathrm{Beta}(1/2, 1/2),

    is a nonnegative supermartingale when :math:`P(b = 1) \ge u` (each alternative
    :math:`p < u` has a likelihood-ratio factor of mean at most 1), so
    :math:`P(\exists t: K_t(u) \ge 1/\alpha) \le \alpha`. The bound after :math:`t`
    observations is the largest :math:`u` not rejected at any time up to :math:`t`,
    rounded up to the next grid point.

    Returns
    -------
    numpy.ndarray
        One bound per prefix of ``b`` (same shape).
    """
    b = np.asarray(b, dtype=float)
    if b.size == 0:
        return np.ones(0)
    t = np.arange(1, b.size + 1, dtype=float)
    s = np.cumsum(b)
    a_post, b_post = 0.5 + s[:, None], 0.5 + (t - s)[:, None]
    u = _GRID[None, :]
    with np.errstate(divide="ignore"):
        log_num = special.betaln(a_post, b_post) + np.log(special.betainc(a_post, b_post, u))
    log_den = special.betaln(0.5, 0.5) + np.log(special.betainc(0.5, 0.5, u))
    log_k = log_num - log_den - (s[:, None] * np.log(u) + (t - s)[:, None] * np.log1p(-u))
    rejected = np.maximum.accumulate(log_k >= math.log(1.0 / alpha), axis=0)
    # The largest grid point never rejected (the smallest ones never are in practice;
    # if every point were, the bound stays at the first).
    kept = np.where(~rejected, np.arange(_GRID.size)[None, :], 0).max(axis=1)
    return np.minimum(_GRID[kept] + _STEP, 1.0)


def reach_chance_bound(
    x: np.ndarray, m0: float, *, remaining: int, log_threshold: float, alpha: float
) -> float:
    r"""Upper bound on the chance that the mixture capital of ``x`` reaches the threshold.

    ``x``: the rater's values so far (in order); ``remaining``: items the rater may
    still get. Valid (module docstring, steps 1-2) when the rater's two confidence
    sequences at level ``alpha`` each cover.
    """
    if remaining <= 0:
        return 0.0
    x = np.asarray(x, dtype=float)
    most = BET_CAP / (1.0 - m0)
    stakes = np.asarray(MIXTURE_SHARES) * most
    if x.size:
        logs = np.log1p(stakes[:, None] * (m0 - x)[None, :]).sum(axis=1)
        p0 = float(bernoulli_upper_bounds(x == 0.0, alpha)[-1])
        p1 = 1.0 - float(bernoulli_upper_bounds(x < 1.0, alpha)[-1])
    else:
        logs = np.zeros(stakes.size)
        p0, p1 = 1.0, 0.0
    return hit_chance_bound(logs, stakes, m0, p0, p1, remaining, log_threshold)


def hit_chance_bound(
    logs: np.ndarray,
    stakes: np.ndarray,
    m0: float,
    p0: float,
    p1: float,
    remaining: int,
    log_threshold: float,
) -> float:
    """Steps 1-2 of the module docstring from the stakes' log capitals ``logs`` now and
    the bounds ``p0`` (upper, on P(x = 0)) and ``p1`` (lower, on P(x = 1))."""
    if remaining <= 0:
        return 0.0
    p1 = max(p1, 0.0)
    p0 = min(p0, 1.0 - p1)
    prob = np.array([p0, 1.0 - p0 - p1, p1])
    total = 0.0
    for log_k, stake in zip(logs, stakes, strict=True):
        gap = log_threshold - log_k
        if gap <= 0:
            return 1.0
        steps = np.log1p(stake * (m0 - _X))
        if remaining * steps.max() < gap:
            continue  # even winning every item left cannot reach it
        log_phi = np.log(np.exp(_THETAS[:, None] * steps[None, :]) @ prob)
        total += math.exp(float(np.min(-_THETAS * gap + remaining * np.maximum(log_phi, 0.0))))
    return min(total, 1.0)


def pass_chance_bound(
    runs: Sequence[np.ndarray],
    m0: float,
    *,
    remaining: Sequence[int],
    log_threshold: float,
    need: int,
    to_come: float = 0.0,
    cover: float = FUTILITY_COVER,
    raters: int | None = None,
) -> float:
    """Upper bound on the chance that ``need`` more raters are secured (module docstring).

    ``runs``: the x of each rater not secured yet; ``remaining``: the items each may still
    get; ``to_come``: raters with no items yet who could still be secured (each counts
    1). ``cover`` is split over the two confidence sequences of each of ``raters`` (every
    rater with data, secured or not: the split must not change as raters are secured;
    None: ``len(runs)``).
    """
    if need <= 0:
        return 1.0
    alpha = cover / (2 * max(raters or len(runs), len(runs), 1))
    total = float(to_come)
    for x, left in zip(runs, remaining, strict=True):
        if total >= need:
            return 1.0
        total += reach_chance_bound(x, m0, remaining=left, log_threshold=log_threshold, alpha=alpha)
    return min(total / need, 1.0)
