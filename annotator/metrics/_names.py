"""Option names shared by the functions and the command line, free of heavy imports.

The statistics commands of :mod:`annotator.cli` build their ``click.Choice`` lists from
these, so that ``annotator --help`` does not import numpy, pandas or scipy.
"""

from __future__ import annotations

__all__ = ["CURVES", "LEVELS", "LLM_PREFIX", "RUNS", "RUN_SEPARATOR", "SCORINGS", "TESTS"]

#: Alt-test curves (:func:`annotator.metrics.alt_test_curve`): against items or epsilon.
CURVES = ("items", "epsilon")

#: Krippendorff's alpha metrics (:func:`annotator.metrics.krippendorff_alpha`).
LEVELS = ("nominal", "ordinal", "interval", "ratio")
#: Alignment scorings of the alt-test.
SCORINGS = ("neg_rmse", "accuracy")
#: Per-annotator tests of the alt-test.
TESTS = ("ttest", "betting")
#: Prefix of the LLM columns of the ``matrix`` export (``llm:MODEL``); the exporter
#: writes it and :func:`annotator.metrics.read_matrix` reads it.
LLM_PREFIX = "llm:"
#: How a model's runs at one temperature are combined
#: (:func:`annotator.metrics.runs.aggregate_runs`); the first is the default.
RUNS = ("mean", "median", "majority", "first", "each")
#: Separates model and run in the columns of ``--runs each`` (``llm:MODEL#RUN``).
RUN_SEPARATOR = "#"
