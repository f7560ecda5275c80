"""The study's analysis: the live dashboard and the paper's tables, from frames through metrics.

``tables.report_tables`` (the report), ``dashboard.study_dashboard`` and
``live.live_dashboard`` (the lead's study page), ``settings.AnalysisSettings``.
Nothing here renders: the report's HTML and plots and the dashboard's template
take these results as they are.
"""
