"""The report's column headers in words, and the CSV column name each one stands for.

The CSV files (``annotator report --tables``) and the LaTeX tables keep the column
names the scripts read; the page shows these words in their place, keeps the name in
the header's ``data-column`` attribute and lists both, once, at its end
(:func:`column_glossary`).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["COLUMN_WORDS", "column_glossary", "column_words"]

COLUMN_WORDS: dict[str, str] = {
    "advantage_high": "advantage, high",
    "advantage_low": "advantage, low",
    "advantage_probability": "advantage probability",
    "against": "against",
    "alpha": "alpha",
    "alpha_human": "human alpha",
    "alpha_interval": "alpha (interval)",
    "alpha_nominal": "alpha (nominal)",
    "alpha_ordinal": "alpha (ordinal)",
    "attention_failed": "checks failed",
    "attention_passed": "checks passed",
    "average": "average",
    "criterion_a": "criterion",
    "criterion_b": "against criterion",
    "delta_a1": "human − LLM ICC(A,1)",
    "delta_ak": "human − LLM ICC(A,k)",
    "effective_n": "effective items",
    "estimate_high": "estimate, high",
    "estimate_low": "estimate, low",
    "fleiss_kappa": "Fleiss' kappa",
    "group_a": "group",
    "group_b": "against group",
    "group_by": "grouped by",
    "human_mean": "human mean",
    "human_mean_high": "human mean, high",
    "human_mean_low": "human mean, low",
    "icc_a1": "ICC(A,1)",
    "icc_a1_high": "ICC(A,1), high",
    "icc_a1_low": "ICC(A,1), low",
    "icc_a1_human": "human ICC(A,1)",
    "icc_a1_human_high": "human ICC(A,1), high",
    "icc_a1_human_low": "human ICC(A,1), low",
    "icc_a1_llm": "LLM ICC(A,1)",
    "icc_a1_llm_high": "LLM ICC(A,1), high",
    "icc_a1_llm_low": "LLM ICC(A,1), low",
    "icc_a1_mean": "mean ICC(A,1)",
    "icc_a1_within": "ICC(A,1) within group",
    "icc_ak_human": "human ICC(A,k)",
    "icc_ak_human_high": "human ICC(A,k), high",
    "icc_ak_human_low": "human ICC(A,k), low",
    "icc_ak_llm": "LLM ICC(A,k)",
    "icc_ak_within": "ICC(A,k) within group",
    "icc_group_llm": "group-LLM ICC(A,1)",
    "icc_human_llm": "human-LLM ICC(A,1)",
    "icc_human_llm_high": "human-LLM ICC(A,1), high",
    "icc_human_llm_low": "human-LLM ICC(A,1), low",
    "identical_share": "share identical",
    "lam": "lambda",
    "llm_mean": "LLM mean",
    "loo_icc_a1": "ICC(A,1) without the rater",
    "loo_mae_share": "distance from the others (share of range)",
    "median_seconds": "median seconds",
    "modal_share": "share of the commonest score",
    "modal_value": "commonest score",
    "n_a": "ratings of group",
    "n_annotators": "annotators",
    "n_b": "ratings of other group",
    "n_complete": "complete items",
    "n_domains": "criteria tested",
    "n_items": "items",
    "n_items_llm": "items with LLM scores",
    "n_models": "models",
    "n_passed": "criteria passed",
    "n_rated": "items rated",
    "n_raters": "raters",
    "n_resamples": "resamples",
    "n_runs": "runs",
    "n_tested": "annotators tested",
    "n_undefined": "resamples not tested",
    "n_unrated": "items not rated",
    "nmae": "nMAE",
    "p_value": "p-value",
    "pass_share": "share of resamples passed",
    "pearson_r": "Pearson r",
    "poorly_aligned": "poorly aligned",
    "retest_icc_a1": "retest ICC(A,1)",
    "retest_items": "items repeated",
    "scale_a": "scale",
    "scale_b": "against scale",
    "spearman": "Spearman rho",
    "straight_lining": "straight-lining",
    "winning_rate": "winning rate",
    "winning_rate_high": "winning rate, high",
    "winning_rate_low": "winning rate, low",
    "x": "x",
}


def column_words(name: str) -> str:
    """The header of column ``name`` in words (a name without underscore is a word
    already, a model's name among them)."""
    words = COLUMN_WORDS.get(name)
    if words is not None:
        return words
    return name.replace("_", " ")


def column_glossary(names: Iterable[str]) -> list[tuple[str, str]]:
    """``(words, CSV name)`` of each column shown under another name, once, in order."""
    return [(column_words(n), n) for n in dict.fromkeys(names) if column_words(n) != n]
