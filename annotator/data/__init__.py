"""A study's data in and out: imports, exports and the study as pandas frames."""
