"""The web faces: one blueprint per feature (``auth``, ``rate``), each with
``bp`` in its ``__init__``, routes in ``views.py`` and forms in ``forms.py``.

Views parse the request, call a job (``annotator.collect``, ``annotator.study``)
and render; the logic lives in the jobs.
"""
