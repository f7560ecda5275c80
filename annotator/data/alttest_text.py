"""The alt-test export (``{"humans": {rater: {item: score}}, "llm": {model: {item: score}}}``)
built from the matrix export, as a dictionary and as the text of its JSON file."""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii

import numpy as np
from sqlmodel import Session

from ..metrics.matrix import LLM_PREFIX
from ..models import Study
from .matrix_export import MatrixExport, matrix_export
from .selection import Where

__all__ = ["alttest_data", "alttest_export", "alttest_json", "alttest_cells"]


def _columns(matrix: MatrixExport) -> dict[str, list[tuple[str, str]]]:
    """``{"humans": [(rater, column)], "llm": [(model, column)]}``."""
    return {
        "humans": [(code, code) for code in matrix.raters],
        "llm": [(model, LLM_PREFIX + model) for model in matrix.models],
    }


def alttest_data(matrix: MatrixExport) -> dict[str, dict[str, dict[str, float]]]:
    """The export as dictionaries; each judge's items in the matrix's row order."""
    items = matrix.frame["item_id"].astype(str).tolist()
    out: dict[str, dict[str, dict[str, float]]] = {}
    for part, columns in _columns(matrix).items():
        out[part] = {}
        for name, column in columns:
            values = matrix.frame[column].to_numpy(dtype=float)
            scored = np.flatnonzero(~np.isnan(values))
            out[part][name] = dict(
                zip([items[i] for i in scored], values[scored].tolist(), strict=True)
            )
    return out


def alttest_cells(matrix: MatrixExport) -> int:
    """The number of human scores in the export."""
    return int(matrix.frame[matrix.raters].notna().to_numpy().sum())


def alttest_json(matrix: MatrixExport) -> str:
    """``json.dumps(alttest_data(matrix), indent=1, sort_keys=True) + "\\n"``, byte for
    byte, without its per-value Python.

    The standard library's encoder runs in pure Python when it indents (its C
    encoder does not indent), about 14 us a score: most of the export's time.
    Here each item's key is encoded once and each distinct score formatted once
    (as ``json`` formats a float), then the lines are joined in numpy.
    tests/data/test_matrix_bytes.py compares the text with ``json.dumps``.
    """
    frame = matrix.frame
    items = frame["item_id"].astype(str).tolist()
    # sort_keys order: Python's order of the key strings.
    order = np.array(sorted(range(len(items)), key=items.__getitem__), dtype=np.int64)
    keys = np.array(
        ["   " + encode_basestring_ascii(items[i]) + ": " for i in order.tolist()], dtype=object
    )
    parts = []
    for part, columns in sorted(_columns(matrix).items()):
        entries = []
        for name, column in sorted(columns):
            values = frame[column].to_numpy(dtype=float)[order]
            scored = ~np.isnan(values)
            text = _float_texts(values[scored])
            body = ",\n".join((keys[scored] + text).tolist())
            inner = "{\n" + body + "\n  }" if body else "{}"
            entries.append("  " + encode_basestring_ascii(name) + ": " + inner)
        block = "{\n" + ",\n".join(entries) + "\n }" if entries else "{}"
        parts.append(" " + encode_basestring_ascii(part) + ": " + block)
    return "{\n" + ",\n".join(parts) + "\n}\n"


def _float_texts(values: np.ndarray) -> np.ndarray:
    """Each value as ``json`` writes a float (``float.__repr__``; NaN and the
    infinities by name), each distinct one (bit for bit: -0.0 is not 0.0) once."""
    bits, inverse = np.unique(values.view(np.int64), return_inverse=True)
    distinct = bits.view(np.float64)
    texts = np.array(list(map(float.__repr__, distinct.tolist())), dtype=object)
    odd = ~np.isfinite(distinct)
    texts[odd] = [json.dumps(v) for v in distinct[odd].tolist()]
    return texts[inverse.reshape(-1)]


def alttest_export(
    session: Session,
    study: Study,
    *,
    scale: str | None = None,
    benchmark: str | None = None,
    temperature: float | None = None,
    runs: str = "mean",
    where: Where | None = None,
    criterion: str | None = None,
    judge_temperatures: tuple[tuple[str, float], ...] | None = None,
) -> dict:
    """``{"humans": {rater: {item: score}}, "llm": {model: {item: score}}}``.

    LLM scores at ``temperature``, runs and raters chosen as in :func:`matrix_export`
    (``runs="each"``: one ``MODEL#RUN`` key per run).
    """
    matrix = matrix_export(
        session,
        study,
        scale=scale,
        benchmark=benchmark,
        temperature=temperature,
        runs=runs,
        where=where,
        criterion=criterion,
        judge_temperatures=judge_temperatures,
    )
    return alttest_data(matrix)
