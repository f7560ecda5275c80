"""Two analyses in two threads at once each get their own notes (the web server's and
the job queue's threads): no note lost, none taken by the other analysis."""

from __future__ import annotations

import sys
import threading

import numpy as np

from annotator.analysis.matrices import Notes
from annotator.metrics import icc

ROUNDS = 300


def test_concurrent_analyses_keep_their_own_notes():
    # Switch threads as often as possible, so that the two analyses interleave.
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    constant = np.full((6, 3), 2.0)
    varied = np.random.default_rng(0).normal(size=(6, 3))
    start = threading.Barrier(2)
    results: dict[str, list[list[str]]] = {"constant": [], "varied": []}

    def analyse(name: str, matrix: np.ndarray) -> None:
        start.wait()
        for _ in range(ROUNDS):
            notes = Notes()
            notes.attempt(name, icc, matrix)
            results[name].append(list(notes))

    threads = [
        threading.Thread(target=analyse, args=("constant", constant)),
        threading.Thread(target=analyse, args=("varied", varied)),
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(old)
    expected = "constant: ratings are constant (every mean square is 0)"
    assert len(results["constant"]) == len(results["varied"]) == ROUNDS
    assert all(len(n) == 1 and n[0].startswith(expected) for n in results["constant"])
    assert all(n == [] for n in results["varied"])
