"""model.results: the schema's dtypes and date convention, what the writer puts on disk, and the one reader of
result and sweep folders, with one-line errors naming the file for anything missing, damaged or unfinished."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from conftest import SWEEP_PARAM, SWEEP_RUNS, agents_table, events_table, market_table

from model.cli import main as airace_main
from model.errors import InputError
from model.results import DATE_DTYPE, SchemaError, conform, read_folder, read_folders
from model.results.folders import write_result_folder


def test_conform_turns_iso_strings_into_first_of_month_timestamps():
    df = conform("market", pd.DataFrame({"date": ["2024-01-01", "2024-02-01"], "nvidia_revenue_usd": ["1", 2],
                                         "rental_usd_per_gpu_hour_x": [None, 2.5], "units_shipped_x": [1.0, 2.0],
                                         "note": ["kept", "as is"]}))
    assert df["date"].dtype == DATE_DTYPE and df["date"].tolist() == [pd.Timestamp("2024-01-01"),
                                                                      pd.Timestamp("2024-02-01")]
    assert df["nvidia_revenue_usd"].dtype == "float64" and df["units_shipped_x"].dtype == "int64"
    assert df["rental_usd_per_gpu_hour_x"].isna().tolist() == [True, False]
    assert df["note"].tolist() == ["kept", "as is"] and list(df.columns)[-1] == "note"


@pytest.mark.parametrize(("table", "column", "value", "message"), [
    ("market", "date", "2024-13-01", "column 'date': expected dates YYYY-MM-DD, got '2024-13-01'"),
    ("market", "date", "2024-01-15", "column 'date': expected the first day of a month, got 2024-01-15"),
    ("market", "nvidia_revenue_usd", "lots", "column 'nvidia_revenue_usd': expected numbers, got 'lots'"),
    ("agents", "largest_cluster_gpus", 1.5, "column 'largest_cluster_gpus': expected whole numbers, got 1.5"),
    ("agents", "h100e", None, "missing column 'h100e' (the agents table needs date, agent, kind, h100e"),
])
def test_conform_names_the_column_and_the_value(table, column, value, message):
    good = {"market": market_table("2024-01", [1.0]),
            "agents": agents_table([("2024-01", "aws", "hyperscaler", 1.0, 8)])}[table]
    bad = good.drop(columns=column) if value is None else good.astype({column: object}).assign(**{column: [value]})
    with pytest.raises(SchemaError) as err:
        conform(table, bad)
    assert message in str(err.value)


def test_written_folders_hold_timestamps_and_read_back_equal(short_run):
    raw = pd.read_parquet(short_run / "agents.parquet")
    assert raw["date"].dtype == DATE_DTYPE  # on disk too: one convention
    src = read_folder(short_run)
    assert src.kind == "run" and src.n_runs == 1 and src.label == "short_run"
    for name in ("agents", "market", "events"):
        table = getattr(src, name)
        assert list(table.columns[:2]) == ["run", "date"] and (table["run"] == 0).all()
        pd.testing.assert_frame_equal(table.drop(columns="run"), conform(name, pd.read_parquet(
            short_run / f"{name}.parquet")))
    assert src.market["rental_usd_per_gpu_hour_feynman"].dtype == "float64"
    assert src.manifest["scenario_file"] == "scenarios/baseline.toml" and src.scenario_params["end"] == "2026-12"


def test_folders_written_with_string_dates_still_read(tmp_path, short_run):
    old = tmp_path / "old_style"
    shutil.copytree(short_run, old)
    for name in ("agents", "market", "events"):
        df = pd.read_parquet(old / f"{name}.parquet")
        df.assign(date=df["date"].dt.strftime("%Y-%m-%d")).to_parquet(old / f"{name}.parquet", index=False)
    pd.testing.assert_frame_equal(read_folder(old).agents, read_folder(short_run).agents)


def test_sweep_folder_reads_whole_and_from_its_run_folders(small_sweep, tmp_path):
    src = read_folder(small_sweep)
    assert src.is_sweep and src.n_runs == SWEEP_RUNS and src.parameters == (SWEEP_PARAM,)
    assert SWEEP_PARAM not in src.agents.columns and list(src.runs.columns[:3]) == ["run", "seed", "status"]
    assert sorted(src.agents["run"].unique()) == list(range(SWEEP_RUNS))
    assert src.scenario_params["end"] == "2026-12"
    bare = tmp_path / "short_sweep"
    shutil.copytree(small_sweep, bare)
    for name in ("agents", "market", "events"):
        (bare / f"{name}.parquet").unlink()
    again = read_folder(bare)
    for name in ("agents", "market", "events"):
        pd.testing.assert_frame_equal(getattr(again, name), getattr(src, name))


def test_several_folders_stack_with_distinct_labels(short_run, small_sweep, tmp_path):
    twin = tmp_path / "x" / short_run.name
    shutil.copytree(short_run, twin)
    rs = read_folders([short_run, small_sweep, twin])
    assert len(set(rs.labels)) == 3 and list(rs.agents.columns[:3]) == ["label", "run", "date"]
    assert rs.runs.groupby("label").size().to_dict() == {rs.labels[0]: 1, rs.labels[1]: SWEEP_RUNS,
                                                         rs.labels[2]: 1}


def test_writer_refuses_anything_but_the_three_tables(tmp_path):
    with pytest.raises(ValueError, match="exactly the tables agents, market, events"):
        write_result_folder(tmp_path / "r", {"agents": agents_table([("2024-01", "a", "lab", 1)])}, {})
    assert not (tmp_path / "r").exists()


# -- damaged, empty or unfinished folders: one line naming the file -------------------------------------------------
def _damage(folder, how: str) -> str:
    """Damage a copy of a result folder; return the file the message must name."""
    if how == "missing table":
        (folder / "market.parquet").unlink()
        return f"{folder / 'market.parquet'}: missing (expected the market table of a result folder)"
    if how == "damaged table":
        (folder / "events.parquet").write_bytes(b"PAR1 not really")
        return f"{folder / 'events.parquet'}: unreadable Parquet"
    if how == "wrong columns":
        pd.DataFrame({"x": [1]}).to_parquet(folder / "agents.parquet")
        return f"{folder / 'agents.parquet'}: missing column 'date'"
    if how == "empty agents":
        df = pd.read_parquet(folder / "agents.parquet")
        df.iloc[:0].to_parquet(folder / "agents.parquet")
        return f"{folder / 'agents.parquet'}: no rows (expected one row per agent and month)"
    if how == "empty market":
        df = pd.read_parquet(folder / "market.parquet")
        df.iloc[:0].to_parquet(folder / "market.parquet")
        return f"{folder / 'market.parquet'}: no rows (expected one row per month)"
    if how == "damaged manifest":
        (folder / "manifest.json").write_text("{not json")
        return f"{folder / 'manifest.json'}: unreadable JSON"
    raise AssertionError(how)


DAMAGES = ["missing table", "damaged table", "wrong columns", "empty agents", "empty market", "damaged manifest"]


@pytest.mark.parametrize("how", DAMAGES)
def test_damaged_result_folder_is_one_line_naming_the_file(short_run, tmp_path, how):
    folder = tmp_path / "damaged"
    shutil.copytree(short_run, folder)
    expected = _damage(folder, how)
    with pytest.raises(InputError) as err:
        read_folder(folder)
    assert expected in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("command", ["compare", "report"])
def test_commands_exit_2_on_a_damaged_folder_and_write_nothing(short_run, tmp_path, capsys, command):
    folder = tmp_path / "damaged"
    shutil.copytree(short_run, folder)
    expected = _damage(folder, "wrong columns")
    out = tmp_path / "out"
    args = [command, str(folder)] + (["--out", str(out)] if command == "report" else [])
    assert airace_main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err and "Traceback" not in err
    assert not out.exists()


def test_unfinished_sweep_is_refused(small_sweep, tmp_path):
    sweep = tmp_path / "half"
    shutil.copytree(small_sweep, sweep)
    header = json.loads((sweep / "sweep.json").read_text())
    (sweep / "sweep.json").write_text(json.dumps({**header, "finished": None}))
    with pytest.raises(InputError, match="sweep.json: finished is empty, the sweep did not finish"):
        read_folder(sweep)


def test_not_a_folder_of_results(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(InputError, match="not a result folder .* nor a sweep folder"):
        read_folder(tmp_path)
    with pytest.raises(InputError, match="no such file or folder"):
        read_folder(tmp_path / "missing")
    with pytest.raises(InputError, match="no RESULTS given"):
        read_folders([])


def test_a_run_without_events_is_whole(tmp_path):
    tables = {"agents": agents_table([("2024-01", "aws", "hyperscaler", 1.0)]),
              "market": market_table("2024-01", [1.0]), "events": events_table([])}
    src = read_folder(write_result_folder(tmp_path / "quiet", tables, {"seed": 0}))
    assert src.events.empty and list(src.events.columns) == ["run", "date", "agent", "event", "system", "gpus",
                                                             "detail"]
