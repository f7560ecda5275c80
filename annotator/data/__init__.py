"""A study's data in and out: import files read, imported and exported, and the study as pandas frames."""
