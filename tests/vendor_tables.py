"""A result folder with known shares on other vendors' systems, made from a short run: other vendors' systems are
cleared first (the run's own TPUs, Trainium and AMD), then Google's compute is put partly on TPUs, AWS's partly on
Trainium, the rest of the market's partly on AMD, each with the shipments behind it. The tests then know exactly what
the figures, the report, `compare` and the app must show (the numbers are made up, the tables' shapes and units are
not)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from model.hardware import systems

# owner -> (system, share of its H100e moved onto that system from its NVIDIA GPUs)
MOVED = {"google": ("tpu_v7", 0.5), "aws": ("trn2_ultraserver", 0.4), "rest_of_market": ("mi355x", 0.2)}


def vendorize(src: Path, dst: Path) -> Path:
    """Copy the result folder `src` to `dst` with part of some owners' compute on other vendors' systems (the
    agents table's GPUs, H100e and largest cluster, the market table's shipments)."""
    shutil.copytree(src, dst)
    catalog = systems()
    agents = pd.read_parquet(dst / "agents.parquet")
    market = pd.read_parquet(dst / "market.parquet")
    online_cols = [c for c in agents.columns if c.startswith("gpus_online_") and c != "gpus_online"]
    nvidia_cols = [c for c in online_cols if catalog[c.removeprefix("gpus_online_")].vendor == "NVIDIA"]
    for c in set(online_cols) - set(nvidia_cols):  # clear the run's own other-vendor systems
        agents[c] = 0
    agents["h100e"] = sum(agents[c] * catalog[c.removeprefix("gpus_online_")].h100e_per_gpu for c in nvidia_cols)
    for c in [c for c in market.columns if c.startswith("units_shipped_")]:
        if catalog[c.removeprefix("units_shipped_")].vendor != "NVIDIA":
            market[c] = 0
    for agent, (system, share) in MOVED.items():
        per_gpu = catalog[system].h100e_per_gpu
        rows = agents["agent"] == agent
        chips = np.floor(agents.loc[rows, "h100e"] * share / per_gpu).astype("int64")
        keep = 1.0 - share
        for c in nvidia_cols:
            agents.loc[rows, c] = np.floor(agents.loc[rows, c] * keep).astype("int64")
        agents[f"gpus_online_{system}"] = agents.get(f"gpus_online_{system}", 0)
        agents.loc[rows, f"gpus_online_{system}"] = chips
        h100e = sum(agents.loc[rows, c] * catalog[c.removeprefix("gpus_online_")].h100e_per_gpu for c in nvidia_cols)
        agents.loc[rows, "h100e"] = h100e + chips * per_gpu
        if agent == "google":  # its largest cluster becomes a TPU cluster
            agents.loc[rows, "largest_cluster_gpus"] = chips
            agents.loc[rows, "largest_cluster_systems"] = np.where(chips > 0, system, "")
        units = agents[rows].set_index("date")[f"gpus_online_{system}"].diff().clip(lower=0).fillna(0)
        units = (units / catalog[system].gpus_per_system).round().astype("int64")
        market[f"units_shipped_{system}"] = market["date"].map(units).fillna(0).astype("int64")
    online_cols = [c for c in agents.columns if c.startswith("gpus_online_") and c != "gpus_online"]
    for c in online_cols:
        agents[c] = agents[c].fillna(0).astype("int64")
    agents["gpus_online"] = agents[online_cols].sum(axis=1)
    agents.to_parquet(dst / "agents.parquet")
    market.to_parquet(dst / "market.parquet")
    return dst
