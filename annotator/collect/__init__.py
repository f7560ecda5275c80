"""Collecting scores: what the rater's pages and the imports share."""
