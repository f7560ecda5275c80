"""Why a statistic could not be computed, in the lead's words."""

from __future__ import annotations

from ..words import plural

__all__ = ["reason_of"]


def reason_of(error: BaseException) -> str:
    """``error``'s message as the dashboard, the verdict and the report show it.

    The alt-test's "too few items per rater" says the ratings still needed (as the
    verdict's "needs"), not the option that would lower the bar: the metrics API's own
    message names ``min_items_per_human`` for a caller who sets it, and the CLI names
    its option (:meth:`~annotator.metrics.TooFewItemsError.describe`), but no lead page
    offers it. Every other error keeps its own message.
    """
    # Imported here: the alt-test (and scipy.stats) loads only where it runs.
    from ..metrics import TooFewItemsError

    if not isinstance(error, TooFewItemsError):
        return str(error)
    where = f"domain {error.domain}: " if error.domain is not None else ""
    short = error.min_items_per_human - error.most_items
    return (
        f"{where}no rater has yet rated the {error.min_items_per_human} items the alt-test "
        f"needs from each (at most {error.most_items} so far, of "
        f"{plural(error.n_kept, 'item')} the test can use): about "
        f"{plural(short, 'more item')} per rater, each also rated by another rater and the "
        "judge. The alt-test's paper recommends at least 30 items per rater and finds 50-100 "
        "enough in most cases (Calderon et al. 2025, section 5.1 and Appendix A)."
    )
