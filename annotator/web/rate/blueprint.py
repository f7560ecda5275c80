"""The rate blueprint, apart from the package so that its view modules do not import
the package that imports them."""

from __future__ import annotations

from flask import Blueprint

__all__ = ["bp"]

bp = Blueprint("rate", "annotator.web.rate")
