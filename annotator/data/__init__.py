"""Data in and out of a study: import files read, imported and exported."""
