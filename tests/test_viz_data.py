"""The browser app without a browser: what a run is made of (settings, knobs, the model that never steps past its
end, Mesa's Reset), the live run's series and outcomes against the model's own tables and the outcomes module, the
charts, scoreboard and events as the page shows them, the CSV downloads, and the launcher."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from model.errors import InputError
from model.hardware import systems
from model.market import MarketModel, run_params
from model.palette import agent_color, system_color
from model.results import conform, outcomes, read_folder, write_csv
from model.results.folders import write_result_folder
from model.scenario import load_scenario
from model.scenario.mesa_scenario import KNOBS, MarketScenario
from model.viz import charts, components, controls, data, events, launch, names, page, scoreboard
from model.viz.controls import AppModel, RunSettings

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "scenarios" / "baseline.toml"
RUBIN_DELAY = ROOT / "scenarios" / "rubin_delay.toml"
MONTHS = 30


@pytest.fixture(scope="module")
def settings() -> RunSettings:
    return RunSettings.of_scenario(BASELINE, seed=0)


@pytest.fixture(scope="module")
def stepped(settings):
    """The baseline, seed 0, after 30 months, read by the page every month as it ran."""
    model = controls.build_model(settings)
    for _ in range(MONTHS):
        model.step()
        data.snapshot(model)
    return model


@pytest.fixture(scope="module")
def finished(settings):
    """The baseline, seed 0, run to its end and read by the page in steps of 1 to 13 months (Render Interval)."""
    model = controls.build_model(settings)
    stride = 1
    while model.running:
        for _ in range(stride):
            model.step()
        data.snapshot(model)
        stride = stride % 13 + 1
    return model


# -- settings and the model ---------------------------------------------------------------------------------------
def test_settings_start_at_the_files_values_and_only_moved_knobs_become_overrides(settings):
    assert [k for k, _ in settings.knobs] == list(controls.KNOB_SLIDERS) and set(controls.KNOB_SLIDERS) == set(KNOBS)
    assert settings.knob("vr_delay_months") == 0 and settings.knob("supply_growth_multiplier") == 1.0
    assert settings.overrides() == ()
    rubin = settings.with_scenario(RUBIN_DELAY)
    assert rubin.knob("vr_delay_months") == 6 and rubin.seed == 0 and rubin.overrides() == ()
    moved = rubin.with_knob("vr_delay_months", 9.4).with_knob("supply_growth_multiplier", 1.1500000000000001)
    assert moved.knob("vr_delay_months") == 9 and moved.knob("supply_growth_multiplier") == 1.15
    assert moved.overrides() == ("supplier.delay_months.vr_nvl72=9", "supplier.supply_growth_multiplier=1.15")
    assert "rubin_delay.toml \u00b7 seed 0 \u00b7 Vera Rubin delay 9 \u00b7 Supply growth \u00d71.15" in moved.summary()


def test_a_run_with_untouched_controls_is_the_file_as_it_is(settings):
    app = controls.build_model(settings)
    plain = MarketModel(MarketScenario(scenario_file=str(BASELINE), rng=0))
    for model in (app, plain):
        for _ in range(8):
            model.step()
    pd.testing.assert_frame_equal(app.agents_frame(), plain.agents_frame())
    pd.testing.assert_frame_equal(app.events_frame(), plain.events_frame())


def test_the_model_runs_exactly_the_settings_it_was_given(settings):
    moved = settings.with_scenario(RUBIN_DELAY).with_knob("vr_delay_months", 9).with_knob(
        "capex_multiplier_lab", 1.5).with_seed(7)
    model = controls.build_model(moved)
    assert controls.applied_settings(model) == moved  # read back from the typed scenario the model runs and its seed
    spec = model.spec  # the typed scenario the market reads
    assert spec.supplier.delay_months["vr_nvl72"] == 9 and spec.kinds.lab.capex_multiplier == 1.5
    assert model.scenario.rng == 7


def test_mesa_reset_replays_the_current_run():
    """Mesa's Reset builds `type(model)(**model_params, scenario=<a fresh scenario>)`; the app's model_params carry
    the run's settings, which win over the fresh (default) scenario."""
    current = RunSettings.of_scenario(RUBIN_DELAY, seed=4).with_knob("supply_growth_multiplier", 0.8)
    first = controls.build_model(current)
    again = AppModel(settings=current, scenario=MarketScenario())
    for model in (first, again):
        for _ in range(5):
            model.step()
    assert controls.applied_settings(again) == current
    pd.testing.assert_frame_equal(again.agents_frame(), first.agents_frame())


def test_the_model_never_steps_past_the_scenarios_end(finished):
    assert finished.time_index == finished.n_months == 84 and not finished.running
    for _ in range(13):  # Mesa's Render Interval 13 asks for 13 more
        finished.step()
    assert finished.time_index == 84
    assert str(finished.agents_frame()["date"].max())[:7] == "2030-12"
    assert data.snapshot(finished).month == "2030-12" and data.snapshot(finished).finished


def test_a_short_scenario_stops_at_its_own_last_month():
    """The end is the scenario's, not a fixed 84 months: a run ending 2024-06 shows six months whatever is asked."""
    model = AppModel(MarketScenario(scenario_file=str(BASELINE), overrides=("end=2024-06",), rng=0))
    for _ in range(20):
        model.step()
    assert (model.time_index, model.n_months, model.running) == (6, 6, False)
    assert str(model.agents_frame()["date"].max())[:7] == str(model.market_frame()["date"].max())[:7] == "2024-06"
    snap = data.snapshot(model)
    assert (snap.month, snap.end_month, snap.finished, len(snap.months)) == ("2024-06", "2024-06", True, 6)
    assert snap.events.empty or snap.events["date"].max() <= pd.Timestamp("2024-06-01")
    assert "finished: 6 months, 2024-01 to 2024-06" in scoreboard.status_card_html(snap, "")

def test_scenario_choices_list_the_scenario_files_with_their_stories(tmp_path):
    choices = controls.scenario_choices()
    files = sorted(p.name for p in (ROOT / "scenarios").glob("*.toml"))
    assert [c.name for c in choices][0] == "baseline.toml" and sorted(c.name for c in choices) == files
    rubin = next(c for c in choices if c.name == "rubin_delay.toml")
    assert rubin.story.startswith("Rubin delay: Vera Rubin NVL72 slips two quarters") and "#" not in rubin.story
    elsewhere = tmp_path / "mine.toml"
    elsewhere.write_text(f'# My story.\nextends = "{BASELINE.as_posix()}"\n')
    mine = controls.scenario_choices(elsewhere)
    assert mine[0].name == "mine.toml" and mine[0].story == "My story." and len(mine) == len(files) + 1


def test_every_scenario_in_the_selector_runs():
    for choice in controls.scenario_choices():
        model = controls.build_model(RunSettings.of_scenario(choice.path, seed=1))
        model.step()
        assert data.snapshot(model).month == "2024-01", choice.name
        assert controls.applied_settings(model).scenario_file == choice.path


# -- the live run ---------------------------------------------------------------------------------------------------
def test_snapshot_month_span_and_caching(stepped, settings):
    snap = data.snapshot(stepped)
    assert (snap.months_done, snap.n_months, snap.start_month, snap.end_month, snap.month) == (
        MONTHS, 84, "2024-01", "2030-12", "2026-06")
    assert data.snapshot(stepped) is snap  # one per month, however many components ask
    fresh = data.snapshot(controls.build_model(settings))
    assert (fresh.started, fresh.month, fresh.agents.empty, fresh.firsts) == (False, "2024-01", True, None)
    assert figure_has_no_data(charts.figure("compute", fresh))


def figure_has_no_data(figure: dict) -> bool:
    return figure["data"] == [] and "press Step" in figure["layout"]["annotations"][0]["text"]


def test_series_are_the_model_tables(stepped):
    snap = data.snapshot(stepped)
    agents, market = stepped.agents_frame(), stepped.market_frame()
    assert list(snap.months) == sorted(agents["date"].str[:7].unique())
    for column in data.PER_AGENT:
        wide = agents.pivot(index="date", columns="agent", values=column)[list(snap.agent_names)]
        np.testing.assert_allclose(snap.per_agent[column], wide.to_numpy(dtype=float), equal_nan=True)
    kinds = [snap.kinds[a] for a in snap.agent_names]
    assert kinds == sorted(kinds, key=names.KIND_ORDER.index)  # hyperscalers, neoclouds, labs, the rest
    by_system = agents.groupby("date")[[f"gpus_online_{k}" for k in snap.systems]].sum().to_numpy()
    np.testing.assert_allclose(snap.gpus_by_system, by_system)
    mix = outcomes.generation_mix(conform("agents", agents)).pivot(index="date", columns="system", values="gpus")
    np.testing.assert_allclose(snap.gpus_by_system, mix[list(snap.systems)].to_numpy(dtype=float))
    per = np.array([systems()[k].gpus_per_system for k in snap.systems])  # GPUs, as the report gives backlog
    np.testing.assert_allclose(snap.backlog_gpus, market[[f"backlog_units_{k}" for k in snap.systems]] * per)
    backlog = outcomes.backlog(conform("market", market)).pivot(index="date", columns="system", values="backlog_gpus")
    np.testing.assert_allclose(snap.backlog_gpus, backlog[list(snap.systems)].to_numpy(dtype=float))
    assert snap.backlog_gpus.max() > 0
    rental = market[[f"rental_usd_per_gpu_hour_{k}" for k in snap.systems]].to_numpy(dtype=float)
    np.testing.assert_allclose(snap.rental, rental, equal_nan=True)
    assert np.isnan(snap.rental[:, snap.systems.index("feynman")]).all()  # not shipping yet: no price
    np.testing.assert_allclose(snap.revenue_usd, market["nvidia_revenue_usd"])
    pd.testing.assert_frame_equal(snap.market, conform("market", market))


@pytest.mark.parametrize("run", ["stepped", "finished"])
def test_outcomes_are_the_outcomes_modules_on_the_whole_tables(run, request):
    """Read month by month (or several months at a time), the page states what the outcomes module says about
    the whole tables so far."""
    model = request.getfixturevalue(run)
    snap = data.snapshot(model)
    agents = conform("agents", model.agents_frame())
    events = conform("events", model.events_frame())
    events = events[events["date"] <= pd.Timestamp(f"{snap.month}-01")]
    pd.testing.assert_frame_equal(snap.firsts, outcomes.firsts(events, agents))
    pd.testing.assert_frame_equal(snap.clusters, outcomes.clusters_at_scale(agents))
    pd.testing.assert_frame_equal(snap.standing, outcomes.standings(agents, at="end"))
    pd.testing.assert_frame_equal(snap.records, outcomes.records(agents, at="end"))
    pd.testing.assert_frame_equal(snap.revenue_years, outcomes.revenue(conform("market", model.market_frame()),
                                                                       "calendar_year"))
    standing = outcomes.standings(agents, at="all")
    share = standing.pivot(index="date", columns="agent", values="share")[list(snap.agent_names)]
    np.testing.assert_allclose(snap.share, share.to_numpy(), equal_nan=True)
    assert len(snap.events) == len(events)  # nothing dated after the month shown


def test_each_months_standings_and_records_are_the_outcomes_modules_on_the_whole_table(settings):
    """The page computes a month's standings, records and shares from that month's rows only (numpy, not the
    outcomes module's pandas calls): every month they equal the outcomes module on the whole table so far."""
    model = controls.build_model(settings)
    checked = 0
    while model.running and checked < 40:
        model.step()
        snap = data.snapshot(model)
        agents = conform("agents", model.agents_frame())
        pd.testing.assert_frame_equal(snap.standing, outcomes.standings(agents, at="end"))
        pd.testing.assert_frame_equal(snap.records, outcomes.records(agents, at="end"))
        share = outcomes.standings(agents, at="end").set_index("agent")["share"]
        np.testing.assert_allclose(snap.share[-1], share[list(snap.agent_names)].to_numpy(), equal_nan=True)
        checked += 1
    assert checked == 40 and snap.records["measure"].tolist()[:1] == ["largest_cluster_gpus"]
    pd.testing.assert_frame_equal(snap.agents, agents)  # the whole table, made when asked for


def test_month_standings_and_records_break_ties_and_skip_the_aggregate_as_outcomes_does():
    rows = pd.DataFrame({"date": pd.Timestamp("2025-03-01"), "agent": ["zeta", "alpha", "rest", "beta"],
                         "kind": ["lab", "hyperscaler", "other", "neocloud"], "h100e": [5.0, 5.0, 9.0, 0.0],
                         "largest_cluster_gpus": [100, 100, 900, 0], "frontier_run_days": [np.nan, 30.0, 1.0, 30.0]})
    rows = conform("agents", rows.assign(gpus_online=0))
    columns = {c: rows[c].to_numpy() for c in ("largest_cluster_gpus", "frontier_run_days")}
    arrays = (rows["agent"].to_numpy(dtype=object), rows["kind"].to_numpy(dtype=object))
    standing = data.month_standing(pd.Timestamp("2025-03-01"), *arrays, rows["h100e"].to_numpy(), columns)
    pd.testing.assert_frame_equal(standing, outcomes.standings(rows, at="end"))
    assert standing["agent"].tolist()[:2] == ["alpha", "zeta"] and pd.isna(standing["rank"].iloc[-1])
    records = data.month_records(pd.Timestamp("2025-03-01"), *arrays, columns)
    pd.testing.assert_frame_equal(records, outcomes.records(rows, at="end"))
    assert records["agent"].tolist() == ["alpha", "alpha"]  # ties by name; the aggregate never holds a record


def test_the_page_states_what_a_result_folder_of_the_same_run_says(finished, tmp_path):
    result = run_params(load_scenario(BASELINE), seed=0)
    folder = read_folder(write_result_folder(tmp_path / "seed0", result.tables(), result.manifest))
    snap = data.snapshot(finished)
    leader = outcomes.leaders(folder.agents, at="end").iloc[0]
    assert f"{names.agent_label(leader['agent'])}</span>, {names.compact(leader['h100e'])} H100e, " \
           f"{leader['share']:.0%} of all compute" in scoreboard.status_html(snap)
    first = outcomes.firsts(folder.events, folder.agents)
    gb300 = first[(first["event"] == "first_online") & (first["system"] == "gb300_nvl72")].iloc[0]
    html = scoreboard.scoreboard_html(snap, 4600)
    row = html.split('<tr data-system="gb300_nvl72">')[1].split("</tr>")[0]
    assert f'{gb300["date"]:%Y-%m}</span> <span class="airace-agent">{names.agent_label(gb300["agent"])}' in row


def test_reading_while_another_thread_steps_gives_whole_months():
    """Mesa's play loop steps the model while the page may render in another thread: every snapshot holds whole
    months, and the last one equals a run read month by month."""
    model = controls.build_model(RunSettings.of_scenario(BASELINE, seed=2))

    def play() -> None:  # Mesa's play loop: a month, then its play interval (the app's is 1 ms)
        while model.running:
            model.step()
            time.sleep(components.PLAY_INTERVAL_MS / 1000)

    data.snapshot(model)  # the first read pays for imports and caches; warm it so reads overlap the play loop
    runner = threading.Thread(target=play)
    runner.start()
    seen = set()
    while runner.is_alive() or len(seen) < 2:  # under load the play loop may finish first: read once more
        snap = data.snapshot(model)
        seen.add(snap.months_done)
        if snap.months_done:
            per_month = snap.agents.groupby("date").size()
            assert len(per_month) == snap.months_done == len(snap.months) and per_month.nunique() == 1
            assert snap.agents["date"].max() == pd.Timestamp(f"{snap.month}-01")
    runner.join()
    last = data.snapshot(model)
    assert last.months_done == 84 and len(seen) > 1
    pd.testing.assert_frame_equal(last.agents, conform("agents", model.agents_frame()))


# -- charts -------------------------------------------------------------------------------------------------------
def test_chart_traces_are_the_series_with_names_units_and_colours(stepped):
    snap = data.snapshot(stepped)
    figure = charts.figure("compute", snap)
    assert figure["month"] == "2026-06" and figure["layout"]["yaxis"]["type"] == "log"
    by_uid = {t["uid"]: t for t in figure["data"]}
    assert list(by_uid) == snap.agents_with_data("h100e")  # only agents with compute, kind order
    assert "openai" not in by_uid  # a lab renting its compute has none of its own
    ms = by_uid["microsoft"]
    assert (ms["name"], ms["line"]["color"]) == ("Microsoft", agent_color("microsoft"))
    assert "H100e" in ms["hovertemplate"] and "%{fullData.name}" in ms["hovertemplate"]
    assert ms["x"] == [f"{m}-01" for m in snap.months]  # the time axis grows with the run
    np.testing.assert_allclose(ms["y"], np.round(snap.per_agent["h100e"][:, 0]))
    stack = charts.figure("gpus_by_system", snap)["data"]
    assert [t["name"] for t in stack] == [names.system_label(k) for k in snap.systems
                                          if snap.gpus_by_system[:, snap.systems.index(k)].max() > 0]
    assert all(t["stackgroup"] == "stack" and t["fillcolor"] == system_color(t["uid"]) for t in stack)
    backlog = charts.figure("backlog", snap)
    assert "GPUs" in backlog["data"][0]["hovertemplate"] and backlog["layout"]["legend"]["traceorder"] == "reversed"
    shares = charts.figure("shares", snap)["data"]
    np.testing.assert_allclose(np.nansum([t["y"] for t in shares], axis=0), 100, atol=0.1)


def test_every_chart_is_strict_json_and_the_baseline_lies_faint_behind(stepped, finished):
    snap, base = data.snapshot(stepped), data.snapshot(finished)
    for name in charts.CHARTS:
        text = charts.figure_json(name, snap, base)
        figure = json.loads(text, parse_constant=lambda c, name=name: pytest.fail(f"{name}: {c} is not JSON"))
        faint = [t for t in figure["data"] if t["uid"].startswith("baseline-")]
        if name not in ("shares", "vendor_shares"):  # 100% stacks: no baseline overlay
            assert faint, name
        for trace in faint:
            assert trace["showlegend"] is False and trace["opacity"] < 1 and trace["line"]["dash"] == "dot"
            assert len(trace["x"]) == MONTHS  # cut to the month the current run has reached
    compute = charts.figure("compute", snap, base)["data"]
    own = {t["uid"]: t for t in compute}
    assert own["baseline-microsoft"]["legendgroup"] == own["microsoft"]["legendgroup"]  # one legend entry toggles both
    np.testing.assert_allclose(own["baseline-microsoft"]["y"], own["microsoft"]["y"])  # the same run: same line


# -- scoreboard and events ------------------------------------------------------------------------------------------
def test_scoreboard_rows_fill_as_the_race_runs(stepped, finished):
    early, late = data.snapshot(stepped), data.snapshot(finished)
    early_html, late_html = scoreboard.scoreboard_html(early, 4600), scoreboard.scoreboard_html(late, 4600)
    assert "first 4,600-GPU cluster" in early_html
    h100 = early_html.split('<tr data-system="hgx_h100">')[1].split("</tr>")[0]
    assert "in service at the start" in h100  # not part of the race
    assert "dropped from the roadmap" in late_html.split('<tr data-system="rubin_cpx">')[1].split("</tr>")[0]
    rubin_early = early_html.split('<tr data-system="vr_nvl72">')[1].split("</tr>")[0]
    rubin_late = late_html.split('<tr data-system="vr_nvl72">')[1].split("</tr>")[0]
    assert "airace-agent" not in rubin_early and rubin_late.count("airace-agent") == 3
    for _, row in late.clusters.iterrows():
        cell = late_html.split(f'data-threshold="{row["threshold_gpus"]}"')[1].split("</span></span>")[0]
        assert f'{row["date"]:%Y-%m}' in cell and names.agent_label(row["agent"]) in cell


def test_status_names_the_record_holders(finished):
    snap = data.snapshot(finished)
    html = scoreboard.status_html(snap)
    for measure, row in snap.records.set_index("measure").iterrows():
        assert f'data-measure="{measure}"' in html and names.agent_label(row["agent"]) in html
    assert f"in {snap.month}" in html and "in 2030" in html  # revenue this month and the last full year
    card = scoreboard.status_card_html(snap, "baseline.toml \u00b7 seed 0")
    assert '<div class="airace-month">2030-12</div>' in card and "finished: 84 months" in card


def test_events_in_words_with_the_fields_each_type_has(finished):
    evs = data.snapshot(finished).events
    rows = events.event_rows(evs)
    assert len(rows) == len(evs) and list(rows.columns) == events.COLUMNS
    assert rows["month"].tolist() == sorted(rows["month"], reverse=True)
    finished_runs = rows[rows["event"] == "training run finished"]
    assert len(finished_runs) and (finished_runs["system"] == "").all() and (finished_runs["gpus"] == "").all()
    assert finished_runs["detail"].str.contains("FLOP").all()
    started = rows[rows["event"] == "training run started"]
    assert (started["system"] != "").all() and started["gpus"].str.match(r"^\d{1,3}(,\d{3})*$").all()
    assert not rows["detail"].str.contains("hgx_|_nvl").any()  # catalog keys in free text get their names
    only = events.event_rows(evs, ["first_online"], system="gb300_nvl72")
    assert set(only["event"]) == {"first online"} and set(only["system"]) == {"GB300 NVL72"}
    first = outcomes.firsts(evs, data.snapshot(finished).agents)
    gb300 = first[(first["event"] == "first_online") & (first["system"] == "gb300_nvl72")].iloc[0]
    named = only[only["agent"] != names.agent_label("rest_of_market")]
    assert (named.iloc[-1]["month"], named.iloc[-1]["agent"]) == (f"{gb300['date']:%Y-%m}",
                                                                  names.agent_label(gb300["agent"]))
    by_agent = events.event_rows(evs, agent="xai")
    assert set(by_agent["agent"]) == {"xAI"}
    offered = events.choices(evs)
    assert ("first_online", "first online") in offered["event"] and offered["system"][0][0] == "hgx_h100"
    hostile = pd.DataFrame([{"date": pd.Timestamp("2024-01-01"), "agent": "<script>", "event": "first_online",
                             "system": "", "gpus": 0, "detail": ""}])
    assert "<script>" not in events.events_html(events.matching(hostile))


def test_event_filters_keep_exactly_the_matching_events(finished):
    """Every filter the table offers (type, agent, system, and combinations) keeps exactly the events the table
    itself selects, newest first, each once."""
    evs = data.snapshot(finished).events
    offered = events.choices(evs)
    assert [k for k, _ in offered["event"]] == list(dict.fromkeys(evs["event"]))  # only what occurred
    assert {k for k, _ in offered["agent"]} == set(evs["agent"])
    assert {k for k, _ in offered["system"]} == {s for s in evs["system"] if s}
    filters = [(None, None, None), (["first_online", "first_delivery"], None, None), (None, "xai", None),
               (None, None, "vr_nvl72"), (["contract_signed"], "openai", None),
               (["first_online"], None, "gb300_nvl72"), (["training_run_started"], "anthropic", "gb200_nvl72"),
               (["roadmap_slip"], "xai", None)]
    filters += [([key], None, None) for key, _ in offered["event"]] + [(None, a, None) for a, _ in offered["agent"]]
    nonempty = 0
    for types, agent, system in filters:
        expected = evs
        if types:
            expected = expected[expected["event"].isin(types)]
        if agent:
            expected = expected[expected["agent"] == agent]
        if system:
            expected = expected[expected["system"] == system]
        rows = events.event_rows(evs, types, agent, system)
        assert len(rows) == len(expected), (types, agent, system)
        count, newest = events.newest_matching(evs, types, agent, system, limit=20)  # what the page puts in words
        assert count == len(rows) and newest == events.matching(evs, types, agent, system)[:20]
        nonempty += len(rows) > 0
        assert rows["month"].tolist() == sorted(expected["date"].dt.strftime("%Y-%m"), reverse=True)
        if types:
            assert set(rows["event"]) <= {events.event_kind(t).label for t in types}
        if agent:
            assert set(rows["agent"]) <= {names.agent_label(agent)}
        if system:
            assert set(rows["system"]) <= {names.system_short(system), ""}
    assert nonempty >= len(filters) - 2  # the filters tried do select events
    nothing = events.event_rows(evs, ["roadmap_slip"], "openai", "hgx_h100")
    assert nothing.empty and events.events_html(events.matching(evs, ["roadmap_slip"], "openai", "hgx_h100")) \
        .count("<tr>") == 1  # the header only
    assert events.events_html(events.matching(evs), limit=7).count("<tr>") == 8  # the newest 7 and the header


def test_the_scoreboard_states_every_first_and_cluster_the_outcomes_module_finds(finished):
    """Each cell is outcomes.firsts' date and agent (or '-' where no named agent reached it); the aggregate is never
    first; thresholds are outcomes.clusters_at_scale's."""
    snap = data.snapshot(finished)
    html = scoreboard.scoreboard_html(snap, 4600)
    first = {(r.event, r.system): r for r in outcomes.firsts(snap.events, snap.agents).itertuples()}
    assert first and all(r.agent != "rest_of_market" for r in first.values())
    checked = 0
    for system in snap.systems:
        row = html.split(f'<tr data-system="{system}">')[1].split("</tr>")[0]
        if "colspan" in row:  # in service at the start, or dropped: no firsts to state
            assert not any(key[1] == system for key in first), system
            continue
        for event, _ in scoreboard.FIRST_COLUMNS:
            cell = row.split(f'data-event="{event}"')[1].split("</td>")[0]
            r = first.get((event, system))
            if r is None:
                assert "airace-agent" not in cell, (event, system)
            else:
                assert f'{r.date:%Y-%m}</span> <span class="airace-agent">{names.agent_label(r.agent)}' in cell
                assert f"{names.whole(r.gpus)} GPUs" in cell
                checked += 1
    assert checked == len(first)  # every first the outcomes module finds is on the board
    clusters = outcomes.clusters_at_scale(snap.agents)
    for threshold in outcomes.CLUSTER_THRESHOLDS_GPUS:
        cell = html.split(f'data-threshold="{threshold}"')[1].split("</span></span>")[0]
        hit = clusters[clusters["threshold_gpus"] == threshold]
        if hit.empty:
            assert "airace-agent" not in cell.split("</b>")[1].split("<span data-threshold")[0]
        else:
            assert f'{hit["date"].iloc[0]:%Y-%m}' in cell and names.agent_label(hit["agent"].iloc[0]) in cell
    leader = outcomes.leaders(snap.agents, at="end").iloc[0]
    assert f'Leader:</b> <span class="airace-agent">{names.agent_label(leader["agent"])}</span>' in \
        scoreboard.status_html(snap)

def test_csv_downloads_are_the_tables_with_iso_dates(stepped, tmp_path):
    snap = data.snapshot(stepped)
    for table in ("agents", "market", "events"):
        frame = getattr(snap, table)
        text = components.csv_bytes(frame)
        assert text == write_csv(tmp_path / f"{table}.csv", frame).read_bytes()  # as `airace` writes CSV files
        back = pd.read_csv(io.BytesIO(text))
        assert list(back.columns) == list(frame.columns) and len(back) == len(frame)
        assert back["date"].iloc[0] == "2024-01-01" and back["date"].iloc[-1] <= "2026-06-01"
        # the run's rows so far, value for value
        pd.testing.assert_frame_equal(conform(table, back.assign(date=pd.to_datetime(back["date"]))),
                                      frame.reset_index(drop=True), check_dtype=False)
    agents = pd.read_csv(io.BytesIO(components.csv_bytes(snap.agents)))
    assert agents["date"].nunique() == MONTHS and len(agents) == MONTHS * len(snap.agent_names)


def test_the_download_buttons_give_the_current_runs_tables(settings):
    """The CSV buttons read the run the page shows when pressed: after Apply, the new run's rows."""
    page = _render_page(BASELINE)
    state = page["state"]
    for _ in range(4):
        state.model.step()
    make = components._csv(state, "market")
    assert len(pd.read_csv(io.BytesIO(make()))) == 4
    state.draft.set(state.draft.value.with_seed(5))
    state.apply()
    state.model.step()
    market = pd.read_csv(io.BytesIO(make()))
    assert len(market) == 1 and market["date"].tolist() == ["2024-01-01"]
    page["context"].close()


# -- the page and the launcher ----------------------------------------------------------------------------------------
def test_the_page_renders_month_by_month_without_a_browser(settings):
    """Every component of the page rendered by Solara (no browser) through a few months, a filter and Apply."""
    import solara
    from mesa.visualization.utils import force_update

    box = {}

    @solara.component
    def Harness():
        state = components.use_page_state(BASELINE, 0)
        components.page_context.provide(state)
        box["state"] = state
        with solara.Column():
            for component in components.COMPONENTS:
                component(state.model)

    root, context = solara.render(Harness(), handle_error=False)
    state = box["state"]
    for _ in range(3):
        state.model.step()
        with context:
            force_update()
    html = [w.unsafe_innerHTML for w in context.find(solara.widgets.HTML).widgets]
    assert any('<div class="airace-month">2024-03</div>' in h for h in html)
    assert any("airace-event-table" in h for h in html) and any('data-system="hgx_h200"' in h for h in html)
    figures = [json.loads(w.figure_json) for w in _tree(root) if hasattr(w, "figure_json")]
    assert len(figures) == len(charts.CHARTS) and {f["month"] for f in figures} == {"2024-03"}
    state.event_types.set(["first_delivery"])
    state.draft.set(state.draft.value.with_knob("vr_delay_months", 5))
    old = state.model
    state.apply()
    assert not old.running and controls.applied_settings(state.model).knob("vr_delay_months") == 5
    assert data.snapshot(state.model).months_done == 0
    context.close()


def _tree(widget):
    """A widget and everything below it."""
    yield widget
    for child in getattr(widget, "children", None) or []:
        if not isinstance(child, str):
            yield from _tree(child)


def _render_page(scenario_file, seed: int = 0) -> dict:
    """The page's state, its components and its settings card rendered by Solara without a browser: `state`,
    `root` (the widget tree) and `context` (close it when done)."""
    import solara

    box = {}

    @solara.component
    def Harness():
        state = components.use_page_state(scenario_file, seed)
        components.page_context.provide(state)
        box["state"] = state
        with solara.Column():
            components.SettingsCard(state)
            for component in components.COMPONENTS:
                component(state.model)

    box["root"], box["context"] = solara.render(Harness(), handle_error=False)
    return box


def _widgets(root, kind) -> list:
    return [w for w in _tree(root) if isinstance(w, kind)]


def _knob_texts(root) -> dict[str, str]:
    """What the sidebar shows next to each slider, by knob (and "seed")."""
    out = {}
    for w in _tree(root):
        classes = (getattr(w, "class_", "") or "").split()
        key = next((c.removeprefix("airace-knob-") for c in classes if c.startswith("airace-knob-")
                    and c != "airace-knob-value"), None)
        if key is not None:
            out[key] = next(t for t in _tree(w) if "airace-knob-value" in (getattr(t, "class_", "") or "")).children[0]
    return out


def test_apply_runs_exactly_the_values_the_sliders_show():
    """The sidebar as rendered: choose a scenario, move the seed and every knob's slider the way the browser sets
    them (floats, off the step), press Apply; the new model's typed scenario holds exactly the values shown, a knob
    left at the file's value is not an override, and the run is built from the chosen file."""
    import ipyvuetify as v

    page = _render_page(BASELINE)
    state, root = page["state"], page["root"]
    first_model = state.model
    (scenario_select,) = [w for w in _widgets(root, v.Select) if w.label == "scenario file"]
    scenario_select.v_model = str(RUBIN_DELAY.resolve())
    assert _knob_texts(root)["vr_delay_months"] == "6"  # the chosen file's value, before anything is moved
    moves = {"Seed": 7.0, "Vera Rubin delay (months)": 9.4, "Supply growth": 1.1500000000000001,
             "Capex labs": 1.4999999999, "Power lead time": 0.7500000001}
    for slider in _widgets(root, v.Slider):
        if slider.label in moves:
            slider.v_model = moves[slider.label]
    shown = _knob_texts(root)
    assert shown == {"seed": "7", "vr_delay_months": "9", "supply_growth_multiplier": "\u00d71.15",
                     "capex_multiplier_hyperscaler": "\u00d71.00", "capex_multiplier_neocloud": "\u00d71.00",
                     "capex_multiplier_lab": "\u00d71.50", "capex_multiplier_other": "\u00d71.00",
                     "power_lead_time_multiplier": "\u00d70.75"}
    assert first_model.scenario.scenario_file == str(BASELINE.resolve())  # nothing runs before Apply
    (apply,) = [w for w in _widgets(root, v.Btn) if "airace-apply" in (w.class_ or "")]
    apply.fire_event("click", {})
    model = state.model
    assert model is not first_model and not first_model.running
    spec = model.spec
    assert model.scenario.scenario_file == str(RUBIN_DELAY.resolve()) and model.scenario.rng == 7
    assert spec.supplier.delay_months["vr_nvl72"] == 9 and spec.supplier.supply_growth_multiplier == 1.15
    assert spec.kinds.lab.capex_multiplier == 1.5 and spec.power_lead_time_multiplier == 0.75
    rubin = load_scenario(RUBIN_DELAY)
    assert spec.kinds.hyperscaler.capex_multiplier == rubin.kinds.hyperscaler.capex_multiplier
    assert set(model.scenario.overrides) == {"supplier.delay_months.vr_nvl72=9",
                                              "supplier.supply_growth_multiplier=1.15",
                                              "kinds.lab.capex_multiplier=1.5", "power_lead_time_multiplier=0.75"}
    read_back = controls.applied_settings(model)
    assert {k: controls.KNOB_SLIDERS[k].shown(v) for k, v in read_back.knobs} == {
        k: t for k, t in shown.items() if k != "seed"}
    assert state.applied.value == state.draft.value == read_back
    page["context"].close()


def test_page_parts_and_server_settings():
    from model.viz import app

    assert callable(app.Page)
    assert components.COMPONENTS[:2] == [components.StatusCard, components.Scoreboard]
    assert components.COMPONENTS[-1] is components.EventsTable and len(components.COMPONENTS) == 3 + len(charts.CHARTS)
    assert set(components.CHART_ORDER) == set(charts.CHARTS)
    import solara.server.settings as solara_settings

    page.configure_server()
    page.configure_server()  # idempotent
    assert solara_settings.assets.extra_locations.count(str(page.PLOTLY_ASSETS)) == 1
    assert (page.APP_ASSETS / "custom.css").exists() and "plotly.min.js" in (page.APP_ASSETS / "custom.js").read_text()
    assert (page.PLOTLY_ASSETS / "plotly.min.js").stat().st_size > 1_000_000  # served to the browser, offline
    assert solara_settings.theme.show_banner is False and solara_settings.theme.title == "airace"
    from solara.widgets.widgets import Navigator

    assert "module.exports = {" in Navigator().template  # the upstream typo that made the browser warn


def test_launcher_command_and_environment():
    cmd = launch.command("127.0.0.1", 8765)
    assert cmd[:4] == [sys.executable, "-m", "solara", "run"] and cmd[4].endswith("model/viz/app.py")
    assert {"--production", "--no-open", "--no-check-version"} <= set(cmd)
    assert cmd[cmd.index("--port") + 1] == "8765" and cmd[cmd.index("--host") + 1] == "127.0.0.1"
    env = launch.environment("scenarios/baseline.toml", 3)
    assert env[launch.ENV_SCENARIO].endswith("/scenarios/baseline.toml") and env[launch.ENV_SCENARIO][0] == "/"
    assert env[launch.ENV_SEED] == "3" and env["SOLARA_TELEMETRY_MIXPANEL_ENABLE"] == "False"
    assert "SOLARA_ASSETS_PROXY" not in env or env["SOLARA_ASSETS_PROXY"] == ""
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


def test_vendor_shares_chart_status_line_and_vendor_names_once_other_vendors_have_compute():
    """The app on series holding TPUs and AMD GPUs beside NVIDIA's: each vendor's share of all H100e (the outcomes
    module's vendor shares on the same GPUs), the status card's vendor line, systems named with their vendor."""
    keys = ("hgx_h100", "gb300_nvl72", "tpu_v7", "mi355x")
    gpus = np.array([[100.0, 0, 0, 0], [100, 40, 64, 0], [100, 40, 64, 16]])
    snap = data.Snapshot(3, 3, "2025-01", lambda: None, pd.DataFrame(), pd.DataFrame(),
                         months=("2025-01", "2025-02", "2025-03"), systems=keys, gpus_by_system=gpus)
    vendors, share = snap.vendor_shares
    assert vendors[:1] == ("NVIDIA",) and set(vendors) == {"NVIDIA", "Google", "AMD"}
    agents = pd.DataFrame({"date": pd.to_datetime(["2025-03-01"]), "agent": ["x"], "kind": ["lab"], "h100e": [0.0],
                           **{f"gpus_online_{k}": [int(g)] for k, g in zip(keys, gpus[-1], strict=True)}})
    want = outcomes.compute_shares(agents, by="vendor").set_index("vendor")["share"]
    assert dict(zip(vendors, share[-1], strict=True)) == pytest.approx(want.to_dict())
    assert share[0].tolist() == [1.0, 0.0, 0.0]  # NVIDIA alone in the first month
    traces = charts.figure("vendor_shares", snap)["data"]
    assert [t["name"] for t in traces] == ["NVIDIA", "Google", "AMD"]
    assert np.allclose(np.nansum([t["y"] for t in traces], axis=0), 100.0)
    assert traces[1]["line"]["color"] == "#35978f"  # Google's colour (model.palette.VENDOR_COLORS)
    assert names.system_label("tpu_v7").startswith("Google · ") and names.system_label("gb300_nvl72") == "GB300 NVL72"
    assert names.system_label("mi355x").startswith("AMD Instinct")  # already says its vendor
    stack = charts.figure("gpus_by_system", snap)["data"]
    assert "Google · TPU7x Ironwood (64-chip cube)" in {t["name"] for t in stack}
