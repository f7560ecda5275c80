"""The session-aware entry points: read a study from the database, call the pure
analysis and the display, cache and store the results (dashboards as job rows), and
run the stop check. Pages, commands and job bodies call these."""
