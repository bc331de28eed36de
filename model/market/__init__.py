"""The market: a Mesa 3.5 agent-based model of the accelerator vendors (NVIDIA, AMD, Google TPU, AWS Trainium) on shared
packaging and memory, providers, labs and the rest of the market."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version

import pandas as pd

from model.capability.table import CapabilityTable
from model.market.events import EVENT_COLUMNS
from model.market.model import MarketModel
from model.scenario import Scenario, validate


@dataclass
class Results:
    """One run's tables (DESIGN.md columns) and its manifest."""

    agents: pd.DataFrame
    market: pd.DataFrame
    events: pd.DataFrame
    manifest: dict = field(default_factory=dict)

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"agents": self.agents, "market": self.market, "events": self.events}


def run_params(params: Scenario | dict, seed: int = 0, capability: CapabilityTable | None = None) -> Results:
    """Run a scenario for one seed: a validated `Scenario` (`model.scenario.load_scenario`), or a resolved
    parameter tree, validated here. `capability`: the scenario's capability table (default: the one
    `model.capability.build` keeps for it in this process). The manifest's `parameters` is the plain tree (without
    `[sweep]`)."""
    t0 = time.perf_counter()
    started = datetime.now(UTC).isoformat()
    scenario = params if isinstance(params, Scenario) else validate(params, "parameters")
    m = MarketModel.from_params(scenario, seed=seed, capability=capability)
    m.run()
    res = Results(m.agents_frame(), m.market_frame(), m.events_frame())
    try:
        pkg = version("airace")
    except Exception:  # noqa: BLE001
        pkg = "unknown"
    res.manifest = {
        "parameters": {key: value for key, value in scenario.tree.items() if key != "sweep"},
        "seed": seed,
        "package_version": pkg,
        "start_time": started,
        "wall_time_s": time.perf_counter() - t0,
    }
    return res


__all__ = ["EVENT_COLUMNS", "MarketModel", "Results", "run_params"]
