"""The public functions :func:`alt_test` and :func:`alt_test_domains`."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from ._core import _Batch, _decide, _statistics
from ._inputs import _as_mapping, _check_options, _Options
from ._results import (
    AltTestResult,
    AnnotatorResult,
    MultiDomainAltTestResult,
    TooFewItemsError,
)
from ._winning import _rates


def _check_threshold(pass_threshold: Any) -> float:
    try:
        value = float(pass_threshold)
    except (TypeError, ValueError) as exc:
        raise ValueError("pass_threshold must be a number in (0, 1]") from exc
    if not 0.0 < value <= 1.0:
        raise ValueError(f"pass_threshold must be in (0, 1], got {value}")
    return value


def _result(
    batch: _Batch,
    e: int,
    decided: tuple[np.ndarray, np.ndarray],
    threshold: float,
) -> AltTestResult:
    """The :class:`AltTestResult` of the batch's first resample under option set ``e``."""
    opts = batch.opts[e]
    rejected, secured = decided[0][e, 0], decided[1][e, 0]
    tested = batch.tested[e, 0]
    if not tested.any():
        raise TooFewItemsError(
            min_items_per_human=opts.min_items_per_human,
            most_items=int(batch.n_items[0].max(initial=0)),
            n_kept=int(batch.n_kept[0]),
        )
    # The rates of this resample and option set alone.
    row = replace(
        batch,
        opts=[opts],
        tested=batch.tested[e : e + 1, :1],
        weights=batch.weights[:1],
        rho_f=batch.rho_f[:1],
    )
    winning_rate, advantage = _rates(row, decided[0][e : e + 1, :1])
    columns = zip(
        batch.chosen[0].tolist(),
        batch.n_items[0].tolist(),
        tested.tolist(),
        batch.rho_f[0].tolist(),
        batch.rho_h[0].tolist(),
        batch.statistic[e, 0].tolist(),
        batch.p_value[e, 0].tolist(),
        rejected.tolist(),
        batch.weights[0].tolist(),
        secured.tolist(),
        strict=True,
    )
    rows = tuple(
        AnnotatorResult(batch.names[j], n, t, rf, rh, st, p, rej, opts.test if t else None, w, sec)
        for j, n, t, rf, rh, st, p, rej, w, sec in columns
    )
    rate = float(winning_rate[0, 0])
    return AltTestResult(
        winning_rate=rate,
        advantage_probability=float(advantage[0, 0]),
        passed=rate >= threshold,
        annotators=rows,
        n_items=int(batch.n_kept[0]),
        n_tested=int(tested.sum()),
        epsilon=opts.epsilon,
        q=opts.q,
        scoring=opts.scoring_name,
        test=opts.test,
        pass_threshold=threshold,
    )


_DOC_PARAMETERS = """
    scoring : {"neg_rmse", "accuracy"} or callable, keyword-only
        Alignment score S of a prediction against the other annotators' annotations:
        negative root mean squared error (numeric annotations), share of equal labels,
        or ``scoring(prediction, annotations) -> float`` (called with ``weights=`` as
        well when ``annotator_weights`` is given).
    epsilon : float, keyword-only
        Cost-benefit margin in [0, 1]: 0.2 for experts, 0.15 for skilled annotators,
        0.1 for crowd-workers (paper, section 3.3 and Appendix B.1).
    q : float, keyword-only
        Target false discovery rate of the Benjamini-Yekutieli procedure.
    min_humans_per_item : int, keyword-only
        An item is kept when at least this many humans (>= 2) and the LLM annotated it.
    min_items_per_human : int, keyword-only
        An annotator is tested only with at least this many kept items.
    test : {"ttest", "betting"}, keyword-only
        ``"ttest"``: the paper's one-sided one-sample t-test of ``d = W_h - W_f``
        against ``epsilon``, corrected by Benjamini-Yekutieli. ``"betting"``: a test by
        betting of H0 ``E[d] >= epsilon`` for the bounded ``d`` in [-1, 1], valid at
        every number of items (Waudby-Smith and Ramdas 2023), with e-BH across
        annotators (Wang and Ramdas 2022); ``statistic`` is then the e-value (see
        :func:`alt_test_sequential`). The signed-rank tests ``"wilcoxon"`` and
        ``"auto"`` were removed: they test a pseudo-median, not the mean of ``d``
        (``docs/metrics.md``).
    annotator_weights : mapping, optional, keyword-only
        Quality score ``Q_j > 0`` of every annotator (Appendix C.3): the alignment
        scores weight the other annotators by ``Q_k`` and the winning rate is
        ``sum_j Q_j [H0j rejected] / sum_j Q_j``.
    inverse_probability_weighting : bool, keyword-only
        Appendix C.1, for imbalanced labels: each item of annotator ``j`` is weighted by
        ``pi_{y,j} = |I_j| / #{i in I_j : y_i = y}``, where ``y_i`` is the majority label
        of the other annotators (ties: the smallest label) or the expert's label;
        ``rho`` are weighted means and the t statistic uses the weighted standard
        deviation and the effective sample size ``(sum pi)^2 / sum pi^2``, with
        ``n_eff - 1`` degrees of freedom.
    expert : hashable or mapping, optional, keyword-only
        Appendix C.2, a single expert as the reference: the key of the expert in
        ``humans`` (then not tested) or the expert's ``{item: annotation}``. Each
        annotator and the LLM are scored against the expert alone; items need the
        expert's and the LLM's annotation. With gold labels and ``epsilon=0`` this is
        the test of Appendix C.5 (does the LLM outperform humans).
    ranks : bool, keyword-only
        FAQ, testing on ranks: replace the LLM's (and the expert's) annotations of the
        ``N`` kept items by their mid-ranks (1 for the lowest score), and each
        annotator's by the mid-ranks of their ``n_j`` kept items stretched to the same
        range, ``(r - 0.5) * N / n_j + 0.5``, so that annotators who rated fewer items
        stay comparable. On a fully crossed design these are the plain ranks.
    nan_scores : {"raise", "omit"}, keyword-only
        What to do when the scoring function returns NaN for a kept item (a NaN cannot
        be compared: it would count as a win for neither side, making d = 0): raise a
        ``ValueError`` naming the item, or leave every such item out of the test with a
        ``RuntimeWarning`` listing them.

    pass_threshold : float, keyword-only
        The LLM passes when the winning rate is at least this (the paper's 0.5;
        its footnote 5 allows a stricter value, e.g. 0.7).

    Two alignment scores that differ by less than ``1e-12`` relative are a tie (it
    counts for both sides). The reference implementation compares the floats exactly,
    which decides such ties by rounding order with fractional scores and more than 7
    other annotators per item; with integer scores both agree exactly.
"""


def _shared_parameters(function: Callable[..., Any]) -> Callable[..., Any]:
    """Put the options both public functions share into the docstring's ``{parameters}``."""
    if function.__doc__:  # None under python -OO
        function.__doc__ = function.__doc__.replace("{parameters}", _DOC_PARAMETERS.strip() + "\n")
    return function


_OPTION_NAMES = tuple(inspect.signature(_check_options).parameters)


def _options(arguments: Mapping[str, Any]) -> _Options:
    """Check the shared options among a public function's ``locals()``."""
    return _check_options(**{name: arguments[name] for name in _OPTION_NAMES})


@_shared_parameters
def alt_test(
    *,
    humans: Mapping[Hashable, Mapping[Hashable, Any]],
    llm: Mapping[Hashable, Any],
    scoring: str | Callable[..., float] = "neg_rmse",
    epsilon: float = 0.2,
    q: float = 0.05,
    min_humans_per_item: int = 2,
    min_items_per_human: int = 30,
    test: str = "ttest",
    annotator_weights: Mapping[Hashable, float] | None = None,
    inverse_probability_weighting: bool = False,
    expert: Hashable | Mapping[Hashable, Any] | None = None,
    ranks: bool = False,
    nan_scores: str = "raise",
    pass_threshold: float = 0.5,
) -> AltTestResult:
    r"""The alternative annotator test: may the LLM replace the human annotators?

    For each annotator :math:`h_j` and each item :math:`x_i` that :math:`h_j` annotated,
    the LLM :math:`f` and :math:`h_j` are scored against the other annotators
    :math:`H_i[-j]` of the item with :math:`S(\cdot, x_i, j)` and give the indicators

    .. math::

        W^f_{i,j} = \mathbf{1}\{S(f, x_i, j) \ge S(h_j, x_i, j)\}, \qquad
        W^h_{i,j} = \mathbf{1}\{S(h_j, x_i, j) \ge S(f, x_i, j)\}

    (ties count for both), the advantage probabilities
    :math:`\rho^f_j = \bar W^f_j`, :math:`\rho^h_j = \bar W^h_j`, and the test of
    :math:`H_{0j}: \rho^f_j \le \rho^h_j - \varepsilon` with
    :math:`t_j = (\bar d_j - \varepsilon) / (s_j / \sqrt{n_j})`,
    :math:`d_{i,j} = W^h_{i,j} - W^f_{i,j}`, one-sided (alternative: mean below
    :math:`\varepsilon`). The Benjamini-Yekutieli procedure at level ``q``
    (``scipy.stats.false_discovery_control(method="by")``) decides the rejections; the
    winning rate :math:`\omega` is the share of rejected hypotheses, the LLM passes when
    :math:`\omega \ge 0.5` (``pass_threshold``), and the average advantage probability is
    :math:`\rho = \frac{1}{m}\sum_j \rho^f_j` (Calderon, Reichart and Dror 2025,
    section 3).

    Parameters
    ----------
    humans : mapping
        ``{annotator: {item: annotation}}`` (a DataFrame items x annotators works too,
        NaN for missing). ``None`` or NaN annotations count as missing.
    llm : mapping
        ``{item: annotation}`` of the LLM judge (or a Series).
    {parameters}
    Returns
    -------
    AltTestResult

    Raises
    ------
    ValueError
        On a malformed option or input; :class:`TooFewItemsError` (a ``ValueError``)
        when no annotator has ``min_items_per_human`` kept items.

    References
    ----------
    Calderon, N., Reichart, R., and Dror, R. (2025). The Alternative Annotator Test for
    LLM-as-a-Judge: How to Statistically Justify Replacing Human Annotators with LLMs.
    ACL 2025, pages 16051-16081. Reference implementation: github.com/nitaytech/AltTest.
    Benjamini, Y., and Yekutieli, D. (2001). The control of the false discovery rate in
    multiple testing under dependency. Annals of Statistics, 29(4), 1165-1188.

    Examples
    --------
    >>> from annotator.metrics import alt_test
    >>> humans = {"a": {1: 1, 2: 2, 3: 3}, "b": {1: 1, 2: 3, 3: 3}, "c": {1: 2, 2: 2, 3: 3}}
    >>> res = alt_test(humans=humans, llm={1: 1, 2: 2, 3: 3}, min_items_per_human=3)
    >>> round(res.advantage_probability, 2)
    1.0
    """
    opts = _options(locals())
    threshold = _check_threshold(pass_threshold)
    batch = _statistics(humans, llm, [None], [opts])  # the core's batch of one
    return _result(batch, 0, _decide([batch])[0], threshold)


@_shared_parameters
def alt_test_domains(
    domains: Mapping[str, Mapping[str, Any]],
    *,
    scoring: str | Callable[..., float] = "neg_rmse",
    epsilon: float = 0.2,
    q: float = 0.05,
    min_humans_per_item: int = 2,
    min_items_per_human: int = 30,
    test: str = "ttest",
    annotator_weights: Mapping[Hashable, float] | None = None,
    inverse_probability_weighting: bool = False,
    expert: Hashable | Mapping[Hashable, Any] | None = None,
    ranks: bool = False,
    nan_scores: str = "raise",
    pass_threshold: float = 0.5,
) -> MultiDomainAltTestResult:
    r"""The alt-test over several domains with one false-discovery correction.

    Each domain is tested on its own (its annotators compared with the LLM on its
    items), but the Benjamini-Yekutieli procedure runs once over the p-values of all
    annotators of all domains; the winning rate is then computed per domain and the
    summary is "the LLM passes in ``n_passed`` of ``n_domains`` domains" (paper,
    Appendix A, "How to test if the LLM can be used in several environments or
    domains?"). See :func:`alt_test` for the statistic.

    Parameters
    ----------
    domains : mapping
        ``{domain: {"humans": {annotator: {item: annotation}}, "llm": {item: annotation}}}``.
    {parameters}
    Returns
    -------
    MultiDomainAltTestResult

    Raises
    ------
    ValueError
        On a malformed option or domain, or a domain where no annotator can be tested.

    References
    ----------
    Calderon, N., Reichart, R., and Dror, R. (2025). The Alternative Annotator Test for
    LLM-as-a-Judge: How to Statistically Justify Replacing Human Annotators with LLMs.
    ACL 2025, Appendix A (FAQ).
    """
    opts = _options(locals())
    threshold = _check_threshold(pass_threshold)
    domains = _as_mapping(domains, name="domains")
    if not domains:
        raise ValueError("domains is empty")
    parts: dict[str, _Batch] = {}
    for name, spec in domains.items():
        if not isinstance(spec, Mapping) or "humans" not in spec or "llm" not in spec:
            raise ValueError(f"domains[{name!r}] must be a mapping with 'humans' and 'llm'")
        try:
            parts[name] = _statistics(spec["humans"], spec["llm"], [None], [opts])
        except ValueError as exc:
            raise ValueError(f"domain {name!r}: {exc}") from exc
    # One family over the annotators of every domain.
    decided = dict(zip(parts, _decide(list(parts.values())), strict=True))
    results: dict[str, AltTestResult] = {}
    for name, part in parts.items():
        try:
            results[name] = _result(part, 0, decided[name], threshold)
        except TooFewItemsError as exc:
            raise TooFewItemsError(
                min_items_per_human=exc.min_items_per_human,
                most_items=exc.most_items,
                n_kept=exc.n_kept,
                domain=name,
            ) from exc
        except ValueError as exc:
            raise ValueError(f"domain {name!r}: {exc}") from exc
    return MultiDomainAltTestResult(
        domains=results,
        n_passed=sum(res.passed for res in results.values()),
        n_domains=len(results),
    )
