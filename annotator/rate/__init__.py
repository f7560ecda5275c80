"""Only ``scores.py`` is left here: it moves to ``annotator.collect`` once
the work on it in flight has landed (the rate blueprint is in ``annotator.web.rate``)."""
