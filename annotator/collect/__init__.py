"""Collecting human ratings: a rater's way from the invite to the last score.

Jobs only: functions that take a database session and leave the commit to
the caller; the pages that call them live in the rate blueprint.
"""
