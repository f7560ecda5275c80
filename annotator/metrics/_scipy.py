"""``scipy.stats`` and ``scipy.special`` for the metrics, imported without scipy's
docstring rewriting.

SciPy 1.16 and later decorate several hundred functions with ``xp_capabilities``,
which, at import time and unconditionally, parses each function's docstring with
numpydoc's parser and appends a table of array-API backends to its Notes. That is
35-45% of ``import scipy.stats`` (0.3-0.45 s of 0.8-1.15 s on this project's 2-core
machine, ``benchmarks/startup.py --scipy``; scipy 1.15, without the decorator, imports
in the time the bypassed 1.17 does), paid by every ``annotator report``, statistics
command and web worker before any statistic is computed. SciPy offers no switch for it
(the decorator has no lazy or opt-out path; running Python with ``-OO`` would strip the
docstrings click builds the command line's help from), so the parser the decorator
calls is replaced, before scipy first loads, by one that hands the docstring back as it
is: the functions keep their own documentation, without the backend table, and compute
the same. This relies on a private name (``scipy._lib._array_api.FunctionDoc``);
``tests/metrics/test_scipy_import.py`` fails if a scipy release moves it, and then the
bypass does nothing and scipy imports as usual.

Three more of scipy's decorators parse their function's docstring with the same parser
at import time (``_axis_nan_policy`` to document ``axis``, ``nan_policy`` and
``keepdims``; ``_transition_to_rng`` and the batching decorator of ``scipy._lib._util``,
about 150 functions): the parser is replaced where they take it from
(``scipy._lib._docscrape``) too, 0.03-0.08 s more of ``import scipy.stats`` on the 2-core
machine. Those functions keep their own documentation, without the added paragraphs.

Modules of :mod:`annotator.metrics` take scipy from here (``from ._scipy import
stats``); the bypass is installed on the first such import, never by importing
:mod:`annotator.metrics` alone (``annotator --help`` loads no numpy or scipy).
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scipy import special, stats

__all__ = ["bypass_installed", "special", "stats"]

_SUBMODULES = ("special", "stats")


class _DocAsIs(dict):
    """What scipy's decorators need of numpydoc's ``FunctionDoc``: a list per section
    (``Notes``, ``Parameters``, ...) to read and append to, empty, and a string whose
    first line (the signature) they drop."""

    def __init__(self, function: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        doc = getattr(function, "__doc__", None) or ""
        if type(function).__name__ == "ufunc":
            # numpy puts the ufunc's generated call signature first, a paragraph
            # numpydoc's parser takes out; the written docstring follows.
            doc = doc.partition("\n\n")[2]
        self._doc = doc

    def __missing__(self, section: str) -> list:
        return self.setdefault(section, [])

    def __str__(self) -> str:
        return "signature\n" + self._doc


def _install() -> bool:
    """Replace the parser unless scipy's decorated modules are loaded already (the
    decorator has run there; replacing it now would save nothing)."""
    if "scipy.special" in sys.modules or "scipy.stats" in sys.modules:
        return bypass_installed()
    try:
        array_api = importlib.import_module("scipy._lib._array_api")
    except ImportError:  # pragma: no cover - an older scipy without the module
        return False
    if not hasattr(array_api, "FunctionDoc"):
        return False
    array_api.FunctionDoc = _DocAsIs
    # The other decorators' modules: the source, for those that import from it when
    # scipy.stats loads, and scipy._lib._util, loaded already by the line above.
    for name in ("scipy._lib._docscrape", "scipy._lib._util"):
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "FunctionDoc"):
            module.FunctionDoc = _DocAsIs
    return True


def bypass_installed() -> bool:
    """Whether scipy's decorator uses the pass-through parser in this process."""
    array_api = sys.modules.get("scipy._lib._array_api")
    return array_api is not None and getattr(array_api, "FunctionDoc", None) is _DocAsIs


def __getattr__(name: str) -> Any:
    # PEP 562: ``from ._scipy import special`` loads only scipy.special.
    if name not in _SUBMODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _install()
    module = importlib.import_module(f"scipy.{name}")
    globals()[name] = module
    return module
