"""Sweep specs in TOML: a grid of simulations (problems, algorithms with parameter grids, horizon,
runs, seed, and the kind of regret, ``regret = "weak"`` as ``irbandits simulate --regret``; default
``auto``), in a ``[sweep]`` table and ``[[algorithms]]`` tables.

A spec expands into one :class:`Task` per (problem, algorithm setting, run). Every mistake is one
:class:`~irbandits.errors.IrbanditsError` naming the file, the key and the problem. ``[experiment]``,
the table's old name, is still read in its place (:data:`OLD_TABLE`).

>>> import tempfile, pathlib
>>> text = '''
... [sweep]
... name = "demo"
... problems = ["arxiv"]
... horizon = 1000
... runs = 2
... [[algorithms]]
... name = "RUCB"
... grid = { alpha = [0.51, 1.0] }
... '''
>>> path = pathlib.Path(tempfile.mkdtemp()) / "demo.toml"
>>> _ = path.write_text(text)
>>> spec = load_spec(path)
>>> [s.label for s in spec.algorithms], len(spec.tasks())
(['RUCB:alpha=0.51', 'RUCB:alpha=1.0'], 4)
"""

from __future__ import annotations

import hashlib
import itertools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irbandits.dueling.base import AlgorithmSpec, parse_spec
from irbandits.errors import IrbanditsError
from irbandits.problems import PreferenceMatrix
from irbandits.simulate import regret_kind

SWEEP_KEYS = {"name", "problems", "horizon", "runs", "seed", "regret"}
TABLE = "sweep"  # the spec's own table
OLD_TABLE = "experiment"  # the table's old name, still read in its place (for one release)
ALGORITHM_KEYS = {"name", "params", "grid"}


@dataclass(frozen=True)
class Task:
    """One run of one algorithm setting on one problem; ``key`` names it in the result store."""

    problem: str
    algorithm: str
    run: int

    @property
    def key(self) -> str:
        return f"{self.problem}|{self.algorithm}|{self.run}"


@dataclass
class Setting:
    """One algorithm row of a spec: the parsed algorithm, its family (the spec's ``name``) and the
    grid values that made it (empty without a grid)."""

    spec: AlgorithmSpec
    family: str
    grid: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.spec.label


@dataclass
class SweepSpec:
    """A parsed spec: named problems (label -> matrix, in spec order), algorithm settings, horizon, runs, seed;
    ``table``: the name its ``[sweep]`` table was given (``"experiment"``: the old name); ``regret``: the
    kind of regret (see :mod:`irbandits.simulate`)."""

    name: str
    path: Path
    problems: dict[str, PreferenceMatrix]
    settings: list[Setting]
    horizon: int
    runs: int
    seed: int = 0
    table: str = TABLE
    regret: str = "auto"

    @property
    def algorithms(self) -> list[AlgorithmSpec]:
        return [s.spec for s in self.settings]

    def tasks(self) -> list[Task]:
        """Every (problem, algorithm, run), problems outermost."""
        return [Task(p, s.label, r) for p in self.problems for s in self.settings for r in range(self.runs)]

    def regret_kinds(self) -> dict[str, str]:
        """Each problem's kind of regret: ``regret`` with ``auto`` resolved."""
        return {k: regret_kind(self.regret, p).name for k, p in self.problems.items()}

    def fingerprint(self) -> dict:
        """What results depend on beyond the task key: horizon, seed, each problem's matrix and kind of regret."""
        return dict(horizon=self.horizon, seed=self.seed,
                    problems={k: hashlib.sha256(p.p.tobytes()).hexdigest() for k, p in self.problems.items()},
                    regret_kinds=self.regret_kinds())

    def describe(self) -> dict:
        """The expanded spec as plain data (kept beside the results, read by the report)."""
        return dict(name=self.name, runs=self.runs, regret=self.regret, **self.fingerprint(),
                    algorithms=[dict(label=s.label, family=s.family, grid=s.grid) for s in self.settings])


def _whole(value: Any, where: str, minimum: int) -> int:
    """An integer >= minimum; a float like 1e8 is accepted when whole."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < minimum:
        raise IrbanditsError(f"{where}: must be a whole number >= {minimum}, got {value!r}")
    return int(value)


def _problem(entry: Any, where: str, base: Path) -> PreferenceMatrix:
    from irbandits.problems import PROBLEMS, get_problem

    if not isinstance(entry, str) or not entry:
        raise IrbanditsError(f"{where}: must be a problem name or a matrix file, got {entry!r}")
    import irbandits.synthetic  # noqa: F401  (registers the synthetic problems)

    if entry in PROBLEMS:
        return get_problem(entry)
    path = Path(entry) if Path(entry).is_absolute() else base / entry
    if not path.is_file():
        raise IrbanditsError(f"{where}: {entry!r} is neither a named problem ({', '.join(sorted(PROBLEMS))}) "
                             f"nor a matrix file ({path} does not exist)")
    try:
        return PreferenceMatrix.load(path)
    except IrbanditsError as exc:
        raise IrbanditsError(f"{where}: {exc}") from None


def _value_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _settings(entry: Any, where: str, family: str | None = None) -> list[Setting]:
    """The algorithm rows of one ``[[algorithms]]`` table: one per combination of its grid
    (``family``, default its name, groups them in the report)."""
    if not isinstance(entry, dict):
        raise IrbanditsError(f"{where}: must be a table with a name, got {entry!r}")
    unknown = sorted(set(entry) - ALGORITHM_KEYS)
    if unknown:
        raise IrbanditsError(f"{where}.{unknown[0]}: unknown key; keys: {', '.join(sorted(ALGORITHM_KEYS))}")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise IrbanditsError(f"{where}.name: missing (an algorithm like \"RUCB\" or \"MergeDTS:tuned\")")
    params, grid = entry.get("params", {}), entry.get("grid", {})
    for key, table in (("params", params), ("grid", grid)):
        if not isinstance(table, dict):
            raise IrbanditsError(f"{where}.{key}: must be a table like {{ alpha = 0.51 }}, got {table!r}")
    for param, values in grid.items():
        if not isinstance(values, list) or not values:
            raise IrbanditsError(f"{where}.grid.{param}: must be a non-empty list of values, got {values!r}")
        if len(set(map(_value_text, values))) != len(values):
            raise IrbanditsError(f"{where}.grid.{param}: a value is listed twice in {values!r}")
    fixed = ",".join(f"{k}={_value_text(v)}" for k, v in params.items())
    out = []
    for combo in itertools.product(*grid.values()):
        values = dict(zip(grid, combo))
        extra = ",".join(filter(None, [fixed, *(f"{k}={_value_text(v)}" for k, v in values.items())]))
        text = f"{name}{',' if extra and ':' in name else ':' if extra else ''}{extra}"
        try:
            out.append(Setting(parse_spec(text), family or name, values))
        except IrbanditsError as exc:
            raise IrbanditsError(f"{where} ({text}): {exc}") from None
    return out


def load_spec(path: str | Path) -> SweepSpec:
    """Read and check a TOML sweep spec; matrix files are relative to the spec's folder."""
    path = Path(path)
    if not path.is_file():
        raise IrbanditsError(f"{path}: no such file" if not path.exists() else f"{path}: is a directory, expected a file")
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise IrbanditsError(f"{path}: not valid TOML: {exc}") from None

    def fail(key: str, problem: str):
        raise IrbanditsError(f"{path}: {key}: {problem}")

    unknown = sorted(set(doc) - {TABLE, OLD_TABLE, "algorithms"})
    if unknown:
        fail(unknown[0], f"unknown table; a spec has [{TABLE}] and [[algorithms]]")
    if TABLE in doc and OLD_TABLE in doc:
        fail(OLD_TABLE, f"a spec has one [{TABLE}] table, and [{OLD_TABLE}] is its old name; move its keys into "
                        f"[{TABLE}] and remove [{OLD_TABLE}]")
    table = OLD_TABLE if OLD_TABLE in doc else TABLE  # errors name the table as the user wrote it
    exp = doc.get(table)
    if exp is None:
        fail(TABLE, f"missing table [{TABLE}] (problems, horizon, runs, seed)")
    if not isinstance(exp, dict):
        fail(table, f"must be a table [{table}] (problems, horizon, runs, seed), got {exp!r}")
    unknown = sorted(set(exp) - SWEEP_KEYS)
    if unknown:
        fail(f"{table}.{unknown[0]}", f"unknown key; keys: {', '.join(sorted(SWEEP_KEYS))}")
    for key in ("problems", "horizon", "runs"):
        if key not in exp:
            fail(f"{table}.{key}", "missing")
    try:
        horizon = _whole(exp["horizon"], f"{table}.horizon", 1)
        runs = _whole(exp["runs"], f"{table}.runs", 1)
        seed = _whole(exp.get("seed", 0), f"{table}.seed", 0)
        names = exp["problems"]
        if not isinstance(names, list) or not names:
            raise IrbanditsError(f"{table}.problems: must be a non-empty list of problem names or matrix files, "
                                 f"got {names!r}")
        problems: dict[str, PreferenceMatrix] = {}
        for i, entry in enumerate(names):
            P = _problem(entry, f"{table}.problems[{i}]", path.parent)
            if P.name in problems:
                raise IrbanditsError(f"{table}.problems[{i}]: a second problem named {P.name!r}")
            problems[P.name] = P
        regret = exp.get("regret", "auto")
        if not isinstance(regret, str):
            raise IrbanditsError(f"{table}.regret: must be a kind of regret like \"weak\", got {regret!r}")
        for P in problems.values():
            regret_kind(regret, P, f"{table}.regret")
        algorithms = doc.get("algorithms")
        if not isinstance(algorithms, list) or not algorithms:
            raise IrbanditsError("algorithms: missing; add at least one [[algorithms]] table with a name")
        names = [a.get("name") if isinstance(a, dict) else None for a in algorithms]
        settings = [s for i, a in enumerate(algorithms)
                    for s in _settings(a, f"algorithms[{i}]", f"{names[i]} (algorithms[{i}])" if names.count(names[i]) > 1
                                       else None)]
        seen: set[str] = set()
        for s in settings:
            if s.label in seen:
                raise IrbanditsError(f"algorithms: the setting {s.label} is given twice")
            seen.add(s.label)
        for s in settings:
            for P in problems.values():
                try:
                    s.spec.make(P.K, horizon=horizon)
                except IrbanditsError as exc:
                    raise IrbanditsError(f"algorithms ({s.label}) on problem {P.name}: {exc}") from None
    except IrbanditsError as exc:
        raise IrbanditsError(f"{path}: {exc}") from None
    name = exp.get("name", path.stem)
    if not isinstance(name, str) or not name:
        fail(f"{table}.name", f"must be a non-empty string, got {name!r}")
    return SweepSpec(name, path, problems, settings, horizon, runs, seed, table, regret.strip().lower())
