"""The experimental design of a sweep: the scenario's `[sweep]` table, validated and sampled.

Each entry names a scenario value by dotted path and a distribution (uniform, normal, choice). The table's
optional `method` says how the unit cube [0, 1)^d is sampled, each point then mapped through each parameter's
inverse CDF (a value that is an int in the scenario is rounded):

- `"lhs"` (default): one Latin hypercube of N points (scipy's `LatinHypercube`, seeded with the base seed); any
  number of runs; analysed with moment-independent (delta) and RBD-FAST indices and rank correlations.
- `"sobol"`: SALib's Saltelli extension of the Sobol' sequence with second-order terms, N x (2d + 2) runs for N a
  power of two; analysed with first, total and second-order Sobol' indices.
- `"morris"`: SALib's Morris trajectories on its 4-level grid (0, 1/3, 2/3 and 1 of each parameter's quantile
  range, steps of 2/3 of it), r x (d + 1) runs; analysed with mu*, mu and sigma of the elementary effects. The grid
  reaches both ends of each range, so a normal distribution needs `low` and `high`; every step moves a `choice`
  parameter to another value, and a rounded int whose step would not is refused.

Run i of any design keeps its own seed (base + i): stochastic noise is part of every index, which the analysis
measures against a noise floor. The samples are applied through `model.scenario.apply_overrides`, so they are
type-checked exactly like `--set`.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from model.errors import InputError, nearest
from model.scenario.loading import apply_overrides

DISTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # dist -> (required fields, optional fields)
    "uniform": (("low", "high"), ()),
    "normal": (("mean", "sd"), ("low", "high")),
    "choice": (("values",), ()),
}


@dataclass(frozen=True)
class ParamSpec:
    """One sampled parameter: dotted path, distribution and its fields, and whether the scenario value is an int."""

    path: str
    dist: str
    fields: dict[str, Any]
    is_int: bool

    def inverse_cdf(self, u: np.ndarray) -> list[Any]:
        """Map uniform [0, 1) draws to values of this parameter."""
        if self.dist == "choice":
            values = self.fields["values"]
            idx = np.minimum((u * len(values)).astype(int), len(values) - 1)
            return [copy.deepcopy(values[i]) for i in idx]
        if self.dist == "uniform":
            x = self.fields["low"] + u * (self.fields["high"] - self.fields["low"])
        else:
            from scipy import stats

            mean, sd = self.fields["mean"], self.fields["sd"]
            if "low" in self.fields or "high" in self.fields:
                a = (self.fields.get("low", -math.inf) - mean) / sd
                b = (self.fields.get("high", math.inf) - mean) / sd
                x = stats.truncnorm.ppf(u, a, b, loc=mean, scale=sd)
            else:
                x = stats.norm.ppf(u, loc=mean, scale=sd)
        return [round(float(v)) if self.is_int else float(v) for v in x]


METHODS = ("lhs", "sobol", "morris")
MORRIS_LEVELS = 4  # grid levels of a Morris design (SALib's default): a step is 4 / (2 x 3) = 2/3 of the range


@dataclass(frozen=True)
class Design:
    """What a sweep runs: the base parameters (no `[sweep]` table), the sampled parameters, and the samples."""

    design: str  # "lhs" | "sobol" | "morris" | "seeds"
    specs: tuple[ParamSpec, ...]
    base_params: dict[str, Any]
    samples: tuple[dict[str, Any], ...]  # one {dotted path: value} per run ({} for a seeds design)

    @property
    def parameter_names(self) -> list[str]:
        return [s.path for s in self.specs]

    def spec_table(self) -> dict[str, dict[str, Any]]:
        return {s.path: {"dist": s.dist, **s.fields} for s in self.specs}

    def run_params(self, run: int, source: str) -> dict[str, Any]:
        """The resolved parameter tree of one run (validated like `--set`)."""
        sets = [f"{path}={toml_literal(value)}" for path, value in self.samples[run].items()]
        return apply_overrides(self.base_params, sets, source=source) if sets else copy.deepcopy(self.base_params)


def toml_literal(value: Any) -> str:
    """A value as TOML text, so `apply_overrides` parses back exactly the same value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} as a TOML value")


def params_sha256(params: dict[str, Any]) -> str:
    """A stable hash of a parameter tree (what resume compares, beyond the scenario file's own hash)."""
    return hashlib.sha256(canonical_json(params).encode()).hexdigest()


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _lookup(params: dict[str, Any], dotted: str, where: str) -> Any:
    node: Any = params
    parts = [p for p in dotted.split(".") if p]
    if not parts:
        raise InputError(f"{where}: expected a dotted parameter name such as supplier.supply_growth_multiplier")
    for depth, part in enumerate(parts):
        if not isinstance(node, dict):
            raise InputError(f"{where}: {'.'.join(parts[:depth])} is a value, not a table")
        if part not in node:
            raise InputError(f"{where}: unknown scenario key {'.'.join(parts[: depth + 1])!r}"
                             f"{nearest(part, list(node))}")
        node = node[part]
    if isinstance(node, dict):
        raise InputError(f"{where}: is a table; sample one of its keys ({', '.join(node)})")
    return node


def _parse_spec(path: str, spec: Any, current: Any, where: str) -> ParamSpec:
    if not isinstance(spec, dict) or "dist" not in spec:
        raise InputError(f'{where}: expected a table like {{ dist = "uniform", low = 0.5, high = 1.5 }}, got {spec!r}')
    dist = spec["dist"]
    if dist not in DISTS:
        raise InputError(f"{where}.dist: unknown distribution {dist!r}, expected uniform, normal or choice"
                         f"{nearest(str(dist), list(DISTS))}")
    required, optional = DISTS[dist]
    fields = {k: v for k, v in spec.items() if k != "dist"}
    for key in fields:
        if key not in required + optional:
            raise InputError(f"{where}.{key}: unknown field for dist {dist!r}, expected "
                             f"{' and '.join(required + optional)}{nearest(key, list(required + optional))}")
    for key in required:
        if key not in fields:
            raise InputError(f"{where}: dist {dist!r} needs {key!r} (fields: {', '.join(required)})")
    is_int = isinstance(current, int) and not isinstance(current, bool)
    if dist == "choice":
        values = fields["values"]
        if not isinstance(values, list) or not values:
            raise InputError(f"{where}.values: expected a non-empty list, got {values!r}")
        return ParamSpec(path, dist, fields, is_int)
    if not _is_number(current):
        raise InputError(f"{where}: the scenario value is {current!r}, not a number; only dist = \"choice\" "
                         "can sample it")
    for key, value in fields.items():
        if not _is_number(value):
            raise InputError(f"{where}.{key}: expected a finite number, got {value!r}")
    if "low" in fields and "high" in fields and not fields["low"] < fields["high"]:
        raise InputError(f"{where}: expected low < high, got low = {fields['low']!r}, high = {fields['high']!r}")
    if dist == "normal" and not fields["sd"] > 0:
        raise InputError(f"{where}.sd: expected a positive standard deviation, got {fields['sd']!r}")
    if dist == "normal" and not fields.get("low", -math.inf) < fields["mean"] < fields.get("high", math.inf):
        raise InputError(f"{where}.mean: expected the mean {fields['mean']!r} inside the truncation bounds")
    return ParamSpec(path, dist, fields, is_int)


def sweep_method(params: dict[str, Any], source: str) -> str:
    """The `[sweep]` table's `method` ("lhs" when absent), or an InputError naming the value and the choices."""
    table = params.get("sweep")
    method = table.get("method", "lhs") if isinstance(table, dict) else "lhs"
    if method not in METHODS:
        raise InputError(f"{source}: [sweep] method: expected one of {', '.join(METHODS)}, got {method!r}"
                         f"{nearest(str(method), list(METHODS))}")
    return method


def parse_sweep_table(params: dict[str, Any], source: str) -> tuple[dict[str, Any], tuple[ParamSpec, ...]]:
    """Split the scenario into base parameters (without `[sweep]`) and validated parameter specs (the table's
    `method` key is the design's, not a parameter: `sweep_method`)."""
    base = copy.deepcopy(params)
    table = base.pop("sweep", None)
    if table is None:
        return base, ()
    if not isinstance(table, dict):
        raise InputError(f"{source}: sweep: expected a table of dotted parameter names, got {table!r}")
    specs = []
    for path, spec in table.items():
        if path == "method":
            continue
        where = f"{source}: [sweep] {path!r}"
        current = _lookup(base, path, where)
        specs.append(_parse_spec(path, spec, current, where))
    return base, tuple(specs)


def lhs_unit(n: int, d: int, seed: int) -> np.ndarray:
    """n points of a d-dimensional Latin hypercube in [0, 1)^d: each of n equal bins of each axis holds one point."""
    from scipy.stats import qmc

    return qmc.LatinHypercube(d=d, rng=seed).random(n)


def _unit_problem(d: int) -> dict[str, Any]:
    return {"num_vars": d, "names": [f"x{i}" for i in range(d)], "bounds": [[0.0, 1.0]] * d}


def sobol_unit(runs: int, d: int, seed: int, source: str = "--runs") -> np.ndarray:
    """The runs x d points of SALib's Saltelli/Sobol' design (second order) in [0, 1)^d; `runs` must be N(2d + 2)
    with N a power of two."""
    from SALib.sample import sobol  # lazy: SALib only for designs that need it

    block = 2 * d + 2
    n = runs // block
    if runs % block or n < 1 or n & (n - 1):
        choices = ", ".join(str(block * 2**k) for k in range(6))
        raise InputError(f"{source}: --runs {runs}: a Sobol design of {d} parameters runs N x (2 x {d} + 2) = "
                         f"N x {block} runs with N a power of two; expected one of {choices}, ...")
    return sobol.sample(_unit_problem(d), n, calc_second_order=True, scramble=True, seed=seed)


def morris_unit(runs: int, d: int, seed: int, source: str = "--runs") -> np.ndarray:
    """The runs x d points of SALib's Morris trajectories on its grid (module docstring); `runs` must be r(d + 1)
    with at least two trajectories."""
    from SALib.sample import morris  # lazy: SALib only for designs that need it

    r = runs // (d + 1)
    if runs % (d + 1) or r < 2:
        choices = ", ".join(str((d + 1) * k) for k in (2, 5, 10, 20))
        raise InputError(f"{source}: --runs {runs}: a Morris design of {d} parameters runs r trajectories of "
                         f"{d} + 1 = {d + 1} runs, r >= 2; expected a multiple of {d + 1} such as {choices}")
    return morris.sample(_unit_problem(d), r, num_levels=MORRIS_LEVELS, seed=seed)


def unit_design(method: str, runs: int, d: int, seed: int, source: str = "--runs") -> np.ndarray:
    """The runs x d points in [0, 1)^d of a design method ("lhs", "sobol", "morris"), in run order."""
    if method == "sobol":
        return sobol_unit(runs, d, seed, source)
    if method == "morris":
        return morris_unit(runs, d, seed, source)
    return lhs_unit(runs, d, seed)


def _check_morris_steps(specs: tuple[ParamSpec, ...], source: str) -> None:
    """The grid's ends must be values (an untruncated normal's are infinite), and every Morris step must change the
    parameter it moves, or its elementary effect is lost (a rounded int with a narrow range)."""
    levels = np.arange(MORRIS_LEVELS) / (MORRIS_LEVELS - 1)
    half = MORRIS_LEVELS // 2
    for spec in specs:
        if spec.dist == "normal" and not ("low" in spec.fields and "high" in spec.fields):
            raise InputError(f"{source}: [sweep] {spec.path!r}: a Morris design samples both ends of each range; "
                             "give this normal distribution low and high")
        values = spec.inverse_cdf(levels)
        if any(values[k] == values[k + half] for k in range(half)):
            raise InputError(f"{source}: [sweep] {spec.path!r}: a Morris step of 2/3 of its range does not change "
                             f"its value (levels give {values}); widen the range or use dist = \"choice\"")


def build_design(params: dict[str, Any], runs: int, base_seed: int, source: str) -> Design:
    """Validate the `[sweep]` table and draw the samples of every run; bad values raise InputError up front."""
    method = sweep_method(params, source)
    base, specs = parse_sweep_table(params, source)
    if not specs:
        if method != "lhs":
            raise InputError(f"{source}: [sweep] method = {method!r} needs sampled parameters; the table has none")
        return Design("seeds", (), base, tuple({} for _ in range(runs)))
    if method == "morris":
        _check_morris_steps(specs, source)
    u = unit_design(method, runs, len(specs), base_seed, source)
    columns = [spec.inverse_cdf(u[:, j]) for j, spec in enumerate(specs)]
    samples = tuple({spec.path: columns[j][i] for j, spec in enumerate(specs)} for i in range(runs))
    design = Design(method, specs, base, samples)
    for spec, column in zip(specs, columns, strict=True):  # type-check every choice and a sample like --set would
        for value in spec.fields["values"] if spec.dist == "choice" else column[:1]:
            apply_overrides(base, [f"{spec.path}={toml_literal(value)}"], source=f"{source}: [sweep]")
    return design

