"""What a study file's texts may reach when they are filled in.

Benchmark instructions take ``{min}`` and ``{max}`` (``str.format`` syntax,
``{{`` and ``}}`` for literal braces); rater templates, judge templates and
judge system messages are Jinja templates, rendered in Jinja's sandbox.
``str.format`` also follows attributes and indexes (``{min.__class__}``),
and a template may reach for ``__globals__``: both are refused when the
study file is loaded (:func:`check_instructions`, :func:`check_template`),
and :func:`fill_bounds` fills the two placeholders and nothing else.
"""

from __future__ import annotations

from string import Formatter

import jinja2
import jinja2.meta
from jinja2 import nodes
from jinja2.sandbox import SandboxedEnvironment

__all__ = ["PLACEHOLDERS", "check_instructions", "check_template", "fill_bounds", "template_fields"]

#: The placeholders instructions may use.
PLACEHOLDERS = ("min", "max")

# Only parses here; rendering happens in each caller's own sandboxed environment.
_PARSER = SandboxedEnvironment(autoescape=True)


def _pieces(text: str):
    """``Formatter.parse`` of ``text``; ``ValueError`` for unbalanced braces."""
    return list(Formatter().parse(text))


def _written(field: str, spec: str, conversion: str | None) -> str:
    """A placeholder as it was written."""
    return (
        "{" + field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
    )


def check_instructions(text: str) -> str:
    """``text`` if it uses no placeholder but ``{min}`` and ``{max}``, else ``ValueError``.

    No attribute (``{min.real}``), index (``{min[0]}``), conversion
    (``{min!r}``) or format (``{min:>9}``): the bounds are written as the
    scale gives them.
    """
    hint = (
        "instructions may use only the placeholders {min} and {max} "
        "(write {{ and }} for literal braces)"
    )
    try:
        pieces = _pieces(text)
    except ValueError as exc:
        raise ValueError(f"{hint}: {exc}") from None
    for _, field, spec, conversion in pieces:
        if field is None:
            continue
        if field not in PLACEHOLDERS or spec or conversion:
            raise ValueError(f"{hint}, not {_written(field, spec, conversion)}")
    return text


def fill_bounds(text: str, low: str, high: str) -> str:
    """Instructions with ``{min}`` and ``{max}`` filled in and ``{{``/``}}`` made single.

    Any other placeholder (a study stored before :func:`check_instructions`
    existed) is left as it was written, never evaluated.
    """
    try:
        pieces = _pieces(text)
    except ValueError:
        return text
    values = {"min": low, "max": high}
    out = []
    for literal, field, spec, conversion in pieces:
        out.append(literal)
        if field is None:
            continue
        if field in values and not spec and not conversion:
            out.append(values[field])
        else:
            out.append(_written(field, spec, conversion))
    return "".join(out)


def _reached_attributes(ast: nodes.Template):
    """Attribute names the template asks for by name: ``x.a``, ``x['a']``, ``x|attr('a')``."""
    for node in ast.find_all((nodes.Getattr, nodes.Getitem, nodes.Filter)):
        if isinstance(node, nodes.Getattr):
            yield node.attr
        elif isinstance(node, nodes.Getitem):
            if isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
                yield node.arg.value
        elif node.name == "attr":
            for arg in node.args:
                if isinstance(arg, nodes.Const) and isinstance(arg.value, str):
                    yield arg.value


def check_template(template: str) -> nodes.Template:
    """The parsed template; ``ValueError`` for bad syntax or a reach for private attributes.

    Names starting with ``_`` (``__class__``, ``__globals__``, ``__mro__``) are
    what Jinja's sandbox refuses at render time; refusing them here says so
    when the file is loaded, not when a rater or the judge first meets the item.
    """
    try:
        ast = _PARSER.parse(template)
    except jinja2.TemplateSyntaxError as exc:
        raise ValueError(f"template line {exc.lineno}: {exc.message}") from None
    private = sorted({name for name in _reached_attributes(ast) if name.startswith("_")})
    if private:
        raise ValueError(
            "templates may not use attributes starting with '_' "
            f"({', '.join(private)}): use the item's fields by name"
        )
    return ast


def template_fields(template: str) -> set[str]:
    """Names of the item fields a template uses (``ValueError`` as :func:`check_template`)."""
    return jinja2.meta.find_undeclared_variables(check_template(template))
