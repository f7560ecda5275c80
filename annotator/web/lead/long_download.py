"""The long export downloaded from the lead's study page, streamed chunk by chunk
as the CLI writes it (:mod:`annotator.data.long_rows`), never held whole.

The rows are read with a session of the download's own, never the request's:
the request's session is closed once the view returns, before the body is sent.
And a session left in a transaction while a client reads slowly, or never
reads to the end, holds a connection and its locks (on PostgreSQL an idle
transaction blocks ``DROP``, ``ALTER`` and migrations). So:

* the look-ups that check the choices (scale, benchmark, raters) run before the
  response exists, and their transaction ends at once: a response that is never
  read holds no connection;
* the rows are read inside the body's generator, whose ``finally`` closes the
  session however the stream ends: read to the end, closed early by a client
  that went away (the WSGI server calls ``close()``, which closes the
  generator and with it the database cursor), or an error; the response's
  ``call_on_close`` closes it too, for a body never started.

``stream_with_context`` is not used: it would keep the request (and its
session) open for as long as the body is unread.
"""

from __future__ import annotations

from collections.abc import Iterator

from flask import Response
from sqlmodel import Session

from ...db import get_engine
from ...models import Study
from ..downloads import attachment

__all__ = ["long_export_response"]


def _closing(parts: Iterator[str], session: Session) -> Iterator[str]:
    try:
        yield from parts
    finally:
        session.close()


def long_export_response(study: Study, **options) -> Response:
    """The long export of ``study`` as a streamed download.

    ``options`` are :func:`annotator.data.exporters.render_export`'s; its
    ``ExportError`` is raised here, before any response exists.
    """
    from ...data.exporters import render_export

    session = Session(get_engine(), expire_on_commit=False)
    try:
        rendered = render_export(session, study, "long", **options)
    finally:
        # Ends the look-ups' transaction and gives the connection back; the
        # session begins another when the body reads its first rows.
        session.close()
    response = Response(
        _closing(rendered.parts(), session),
        mimetype=rendered.mimetype,
        headers={"Content-Disposition": attachment(rendered.filename)},
    )
    response.call_on_close(session.close)
    return response
