"""The outcomes module on small hand-made tables with known answers (fiscal quarter edges, partial periods, ties,
the aggregate that never leads), then on a real run and sweep against the tables computed directly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import SWEEP_RUNS, agents_table, events_table, market_table, month

from model.results import outcomes as O
from model.results import read_folder


# -- revenue by period --------------------------------------------------------------------------------------------
def test_fiscal_periods_follow_nvidias_calendar_at_every_edge():
    dates = pd.Series([month(m) for m in ("2024-01", "2024-02", "2024-04", "2024-05", "2024-07", "2024-08",
                                          "2024-10", "2024-11", "2024-12", "2025-01", "2025-02")])
    got = O.fiscal_periods(dates)["quarter"].tolist()
    assert got == ["Q4 FY2024", "Q1 FY2025", "Q1 FY2025", "Q2 FY2025", "Q2 FY2025", "Q3 FY2025", "Q3 FY2025",
                   "Q4 FY2025", "Q4 FY2025", "Q4 FY2025", "Q1 FY2026"]
    assert O.fiscal_quarter_start(2025, 1) == month("2024-02") and O.fiscal_quarter_start(2025, 4) == month("2024-11")


# 15 months, 2024-01 .. 2025-03, revenue in month i (1-based) = i dollars: sums are easy to check by hand.
FIFTEEN = market_table("2024-01", list(range(1, 16)))


def test_fiscal_year_sums_feb_to_jan_and_drops_partial_years():
    fy = O.revenue(FIFTEEN, "fiscal_year")
    assert fy["period"].tolist() == ["FY2025"]  # FY2024 (only Jan 2024) and FY2026 (Feb-Mar 2025) are partial
    row = fy.iloc[0]
    assert row["nvidia_revenue_usd"] == sum(range(2, 14))  # Feb 2024 (month 2) .. Jan 2025 (month 13)
    assert (row["period_start"], row["period_end"]) == (month("2024-02"), pd.Timestamp("2025-01-31"))
    assert row["months"] == 12 and bool(row["complete"])


def test_partial_periods_are_flagged_on_request():
    fy = O.revenue(FIFTEEN, "fiscal_year", partial="flag").set_index("period")
    assert fy["months"].to_dict() == {"FY2024": 1, "FY2025": 12, "FY2026": 2}
    assert fy["complete"].to_dict() == {"FY2024": False, "FY2025": True, "FY2026": False}
    assert fy.loc["FY2026", "nvidia_revenue_usd"] == 14 + 15
    assert fy["nvidia_revenue_usd"].sum() == sum(range(1, 16))  # every month in exactly one period


def test_fiscal_quarters_and_calendar_years():
    q = O.revenue(FIFTEEN, "fiscal_quarter", partial="flag").set_index("period")
    assert list(q.index) == ["Q4 FY2024", "Q1 FY2025", "Q2 FY2025", "Q3 FY2025", "Q4 FY2025", "Q1 FY2026"]
    assert q.loc["Q1 FY2025", "nvidia_revenue_usd"] == 2 + 3 + 4
    assert q.loc["Q4 FY2025", "nvidia_revenue_usd"] == 11 + 12 + 13  # Nov, Dec 2024 and Jan 2025
    assert q.loc["Q4 FY2025", "period_end"] == pd.Timestamp("2025-01-31")
    assert q["complete"].tolist() == [False, True, True, True, True, False]
    assert O.revenue(FIFTEEN, "fiscal_quarter")["period"].tolist() == ["Q1 FY2025", "Q2 FY2025", "Q3 FY2025",
                                                                       "Q4 FY2025"]
    cal = O.revenue(FIFTEEN, "calendar_year")
    assert cal["period"].tolist() == ["2024"] and cal["nvidia_revenue_usd"].tolist() == [sum(range(1, 13))]
    late_start = O.revenue(market_table("2024-03", [1.0] * 22), "calendar_year", partial="flag")
    assert late_start.set_index("period")["months"].to_dict() == {"2024": 10, "2025": 12}
    assert O.revenue(market_table("2024-03", [1.0] * 22), "calendar_year")["period"].tolist() == ["2025"]
    monthly = O.revenue(FIFTEEN, "month")
    assert len(monthly) == 15 and monthly["complete"].all() and monthly["period"].iloc[0] == "2024-01"


def test_revenue_per_run_and_label():
    stacked = pd.concat([market_table("2024-01", [1.0] * 12, run=0), market_table("2024-01", [2.0] * 12, run=1)])
    got = O.revenue(stacked, "calendar_year")
    assert got[["run", "nvidia_revenue_usd"]].values.tolist() == [[0, 12.0], [1, 24.0]]
    labelled = pd.concat([stacked.assign(label="a"), stacked.assign(label="b", nvidia_revenue_usd=5.0)])
    got = O.revenue(labelled, "calendar_year").set_index(["label", "run"])["nvidia_revenue_usd"]
    assert got.to_dict() == {("a", 0): 12.0, ("a", 1): 24.0, ("b", 0): 60.0, ("b", 1): 60.0}
    with pytest.raises(ValueError, match="period"):
        O.revenue(FIFTEEN, "decade")


# -- leaders and shares -------------------------------------------------------------------------------------------
AGENTS = agents_table([
    ("2024-12", "zeta", "hyperscaler", 30, 1000), ("2024-12", "alpha", "lab", 30, 2000),
    ("2024-12", "rest_of_market", "other", 40, 9000),
    ("2025-06", "zeta", "hyperscaler", 50, 3000), ("2025-06", "alpha", "lab", 20, 2000),
    ("2025-06", "rest_of_market", "other", 130, 9000),
])


def test_the_aggregate_counts_in_shares_but_never_leads():
    s = O.standings(AGENTS, at="all")
    dec = s[s["date"] == month("2024-12")].set_index("agent")
    assert dec["share"].to_dict() == pytest.approx({"zeta": 0.3, "alpha": 0.3, "rest_of_market": 0.4})
    assert dec.loc["rest_of_market", "rank"] is pd.NA  # the largest holder, but no rank
    assert dec.loc["alpha", "rank"] == 1 and dec.loc["zeta", "rank"] == 2  # a tie: name order
    lead = O.leaders(AGENTS, at="year_ends")
    assert lead[["date", "agent"]].values.tolist() == [[month("2024-12"), "alpha"], [month("2025-06"), "zeta"]]
    assert lead["share"].tolist() == pytest.approx([0.3, 0.25])


def test_totals_count_the_aggregate_and_the_largest_cluster_is_a_named_one():
    days = {"zeta": 30.0, "alpha": float("nan"), "rest_of_market": 5.0}
    t = O.totals(AGENTS.assign(frontier_run_days=AGENTS["agent"].map(days))).set_index("date")
    assert t.loc[month("2025-06"), "total_h100e"] == 200 and t.loc[month("2025-06"), "aggregate_h100e"] == 130
    assert t["largest_cluster_gpus"].tolist() == [2000, 3000]  # the aggregate's 9,000 is not a cluster anyone holds
    assert t["fastest_frontier_run_days"].tolist() == [30.0, 30.0]  # nor its 5 days a run anyone can start
    assert "largest_cluster_h100e" not in t  # only when the agents table has it
    # by H100e the largest cluster may be another one than by GPUs (newer GPUs: fewer, each worth more)
    h100e = {"zeta": 4000.0, "alpha": 1500.0, "rest_of_market": 20000.0}
    t = O.totals(AGENTS.assign(frontier_run_days=1.0, largest_cluster_h100e=AGENTS["agent"].map(h100e)))
    assert t["largest_cluster_h100e"].tolist() == [4000.0, 4000.0]  # zeta's, though alpha's is larger by GPUs in 2024
    k = O.kind_shares(AGENTS, at="end").set_index("kind")
    assert k["share"].to_dict() == pytest.approx({"hyperscaler": 0.25, "lab": 0.1, "other": 0.65})


def test_records_name_the_holder_of_each_largest_cluster_and_the_fastest_run():
    extra = {"zeta": (40.0, 60.0, 30.0), "alpha": (55.0, 60.0, float("nan")), "rest_of_market": (99.0, 99.0, 1.0)}
    a = AGENTS.assign(largest_cluster_h100e=AGENTS["agent"].map({k: v[0] for k, v in extra.items()}),
                      largest_cluster_mw=AGENTS["agent"].map({k: v[1] for k, v in extra.items()}),
                      frontier_run_days=AGENTS["agent"].map({k: v[2] for k, v in extra.items()}))
    got = O.records(a, at="end").set_index("measure")
    assert set(got["date"]) == {month("2025-06")}
    assert got["agent"].to_dict() == {"largest_cluster_gpus": "zeta", "largest_cluster_h100e": "alpha",
                                      "largest_cluster_mw": "alpha",  # a tie at 60 MW: name order
                                      "frontier_run_days": "zeta"}  # the aggregate's 1 day is no one's run
    assert got["value"].to_dict() == {"largest_cluster_gpus": 3000.0, "largest_cluster_h100e": 55.0,
                                      "largest_cluster_mw": 60.0, "frontier_run_days": 30.0}
    both = O.records(AGENTS, at="all")  # only the columns present; no run fits yet: no fastest-run row
    assert both[["date", "measure", "agent"]].values.tolist() == [[month("2024-12"), "largest_cluster_gpus", "alpha"],
                                                                  [month("2025-06"), "largest_cluster_gpus", "zeta"]]
    runs = O.records(pd.concat([AGENTS.assign(run=0), AGENTS.assign(run=1, largest_cluster_gpus=7)]), at="end")
    assert runs[["run", "agent", "value"]].values.tolist() == [[0, "zeta", 3000.0], [1, "alpha", 7.0]]


def test_year_ends_are_each_december_and_the_last_month():
    rows = [(f"{y}-{m:02d}", "a", "lab", 1) for y in (2024, 2025) for m in range(1, 13) if (y, m) <= (2025, 7)]
    s = O.standings(agents_table(rows), at="year_ends")
    assert s["date"].tolist() == [month("2024-12"), month("2025-07")]
    assert O.standings(agents_table(rows), at=["2024-03"])["date"].tolist() == [month("2024-03")]
    assert O.standings(agents_table(rows))["date"].tolist() == [month("2025-07")]


def test_leaders_across_runs_take_the_most_frequent_and_its_share_spread():
    rows = []
    for run, (a, b) in enumerate([(60, 40), (60, 40), (30, 70)]):
        rows += [("2024-12", "alpha", "lab", a, 0, run), ("2024-12", "beta", "lab", b, 0, run)]
    across = O.leaders_across_runs(O.standings(agents_table(rows), at="year_ends"))
    row = across.iloc[0]
    assert (row["agent"], row["frequency"], row["runs"]) == ("alpha", pytest.approx(2 / 3), 3)
    assert row["share"] == pytest.approx(np.median([0.6, 0.6, 0.3]))
    assert row["share_p05"] == pytest.approx(np.percentile([0.6, 0.6, 0.3], 5))
    tied = O.leaders_across_runs(O.standings(agents_table(
        [("2024-12", "beta", "lab", 2, 0, 0), ("2024-12", "alpha", "lab", 1, 0, 0),
         ("2024-12", "beta", "lab", 1, 0, 1), ("2024-12", "alpha", "lab", 2, 0, 1)]), at="end"))
    assert tied["agent"].tolist() == ["alpha"] and tied["frequency"].tolist() == [0.5]  # tie across runs: names


# -- firsts -------------------------------------------------------------------------------------------------------
def test_firsts_skip_the_aggregate_and_break_ties_by_log_order():
    events = events_table([
        ("2025-03", "rest_of_market", "first_online", "gb300_nvl72", 9000),
        ("2025-05", "zeta", "first_online", "gb300_nvl72", 72),
        ("2025-05", "alpha", "first_online", "gb300_nvl72", 144),  # same month, logged later
        ("2025-04", "alpha", "first_delivery", "gb300_nvl72", 144),
        ("2025-06", "alpha", "first_cluster_at_scale", "gb300_nvl72", 5000),
        ("2025-06", "alpha", "contract_signed", "gb300_nvl72", 5000),
    ])
    f = O.firsts(events, AGENTS).set_index("event")
    assert f.loc["first_online", ["date", "agent", "gpus"]].tolist() == [month("2025-05"), "zeta", 72]
    assert f.loc["first_delivery", "agent"] == "alpha" and "contract_signed" not in f.index
    assert set(f.index) == set(O.FIRST_EVENTS)
    own = O.milestones(events).set_index(["agent", "event"])
    assert own.loc[("rest_of_market", "first_online"), "date"] == month("2025-03")  # its own date, not a first


def test_firsts_at_scale_use_the_scenarios_threshold_and_firsts_at_sizes_report_every_size():
    """The market raises `first_cluster_at_scale` at fixed sizes and at the scenario's own threshold (its detail
    tagged); the firsts of the race use the scenario's, `firsts_at_sizes` gives each size."""
    events = events_table([
        ("2025-07", "zeta", "first_cluster_at_scale", "gb300_nvl72", 1440),
        ("2025-08", "rest_of_market", "first_cluster_at_scale", "gb300_nvl72", 5000),
        ("2025-09", "alpha", "first_cluster_at_scale", "gb300_nvl72", 5000),
        ("2025-09", "alpha", "first_cluster_at_scale", "gb300_nvl72", 5000),
        ("2025-10", "zeta", "first_cluster_at_scale", "gb300_nvl72", 5040),
    ])
    events["detail"] = ["1000 GPUs", "4600 GPUs (at_scale_gpus)", "1000 GPUs", "4600 GPUs (at_scale_gpus)",
                        "4600 GPUs (at_scale_gpus)"]
    f = O.firsts(events, AGENTS, which=["first_cluster_at_scale"]).iloc[0]
    assert (f["date"], f["agent"], f["gpus"]) == (month("2025-09"), "alpha", 5000)
    sizes = O.firsts_at_sizes(events, AGENTS).set_index("threshold_gpus")
    assert sizes.loc[1000, ["date", "agent", "scenario"]].tolist() == [month("2025-07"), "zeta", False]
    assert sizes.loc[4600, ["date", "agent", "scenario"]].tolist() == [month("2025-09"), "alpha", True]
    old = events.assign(detail="")  # results from before the fixed sizes: every row is the scenario's threshold
    assert O.firsts(old, AGENTS, which=["first_cluster_at_scale"]).iloc[0]["agent"] == "zeta"


def test_no_firsts_for_systems_the_run_started_with():
    """The market raises none for them, so there is nothing to report (and nothing is invented)."""
    assert O.firsts(events_table([]), AGENTS).empty


def test_firsts_across_runs_use_observed_months():
    events = events_table([("2025-01", "a", "first_online", "x", 8, 0), ("2025-03", "b", "first_online", "x", 8, 1),
                           ("2025-07", "b", "first_online", "x", 16, 2)])
    agents = agents_table([("2024-12", "a", "lab", 1), ("2024-12", "b", "lab", 1)])
    got = O.firsts_across_runs(O.firsts(events, agents), runs=4).iloc[0]
    assert (got["date_p05"], got["date"], got["date_p95"]) == (month("2025-01"), month("2025-03"), month("2025-07"))
    assert (got["agent"], got["agent_frequency"]) == ("b", pytest.approx(2 / 3))
    assert (got["runs_with_event"], got["runs"], got["gpus"]) == (3, 4, 8.0)
    assert O.month_quantiles(pd.Series([month("2025-01"), month("2025-02")]))[1] == month("2025-01")


def test_clusters_at_scale_first_crossing_by_a_named_agent():
    got = O.clusters_at_scale(AGENTS, thresholds_gpus=(1500, 2500, 10_000)).set_index("threshold_gpus")
    assert got.loc[1500, ["date", "agent"]].tolist() == [month("2024-12"), "alpha"]
    assert got.loc[2500, ["date", "agent", "largest_cluster_gpus"]].tolist() == [month("2025-06"), "zeta", 3000]
    assert 10_000 not in got.index  # only the aggregate got there


def test_spread_and_mode():
    assert O.spread([3.0]) == {"median": 3.0, "p05": 3.0, "p95": 3.0}
    assert O.spread([1.0, 2.0, 3.0, np.nan])["median"] == 2.0
    assert np.isnan(O.spread([])["median"])
    assert O.mode(pd.Series(["b", "a", "b", "a"])) == ("a", 0.5)


# -- a real run and sweep ------------------------------------------------------------------------------------------
def test_real_run_outcomes_match_the_tables(short_run):
    src = read_folder(short_run)
    a, ev, m = src.agents, src.events, src.market
    end = a[a["date"] == a["date"].max()]
    named = end[end["kind"] != "other"]
    lead = O.leaders(a, at="end").iloc[0]
    assert lead["agent"] == named.sort_values(["h100e", "agent"], ascending=[False, True]).iloc[0]["agent"]
    assert lead["share"] == pytest.approx(named["h100e"].max() / end["h100e"].sum())
    assert O.revenue(m, "calendar_year")["nvidia_revenue_usd"].sum() == pytest.approx(m["nvidia_revenue_usd"].sum())
    kinds = a.drop_duplicates("agent").set_index("agent")["kind"]
    first = O.firsts(ev, a)
    assert len(first) and (first["agent"].map(kinds) != "other").all()
    started_with = {c.removeprefix("gpus_online_") for c in a.columns
                    if c.startswith("gpus_online_") and a.loc[a["date"] == a["date"].min(), c].sum() > 0}
    fleet = {k for agent in src.scenario_params.get("hyperscaler", {}).values()
             for k in agent.get("fleet_start", {})}
    assert "hgx_h100" in fleet and "hgx_h100" in started_with
    assert not set(first["system"]) & fleet  # generations running at the start raise no firsts


def test_sweep_outcomes_per_run_and_across_runs(small_sweep):
    src = read_folder(small_sweep)
    assert src.n_runs == SWEEP_RUNS
    first = O.firsts(src.events, src.agents)
    across = O.firsts_across_runs(first, src.n_runs)
    gb300 = across[(across["event"] == "first_online") & (across["system"] == "gb300_nvl72")].iloc[0]
    per_run = first[(first["event"] == "first_online") & (first["system"] == "gb300_nvl72")]
    assert gb300["runs_with_event"] == len(per_run) and gb300["runs"] == SWEEP_RUNS
    assert gb300["date"] in set(per_run["date"])
    totals = O.totals(src.agents, at="end")
    assert len(totals) == SWEEP_RUNS and totals["total_h100e"].nunique() > 1


def test_run_summary_prints_these_outcomes(short_run):
    """`airace run` prints the leaders, firsts and full-year revenue of the outcomes module."""
    from model.cli.run import summarise

    tables = {name: pd.read_parquet(short_run / f"{name}.parquet") for name in ("agents", "market", "events")}
    text = "\n".join(summarise({n: df.assign(date=df["date"].dt.strftime("%Y-%m-%d")) for n, df in tables.items()}))
    a, m = tables["agents"], tables["market"]
    last = a[a["date"] == a["date"].max()]
    named = last[last["kind"] != "other"].sort_values("h100e", ascending=False)
    lines = text.splitlines()
    assert lines[0].startswith("H100e leaders at 2026-12") and lines[1].split()[0] == named.iloc[0]["agent"]
    assert "rest_of_market" not in text.split("First online")[0].split(":", 1)[1]
    first = O.firsts(read_folder(short_run).events, a, which=["first_online"])
    for r in first.itertuples():
        assert f"  {r.system:<19} {r.date:%Y-%m}  {r.agent} ({r.gpus:,} GPUs)" in lines
    yearly = m.groupby(m["date"].dt.year)["nvidia_revenue_usd"].sum() / 1e9
    assert ("NVIDIA revenue by calendar year (USD bn, full years): "
            + ", ".join(f"{y} {v:.0f}" for y, v in yearly.items())) in lines
    assert any(line.startswith("NVIDIA revenue by NVIDIA fiscal year, Feb-Jan (USD bn, full years): FY2025 ")
               and "FY2024" not in line and "FY2027" not in line for line in lines)


# -- compute by system, vendor and owner; labs; capex; shipments; differences --------------------------------------
def _catalog(key: str):
    from model.hardware import systems

    return systems()[key]


def test_generation_mix_weighs_gpus_by_the_catalogs_h100e_and_vendor_shares_sum_to_one():
    a = agents_table([("2025-01", "x", "lab", 0), ("2025-01", "y", "hyperscaler", 0)])
    a["gpus_online_hgx_h100"] = [10, 0]
    a["gpus_online_gb200_nvl72"] = [0, 5]
    mix = O.generation_mix(a).set_index("system")
    per_gpu = _catalog("gb200_nvl72").bf16_dense_tflops / 989.0
    assert mix.loc["hgx_h100", "h100e"] == pytest.approx(10.0)
    assert mix.loc["gb200_nvl72", "h100e"] == pytest.approx(5 * per_gpu)
    assert mix["share"].sum() == pytest.approx(1.0) and set(mix["vendor"]) == {"NVIDIA"}
    by_kind = O.generation_mix(a, by=["kind"]).set_index(["kind", "system"])
    assert by_kind.loc[("lab", "hgx_h100"), "share"] == 1.0 and by_kind.loc[("lab", "gb200_nvl72"), "gpus"] == 0
    vendor = O.compute_shares(a, by="vendor")
    assert vendor["vendor"].tolist() == ["NVIDIA"] and vendor["share"].tolist() == [1.0]
    with pytest.raises(ValueError, match="by"):
        O.compute_shares(a, by="country")


def test_shares_by_owner_and_kind_and_their_mean_across_runs():
    rows = [("2025-01", "a", "lab", 30, 0, 0), ("2025-01", "b", "hyperscaler", 70, 0, 0),
            ("2025-01", "a", "lab", 50, 0, 1), ("2025-01", "b", "hyperscaler", 50, 0, 1)]
    shares = O.compute_shares(agents_table(rows), by="agent")
    assert shares.set_index(["run", "agent"])["share"].to_dict() == pytest.approx(
        {(0, "a"): 0.3, (0, "b"): 0.7, (1, "a"): 0.5, (1, "b"): 0.5})
    mean = O.mean_shares(shares, "agent").set_index("agent")
    assert mean["share"].to_dict() == pytest.approx({"a": 0.4, "b": 0.6}) and mean["share"].sum() == pytest.approx(1)
    assert (mean["runs"] == 2).all()
    kinds = O.compute_shares(agents_table(rows), by="kind")
    assert kinds.groupby("run")["share"].sum().tolist() == pytest.approx([1.0, 1.0])


def test_what_largest_cluster_means_follows_the_columns():
    assert "fastest" in O.largest_cluster_meaning(["largest_cluster_gpus", "frontier_run_days"])
    assert not O.has_largest_cluster(["largest_cluster_gpus"])
    new = ["largest_cluster_gpus", "reference_run_cluster_gpus"]
    assert O.has_largest_cluster(new) and "largest single training cluster" in O.largest_cluster_meaning(new)


def _lab_tables():
    months = [f"2025-{m:02d}" for m in range(1, 13)] + [f"2026-{m:02d}" for m in range(1, 13)] + ["2027-01"]
    agents = agents_table([(m, "lab1", "lab", 7) for m in months] + [(m, "cloud", "hyperscaler", 1000)
                                                                      for m in months])
    events = events_table([("2025-03", "lab1", "contract_signed", "hgx_h100", 100),
                           ("2025-06", "lab1", "contract_signed", "gb200_nvl72", 10)])
    events["detail"] = ["cloud: $1B over 1 years (offer)", "cloud: $2B over 5 years (announced)"]
    return agents, events


def test_lab_compute_adds_contracts_from_signing_for_their_duration():
    agents, events = _lab_tables()
    c = O.contracts_signed(events)
    assert c["provider"].tolist() == ["cloud", "cloud"] and c["duration_months"].tolist() == [12, 60]
    assert c["end"].tolist() == [month("2026-03"), month("2030-06")]
    got = O.lab_compute(agents, events).set_index("date")
    assert set(got["agent"]) == {"lab1"} and (got["contracted_from"] == "events").all()
    gb200 = 10 * _catalog("gb200_nvl72").bf16_dense_tflops / 989.0
    assert got.loc[month("2025-02"), "contracted_h100e"] == 0
    assert got.loc[month("2025-03"), "contracted_h100e"] == pytest.approx(100)
    assert got.loc[month("2025-06"), "contracted_h100e"] == pytest.approx(100 + gb200)
    assert got.loc[month("2026-03"), "contracted_h100e"] == pytest.approx(gb200)  # the one-year contract ended
    assert (got["reachable_h100e"] == got["owned_h100e"] + got["contracted_h100e"]).all()
    assert (got["owned_h100e"] == 7).all()


def test_lab_compute_reads_the_markets_columns_when_they_exist():
    agents, events = _lab_tables()
    agents = agents.assign(reachable_h100e=agents["h100e"] + 5.0)
    got = O.lab_compute(agents, events)
    assert (got["contracted_from"] == "table").all() and (got["contracted_h100e"] == 5.0).all()


def test_training_runs_parse_flop_and_days():
    events = events_table([("2025-01", "lab1", "training_run_started", "", 4096),
                           ("2025-02", "lab1", "training_run_finished", "", 0)])
    events["detail"] = ["5.00e+25 FLOP, 30 days", "5.00e+25 FLOP"]
    agents = agents_table([("2025-01", "lab1", "lab", 0)])
    runs = O.training_runs(events, agents)
    assert runs[["agent", "kind", "flop", "days", "gpus"]].values.tolist() == [["lab1", "lab", 5e25, 30.0, 4096]]


def test_capex_per_year_is_the_change_of_the_cumulative_column():
    months = [f"2024-{m:02d}" for m in range(1, 13)] + [f"2025-{m:02d}" for m in range(1, 7)]
    a = agents_table([(m, "x", "hyperscaler", 0) for m in months])
    a["capex_usd_cumulative"] = [float(i + 1) for i in range(len(months))]  # 1 USD a month
    got = O.capex(a, partial="flag").set_index("period")
    assert got["capex_usd"].to_dict() == {"2024": 12.0, "2025": 6.0}
    assert got["complete"].to_dict() == {"2024": True, "2025": False}
    assert O.capex(a)["period"].tolist() == ["2024"]
    fiscal = O.capex(a, period="fiscal_year", partial="flag").set_index("period")["capex_usd"]
    assert fiscal.to_dict() == {"FY2024": 1.0, "FY2025": 12.0, "FY2026": 5.0}


def test_shipments_and_backlog_in_gpus_use_the_catalogs_gpus_per_system():
    m = market_table("2024-02", [0.0] * 4)
    m["units_shipped_gb200_nvl72"] = [1, 2, 3, 4]
    m["units_shipped_hgx_h100"] = [10, 0, 0, 0]
    m["backlog_units_gb200_nvl72"] = [5, 0, 0, 0]
    ship = O.shipments(m).set_index(["period", "system"])
    q1, q2 = ship.loc[("Q1 FY2025", "gb200_nvl72")], ship.loc[("Q2 FY2025", "gb200_nvl72")]
    assert q1["units"] == 6 and q1["gpus"] == 432 and bool(q1["complete"])
    assert ship.loc[("Q1 FY2025", "hgx_h100"), "gpus"] == 80 and ship.loc[("Q1 FY2025", "hgx_h100"), "h100e"] == 80
    assert not q2["complete"] and q2["units"] == 4
    assert O.shipments(m, partial="drop")["period"].unique().tolist() == ["Q1 FY2025"]
    b = O.backlog(m).set_index(["date", "system"])
    assert b.loc[(month("2024-02"), "gb200_nvl72"), "backlog_gpus"] == 360


def test_differences_pair_runs_by_seed_and_the_noise_band_is_two_baseline_seeds_apart():
    values = pd.DataFrame({"label": ["base"] * 3 + ["alt"] * 3, "run": [0, 1, 2, 0, 1, 2], "year": 2025,
                           "x": [10.0, 12.0, 14.0, 11.0, 15.0, np.nan]})
    seeds = pd.DataFrame({"label": ["base"] * 3 + ["alt"] * 3, "run": [0, 1, 2, 0, 1, 2],
                          "seed": [0, 1, 2, 1, 2, 0]})
    got = O.differences(values, seeds, ["year"], "x", "base").iloc[0]
    # alt seed 1 = 11 vs base seed 1 = 12 -> -1; alt seed 2 = 15 vs base seed 2 = 14 -> +1; seed 0 never reached
    assert bool(got["paired"]) and got["runs"] == 2 and got["delta"] == 0.0
    assert got["delta_p05"] == pytest.approx(-0.9) and got["delta_p95"] == pytest.approx(0.9)
    diffs = np.array([-2, -4, 2, -2, 4, 2], dtype=float)
    assert (got["noise_p05"], got["noise_p95"]) == (pytest.approx(np.quantile(diffs, 0.05)),
                                                    pytest.approx(np.quantile(diffs, 0.95)))
    unpaired = O.differences(values, seeds.assign(seed=[0, 1, 2, 7, 8, 9]), ["year"], "x", "base").iloc[0]
    assert not unpaired["paired"] and unpaired["delta"] == 13.0 - 12.0 and np.isnan(unpaired["delta_p05"])


def test_real_run_generation_mix_adds_up_to_the_agents_h100e(short_run):
    src = read_folder(short_run)
    mix = O.generation_mix(src.agents, by=["agent"])
    got = mix.groupby(["date", "agent"])["h100e"].sum()
    want = src.agents.set_index(["date", "agent"])["h100e"]
    np.testing.assert_allclose(got.loc[want.index], want, rtol=1e-9)
    runs = O.training_runs(src.events, src.agents)
    assert len(runs) and runs["flop"].notna().all() and (runs["kind"] == "lab").all()
    reach = O.lab_compute(src.agents, src.events)
    assert (reach["reachable_h100e"] >= reach["owned_h100e"]).all() and (reach["contracted_h100e"] > 0).any()


# -- other vendors (issue 18): outcomes on tables holding TPUs, Trainium and AMD systems -----------------------------
def test_owner_compute_counts_every_vendor_in_h100e_of_dense_bf16():
    a = agents_table([("2025-01", "google", "hyperscaler", 0), ("2025-01", "openai", "lab", 0),
                      ("2025-01", "rest_of_market", "other", 0)])
    a["gpus_online_hgx_h100"] = [0, 100, 50]
    a["gpus_online_tpu_v7"] = [1000, 0, 0]
    a["gpus_online_mi355x"] = [0, 200, 0]
    a["gpus_online_trn2"] = [0, 0, 0]
    got = O.owner_compute_by_vendor(a).set_index(["agent", "vendor"])
    tpu, mi = _catalog("tpu_v7"), _catalog("mi355x")
    assert got.loc[("google", "Google"), "h100e"] == pytest.approx(1000 * tpu.bf16_dense_tflops / 989.0)
    assert got.loc[("openai", "AMD"), "h100e"] == pytest.approx(200 * mi.bf16_dense_tflops / 989.0)
    assert got.loc[("openai", "NVIDIA"), "gpus"] == 100
    assert ("google", "NVIDIA") not in got.index and "AWS" not in got.index.get_level_values("vendor")
    owner_share = got["share"].groupby(level="agent").sum()
    assert owner_share.to_numpy() == pytest.approx(np.ones(len(owner_share)))
    assert O.vendors_present(a) == ["NVIDIA", "AMD", "Google"]
    shares = O.compute_shares(a, by="vendor").set_index("vendor")
    total = got["h100e"].sum()
    assert shares["share"].sum() == pytest.approx(1.0)
    assert shares.loc["Google", "share"] == pytest.approx(got.loc[("google", "Google"), "h100e"] / total)
    assert shares.loc["AWS", "share"] == 0.0


def test_largest_cluster_by_owner_names_its_vendor_from_the_catalog():
    a = agents_table([("2025-01", "google", "hyperscaler", 0, 9216), ("2025-01", "aws", "hyperscaler", 0, 500_000),
                      ("2025-01", "xai", "lab", 0, 200_000), ("2025-01", "rest_of_market", "other", 0, 900_000),
                      ("2025-01", "meta", "hyperscaler", 0, 0)])
    a["largest_cluster_systems"] = ["tpu_v7", "trn2_ultraserver+trn2", "gb200_nvl72+hgx_h100", "hgx_h100", ""]
    got = O.largest_clusters(a)
    assert got["agent"].tolist() == ["aws", "xai", "google", "meta", "rest_of_market"]  # the aggregate last
    assert got.set_index("agent")["largest_cluster_vendor"].to_dict() == {
        "aws": "AWS", "xai": "NVIDIA", "google": "Google", "meta": "", "rest_of_market": "NVIDIA"}
    mixed = O.vendors_of(pd.Series(["mi355x+hgx_b200+mi300x", "unknown_key"]))
    assert mixed.tolist() == ["AMD+NVIDIA", O.UNKNOWN_VENDOR]


def test_vendor_shares_of_shipments_per_quarter_in_gpus_and_h100e():
    m = market_table("2025-02", [0.0, 0.0, 0.0])  # Q1 FY2026, complete
    m["units_shipped_gb300_nvl72"] = [1, 0, 1]  # 144 GPUs
    m["units_shipped_tpu_v7"] = [0, 2, 0]  # 128 chips
    m["units_shipped_mi355x"] = [0, 0, 0]
    got = O.shipment_shares(m).set_index("vendor")
    assert got.loc["NVIDIA", "gpus"] == 144 and got.loc["Google", "gpus"] == 128 and got.loc["AMD", "gpus"] == 0
    assert got.loc["NVIDIA", "share_gpus"] == pytest.approx(144 / 272)
    h_nv = 144 * _catalog("gb300_nvl72").bf16_dense_tflops / 989.0
    h_tpu = 128 * _catalog("tpu_v7").bf16_dense_tflops / 989.0
    assert got.loc["Google", "share_h100e"] == pytest.approx(h_tpu / (h_nv + h_tpu))
    assert bool(got["complete"].all()) and set(got["period"]) == {"Q1 FY2026"}
    by_system = O.shipment_shares(m, by="system")
    assert by_system["share_gpus"].sum() == pytest.approx(1.0)
