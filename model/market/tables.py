"""The run's tables, collected each month by Mesa's DataCollector: one row per buyer (`Buyer.report`) and one row for
the market (`market_reporters`); `agent_rows_frame` lays the buyers' rows out as the agents table."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from model.market.agents import Buyer
from model.market.calendar import date_of

if TYPE_CHECKING:
    from model.market.model import MarketModel

AGENT_ROW_NAME = "row"


def agent_columns(system_keys: tuple[str, ...]) -> list[str]:
    """Columns of the agents table (DESIGN.md)."""
    return (["date", "agent", "kind", "gpus_online"] + [f"gpus_online_{k}" for k in system_keys]
            + ["h100e", "h100e_delivered", "contracted_h100e", "reachable_h100e", "power_mw_online", "power_mw_used",
               "largest_cluster_gpus", "largest_cluster_h100e",
               "largest_cluster_mw", "largest_cluster_systems", "capex_usd_cumulative", "reference_run_cluster_gpus",
               "frontier_run_days"])


def agent_row(buyer) -> tuple:
    """A buyer's row of the agents table, without the date: the compute it owns, holds under contract (what its
    providers actually deliver on its active contracts) and can reach (the two added: no block counted twice), its
    largest single training cluster (own sites), and the cluster it can reach (own, a partner's or under contract)
    that trains the reference run fastest."""
    online = buyer.gpus_online()
    owned = buyer.h100e()
    contracted = buyer.contracted_h100e_held()
    largest = buyer.fleet.largest_cluster()
    k, g = buyer.accessible_cluster()
    days = buyer.model.capability.reference_run_days(k, g, buyer.model.date_of(buyer.model.month)) if k else None
    return (buyer.name, buyer.kind, int(sum(online.values())), *(int(online[key]) for key in buyer.model.system_keys),
            owned, buyer.h100e_delivered(), contracted, owned + contracted, buyer.power_online_mw(),
            buyer.power_used_mw(), int(largest.gpus),
            largest.h100e, largest.mw, largest.systems, buyer.capex_usd, float(g) if k else None, days)


def agent_rows_frame(model: MarketModel) -> pd.DataFrame:
    """The agents table so far, from the DataCollector's per-buyer rows."""
    columns = agent_columns(model.system_keys)
    collected = model.datacollector.get_agenttype_vars_dataframe(Buyer)
    if collected.index.nlevels != 2:  # nothing collected yet (Mesa then labels an empty frame oddly)
        return pd.DataFrame(columns=columns)
    months = collected.index.get_level_values("Step").astype(int) - 1  # Mesa time t + 1 simulates month t
    dates = {t: date_of(model.start, t) for t in set(months)}
    rows = [(dates[t], *row) for t, row in zip(months, collected[AGENT_ROW_NAME], strict=True)]
    return pd.DataFrame(rows, columns=columns).astype({"frontier_run_days": float,
                                                        "reference_run_cluster_gpus": float})


def market_reporters(model: MarketModel) -> dict:
    """Model reporters of the market table (DESIGN.md columns): date, NVIDIA's revenue that month, and per system
    units shipped, backlog and rental price (while it ships)."""
    sup = model.supplier
    reporters = {"date": lambda m: m.date_of(m.month), "nvidia_revenue_usd": lambda m: sup.revenue_month_usd}
    of = model.supplier_of  # every vendor's systems: a row's system key joins the catalog's vendor
    for k in model.system_keys:
        reporters[f"units_shipped_{k}"] = lambda m, k=k: int(of(k).shipped_month[k])
    for k in model.system_keys:
        reporters[f"backlog_units_{k}"] = lambda m, k=k: int(of(k).backlog_units(k))
    for k in model.system_keys:
        reporters[f"rental_usd_per_gpu_hour_{k}"] = (
            lambda m, k=k: m.rental_usd_per_gpu_hour(k) if of(k).shipping(k, m.month) else None)
    return reporters
