"""The queue runs only its own messages: huey unpickles what it takes off the queue,
so a message not signed with the app's secret is refused before it is unpickled,
logged, and nothing of it runs (issue 36, finding 2)."""

from __future__ import annotations

import logging
import pickle
import threading

import pytest
from huey.consumer import Worker
from huey.serializer import SignedSerializer

from annotator.jobs import get_queue
from annotator.jobs.queue import TASK_NAME, enqueue


class _CreatesAFile:
    """Unpickling this creates the file ``path``: what an attacker's message would run."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _forged(kind: str, path) -> bytes:
    payload = pickle.dumps(_CreatesAFile(str(path)))
    if kind == "unsigned":
        return payload
    # Signed, but with a key guessed by the attacker, not the app's.
    return SignedSerializer(secret="a-guessed-secret", salt="annotator.jobs.queue")._sign(payload)


@pytest.mark.parametrize("kind", ["unsigned", "signed with another key"])
def test_a_forged_message_is_refused_and_nothing_runs(app, storage, tmp_path, caplog, kind):
    huey = get_queue(app)
    marker = tmp_path / "the-message-ran"
    # Straight into the queue's storage: a Redis list (or the SQLite file), as anyone
    # who can write to them could.
    huey.storage.enqueue(_forged(kind, marker))
    assert huey.pending_count() == 1
    worker = Worker(huey, threading.Event(), default_delay=0.01, max_delay=0.01, backoff=1)
    with caplog.at_level(logging.INFO):
        worker.loop()
    assert not marker.exists()
    # Taken off the queue, so it is not tried again and again.
    assert huey.pending_count() == 0
    refused = [r for r in caplog.records if "without a valid signature" in r.getMessage()]
    assert refused and refused[0].levelno == logging.ERROR
    assert "nothing was run" in refused[0].getMessage()


def test_the_apps_own_messages_still_run(app, storage):
    huey = get_queue(app)
    enqueue(app, 12345, 2)
    task = huey.dequeue()
    assert task.name == TASK_NAME and task.args == (12345, 2)
