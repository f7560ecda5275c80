"""Judge-assisted estimates of a human mean: prediction-powered inference (PPI++).

A benchmark whose items are all scored by an LLM judge but only some by humans: the
human mean over all items is estimated from the human scores of the rated items, the
judge's scores on every item, and the judge's error on the rated items.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

from ._validation import as_scores, check_probability, counted, json_float

__all__ = ["PPIMean", "ppi_mean", "ppi_share_above"]

INTERVALS = ("small-sample", "normal")
CROSS_FIT_FOLDS = 2
# Weight of the pseudo-disagreements in the share's rectifier variance (see _ppi).
PSEUDO_DISAGREEMENTS = 0.5


@dataclass(frozen=True)
class PPIMean:
    """A prediction-powered estimate of the human mean, beside the human-only one.

    Attributes
    ----------
    estimate : float
        The PPI++ estimate of the human mean.
    interval : tuple of float
        Its ``(low, high)`` confidence interval.
    lam : float
        The power-tuning parameter used: tuned from the data and clipped to [0, 1]
        (with ``"small-sample"``, the mean of the two cross-fitted values, the one
        applied to the unrated items), or the one given.
    effective_n : float
        How many human ratings the estimate is worth: ``n`` times the ratio of the
        human-only variance to the PPI variance (``n`` when ``lam`` is 0).
    human_estimate : float
        The mean of the human scores alone.
    human_interval : tuple of float
        Its confidence interval, of the same kind (``interval``) as the PPI one.
    n, n_unrated : int
        Items rated by humans, and items scored by the judge alone.
    confidence : float
        Coverage of both intervals.
    interval_kind : str
        ``"small-sample"`` or ``"normal"`` (see :func:`ppi_mean`).
    df : float
        Degrees of freedom of the t quantile (Welch-Satterthwaite); infinite for
        ``"normal"``.
    """

    estimate: float
    interval: tuple[float, float]
    lam: float
    effective_n: float
    human_estimate: float
    human_interval: tuple[float, float]
    n: int
    n_unrated: int
    confidence: float
    interval_kind: str
    df: float

    @property
    def width(self) -> float:
        return self.interval[1] - self.interval[0]

    @property
    def human_width(self) -> float:
        return self.human_interval[1] - self.human_interval[0]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for key, value in out.items():
            if isinstance(value, tuple):
                out[key] = [json_float(v) for v in value]
            elif isinstance(value, float):
                out[key] = json_float(value)
        return out


def _scores(values: Any, *, name: str, minimum: int) -> np.ndarray:
    arr = as_scores(values, name=name)
    if np.isnan(arr).any():
        raise ValueError(f"{name} has {counted(int(np.isnan(arr).sum()), 'missing score')} (NaN)")
    if arr.size < minimum:
        raise ValueError(f"{name} needs at least {minimum} scores, got {arr.size}")
    return arr


def _tuned_lam(human: np.ndarray, judge_rated: np.ndarray, judge_unrated: np.ndarray) -> float:
    """PPI++'s variance-minimising ``lam`` for a mean, as ``ppi_py`` computes it.

    ``Cov(Y, f) / ((1 + n/N) Var(f))`` with the covariance over the rated items
    (divisor n) and the variance of the judge's scores over all items (divisor
    n + N - 1), clipped to [0, 1]. A judge that gives every item the same score says
    nothing about the items, so ``lam`` is 0 (the ratio would be 0/0).
    """
    n, big_n = human.size, judge_unrated.size
    cov = np.mean((human - human.mean()) * (judge_rated - judge_rated.mean()))
    var = np.var(np.concatenate([judge_rated, judge_unrated]), ddof=1)
    if var == 0:
        return 0.0
    return float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))


def _given_lam(lam: Any) -> float:
    try:
        lam = float(lam)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"lam must be a number in [0, 1] or None, got {lam!r}") from exc
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam}")
    return lam


def _cross_fitted_lam(human: np.ndarray, judge_rated: np.ndarray, judge_unrated: np.ndarray):
    """Each rated item's ``lam``, tuned on the other half of the rated items.

    Tuned on the same items it corrects, ``lam`` is largest where the judge happens to
    look best on them, and the estimate's error grows with it: at n = 30 the interval
    then covers 0.92-0.94 rather than 0.95 (``validation/ppi_coverage.py``). Tuned on
    the other half (two folds: items in even and odd positions), each item's correction
    is independent of its own ``lam``, and the coverage is back at 0.95.
    """
    fold = np.arange(human.size) % CROSS_FIT_FOLDS
    per_item = np.empty(human.size)
    for k in range(CROSS_FIT_FOLDS):
        held_out = fold == k
        per_item[held_out] = _tuned_lam(human[~held_out], judge_rated[~held_out], judge_unrated)
    return per_item


def _interval(center: float, variance: float, quantile: float) -> tuple[float, float]:
    half = float(quantile) * math.sqrt(variance)
    return (float(center - half), float(center + half))


def ppi_mean(
    human: Any,
    judge_on_rated: Any,
    judge_on_unrated: Any,
    *,
    confidence: float = 0.95,
    lam: float | None = None,
    interval: str = "small-sample",
) -> PPIMean:
    r"""Prediction-powered (PPI++) estimate of the human mean score, with its interval.

    With human scores :math:`Y_i` and judge scores :math:`f_i` on the :math:`n` rated
    items and judge scores :math:`\tilde f_j` on the :math:`N` unrated ones,

    .. math::

        \hat\theta_\lambda = \frac{1}{N}\sum_j \lambda \tilde f_j
            + \frac{1}{n}\sum_i (Y_i - \lambda f_i),
        \qquad
        \hat\sigma^2 = \frac{\lambda^2 s^2(\tilde f)}{N} + \frac{s^2(Y - \lambda f)}{n},

    and the interval is :math:`\hat\theta_\lambda \pm q\,\hat\sigma`. The estimate is
    unbiased for every fixed :math:`\lambda`; :math:`\lambda = 0` is the human mean
    alone, :math:`\lambda = 1` is the original PPI. By default :math:`\lambda` is tuned
    to minimise the variance (Angelopoulos, Duchi and Zrnic 2023, Example 6.1):
    :math:`\hat\lambda = \widehat{\mathrm{Cov}}(Y, f) / ((1 + n/N)\,
    \widehat{\mathrm{Var}}(f))`, the variance taken over the judge's scores on all
    :math:`n + N` items, clipped to [0, 1].

    ``interval="normal"`` is the paper's and ``ppi_py``'s interval, exactly: :math:`s^2`
    with divisor :math:`n` (:math:`N`), :math:`q` the normal quantile, :math:`\lambda`
    tuned on the rated items it corrects. At :math:`n = 30` it covers 0.90-0.93 instead
    of 0.95 (``validation/ppi_coverage.py``; figures in ``docs/metrics.md``), mostly
    because of that tuning. ``interval="small-sample"`` (the default) corrects both:
    :math:`\lambda` is cross-fitted (the rated items in even positions are corrected
    with the :math:`\hat\lambda` tuned on those in odd positions and the other way
    round; the unrated items get the mean of the two), :math:`s^2` has divisor
    :math:`n - 1` (:math:`N - 1`), and :math:`q` is the Student t quantile with the
    Welch-Satterthwaite degrees of freedom of the two terms. For a given
    :math:`\lambda` it is Welch's interval for the difference of the means of
    :math:`Y - \lambda f` and :math:`-\lambda \tilde f`; at :math:`\lambda = 0` the
    one-sample t interval. With :math:`\lambda` tuned it is never wider than the
    human-only interval: when it would be (a judge that does not help), :math:`\lambda`
    is 0 and it is the human-only interval.

    Parameters
    ----------
    human : array_like
        The human score of each rated item (e.g. the mean of its raters), 1-D.
    judge_on_rated : array_like
        The judge's score of the same items, in the same order.
    judge_on_unrated : array_like
        The judge's score of the items no human rated.
    confidence : float, keyword-only
        Coverage of the intervals, strictly between 0 and 1.
    lam : float or None, keyword-only
        The power-tuning parameter in [0, 1]; ``None`` (default) tunes it.
    interval : {"small-sample", "normal"}, keyword-only
        Cross-fitted ``lam`` and a t quantile (default), or ``ppi_py``'s normal
        approximation.

    Returns
    -------
    PPIMean
        The estimate and its interval, ``lam``, the effective number of human
        ratings, and the human-only estimate and interval.

    Raises
    ------
    ValueError
        If ``human`` and ``judge_on_rated`` differ in length, a score is missing or
        not a number, fewer than 2 items are rated or unrated, ``confidence`` is not
        in (0, 1), ``lam`` is not in [0, 1] or ``interval`` is unknown.

    References
    ----------
    Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I., and Zrnic, T. (2023).
    Prediction-powered inference. Science 382(6671).

    Angelopoulos, A. N., Duchi, J. C., and Zrnic, T. (2023). PPI++: Efficient
    Prediction-Powered Inference. arXiv:2311.01453.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.uniform(0, 5, 1000)
    >>> judge = np.clip(truth + rng.normal(0, 0.5, 1000), 0, 5)
    >>> r = ppi_mean(truth[:50], judge[:50], judge[50:])
    >>> bool(r.width < r.human_width), bool(r.effective_n > 50)
    (True, True)
    """
    return _ppi(
        human, judge_on_rated, judge_on_unrated, confidence=confidence, lam=lam, interval=interval
    )


def _ppi(
    human: Any,
    judge_on_rated: Any,
    judge_on_unrated: Any,
    *,
    confidence: float,
    lam: float | None,
    interval: str,
    pseudo_disagreements: float = 0.0,
) -> PPIMean:
    """:func:`ppi_mean`, with ``pseudo_disagreements`` for :func:`ppi_share_above`."""
    confidence = check_probability(confidence, name="confidence")
    if interval not in INTERVALS:
        raise ValueError(f"interval must be 'small-sample' or 'normal', got {interval!r}")
    y = _scores(human, name="human", minimum=2)
    f = _scores(judge_on_rated, name="judge_on_rated", minimum=2)
    f_unrated = _scores(judge_on_unrated, name="judge_on_unrated", minimum=2)
    if y.size != f.size:
        raise ValueError(
            f"human and judge_on_rated must score the same items: {y.size} != {f.size}"
        )
    if lam is not None:
        lam = _given_lam(lam)
    n, big_n = y.size, f_unrated.size
    small_sample = interval == "small-sample"
    if lam is None and small_sample:
        per_item = _cross_fitted_lam(y, f, f_unrated)
    else:
        per_item = np.full(n, _tuned_lam(y, f, f_unrated) if lam is None else lam)
    lam_unrated = float(per_item.mean())
    ddof = 1 if small_sample else 0
    rectified = y - per_item * f
    squares = np.sum((rectified - rectified.mean()) ** 2)
    if pseudo_disagreements and small_sample:
        # Indicators (ppi_share_above): a judge that disagrees with the humans on 0-3 of
        # 30 items makes s^2(Y - lam f) collapse, and the interval covered 0.91-0.93
        # for shares near 0.4. Half a disagreement each way, (Y, f) = (1, 0) and
        # (0, 1), added to the sum of squares (not to the estimate) keeps it at 0.95
        # (validation/ppi_coverage.py); with many disagreements it changes little.
        centre = rectified.mean()
        extremes = np.array([1.0, -lam_unrated]) - centre
        squares += pseudo_disagreements * float(np.sum(extremes**2))
    rectifier = squares / (n - ddof) / n
    imputed = lam_unrated**2 * np.var(f_unrated, ddof=ddof) / big_n
    variance = rectifier + imputed
    human_variance = np.var(y, ddof=ddof) / n
    estimate = float(lam_unrated * f_unrated.mean() + rectified.mean())
    if small_sample:
        # Welch-Satterthwaite: the rectifier term has n - 1 degrees of freedom, the
        # judge's term N - 1; their sum is approximately a scaled chi-squared.
        denominator = rectifier**2 / (n - 1) + imputed**2 / (big_n - 1)
        df = variance**2 / denominator if denominator > 0 else float(n - 1)
        quantile = stats.t.ppf((1 + confidence) / 2, df)
        human_quantile = stats.t.ppf((1 + confidence) / 2, n - 1)
    else:
        df = math.inf
        quantile = human_quantile = stats.norm.ppf((1 + confidence) / 2)
    if small_sample and lam is None and quantile**2 * variance > human_quantile**2 * human_variance:
        # A judge that does not help: its tuned lam only adds the noise of its tuning
        # (the interval was up to 9% wider than the human-only one with a poor real
        # judge at n = 30). The small-sample interval is then the human-only one
        # (lam = 0), so it is never wider; validation/ppi_coverage.py checks that this
        # choice keeps the coverage.
        return _ppi(y, f, f_unrated, confidence=confidence, lam=0.0, interval=interval)
    effective_n = n * human_variance / variance if variance > 0 else math.nan
    return PPIMean(
        estimate=estimate,
        interval=_interval(estimate, variance, quantile),
        lam=lam_unrated,
        effective_n=float(effective_n),
        human_estimate=float(y.mean()),
        human_interval=_interval(float(y.mean()), human_variance, human_quantile),
        n=int(n),
        n_unrated=int(big_n),
        confidence=confidence,
        interval_kind=interval,
        df=float(df),
    )


def ppi_share_above(
    human: Any,
    judge_on_rated: Any,
    judge_on_unrated: Any,
    *,
    threshold: float,
    confidence: float = 0.95,
    lam: float | None = None,
    interval: str = "small-sample",
) -> PPIMean:
    r"""PPI++ estimate of the share of items whose human score is above ``threshold``.

    The mean of the indicator :math:`\mathbf{1}[Y > t]`, estimated by :func:`ppi_mean`
    from the indicators :math:`\mathbf{1}[f > t]` of the judge's scores (strictly
    above: with ``threshold=3`` an item scored exactly 3 does not count).

    The small-sample interval adds half a disagreement each way, :math:`(Y, f) = (1, 0)`
    and :math:`(0, 1)`, to the sum of squares of :math:`Y - \lambda f` (not to the
    estimate): a judge that disagrees with the humans on only a few rated items made
    that variance collapse, and the interval covered 0.91-0.93 for a share near 0.43 at
    n = 30; now 0.95-0.96 (``validation/ppi_coverage.py``). Like every interval of the
    normal or t kind, it covers a rare share less than asked: for shares of 0.06-0.08
    the 95 % interval covers 0.84-0.93 at n = 30 and 100 (the human-only interval
    alike), 0.94-0.95 at n = 300. Use it when n times the share and n times its
    complement are both about 10 or more.

    Parameters
    ----------
    human, judge_on_rated, judge_on_unrated : array_like
        As for :func:`ppi_mean`.
    threshold : float, keyword-only
        The score an item must exceed.
    confidence, lam, interval : keyword-only
        As for :func:`ppi_mean`.

    Returns
    -------
    PPIMean
        Estimates and intervals of the share, in [0, 1] units.

    Raises
    ------
    ValueError
        As :func:`ppi_mean`, and if ``threshold`` is not a finite number.

    References
    ----------
    Angelopoulos, A. N., Duchi, J. C., and Zrnic, T. (2023). PPI++: Efficient
    Prediction-Powered Inference. arXiv:2311.01453.

    Examples
    --------
    >>> r = ppi_share_above([1, 4, 5, 2], [1, 4, 4, 3], [4, 1, 5, 2], threshold=3)
    >>> r.human_estimate
    0.5
    """
    try:
        threshold = float(threshold)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"threshold must be a number, got {threshold!r}") from exc
    if not math.isfinite(threshold):
        raise ValueError(f"threshold must be finite, got {threshold}")
    indicators = [
        (_scores(values, name=name, minimum=2) > threshold).astype(float)
        for values, name in (
            (human, "human"),
            (judge_on_rated, "judge_on_rated"),
            (judge_on_unrated, "judge_on_unrated"),
        )
    ]
    return _ppi(
        *indicators,
        confidence=confidence,
        lam=lam,
        interval=interval,
        pseudo_disagreements=PSEUDO_DISAGREEMENTS,
    )
