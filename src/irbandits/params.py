"""One way to name things: parameter tables, ``NAME:k=v`` strings and registries of named entries.

A :class:`Param` declares one parameter (type, default, valid range); :func:`check_params` checks
a whole table at once and :func:`describe_params` lists it. :func:`split_name` takes ``NAME``,
``NAME:setting`` or ``NAME:k=v,k2=v2`` strings apart, and a :class:`Registry` finds entries by
name, with one form of error.

>>> table = (Param("rate", float, 0.5, "decay rate", lambda r: 0 < r <= 1, "in (0, 1]"),)
>>> spec = split_name("MM-NS:rate=1/4")
>>> spec.name, check_params(spec.name, table, dict(spec.items))
('MM-NS', {'rate': 0.25})
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

from irbandits.errors import IrbanditsError

T = TypeVar("T")


@dataclass(frozen=True)
class Param:
    """One entry of a parameter table: name, type, default, description and valid range.

    >>> Param("M", int, 4, "batch size", lambda m: m >= 1, ">= 1").check("MergeDTS", "2**3")
    8
    """

    name: str
    type: type
    default: Any
    description: str
    valid: Callable[[Any], bool] | None = None
    valid_text: str = ""

    def check(self, algorithm: str, value: Any) -> Any:
        """Convert ``value`` (possibly a string from the CLI) and check its range."""
        if value is None and self.default is None:
            return None
        try:
            if isinstance(value, bool):   # JSON true is not the number 1
                raise ValueError
            if isinstance(value, str):
                value = parse_number(value) if self.type in (int, float) else value
            if self.type is int and not isinstance(value, int):
                if float(value) != int(float(value)) or abs(float(value)) > 2**53:  # a float beyond 2**53 is rounded
                    raise ValueError
                value = int(float(value))
            else:
                value = self.type(value)
        except (TypeError, ValueError, OverflowError):
            raise IrbanditsError(
                f"{algorithm}: parameter {self.name} must be {self.type.__name__}, got {value!r}"
            ) from None
        if self.type is float and not math.isfinite(value):
            raise IrbanditsError(f"{algorithm}: parameter {self.name} must be a finite number, got {value!r}")
        if self.valid is not None and not self.valid(value):
            raise IrbanditsError(f"{algorithm}: parameter {self.name}={value!r} is invalid; {self.name} must be {self.valid_text}")
        return value


def parse_number(text: str) -> float:
    """Numbers from the command line: ``0.8**6``, ``4e6``, ``1/3`` are all accepted.

    >>> parse_number("2^3"), parse_number("4e6"), parse_number("1/4")
    (8.0, 4000000.0, 0.25)
    """
    text = text.strip()
    if "**" in text:
        base, exp = text.split("**", 1)
        return parse_number(base) ** parse_number(exp)
    if "^" in text:
        base, exp = text.split("^", 1)
        return parse_number(base) ** parse_number(exp)
    if "/" in text:
        num, den = text.split("/", 1)
        return parse_number(num) / parse_number(den)
    return float(text)


def check_params(owner: str, table: Sequence[Param], given: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter of ``table``: the given value, checked, or its default; ``owner`` names the errors.

    >>> check_params("RUCB", (Param("alpha", float, 0.51, "exploration"),), {"alpha": "1"})
    {'alpha': 1.0}
    """
    known = {p.name: p for p in table}
    unknown = [k for k in given if k not in known]
    if unknown:
        raise IrbanditsError(f"{owner}: unknown parameter {unknown[0]!r}; parameters: {', '.join(known) or 'none'}")
    return {name: p.check(owner, given.get(name, p.default)) for name, p in known.items()}


def describe_params(table: Sequence[Param]) -> str:
    """A parameter table in one line, for listings.

    >>> describe_params((Param("p", float, 0.8, "RBP persistence"), Param("depth", int, 10, "depth")))
    'p=0.8 (RBP persistence); depth=10 (depth)'
    """
    return "; ".join(f"{p.name}={p.default!r} ({p.description})" for p in table)


class Named(NamedTuple):
    """A ``NAME[:item,...]`` string taken apart (see :func:`split_name`)."""

    name: str
    items: list[tuple[str, str | None]]  # (key, value) of each k=v item, (setting, None) of a bare one
    options: str  # the text after the colon, as given (stripped)


def split_name(text: str) -> Named:
    """Split ``NAME``, ``NAME:setting`` or ``NAME:k=v,k2=v2`` at the colon, the commas and each ``=``.

    >>> split_name(" MergeDTS:tuned, M = 8 ")
    Named(name='MergeDTS', items=[('tuned', None), ('M', '8')], options='tuned, M = 8')
    """
    name, _, rest = text.strip().partition(":")
    items = []
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, value = item.partition("=")
        items.append((key.strip(), value.strip() if eq else None))
    return Named(name.strip(), items, rest.strip())


class Registry(Generic[T]):
    """Entries by name, found case-insensitively; an unknown name is an error listing the known ones.

    ``what`` is what an entry is called in that error (``plural``: its plural, default ``what + "s"``);
    ``entries`` are registered under their ``name`` attribute. ``in``, ``[name]`` and iteration
    use the names as registered; iteration gives them in the order they were registered.

    >>> studies = Registry("study", plural="studies")
    >>> studies.add("cycles", 1), studies.get("Cycles"), list(studies)
    (1, 1, ['cycles'])
    >>> studies.get("cycle")
    Traceback (most recent call last):
    ...
    irbandits.errors.IrbanditsError: unknown study 'cycle'; known studies: cycles
    """

    def __init__(self, what: str, entries: Iterable[T] = (), plural: str | None = None):
        self.what = what
        self.plural = plural or what + "s"
        self._entries: dict[str, T] = {}
        self._lower: dict[str, str] = {}
        for entry in entries:
            self.add(entry.name, entry)  # type: ignore[attr-defined]

    def add(self, name: str, entry: T) -> T:
        """Register ``entry`` as ``name`` (replacing an entry of that name); returns ``entry``."""
        self._entries[name] = entry
        self._lower[name.lower()] = name
        return entry

    def get(self, name: str) -> T:
        """The entry called ``name`` in any case; unlike ``dict.get``, an unknown name is an error."""
        if name.lower() not in self._lower:
            raise IrbanditsError(f"unknown {self.what} {name!r}; known {self.plural}: {', '.join(sorted(self))}")
        return self._entries[self._lower[name.lower()]]

    def names(self) -> list[str]:
        """The registered names, in the order they were registered."""
        return list(self._entries)

    def values(self) -> list[T]:
        """The entries, in the order they were registered."""
        return list(self._entries.values())

    def items(self) -> list[tuple[str, T]]:
        """``(name, entry)`` pairs, in the order they were registered."""
        return list(self._entries.items())

    def __getitem__(self, name: str) -> T:
        return self._entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)
