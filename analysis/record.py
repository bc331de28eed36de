"""The public record the figures set the model beside: the sourced files in `analysis/data/`, read once.

Every row carries its source URL and kind (reported, estimate, guidance, projection); see `analysis/data/README.md`.
Owners are matched to the model's agents by name (`owner_agent`); a company the model does not simulate (Tesla,
IREN) keeps no agent. Nothing here feeds the model: these are checks, except where the data README lists a fact as
also being a scenario input (capex by year, some campus powers), which the figures then say.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pandas as pd

from model.errors import InputError
from model.results import outcomes as O

DATA = Path(__file__).parent / "data"
FILES = {
    "revenue": "nvidia_dc_revenue.csv", "clusters": "public_clusters.csv", "frontier_runs": "frontier_runs.csv",
    "h100e": "h100e_by_owner.csv", "shipments": "gpu_shipments.csv", "power": "power_by_owner.csv",
    "capex": "capex_by_owner.csv", "rental": "rental_prices.csv", "first_deployments": "first_deployments.csv",
}
# Names in the record that differ from the model's agent names (others match case-insensitively once spaces are
# underscores: "CoreWeave" -> coreweave, "xAI" -> xai).
OWNER_ALIASES = {"amazon": "aws", "alphabet": "google", "google deepmind": "google_deepmind"}
KIND_MARKERS = {"reported": "o", "estimate": "s", "guidance": "^", "projection": "v"}


@dataclass(frozen=True)
class RecordFile:
    """One reference file: its key, path, the comment block that says what it holds, rows and distinct sources."""

    key: str
    path: Path
    description: str
    rows: int
    sources: tuple[str, ...]


def owner_agent(owner: str) -> str | None:
    """The model's agent for an owner named in the record, or None ("Big-4 (...)", "World", Tesla)."""
    from model.results.names import AGENT_NAMES

    text = str(owner).strip().lower()
    if text in OWNER_ALIASES:
        return OWNER_ALIASES[text]
    key = text.replace(" ", "_")
    return key if key in AGENT_NAMES else None


def read(key: str) -> pd.DataFrame:
    """A reference file as a frame (a copy: callers may change it)."""
    return _read(key).copy()


@cache
def _read(key: str) -> pd.DataFrame:
    path = DATA / FILES[key]
    try:
        return pd.read_csv(path, comment="#")
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: unreadable reference data ({exc.__class__.__name__}: {exc})") from None


def dates(values: pd.Series) -> pd.Series:
    """Record dates ("2025-06-04", "2025-06", "2025-Q2", "2025-H2", "2025") as the first day of the month they
    fall in (a quarter or half-year: its middle month; a year: July), NaT where empty."""
    out = []
    for v in values:
        text = "" if pd.isna(v) else str(v).strip()
        if not text:
            out.append(pd.NaT)
        elif "-Q" in text:
            y, q = text.split("-Q")
            out.append(pd.Timestamp(year=int(y), month=3 * int(q) - 1, day=1))
        elif "-H" in text:
            y, h = text.split("-H")
            out.append(pd.Timestamp(year=int(y), month=6 * int(h) - 2, day=1))
        elif len(text) == 4:
            out.append(pd.Timestamp(year=int(text), month=7, day=1))
        else:
            t = pd.Timestamp(text[:10] if len(text) > 7 else text + "-01")
            out.append(pd.Timestamp(year=t.year, month=t.month, day=1))
    return pd.Series(out, index=values.index, dtype="datetime64[ns]")


def revenue() -> pd.DataFrame:
    """NVIDIA's reported data-center revenue per fiscal quarter: quarter, fiscal_year, fiscal_quarter, quarter_start,
    reported_dc_revenue_usd, source_url."""
    df = read("revenue")
    df["quarter_start"] = [O.fiscal_quarter_start(y, q) for y, q in zip(df["fiscal_year"], df["fiscal_quarter"],
                                                                        strict=True)]
    df["reported_dc_revenue_usd"] = df["dc_revenue_usd_bn"] * 1e9
    return df


def clusters() -> pd.DataFrame:
    """Public training clusters with a GPU count or a power: the file's columns plus `agent` (the owner's agent),
    `month` (the date, or the target date of an announced cluster) and `gpus`/`mw` as numbers."""
    df = read("clusters")
    df["agent"] = df["owner"].map(owner_agent)
    df["month"] = dates(df["target_date"].where(df["status"] == "announced", df["date"]).fillna(df["date"]))
    df["gpus"] = pd.to_numeric(df["gpus"], errors="coerce")
    df["mw"] = pd.to_numeric(df["mw"], errors="coerce")
    return df


def frontier_runs() -> pd.DataFrame:
    """Notable frontier training runs (Epoch AI estimates): model, developer, agent, month, training_flop, ..."""
    df = read("frontier_runs")
    df["agent"] = df["developer"].map(lambda d: "meta_ai" if str(d) == "Meta" else owner_agent(d))
    df["month"] = dates(df["date"])
    return df


def h100e() -> pd.DataFrame:
    """Estimates of H100e by owner (metric == "h100e"), with `agent` and `month`."""
    df = read("h100e")
    df = df[df["metric"] == "h100e"].copy()
    df["agent"] = df["owner"].map(owner_agent)
    df["month"] = dates(df["as_of"])
    return df


def world_shares() -> pd.DataFrame:
    """Owners' shares of world AI compute (metric == "share_of_world_pct"), with `month` and `share` (0-1)."""
    df = read("h100e")
    df = df[df["metric"] == "share_of_world_pct"].copy()
    df["month"] = dates(df["as_of"])
    df["share"] = df["value"] / 100
    return df


POWER_ONLINE = ("active_mw", "connected_mw", "compute_capacity_mw")


def power() -> pd.DataFrame:
    """Power by owner with `agent`, `month` and whether the metric is power online (active, connected, a lab's
    compute capacity) or planned (contracted, committed, a campus)."""
    df = read("power")
    df["agent"] = df["owner"].map(owner_agent)
    df["month"] = dates(df["as_of"])
    df["online"] = df["metric"].isin(POWER_ONLINE)
    return df


def capex() -> pd.DataFrame:
    """Capex by company and period with `agent`, period bounds as timestamps and the midpoint in USD."""
    df = read("capex")
    df["agent"] = df["company"].map(owner_agent)
    df["period_start"] = pd.to_datetime(df["period_start"])
    df["period_end"] = pd.to_datetime(df["period_end"])
    df["capex_usd_mid"] = (df["capex_usd_bn_low"] + df["capex_usd_bn_high"]) / 2 * 1e9
    start, end = df["period_start"], df["period_end"]
    df["calendar_year"] = (start.dt.month.eq(1) & start.dt.day.eq(1) & end.dt.month.eq(12)
                           & (end.dt.year == start.dt.year))
    return df


def annual_capex() -> pd.DataFrame:
    """One figure per company and calendar year: the reported value if there is one (the latest published),
    else the latest guidance (its range kept). Returns agent, company, year, capex_usd_low, capex_usd_high,
    capex_usd, kind, source_url."""
    df = capex()
    df = df[df["calendar_year"] & df["agent"].notna()].copy()
    df["year"] = df["period_start"].dt.year
    df["rank"] = df["kind"].map({"reported": 0, "estimate": 1, "guidance": 2}).fillna(3)
    df = df.sort_values(["agent", "year", "rank", "published"], ascending=[True, True, True, False])
    df = df.drop_duplicates(["agent", "year"], keep="first")
    return pd.DataFrame({"agent": df["agent"], "company": df["company"], "year": df["year"],
                         "capex_usd_low": df["capex_usd_bn_low"] * 1e9, "capex_usd_high": df["capex_usd_bn_high"] * 1e9,
                         "capex_usd": df["capex_usd_mid"], "kind": df["kind"],
                         "source_url": df["source_url"]}).reset_index(drop=True)


def rental() -> pd.DataFrame:
    """Reported rental prices per GPU-hour with `month`, `low`, `high` and `mid` (an open end takes the other)."""
    df = read("rental")
    df["month"] = dates(df["date"])
    df["low"] = df["usd_per_gpu_hour_low"].fillna(df["usd_per_gpu_hour_high"])
    df["high"] = df["usd_per_gpu_hour_high"].fillna(df["usd_per_gpu_hour_low"])
    df["mid"] = (df["low"] + df["high"]) / 2
    return df


def first_deployments() -> pd.DataFrame:
    df = read("first_deployments")
    df["month"] = dates(df["date"])
    return df


def describe() -> list[RecordFile]:
    """Every reference file: what it holds (its comment block) and its distinct sources (for the HTML report)."""
    out = []
    for key, name in FILES.items():
        path = DATA / name
        comment = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("#"):
                break
            comment.append(line.lstrip("#").strip())
        df = _read(key)
        urls = tuple(dict.fromkeys(str(u) for u in df.get("source_url", pd.Series(dtype=str)).dropna()))
        out.append(RecordFile(key, path, " ".join(comment), len(df), urls))
    return out
