"""Names and units as a reader sees them: scenario titles, agents, systems, sampled parameters with their ranges.

Tables and CSV files keep the keys (`label` is the folder name, `agent` and `system` the model's keys); only what is
drawn or written for a reader goes through here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from model.results import ResultSet, Source
from model.results.names import agent_name

ROOT = Path(__file__).resolve().parents[1]
KIND_NAMES = {"hyperscaler": "Hyperscalers", "neocloud": "Neoclouds", "lab": "AI labs", "other": "Rest of market"}
KIND_SINGULAR = {"hyperscaler": "hyperscaler", "neocloud": "neocloud", "lab": "lab", "other": "rest of market"}
UNIT_SUFFIXES = (("_usd_bn", "USD bn"), ("_usd", "USD"), ("_months", "months"), ("_days", "days"), ("_mw", "MW"),
                 ("_gpus", "GPUs"), ("_years", "years"), ("_h100e", "H100e"))
SECTIONS = {"supplier": "NVIDIA supply", "kinds": "", "frontier": "Frontier runs", "rental": "Rental price"}


@cache
def system_name(key: str) -> str:
    """The catalog's name of a system without its parenthesised note ("HGX H100 (8-GPU)" -> "HGX H100")."""
    from model.hardware import systems  # lazy: the catalog file is read on the first name asked for

    s = systems().get(key)
    if s is None:
        return key
    return re.sub(r"\s*\([^)]*\)\s*$", "", s.name).strip() or s.name


@cache
def system_vendor(key: str) -> str:
    """The catalog's vendor of a system ("" when the catalog does not know the key)."""
    from model.hardware import systems  # lazy: the catalog file is read on the first name asked for

    s = systems().get(key)
    return s.vendor if s is not None else ""


def _read_comment(path: Path) -> list[str]:
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return lines


def scenario_file(name: str, folder: Path | None = None) -> Path | None:
    """The scenario file a result names (as given on the command line): as is, beside the result folder's parents,
    or under the repository; None when none of those exists."""
    if not name:
        return None
    path = Path(name)
    candidates = [path] if path.is_absolute() else [Path.cwd() / path, ROOT / path, ROOT / "scenarios" / path.name]
    if folder is not None and not path.is_absolute():
        candidates += [p / path for p in Path(folder).resolve().parents]
    return next((c for c in candidates if c.is_file()), None)


def scenario_title(name: str, folder: Path | None = None) -> str:
    """The scenario's title: its opening comment up to the first colon ("Rubin delay"; "airace baseline" reads
    "Baseline"), else the file name without its extension."""
    path = scenario_file(name, folder)
    stem = Path(name).stem if name else ""
    if path is None:
        return stem or "?"
    comment = _read_comment(path)
    if not comment or ":" not in comment[0]:
        return stem
    title = comment[0].split(":", 1)[0].strip()
    title = re.sub(r"^airace\s+", "", title)
    return title[:1].upper() + title[1:] if title else stem


def scenario_story(name: str, folder: Path | None = None) -> str:
    """The scenario file's opening comment, whole (what the scenario changes and asks)."""
    path = scenario_file(name, folder)
    return " ".join(_read_comment(path)) if path else ""


def _override_text(item: str) -> str:
    key, _, value = item.partition("=")
    return f"{parameter_name(key.strip())} = {value.strip()}"


def input_titles(rs: ResultSet) -> dict[str, str]:
    """{label: title} for every input: the scenario's title, its `--set` overrides, and where two inputs still read
    the same, what kind of result each is (a run and its seed, a sweep and its runs), then the folder name."""
    titles = {}
    for src in rs.sources:
        title = scenario_title(src.scenario_file, src.path)
        overrides = [o for o in src.manifest.get("overrides", []) if isinstance(o, str)]
        if overrides:
            title += " (" + "; ".join(_override_text(o) for o in overrides) + ")"
        titles[src.label] = title
    counts = _counts(titles.values())
    for src in rs.sources:
        if counts[titles[src.label]] > 1:
            titles[src.label] += (f", sweep of {src.n_runs} runs" if src.is_sweep
                                  else f", seed {src.manifest.get('seed', '?')}")
    counts = _counts(titles.values())
    for src in rs.sources:
        if counts[titles[src.label]] > 1:
            titles[src.label] += f" [{src.label}]"
    return titles


def _counts(values) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def describe_runs(src: Source) -> str:
    """"one run (seed 3)" or "median and 5-95% of 8 runs"."""
    if src.n_runs > 1:
        return f"median and 5-95% range of {src.n_runs} runs"
    return f"one run (seed {src.manifest.get('seed', '?')})"


# -- sampled parameters ---------------------------------------------------------------------------------------------
def _humanise(word: str) -> str:
    return word.replace("_", " ")


def parameter_name(path: str) -> str:
    """A dotted scenario path as words with its unit: "kinds.hyperscaler.wait_tau_months" -> "Hyperscalers: wait
    tau (months)", "supplier.delay_months.vr_nvl72" -> "NVIDIA supply: Vera Rubin NVL72 delay (months)"."""
    parts = [p for p in path.split(".") if p]
    if not parts:
        return path
    qualifier = ""
    if parts[0] == "kinds" and len(parts) > 2:
        qualifier, parts = KIND_NAMES.get(parts[1], _humanise(parts[1])), parts[2:]
    elif parts[0] in SECTIONS and len(parts) > 1:
        qualifier, parts = SECTIONS[parts[0]], parts[1:]
    elif parts[0] in ("hyperscaler", "neocloud", "lab", "other") and len(parts) > 2:
        qualifier, parts = agent_name(parts[1]), parts[2:]
    name, unit = parts[0], ""
    for suffix, text in UNIT_SUFFIXES:
        if name.endswith(suffix):
            name, unit = name[: -len(suffix)], text
            break
    words = _humanise(name)
    if len(parts) > 1:  # a table keyed by system or year: "delay (months)" of "Vera Rubin NVL72"
        key = parts[-1]
        words = f"{system_name(key) if '_' in key or key.startswith('hgx') else key} {words}"
    text = words + (f" ({unit})" if unit else "")
    return f"{qualifier}: {text}" if qualifier else text[:1].upper() + text[1:]


def _num(x: Any) -> str:
    return f"{x:g}" if isinstance(x, int | float) and not isinstance(x, bool) else str(x)


def parameter_range(spec: Mapping[str, Any]) -> str:
    """The sampled range of one `[sweep]` entry: "0.5-1.5", "N(1, 0.15) in 0.6-1.4", "one of 0, 3, 6"."""
    dist = spec.get("dist")
    if dist == "uniform":
        return f"{_num(spec.get('low'))}-{_num(spec.get('high'))}"
    if dist == "normal":
        text = f"N({_num(spec.get('mean'))}, {_num(spec.get('sd'))})"
        if "low" in spec or "high" in spec:
            text += f" in {_num(spec.get('low', '-inf'))}-{_num(spec.get('high', 'inf'))}"
        return text
    if dist == "choice":
        return "one of " + ", ".join(_num(v) for v in spec.get("values", []))
    return ""


def parameter_labels(paths: Sequence[str], specs: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """{path: "readable name [range]"} for the parameters of a sweep (`specs`: sweep.json's `parameters`)."""
    out = {}
    for p in paths:
        rng = parameter_range(specs.get(p, {})) if isinstance(specs.get(p), Mapping) else ""
        out[p] = parameter_name(p) + (f" [{rng}]" if rng else "")
    return out
