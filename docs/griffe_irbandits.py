"""Griffe extension for the API reference: what the docstrings mean, rendered as mkdocstrings reads it.

- A registered algorithm or pooling method takes its parameters as ``**params`` checked against its
  declared ``params`` table (:class:`irbandits.dueling.base.Param`). The reference shows that table as
  the class's numpydoc Parameters section and its real signature, read from the class at build time,
  so the page and the validation cannot drift apart.
- Doctest examples in free text (``>>>`` lines and their output) become ``pycon`` code blocks.
- Sphinx roles (``:class:`~a.b.C```) become code spans, and ``text::`` before a literal block
  ``text:``, as Markdown has neither.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import griffe

_DOCTEST = re.compile(r"(?m)^(?P<indent>[ ]*)>>> .*(?:\n(?P=indent)(?!\s*$).*)*")
_ROLE = re.compile(r":(?:class|func|mod|meth|attr|data|exc|obj):`(~?)([^`]+)`")
_FENCE = re.compile(r"(?ms)^([ ]*)(```|~~~).*?^\1\2[ ]*$")
_LITERAL = re.compile(r"(?m)(\S)::$")  # reST "text::" before an indented block: Markdown needs "text:"


def _role(match: re.Match) -> str:
    target = match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if match.group(1) else target}`"


def _fence_doctests(text: str) -> str:
    fences = [(m.start(), m.end()) for m in _FENCE.finditer(text)]

    def fence(match: re.Match) -> str:
        if any(a <= match.start() < b for a, b in fences):
            return match.group(0)
        indent = match.group("indent")
        return f"{indent}```pycon\n{match.group(0)}\n{indent}```"

    return _DOCTEST.sub(fence, text)


def _declared_params(path: str) -> tuple[type, tuple] | None:
    """The class at ``path`` and its ``params`` table, if it is a registered algorithm or method."""
    from irbandits.params import Param

    try:
        obj = griffe.dynamic_import(path)
    except ImportError:
        return None
    params = getattr(obj, "params", None)
    if not (inspect.isclass(obj) and getattr(obj, "name", "") and isinstance(params, tuple)
            and all(isinstance(p, Param) for p in params)):
        return None
    return obj, params


def _row(name: str, annotation: str, description: str) -> str:
    body = "\n".join("    " + line for line in description.splitlines()) or "    (no description)"
    return f"{name} : {annotation}\n{body}"


def _parameters(cls: griffe.Class, obj: type, params: tuple) -> None:
    """Give ``cls`` the signature and Parameters section that its ``params`` table declares."""
    signature = inspect.signature(obj.__init__)
    base_doc = griffe.Docstring(_ROLE.sub(_role, inspect.getdoc(obj.__init__) or "")).parse("numpy", warnings=False)
    base_rows = {p.name: p.description for s in base_doc if s.kind.value == "parameters" for p in s.value}
    parameters, rows = [], []
    for p in list(signature.parameters.values())[1:]:
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        annotation = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", None)
        default = None if p.default is inspect.Parameter.empty else repr(p.default)
        parameters.append(griffe.Parameter(p.name, annotation=annotation, default=default,
                                           kind=griffe.ParameterKind.positional_or_keyword))
        rows.append(_row(p.name, annotation or "", base_rows.get(p.name, "")))
    for p in params:
        parameters.append(griffe.Parameter(p.name, annotation=p.type.__name__, default=repr(p.default),
                                           kind=griffe.ParameterKind.keyword_only))
        valid = f" Valid: {p.valid_text}." if p.valid_text else ""
        rows.append(_row(p.name, p.type.__name__, f"{p.description[:1].upper()}{p.description[1:]}.{valid}"))
    cls.set_member("__init__", griffe.Function("__init__", parameters=griffe.Parameters(*parameters),
                                               lineno=cls.lineno, endlineno=cls.lineno))
    notes = []
    if getattr(obj, "settings", None):
        named = "; ".join(f"`{name}`: " + ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v!r}"
                                                    for k, v in values.items())
                          for name, values in obj.settings.items())
        notes.append(f"Named settings (`{obj.__name__}.tuned(K, setting=NAME)`, or `{obj.name}:NAME` on the command "
                     f"line): {named}.")
    if getattr(obj, "reference", ""):
        notes.append(f"Reference: {obj.reference}.")
    text = (cls.docstring.value if cls.docstring else "").rstrip()
    text += "\n\n" + "\n\n".join(notes) + "\n\nParameters\n----------\n" + "\n".join(rows) + "\n"
    cls.docstring = griffe.Docstring(text, parent=cls, parser="numpy",
                                     lineno=cls.docstring.lineno if cls.docstring else cls.lineno)


class IrbanditsDocs(griffe.Extension):
    """Parameter tables of registered classes, doctest blocks and Sphinx roles (module docstring)."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _fence_doctests(_LITERAL.sub(r"\1:", _ROLE.sub(_role, obj.docstring.value)))

    def on_class(self, *, cls: griffe.Class, **kwargs: Any) -> None:
        found = _declared_params(cls.path)
        if found:
            _parameters(cls, *found)
