"""The browser app without a browser: chart data, event rows, live charts, controls, the Reset path and the launcher.

Everything is checked against the model's own tables (`agents_frame`, `market_frame`, `events_frame`) after a few
months, so the page shows what the model computed.
"""

from __future__ import annotations

import socket
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex
from mesa.visualization.solara_viz import _build_model_init_kwargs

from model.errors import InputError
from model.market import MarketModel, run_params
from model.palette import agent_color, system_color
from model.results import DATE_DTYPE, outcomes, read_folder
from model.results.folders import write_result_folder
from model.scenario import load_scenario_dict
from model.scenario.mesa_scenario import KNOBS, MarketScenario, knob_value
from model.viz import charts, controls, data, launch

BASELINE = "scenarios/baseline.toml"
MONTHS = 5


@pytest.fixture(scope="module")
def stepped():
    model = controls.build_model(BASELINE, seed=0)
    for _ in range(MONTHS):
        model.step()
    return model


def test_snapshot_month_and_span(stepped):
    snap = data.cached_snapshot(stepped)
    assert (snap.months_done, snap.n_months) == (MONTHS, 84)
    assert (snap.start_month, snap.end_month, snap.month) == ("2024-01", "2030-12", "2024-05")
    assert snap.month == str(stepped.agents_frame()["date"].iloc[-1])[:7]
    assert data.cached_snapshot(stepped) is snap  # one conversion per month, shared by all charts
    fresh = controls.build_model(BASELINE, seed=0)
    first = data.snapshot_of(fresh)
    assert (first.started, first.month, first.agents.empty) == (False, "2024-01", True)


def test_agent_series_match_the_agents_table(stepped):
    agents = stepped.agents_frame()
    h = data.h100e_by_agent(agents)
    assert h.shape == (MONTHS, agents["agent"].nunique())
    assert list(h.index.strftime("%Y-%m")) == ["2024-01", "2024-02", "2024-03", "2024-04", "2024-05"]
    for row in agents.itertuples():
        assert h.at[pd.Timestamp(row.date), row.agent] == pytest.approx(row.h100e)
    kinds = agents.drop_duplicates("agent").set_index("agent")["kind"]
    rank = [("hyperscaler", "neocloud", "lab", "other").index(kinds[a]) for a in h.columns]
    assert rank == sorted(rank)  # grouped by kind, hyperscalers first
    days = data.frontier_days_by_agent(agents)
    expected = agents.pivot(index="date", columns="agent", values="frontier_run_days").astype(float)
    np.testing.assert_allclose(days[expected.columns].to_numpy(), expected.to_numpy(), equal_nan=True)
    largest = data.largest_cluster_now(agents)
    last = agents[agents["date"] == agents["date"].max()].set_index("agent")["largest_cluster_gpus"]
    assert largest.to_dict() == pytest.approx(last.astype(float).to_dict())


def test_gpus_by_system_sums_agents_and_adds_up_to_gpus_online(stepped):
    agents = stepped.agents_frame()
    wide = data.gpus_by_system(agents)
    assert list(wide.columns) == [c.removeprefix("gpus_online_") for c in agents.columns
                                  if c.startswith("gpus_online_")]
    total_online = agents.groupby("date")["gpus_online"].sum().to_numpy()
    np.testing.assert_allclose(wide.sum(axis=1).to_numpy(), total_online)
    assert wide["hgx_h100"].iloc[-1] == agents.groupby("date")["gpus_online_hgx_h100"].sum().iloc[-1]


def test_market_series_match_the_market_table(stepped):
    market = stepped.market_frame()
    revenue = data.nvidia_revenue_usd(market)
    np.testing.assert_allclose(revenue.to_numpy(), market["nvidia_revenue_usd"].astype(float).to_numpy())
    backlog = data.backlog_units_by_system(market)
    assert backlog.loc["2024-05-01", "hgx_h100"] == market["backlog_units_hgx_h100"].iloc[-1]
    rental = data.rental_by_system(market)
    raw = market["rental_usd_per_gpu_hour_feynman"]
    assert rental["feynman"].isna().tolist() == raw.isna().tolist()  # not available yet: no price, no line
    assert rental["hgx_h100"].iloc[0] == pytest.approx(float(market["rental_usd_per_gpu_hour_hgx_h100"].iloc[0]))


def test_event_rows_newest_first_and_only_up_to_the_month(stepped):
    events = stepped.events_frame()
    rows = data.event_rows(events, "2024-05")
    assert list(rows.columns) == data.EVENT_TABLE_COLUMNS
    assert rows["month"].tolist() == sorted(rows["month"], reverse=True)
    so_far = events[events["date"].astype(str).str[:7] <= "2024-05"]
    assert len(rows) == len(so_far) > 0
    assert sorted(zip(rows["agent"], rows["event"], rows["system"], strict=True)) == sorted(
        zip(so_far["agent"], so_far["event"], so_far["system"], strict=True))
    assert "first_delivery" in set(rows["event"])
    newest = rows.iloc[0]
    latest = so_far.iloc[[i for i in range(len(so_far)) if str(so_far["date"].iloc[i])[:7] == newest["month"]][-1]]
    assert (newest["agent"], newest["event"]) == (latest["agent"], latest["event"])  # latest logged first
    assert len(data.event_rows(events, "2024-01")) == len(events[events["date"].astype(str).str[:7] <= "2024-01"])


def test_event_rows_hide_events_dated_after_the_month():
    events = pd.DataFrame([
        {"date": "2026-07-01", "agent": "nvidia", "event": "roadmap_slip", "system": "vr_nvl72", "gpus": 0,
         "detail": "1 months"},
        {"date": "2024-02-01", "agent": "aws", "event": "first_delivery", "system": "hgx_h100", "gpus": 8,
         "detail": ""},
        {"date": "2024-03-01", "agent": "openai", "event": "contract_signed", "system": "", "gpus": 0,
         "detail": "coreweave $1B"},
    ])
    rows = data.event_rows(events, "2024-03")
    assert rows["event"].tolist() == ["contract_signed", "first_delivery"]
    assert data.event_rows(events, "2026-07")["event"].iloc[0] == "roadmap_slip"


def test_headline_names_the_leaders(stepped):
    snap = data.cached_snapshot(stepped)
    assert snap.agents["date"].dtype == DATE_DTYPE  # the results schema, as every reader of outcomes sees it
    head = data.headline(snap)
    last = snap.agents[snap.agents["date"] == snap.agents["date"].max()]
    named = last[last["kind"] != "other"]  # the rest of the market is an aggregate, not a contender
    leader = named.loc[named["h100e"].idxmax()]
    share = leader["h100e"] / last["h100e"].sum()
    assert head["H100e leader"] == f"{leader['agent']} ({leader['h100e'] / 1e6:.2f} M H100e, {share:.0%} of all)"
    tied = named[named["largest_cluster_gpus"] == named["largest_cluster_gpus"].max()]
    biggest = tied.sort_values("agent").iloc[0]  # ties: the name that sorts first (the outcomes' convention)
    assert head["largest cluster"] == f"{biggest['agent']} ({biggest['largest_cluster_gpus']:,.0f} GPUs)"
    assert head["NVIDIA revenue this month"] == f"${snap.market['nvidia_revenue_usd'].iloc[-1] / 1e9:.1f} B"
    assert data.headline(data.snapshot_of(controls.build_model(BASELINE, seed=0))) == {}


def test_live_charts_show_the_tables_and_redraw_once_per_month():
    model = controls.build_model(BASELINE, seed=0)
    png0 = charts.chart_png(model, "h100e")
    assert png0.startswith(b"\x89PNG")
    for _ in range(4):
        model.step()
    snap = data.cached_snapshot(model)
    pngs = {name: charts.chart_png(model, name) for name in charts.CHARTS}
    assert pngs["h100e"] != png0
    assert charts.chart_png(model, "h100e") is pngs["h100e"]  # same month: cached, not redrawn

    h100e = charts.live_chart(model, "h100e")
    wide = data.h100e_by_agent(snap.agents)
    for agent, line in h100e.lines.items():
        np.testing.assert_allclose(line.get_ydata(), wide[agent].to_numpy())
        assert line.get_color() == agent_color(agent)
    assert h100e.axes[0].get_yscale() == "log"
    stack = charts.live_chart(model, "gpus_by_system")
    top = stack.stack[-1].get_paths()[0].vertices[:, 1].max()
    assert top == pytest.approx(data.gpus_by_system(snap.agents).sum(axis=1).max())
    assert [to_hex(c.get_facecolor()[0]) for c in stack.stack] == [system_color(k) for k in stack.keys]
    bars = charts.live_chart(model, "largest_cluster")
    sizes = data.largest_cluster_now(snap.agents)
    assert {a: b.get_width() for a, b in bars.bars.items()} == pytest.approx((sizes / 1e3).to_dict())
    assert bars.axes[0].get_title().endswith("2024-04")
    revenue = charts.live_chart(model, "revenue_backlog").revenue
    np.testing.assert_allclose(revenue.get_ydata(), snap.market["nvidia_revenue_usd"].to_numpy() / 1e9)

    model.step()
    assert charts.chart_png(model, "h100e") != pngs["h100e"]
    assert len(charts.live_chart(model, "h100e").lines["microsoft"].get_ydata()) == 5


def test_sliders_default_to_the_scenario_file(tmp_path):
    assert set(controls.KNOB_SLIDERS) == set(KNOBS)
    params = controls.model_params(BASELINE, seed=4)
    assert set(params) == {"scenario_file", "rng", *KNOBS}
    assert params["scenario_file"] == BASELINE and params["rng"].value == 4
    tree = load_scenario_dict(BASELINE)
    for knob in KNOBS:
        slider = params[knob]
        assert slider.value == knob_value(tree, knob)
        assert slider.min <= slider.value <= slider.max
    assert not params["vr_delay_months"].is_float_slider and params["capex_multiplier_lab"].is_float_slider

    other = tmp_path / "late_rubin.toml"
    other.write_text(f'extends = "{(tmp_path.cwd() / BASELINE).as_posix()}"\n'
                     "[supplier]\nsupply_growth_multiplier = 3.5\n[supplier.delay_months]\nvr_nvl72 = 30\n")
    late = controls.model_params(other)
    assert (late["vr_delay_months"].value, late["vr_delay_months"].max) == (30, 30)
    assert (late["supply_growth_multiplier"].value, late["supply_growth_multiplier"].max) == (3.5, 3.5)


def test_reset_builds_the_model_from_the_sliders():
    """What SolaraViz's Reset does with the slider values (`_build_model_init_kwargs`), without a browser."""
    model = controls.build_model(BASELINE, seed=0)
    params = controls.model_params(BASELINE, seed=0)
    values = {k: (v.value if hasattr(v, "value") else v) for k, v in params.items()}

    same = MarketModel(**_build_model_init_kwargs(model, values, add_scenario_when_empty=True,
                                                  require_model_accepts_scenario=True))
    for m in (model, same):
        for _ in range(6):
            m.step()
    pd.testing.assert_frame_equal(same.agents_frame(), model.agents_frame())  # defaults = the file's values
    pd.testing.assert_frame_equal(same.events_frame(), model.events_frame())

    moved = {**values, "vr_delay_months": 9, "capex_multiplier_lab": 1.5, "rng": 7}
    kwargs = _build_model_init_kwargs(model, moved, add_scenario_when_empty=True, require_model_accepts_scenario=True)
    assert set(kwargs) == {"scenario"} and isinstance(kwargs["scenario"], MarketScenario)
    reset = MarketModel(**kwargs)
    assert reset.scenario.rng == 7 and reset.scenario.scenario_file == BASELINE
    knobs = controls.knob_values(reset)
    assert (knobs["vr_delay_months"], knobs["capex_multiplier_lab"]) == (9, 1.5)
    summary = controls.knob_summary(knobs, reset.scenario.rng)
    assert "seed 7" in summary and "Vera Rubin delay 9 months" in summary and "lab x1.50" in summary


def test_launcher_command_and_environment(tmp_path):
    cmd = launch.command("127.0.0.1", 8765)
    assert cmd[:4] == [sys.executable, "-m", "solara", "run"] and cmd[4].endswith("model/viz/app.py")
    assert {"--production", "--no-open", "--no-check-version"} <= set(cmd)
    assert cmd[cmd.index("--port") + 1] == "8765" and cmd[cmd.index("--host") + 1] == "127.0.0.1"
    env = launch.environment(BASELINE, 3)
    assert env[launch.ENV_SCENARIO].endswith("/scenarios/baseline.toml") and env[launch.ENV_SCENARIO][0] == "/"
    assert env[launch.ENV_SEED] == "3" and env["SOLARA_TELEMETRY_MIXPANEL_ENABLE"] == "False"
    assert launch.missing_packages() == []


def test_launcher_rejects_bad_input_before_starting(tmp_path):
    with pytest.raises(InputError, match="not found"):
        launch.validate(tmp_path / "nope.toml", "127.0.0.1", 8765)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(InputError, match=f"cannot listen on 127.0.0.1:{port}"):
            launch.validate(BASELINE, "127.0.0.1", port)


def test_cli_viz_bad_scenario_exits_2_with_one_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "model", "viz", str(tmp_path / "missing.toml"), "--port", "1"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "missing.toml" in out.stderr and "Traceback" not in out.stderr


def test_app_page_has_month_card_six_charts_and_events():
    from model.viz import app

    assert len(app.COMPONENTS) == 2 + len(charts.CHARTS)
    assert app.COMPONENTS[0] is app.MonthCard and app.COMPONENTS[-1] is app.EventsTable
    assert controls.scenario_from_env().name == "baseline.toml"


def test_last_month_finishes_the_page(tmp_path):
    model = controls.build_model(BASELINE, seed=1)
    model.run()
    snap = data.cached_snapshot(model)
    assert snap.finished and snap.month == "2030-12" and not model.running
    assert len(data.event_rows(snap.events, snap.month)) == len(snap.events)  # nothing dated after the end
    for name in charts.CHARTS:
        assert charts.chart_png(model, name).startswith(b"\x89PNG")
    assert charts.live_chart(model, "largest_cluster").axes[0].get_title().endswith("2030-12")
    # the app states the same outcomes as a result folder of the same scenario and seed
    result = run_params(load_scenario_dict(BASELINE), seed=1)
    folder = read_folder(write_result_folder(tmp_path / "seed1", result.tables(), result.manifest))
    leader = outcomes.leaders(folder.agents, at="end").iloc[0]
    assert data.headline(snap)["H100e leader"].startswith(f"{leader['agent']} ({leader['h100e'] / 1e6:.2f} M")


def test_snapshots_stay_consistent_while_another_thread_steps():
    """SolaraViz's "Use Threads" steps the model while the page reads it: every snapshot must be whole months."""
    import threading

    model = controls.build_model(BASELINE, seed=2)
    n_agents = len(load_scenario_dict(BASELINE)["kinds"])  # at least one agent per kind
    runner = threading.Thread(target=model.run)
    runner.start()
    seen = set()
    while runner.is_alive() or not seen:
        snap = data.snapshot_of(model)
        seen.add(snap.months_done)
        assert len(snap.market) == snap.months_done
        if snap.months_done:
            per_month = snap.agents.groupby("date").size()
            assert len(per_month) == snap.months_done and per_month.nunique() == 1 and per_month.iloc[0] >= n_agents
            assert snap.agents["date"].astype(str).str[:7].max() == snap.month
    runner.join()
    assert data.snapshot_of(model).months_done == 84 and len(seen) > 1
