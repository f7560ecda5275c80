"""Display only: the dashboard's view model, the report and the figures, built from
the analysis's result model (:mod:`annotator.analysis.model`). Nothing here computes
a statistic or reads the database."""
