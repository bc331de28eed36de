"""The market: a Mesa 3.5 agent-based model of NVIDIA supply, providers, labs and the rest of the market."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import pandas as pd

from model.market.model import EVENT_COLUMNS, MarketModel


@dataclass
class Results:
    agents: pd.DataFrame
    market: pd.DataFrame
    events: pd.DataFrame
    manifest: dict = field(default_factory=dict)

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"agents": self.agents, "market": self.market, "events": self.events}


def _set(d: dict, dotted: str, value) -> None:
    *head, last = dotted.split(".")
    for h in head:
        d = d.setdefault(h, {})
    d[last] = value


def run_params(params: dict, seed: int = 0) -> Results:
    t0 = time.perf_counter()
    started = datetime.now(UTC).isoformat()
    m = MarketModel.from_params(params, seed=seed)
    m.run()
    res = Results(m.agents_frame(), m.market_frame(), m.events_frame())
    try:
        pkg = version("airace")
    except Exception:  # noqa: BLE001
        pkg = "unknown"
    res.manifest = {
        "parameters": params,
        "seed": seed,
        "package_version": pkg,
        "start_time": started,
        "wall_time_s": time.perf_counter() - t0,
    }
    return res


def run_scenario(path, seed: int = 0, overrides: dict | None = None) -> Results:
    """Run a scenario TOML (with `extends`) for one seed; overrides are {"dotted.key": value}."""
    from model.scenario.loading import load_scenario_dict, scenario_hash

    params = load_scenario_dict(path)
    for k, v in (overrides or {}).items():
        _set(params, k, v)
    res = run_params(params, seed)
    res.manifest = {"scenario_file": str(Path(path)), "scenario_sha256": scenario_hash(path), **res.manifest}
    return res


__all__ = ["EVENT_COLUMNS", "MarketModel", "Results", "run_params", "run_scenario"]
