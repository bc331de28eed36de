"""The hindcast: the model against the public record of 2024-2026, fact by fact.

    python -m analysis.hindcast RESULTS [RESULTS ...] [--markdown] [--out FILE.csv]

For each checked fact in `analysis/data/` (NVIDIA data-center revenue per fiscal quarter, shipments, H100e and
GPUs by owner, largest clusters, neocloud power, rental prices, first deployments), the model's median and 5-95%
band across the runs of a result or sweep folder, beside the reported value. Facts a scenario uses as inputs are no
checks: they are listed apart (`INPUTS`) and never scored. Every model number comes from the result tables
through `model.results.outcomes`; every reported number from `analysis.record`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis import record
from model.errors import InputError
from model.results import Source, read_folder
from model.results import outcomes as O

HOPPER = ("hgx_h100", "hgx_h200")
# Facts of the record the baseline scenario reads as inputs (not checks): what, where in the scenario.
INPUTS: tuple[tuple[str, str], ...] = (
    ("Provider capex by calendar year (Microsoft, AWS, Google, Meta, Oracle, CoreWeave, Nebius, xAI 2025)",
     "`capex_usd_bn` of each provider and xAI in scenarios/baseline.toml"),
    ("H100s bought in 2023 by owner (Omdia)", "`fleet_start` of each buyer"),
    ("First shipment and volume dates of each system", "model/hardware/data/systems.csv"),
    ("CoWoS wafers and HBM by year, all vendors (TSMC, TrendForce, JPMorgan)", "`supplier.cowos_wafers_per_month`, "
     "`supplier.hbm_tb_per_month`"),
    ("Announced lab-provider contracts (values, dates)", "`[[contracts]]`"),
    ("Lab revenue by year (OpenAI, Anthropic)", "`lab.*.revenue_usd_bn`"),
    ("Grid and on-site generation outlook for AI data centres", "`[power_outlook]`"),
    ("CoreWeave's power online (360 MW end-2024, 590 MW Q3-2025, >850 MW end-2025)",
     "`neocloud.coreweave.power_add_mw_per_year`"),
    ("xAI's 2024 GPUs (Colossus 1: 100k H100 + 50k H200)", "`lab.xai.capex_usd_bn` for 2024 is backed out of them"),
    ("Nebius's connected power guidance (800 MW-1 GW in 2026) and its 220 MW at end-2025",
     "`neocloud.nebius.power_add_mw_per_year`"),
    ("Colossus 1's GPUs (the xAI largest-cluster fact of 2025)", "xAI's 2024 capex is backed out of them"),
    ("TPU and Trainium chip spending by year (Epoch AI)", "`ai_systems_share` of Google and AWS is derived from it "
     "(with NVIDIA's share), so Google's and Amazon's H100e are checks of the choice between vendors and of "
     "supply, not of their budgets"),
    ("CoWoS and HBM shares by vendor (Morgan Stanley, SemiWiki, JPMorgan)", "`supplier.reserved_cowos_share`, "
     "`supplier.reserved_hbm_share`; so each vendor's shipments are bounded by inputs"),
    ("Anthropic's Project Rainier (500k Trainium2) and Google TPU (1M) contracts", "`[[contracts]]`"),
    ("China's H20 purchases (>1M at $12-13k in 2024; $4.6B sold + $2.5B unshippable in Feb-Apr 2025) and the "
     "H20's ban in April 2025", "`other.china.capex_usd_bn` and the catalog's `hgx_h20` (`last_shipment`)"),
    ("How long bring-up of thousands of GPUs takes (`bring_up.days_per_doubling`)",
     "an assumption, so the month of the first GB300 cluster at scale is not an independent check"),
    ("Months from packaging to shipment (`supplier.packaging_to_shipment_months`, 2) and the HGX B200's price "
     "($30-40k per GPU)", "an assumption and a catalog price, both set after fiscal Q2-Q3 2026 revenue was seen "
     "high (the price on the strength of its sources): that revenue is a weaker check than the other quarters"),
)


@dataclass(frozen=True)
class Check:
    """One fact of the record and how the model states it: `model(source)` gives one value per run."""

    group: str
    fact: str
    reported: float
    unit: str  # how the value prints: "$B", "k GPUs", "M H100e", "MW", "$/GPU-h", "month"
    model: Callable[[Source], pd.Series]
    source_url: str = ""


def _quarter_revenue(quarter: str) -> Callable[[Source], pd.Series]:
    def value(src: Source) -> pd.Series:
        rev = O.revenue(src.market, "fiscal_quarter")
        return rev[rev["period"] == quarter].set_index("run")["nvidia_revenue_usd"] / 1e9
    return value


def _gpus_shipped(start: str, end: str, systems: Sequence[str] | None = None,
                  unit: str = "gpus") -> Callable[[Source], pd.Series]:
    """GPUs (or NVL72 racks) shipped by NVIDIA in a period, across systems (all of NVIDIA's by default)."""
    def value(src: Source) -> pd.Series:
        long = O.per_system(src.market, "units_shipped_", "units")
        long = long[(long["date"] >= pd.Timestamp(start)) & (long["date"] <= pd.Timestamp(end))]
        facts = O.system_facts(list(dict.fromkeys(long["system"])))
        long = long[long["system"].isin(systems if systems is not None else
                                        [k for k in facts.index if facts.loc[k, "vendor"] == "NVIDIA"])]
        per = long["units"] if unit == "units" else long["units"] * long["system"].map(facts["gpus_per_system"])
        return per.groupby(long["run"]).sum()
    return value


def _delivered_h100e(a: pd.DataFrame) -> pd.Series:
    """H100e an owner holds (delivered: online or in bring-up), Epoch AI's kind of count; results written before the
    column existed give online H100e."""
    return a["h100e_delivered"] if "h100e_delivered" in a else a["h100e"]


def _agent_value(agent: str, month: str, column: str | Callable[[pd.DataFrame], pd.Series],
                 scale: float = 1.0) -> Callable[[Source], pd.Series]:
    def value(src: Source) -> pd.Series:
        a = src.agents
        a = a[(a["agent"] == agent) & (a["date"] == pd.Timestamp(month))]
        col = a[column] if isinstance(column, str) else column(a)
        return pd.Series(col.to_numpy(dtype=float) / scale, index=a["run"].to_numpy())
    return value


def _bought(agent: str, year: int, systems: Sequence[str]) -> Callable[[Source], pd.Series]:
    """GPUs of `systems` an agent brought online during a year (none retire in their first years)."""
    def value(src: Source) -> pd.Series:
        a = src.agents[src.agents["agent"] == agent]
        cols = [f"gpus_online_{k}" for k in systems if f"gpus_online_{k}" in a]
        start = a[a["date"] == pd.Timestamp(f"{year}-01-01")].set_index("run")[cols].sum(axis=1)
        end = a[a["date"] == pd.Timestamp(f"{year}-12-01")].set_index("run")[cols].sum(axis=1)
        return (end - start) / 1e3
    return value


def _rental(system: str, month: str) -> Callable[[Source], pd.Series]:
    def value(src: Source) -> pd.Series:
        m = src.market[src.market["date"] == pd.Timestamp(month)]
        col = f"rental_usd_per_gpu_hour_{system}"
        return pd.Series(pd.to_numeric(m[col], errors="coerce").to_numpy(), index=m["run"].to_numpy())
    return value


def _first(event: str, system: str) -> Callable[[Source], pd.Series]:
    """Month of the first `event` for a system by a named agent, as months since 2024-01 (NaN: never)."""
    def value(src: Source) -> pd.Series:
        first = O.firsts(src.events, src.agents, which=(event,))
        first = first[first["system"] == system].set_index("run")["date"]
        months = (first.dt.year - 2024) * 12 + first.dt.month - 1
        return months.reindex(sorted(src.runs["run"])).astype(float)
    return value


def _largest_cluster(agent: str, month: str) -> Callable[[Source], pd.Series]:
    return _agent_value(agent, month, "largest_cluster_gpus", 1e3)


def _month_value(text: str) -> float:
    t = pd.Timestamp(text)
    return float((t.year - 2024) * 12 + t.month - 1)


def checks() -> list[Check]:
    """Every checked fact, read from `analysis/data/` (values and sources from the files)."""
    out: list[Check] = []
    rev = record.revenue()
    for _, row in rev[(rev["fiscal_year"] >= 2025) & (rev["fiscal_year"] <= 2027)].iterrows():
        out.append(Check("NVIDIA data-center revenue", f"{row['quarter']}", float(row["dc_revenue_usd_bn"]), "$B",
                         _quarter_revenue(row["quarter"]), row["source_url"]))
    ship = record.read("shipments")

    def ship_row(product: str, start: str) -> pd.Series:
        hit = ship[(ship["product"] == product) & (ship["period_start"] == start)]
        return hit.iloc[-1]

    r = ship_row("all data-center GPUs", "2026-01-01")
    out.append(Check("Shipments", "NVIDIA data-center GPUs shipped in 2026 (M)", r["units"] / 1e6, "M",
                     lambda s: _gpus_shipped("2026-01-01", "2026-12-01")(s) / 1e6, r["source_url"]))
    r = ship_row("GB200/GB300 NVL72", "2025-01-01")
    out.append(Check("Shipments", "GB200/GB300 NVL72 racks shipped in 2025 (k)", r["units"] / 1e3, "k",
                     lambda s: _gpus_shipped("2025-01-01", "2025-12-01", ("gb200_nvl72", "gb300_nvl72"),
                                             "units")(s) / 1e3, r["source_url"]))
    r = ship[(ship["product"] == "Blackwell") & (ship["period_start"] == "2024-11-01")].iloc[-1]
    out.append(Check("Shipments", "Blackwell GPUs shipped Nov 2024-Oct 2025 (M; source may count dies)",
                     r["units"] / 1e6, "M",
                     lambda s: _gpus_shipped("2024-11-01", "2025-10-01", ("hgx_b200", "hgx_b300", "gb200_nvl72",
                                                                           "gb300_nvl72"))(s) / 1e6,
                     r["source_url"]))
    for owner, agent in (("Microsoft", "microsoft"), ("Meta", "meta"), ("Amazon", "aws"), ("Google", "google")):
        r = ship[(ship["product"] == "Hopper (H100/H200/GH200)") & (ship["buyer"] == owner)].iloc[-1]
        out.append(Check("Shipments", f"Hopper GPUs {owner} bought in 2024 (k)", r["units"] / 1e3, "k",
                         _bought(agent, 2024, HOPPER), r["source_url"]))
    h = record.read("h100e")
    # every vendor's chips count (H100e by dense BF16 FLOP/s, Epoch's definition); Google's is TPUs + NVIDIA
    for owner, agent, as_of in (("Google", "google", "2024-06"), ("Microsoft", "microsoft", "2024-06"),
                                ("Google", "google", "2026-04"), ("Microsoft", "microsoft", "2026-04"),
                                ("Amazon", "aws", "2026-04"), ("Meta", "meta", "2026-04"),
                                ("Oracle", "oracle", "2026-04"), ("xAI", "xai", "2026-04")):
        r = h[(h["owner"] == owner) & (h["metric"] == "h100e") & (h["as_of"] == as_of)].iloc[0]
        out.append(Check("H100e by owner", f"{owner} H100e {as_of} (M, Epoch AI)", r["value"] / 1e6, "M",
                         _agent_value(agent, f"{as_of}-01", _delivered_h100e, 1e6), r["source_url"]))
    r = h[(h["owner"] == "CoreWeave") & (h["metric"] == "gpus")].iloc[0]
    out.append(Check("Neocloud GPUs and power", "CoreWeave GPUs end-2024 (k, lower bound)", r["value"] / 1e3, "k",
                     _agent_value("coreweave", "2024-12-01", "gpus_online", 1e3), r["source_url"]))
    c = record.read("clusters")
    for agent, site, date in (("meta", "Llama 3 H100 clusters (RoCE and InfiniBand)", "2024-03-12"),
                              ("meta", "Llama 4 training cluster", "2024-10-30")):
        r = c[(c["site"] == site) & (c["date"] == date)].iloc[0]
        month = date[:7]
        out.append(Check("Largest clusters", f"{r['owner']} largest cluster {month} (k GPUs; {site})",
                         float(r["gpus"]) / 1e3, "k", _largest_cluster(agent, f"{month}-01"), r["source_url"]))
    rent = record.rental()
    for system, pricing, date in (("hgx_h100", "on_demand", "2024-03"), ("hgx_h100", "contract_1yr", "2025-10"),
                                  ("hgx_h100", "contract_1yr", "2026-03"), ("hgx_b200", "on_demand", "2025-01"),
                                  ("hgx_b200", "on_demand", "2025-12")):
        r = rent[(rent["system"] == system) & (rent["pricing"] == pricing) & (rent["date"] == date)].iloc[0]
        out.append(Check("Rental prices", f"{system} {pricing.replace('_', ' ')} {date} ($/GPU-h)", r["mid"], "$",
                         _rental(system, f"{date}-01"), r["source_url"]))
    fd = record.read("first_deployments")
    for system, availability, event in (("gb300_nvl72", "first_shipment", "first_online"),
                                        ("gb200_nvl72", "production_at_scale", "first_cluster_at_scale")):
        r = fd[(fd["system"] == system) & (fd["availability"] == availability)].iloc[0]
        out.append(Check("First deployments", f"{system} {availability.replace('_', ' ')} "
                         f"({r['who']}, {int(r['gpus']) if pd.notna(r['gpus']) else '-'} GPUs)",
                         _month_value(str(r["date"])[:7]), "month", _first(event, system), r["source_url"]))
    return out


def table(src: Source) -> pd.DataFrame:
    """One row per check: group, fact, model median, p05, p95, reported, error (median / reported - 1, or months
    for dates), in_band (the reported value lies within the model's 5-95% band), source_url."""
    rows = []
    for check in checks():
        values = check.model(src)
        s = O.spread(values)
        if check.unit == "month":
            error = s["median"] - check.reported
        else:
            error = s["median"] / check.reported - 1 if check.reported else np.nan
        rows.append({"group": check.group, "fact": check.fact, "unit": check.unit, "model_median": s["median"],
                     "model_p05": s["p05"], "model_p95": s["p95"], "reported": check.reported, "error": error,
                     "in_band": bool(s["p05"] <= check.reported <= s["p95"]) if not np.isnan(s["median"]) else False,
                     "source_url": check.source_url})
    return pd.DataFrame(rows)


def _fmt(value: float, unit: str) -> str:
    if np.isnan(value):
        return "-"
    if unit == "month":
        m = int(round(value))
        return f"{2024 + m // 12}-{m % 12 + 1:02d}"
    return f"{value:,.2f}" if unit == "$" else f"{value:,.1f}" if abs(value) < 100 else f"{value:,.0f}"


def markdown(df: pd.DataFrame, runs: int) -> str:
    """The hindcast as a markdown table, then the inputs that are not checks."""
    lines = [f"Median over {runs} runs [5%, 95%] against the reported value (`analysis/data/`); error is median / "
             "reported - 1 (for dates: months late); a reported value inside the band is marked in band.", "",
             "| group | fact | model [5%, 95%] | reported | error | in band |", "|---|---|---|---|---|---|"]
    for _, r in df.iterrows():
        u = r["unit"]
        mid, lo, hi = (_fmt(r[c], u) for c in ("model_median", "model_p05", "model_p95"))
        model = mid if lo == hi == mid else f"{mid} [{lo}, {hi}]"
        err = ("-" if np.isnan(r["error"]) else f"{r['error']:+.0f} mo" if u == "month" else f"{r['error']:+.0%}")
        lines.append(f"| {r['group']} | {r['fact']} | {model} | {_fmt(r['reported'], u)} | {err} | "
                     f"{'yes' if r['in_band'] else 'no'} |")
    lines += ["", "Inputs of the baseline, not checks:", ""]
    lines += [f"- {what}: {where}" for what, where in INPUTS]
    return "\n".join(lines)


def readme_section(baseline: Source, uncertainty: Source | None = None) -> str:
    """The README's hindcast: every check with the baseline's median over seeds, the uncertainty sweep's median
    and 5-95% band (when there is one), the reported value and whether the band covers it; then the inputs."""
    base = table(baseline)
    unc = table(uncertainty) if uncertainty is not None else None
    header = ["fact", f"baseline, median of {baseline.n_runs} seeds", "reported", "baseline vs reported"]
    if unc is not None:
        header[2:2] = [f"uncertainty sweep, median [5%, 95%] of {uncertainty.n_runs} runs"]
        header.append("reported within the sweep's band")
    lines = ["Checks: reported facts of `analysis/data/` that the scenario does not contain (generated by "
             "`analysis/hindcast.py`; dates as the month, errors of dates in months).", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for i, r in base.iterrows():
        u = r["unit"]
        err = ("-" if np.isnan(r["error"]) else f"{r['error']:+.0f} mo" if u == "month" else f"{r['error']:+.0%}")
        cells = [f"{r['group']}: {r['fact']}", _fmt(r["model_median"], u)]
        if unc is not None:
            q = unc.loc[i]
            mid, lo, hi = (_fmt(q[c], u) for c in ("model_median", "model_p05", "model_p95"))
            cells.append(mid if lo == hi == mid else f"{mid} [{lo}, {hi}]")
        cells += [_fmt(r["reported"], u), err]
        if unc is not None:
            cells.append("yes" if unc.loc[i, "in_band"] else "no")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Inputs, not checks (the scenario contains them):", ""]
    lines += [f"- {what}: {where}" for what, where in INPUTS]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analysis.hindcast", description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="a result or sweep folder")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("--out", help="also write the table as CSV")
    args = parser.parse_args(argv)
    try:
        src = read_folder(args.results)
        df = table(src)
    except InputError as exc:
        print(f"hindcast: error: {exc}", file=sys.stderr)
        return 2
    if args.out:
        df.to_csv(args.out, index=False)
    if args.markdown:
        print(markdown(df, src.n_runs))
    else:
        with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_colwidth", 70):
            print(df.drop(columns=["source_url"]).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
