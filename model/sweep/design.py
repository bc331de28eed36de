"""The experimental design of a sweep: the scenario's `[sweep]` table, validated, sampled by Latin hypercube.

Each entry names a scenario value by dotted path and a distribution (uniform, normal, choice). N runs get one
Latin hypercube of N points in [0, 1)^d (scipy's `LatinHypercube`, seeded with the base seed), mapped through each
parameter's inverse CDF; a value that is an int in the scenario is rounded. The samples are applied through
`model.scenario.apply_overrides`, so they are type-checked exactly like `--set`.
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


@dataclass(frozen=True)
class Design:
    """What a sweep runs: the base parameters (no `[sweep]` table), the sampled parameters, and the samples."""

    design: str  # "lhs" | "seeds"
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


def parse_sweep_table(params: dict[str, Any], source: str) -> tuple[dict[str, Any], tuple[ParamSpec, ...]]:
    """Split the scenario into base parameters (without `[sweep]`) and validated parameter specs."""
    base = copy.deepcopy(params)
    table = base.pop("sweep", None)
    if table is None:
        return base, ()
    if not isinstance(table, dict):
        raise InputError(f"{source}: sweep: expected a table of dotted parameter names, got {table!r}")
    specs = []
    for path, spec in table.items():
        where = f"{source}: [sweep] {path!r}"
        current = _lookup(base, path, where)
        specs.append(_parse_spec(path, spec, current, where))
    return base, tuple(specs)


def lhs_unit(n: int, d: int, seed: int) -> np.ndarray:
    """n points of a d-dimensional Latin hypercube in [0, 1)^d: each of n equal bins of each axis holds one point."""
    from scipy.stats import qmc

    return qmc.LatinHypercube(d=d, rng=seed).random(n)


def build_design(params: dict[str, Any], runs: int, base_seed: int, source: str) -> Design:
    """Validate the `[sweep]` table and draw the samples of every run; bad values raise InputError up front."""
    base, specs = parse_sweep_table(params, source)
    if not specs:
        return Design("seeds", (), base, tuple({} for _ in range(runs)))
    u = lhs_unit(runs, len(specs), base_seed)
    columns = [spec.inverse_cdf(u[:, j]) for j, spec in enumerate(specs)]
    samples = tuple({spec.path: columns[j][i] for j, spec in enumerate(specs)} for i in range(runs))
    design = Design("lhs", specs, base, samples)
    for spec, column in zip(specs, columns, strict=True):  # type-check every choice and a sample like --set would
        for value in spec.fields["values"] if spec.dist == "choice" else column[:1]:
            apply_overrides(base, [f"{spec.path}={toml_literal(value)}"], source=f"{source}: [sweep]")
    return design

