"""Load a scenario TOML file (following `extends`), apply `--set dotted.path=value` overrides, validate once.

`load_scenario` gives the typed `Scenario` a run is built from; `load_scenario_dict` and `apply_overrides` give
plain trees (what sweeps sample and manifests record). Every problem becomes an InputError naming the file, the
field, the value and what was expected, so the CLI can print one line and exit 2.
"""

from __future__ import annotations

import copy
import hashlib
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from model.errors import InputError, nearest
from model.scenario.schema import Scenario, path_is_known
from model.scenario.validation import validate, validate_overridden

MAX_EXTENDS_DEPTH = 8


def _read_toml(path: Path) -> dict[str, Any]:
    if path.is_dir():
        raise InputError(f"{path}: is a folder (expected a scenario file, e.g. scenarios/baseline.toml)")
    if not path.is_file():
        raise InputError(f"{path}: scenario file not found")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"{path}: line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); expected a TOML "
                         "file in UTF-8") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message already carries "(at line N, column M)".
        raise InputError(f"{path}: invalid TOML: {exc}") from None


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def load_scenario(path: Path | str, overrides: Sequence[str] = (), source: str = "--set") -> Scenario:
    """The typed scenario of a file, with `extends = "other.toml"` (relative to the file) merged underneath and
    `overrides` (`dotted.path=value`) applied, validated once (InputError naming the file that sets the bad field,
    or `source` for an override)."""
    path = Path(path)
    return scenario_from_tree(_sort_dated(_load_merged(path)), overrides, source, origin=path)


def scenario_from_tree(tree: dict[str, Any], overrides: Sequence[str] = (), source: str = "--set",
                       origin: str | Path = "parameters") -> Scenario:
    """The typed scenario of a resolved tree (from `origin`) with `overrides` applied, validated once."""
    if not overrides:
        return validate(tree, origin)
    return validate_overridden(tree, _overridden(tree, overrides, source), origin, source)


def load_scenario_dict(path: Path | str) -> dict[str, Any]:
    """The scenario as a validated plain tree (`load_scenario(path).tree`)."""
    return load_scenario(path).tree


DATED_SERIES = (("supplier", "cowos_wafers_per_month"), ("supplier", "hbm_tb_per_month"))


def _sort_dated(tree: dict[str, Any]) -> dict[str, Any]:
    """Put the anchors of dated series in date order, so a child scenario can add one anywhere."""
    for path in DATED_SERIES:
        node: Any = tree
        for part in path[:-1]:
            node = node.get(part, {}) if isinstance(node, dict) else {}
        series = node.get(path[-1]) if isinstance(node, dict) else None
        if isinstance(series, dict):
            node[path[-1]] = dict(sorted(series.items(), key=lambda kv: str(kv[0])))
    return tree


def _load_merged(path: Path, _depth: int = 0) -> dict[str, Any]:
    data = _read_toml(path)
    parent = data.pop("extends", None)
    if parent is None:
        return data
    if not isinstance(parent, str):
        raise InputError(f"{path}: extends: expected a file name, got {parent!r}")
    if _depth >= MAX_EXTENDS_DEPTH:
        raise InputError(f"{path}: extends: more than {MAX_EXTENDS_DEPTH} levels (a cycle?)")
    base = _load_merged(path.parent / parent, _depth + 1)
    return _merge(base, data)


def scenario_hash(path: Path | str) -> str:
    """sha256 of the scenario file's bytes (its `extends` parents are recorded through the resolved parameters)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _coerce(text: str, like: Any, where: str) -> Any:
    """Parse an override value as a TOML value of the same type as the value it replaces."""
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        value = text  # a bare word: treat as a string
    if isinstance(like, bool):
        if isinstance(value, bool):
            return value
        raise InputError(f"{where}: expected true or false, got {text!r}")
    if isinstance(like, (int, float)) and not isinstance(like, bool):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value) if isinstance(like, float) else value
        raise InputError(f"{where}: expected a number, got {text!r}")
    if isinstance(like, str) and not isinstance(value, str):
        return text
    if isinstance(like, list) and not isinstance(value, list):
        raise InputError(f"{where}: expected a list like [1, 2], got {text!r}")
    return value


def apply_overrides(data: dict[str, Any], overrides: Sequence[str], source: str = "--set") -> dict[str, Any]:
    """A validated tree's values overridden (`dotted.path=value`), validated again; the result as a plain tree."""
    if not overrides:
        return copy.deepcopy(data)
    return scenario_from_tree(data, overrides, source).tree


def override_scenario(scenario: Scenario, overrides: Sequence[str], source: str = "--set") -> Scenario:
    """A typed scenario with values overridden (`dotted.path=value`), validated once."""
    return scenario_from_tree(scenario.tree, overrides, source) if overrides else scenario


def _overridden(data: dict[str, Any], overrides: Sequence[str], source: str) -> dict[str, Any]:
    """A copy of `data` with `dotted.path=value` overrides applied (not validated). A path must exist in the
    scenario or be one the schema knows (an optional field the file leaves out); otherwise the nearest name is
    suggested; a value is parsed as TOML of the type of the value it replaces."""
    out = copy.deepcopy(data)
    for item in overrides:
        if "=" not in item:
            raise InputError(f"{source} {item!r}: expected KEY=VALUE with a dotted key, e.g. supply.slip_months=6")
        dotted, text = item.split("=", 1)
        parts = dotted.strip().split(".")
        if not dotted.strip() or any(not p.strip() for p in parts):
            raise InputError(f"{source} {item!r}: expected KEY=VALUE with a dotted key like supplier.slip_months, "
                             f"got the key {dotted.strip()!r}")
        parts = [p.strip() for p in parts]
        node: Any = out
        for depth, part in enumerate(parts):
            where = f"{source} {'.'.join(parts[: depth + 1])}"
            if not isinstance(node, dict):
                raise InputError(f"{where}: {'.'.join(parts[:depth])} is a value, not a table")
            last = depth == len(parts) - 1
            if part not in node:
                if not path_is_known(parts[: depth + 1]):
                    raise InputError(f"{where}: unknown key{nearest(part, list(node))}")
                # a key the schema knows that this scenario leaves out (an optional field, a system's delay)
                node[part] = _coerce(text.strip(), None, where) if last else {}
            elif last:
                if isinstance(node[part], dict):
                    raise InputError(f"{where}: is a table; set one of its keys ({', '.join(node[part])})")
                node[part] = _coerce(text.strip(), node[part], where)
            if not last:
                node = node[part]
    return out
