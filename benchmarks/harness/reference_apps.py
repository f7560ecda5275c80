"""The reference apps benchmarks/load.py reads the app's throughput against.

Each is a gunicorn factory (``harness.reference_apps:hello_app()``), served the way
``annotator serve`` serves the app (same workers, threads, worker class) and
posted to by the same simulated clients: ``GET /hello?rater=N`` once (the
answer may carry a CSRF token, which the client then sends back), then one
``POST /hello`` per score with ``score``, ``csrf_token``, ``rater`` and
``item`` (0, 1, 2, ...).

1. ``hello_app``: a bare Flask app echoing the score; the issue's reference.
2. ``write_app``: the least any rating app does per score: one INSERT and
   its commit.
3. ``floor_app``: the least *this product's* post does: a signed-in rater
   (Flask's signed session cookie), the CSRF check, the rater's block read,
   the rating, its history row and the block's progress in one transaction,
   and the next item's fragment from a Jinja template with a fresh CSRF
   field. Written as lean as it can be (SQLAlchemy Core text statements, the
   template compiled once), so the app's cost above it is what the app's
   layers add (flask-login's user, the ORM objects, the study's settings,
   the item text and instructions), and its cost above the hello-world is
   what the post's duties cost on this stack at the least.

The module imports only the standard library at the top: gunicorn imports it
in each reference app's workers.
"""

from __future__ import annotations

import os

__all__ = [
    "hello_app",
    "write_app",
    "floor_app",
    "MINIMAL_TABLES",
    "FLOOR_TABLES",
    "WRITE_REFERENCES",
]

MINIMAL_TABLES = (
    "CREATE TABLE minimal_rating (id INTEGER PRIMARY KEY{auto}, rater INTEGER NOT NULL, "
    "item INTEGER NOT NULL, value FLOAT NOT NULL, submitted_at TIMESTAMP NOT NULL, "
    "UNIQUE (rater, item))",
)

# The floor app's tables: a block per rater, its ratings (one per place) and
# each rating's history, with the foreign keys and unique keys the app's own
# tables have for the same duties.
FLOOR_TABLES = (
    "CREATE TABLE floor_block (id INTEGER PRIMARY KEY{auto}, rater INTEGER NOT NULL UNIQUE, "
    "current_position INTEGER, current_served_at TIMESTAMP)",
    "CREATE TABLE floor_rating (id INTEGER PRIMARY KEY{auto}, "
    "block_id INTEGER NOT NULL REFERENCES floor_block (id), position INTEGER NOT NULL, "
    "value FLOAT NOT NULL, served_at TIMESTAMP, submitted_at TIMESTAMP NOT NULL, "
    "UNIQUE (block_id, position))",
    "CREATE TABLE floor_change (id INTEGER PRIMARY KEY{auto}, "
    "rating_id INTEGER NOT NULL REFERENCES floor_rating (id), value FLOAT NOT NULL, "
    "changed_at TIMESTAMP NOT NULL)",
)

# The references that write, by the name benchmarks/load.py gives their runs: the
# factory, the tables to create, a query for the (rater, item) of each stored rating
# and, for the floor app, one counting the ratings without exactly one history row
# (the minimal write app writes one row per post: nothing to leave half done).
WRITE_REFERENCES = {
    "minimal write app": (
        "write_app",
        MINIMAL_TABLES,
        "SELECT rater, item FROM minimal_rating",
        None,
    ),
    "signed-in floor app": (
        "floor_app",
        FLOOR_TABLES,
        "SELECT b.rater, r.position - 1 FROM floor_rating r JOIN floor_block b ON b.id = r.block_id",
        "SELECT count(*) FROM floor_rating r WHERE (SELECT count(*) FROM floor_change c "
        "WHERE c.rating_id = r.id) <> 1",
    ),
}

_FLOOR_FRAGMENT = """\
<header class="rating-head" data-announce="Item {{ position }}">
  <h1>Item {{ position }}</h1>
  <progress max="100" value="{{ rated }}" aria-label="Rated {{ rated }}"></progress>
</header>
<div class="item-text" lang="en">{{ item_text }}</div>
<form method="post" action="{{ action }}" class="score-form"
      hx-post="{{ action }}" hx-target="#rating-item" hx-swap="innerHTML">
  <input type="hidden" name="csrf_token" value="{{ csrf_token() }}">
  <label for="score">Score</label>
  <input id="score" name="score" type="text" inputmode="decimal" required autofocus value="">
  <button type="submit">Next</button>
</form>
"""


def hello_app():
    """The reference: a bare Flask app answering a form post."""
    from flask import Flask, request

    app = Flask("hello")

    @app.route("/hello", methods=["GET", "POST"])
    def hello():
        return f"hello {request.form.get('score', '')}"

    return app


def write_app():
    """The second reference: the least a rating app can do per score.

    A bare Flask app whose post checks the score is a number, stores it with one
    INSERT and its commit, through the engine ``annotator serve`` uses
    (``annotator.db.make_engine``: the same pool and, on SQLite, the same WAL,
    synchronous and busy-timeout settings), in a table with a unique (rater, item)
    key, and answers a short fragment. No sign-in, session, CSRF token, block,
    history or template.
    """
    from datetime import UTC, datetime

    from flask import Flask, abort, request
    from sqlalchemy import text
    from sqlalchemy.exc import IntegrityError

    from annotator.db import make_engine

    engine = make_engine(os.environ["LOAD_WRITE_URL"])
    insert = text(
        "INSERT INTO minimal_rating (rater, item, value, submitted_at) VALUES (:r, :i, :v, :t)"
    )
    app = Flask("write")

    @app.route("/hello", methods=["GET", "POST"])
    def write():
        if request.method == "GET":
            return "ready"
        try:
            value = float(request.form["score"])
            row = {"r": int(request.form["rater"]), "i": int(request.form["item"])}
        except (KeyError, ValueError):
            abort(422)
        try:
            with engine.begin() as connection:
                connection.execute(insert, {**row, "v": value, "t": datetime.now(UTC)})
        except IntegrityError:
            pass  # a retried post: stored once already
        return f"<p>saved {value:g}</p>"

    return app


def floor_app():
    """The third reference: the least this product's score post must do (see the module).

    ``GET /hello?rater=N`` signs rater N in (the session cookie) with a block of
    their own and answers a CSRF token. Each ``POST /hello`` then: the signed
    cookie names the rater (403 without it), flask-wtf checks the CSRF token as
    the app's does (400), the score must be a number (422); one statement reads
    the rater's block and its last rated place; a place beyond the next one is
    refused (409), a place already rated is a retried post (nothing stored);
    otherwise the rating, its history row and the block's next place go in one
    transaction (a twin's rating, committed first, makes it store nothing), and
    the next item's fragment is rendered.
    """
    from datetime import UTC, datetime

    from flask import Flask, abort, request, session
    from flask_wtf.csrf import CSRFProtect
    from sqlalchemy import text
    from sqlalchemy.exc import IntegrityError

    from annotator.db import make_engine

    engine = make_engine(os.environ["LOAD_WRITE_URL"])
    app = Flask("floor")
    app.config["SECRET_KEY"] = os.environ.get("LOAD_FLOOR_SECRET", "floor reference")
    CSRFProtect(app)
    fragment = app.jinja_env.from_string(_FLOOR_FRAGMENT)
    token_page = app.jinja_env.from_string('<input name="csrf_token" value="{{ csrf_token() }}">')
    join = text("INSERT INTO floor_block (rater) VALUES (:rater)")
    state = text(
        "SELECT b.id, b.current_position, b.current_served_at, "
        "(SELECT max(r.position) FROM floor_rating r WHERE r.block_id = b.id) "
        "FROM floor_block b WHERE b.rater = :rater"
    )
    insert = text(
        "INSERT INTO floor_rating (block_id, position, value, served_at, submitted_at) "
        "VALUES (:block, :position, :value, :served, :now) RETURNING id"
    )
    history = text("INSERT INTO floor_change (rating_id, value, changed_at) VALUES (:id, :v, :now)")
    progress = text(
        "UPDATE floor_block SET current_position = :position, current_served_at = :now "
        "WHERE id = :block"
    )
    # PostgreSQL: the three writes as one statement (data-modifying CTEs, as the
    # app's post does there), one round trip instead of three.
    in_one = text(
        "WITH new AS (INSERT INTO floor_rating (block_id, position, value, served_at, "
        "submitted_at) VALUES (:block, :position, :value, :served, :now) RETURNING id), "
        "change AS (INSERT INTO floor_change (rating_id, value, changed_at) "
        "SELECT id, :value, :now FROM new), "
        "progress AS (UPDATE floor_block SET current_position = :position + 1, "
        "current_served_at = :now WHERE id = :block) "
        "SELECT id FROM new"
    )
    one_statement = engine.dialect.name == "postgresql"

    def store(connection, values: dict) -> None:
        if one_statement:
            connection.execute(in_one, values)
            return
        rating = connection.execute(insert, values).scalar_one()
        connection.execute(history, {"id": rating, "v": values["value"], "now": values["now"]})
        connection.execute(
            progress,
            {"position": values["position"] + 1, "now": values["now"], "block": values["block"]},
        )

    @app.route("/hello", methods=["GET", "POST"])
    def floor():
        if request.method == "GET":
            rater = request.args.get("rater", type=int)
            if rater is None:
                return "ready"
            try:
                with engine.begin() as connection:
                    connection.execute(join, {"rater": rater})
            except IntegrityError:
                pass  # signed in before
            session["rater"] = rater
            return token_page.render()
        rater = session.get("rater")
        if rater is None:
            abort(403)
        try:
            value = float(request.form["score"])
            position = int(request.form["item"]) + 1
        except (KeyError, ValueError):
            abort(422)
        now = datetime.now(UTC)
        try:
            with engine.begin() as connection:
                block, current, served, last = connection.execute(state, {"rater": rater}).one()
                last = last or 0
                if position > last + 1:
                    abort(409)
                if position == last + 1:
                    store(
                        connection,
                        {
                            "block": block,
                            "position": position,
                            "value": value,
                            "served": served if current == position else None,
                            "now": now,
                        },
                    )
        except IntegrityError:
            pass  # a twin request stored this place first
        return fragment.render(
            position=position + 1,
            rated=position,
            item_text=f"A person is slicing vegetable number {position + 1}.",
            action="/hello",
        )

    return app
