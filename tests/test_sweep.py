"""airace sweep: Dask and local pool give the same tables, resume reruns only what is missing, failures are
recorded, the Latin hypercube is stratified, and bad [sweep] tables or arguments exit 2 with one line."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from model.cli import main
from model.errors import InputError
from model.market import run_params
from model.scenario import load_scenario_dict
from model.sweep import build_design, lhs_unit, run_sweep

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "scenarios" / "baseline.toml"
RUNS = 20
BASE_SEED = 7
SWEEP_TABLE = """
[sweep]
"supplier.supply_growth_multiplier" = { dist = "uniform", low = 0.5, high = 1.5 }
"supplier.delay_months.vr_nvl72" = { dist = "choice", values = [0, 3, 6] }
"kinds.neocloud.capex_multiplier" = { dist = "normal", mean = 1.0, sd = 0.2, low = 0.6, high = 1.4 }
"kinds.lab.construction_lead_months" = { dist = "uniform", low = 2, high = 8 }
"""
PARAMS = ["supplier.supply_growth_multiplier", "supplier.delay_months.vr_nvl72", "kinds.neocloud.capex_multiplier",
          "kinds.lab.construction_lead_months"]


def scenario_file(folder: Path, sweep_table: str = SWEEP_TABLE, end: str = "2025-06", name: str = "sw.toml") -> Path:
    """A short scenario on top of the baseline (18 months keeps each run well under a second)."""
    path = folder / name
    path.write_text(f'extends = "{BASELINE.as_posix()}"\nend = "{end}"\n{sweep_table}')
    return path


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory):
    """The same 20-run sweep on a 2-worker dask LocalCluster and on the local process pool."""
    from distributed import LocalCluster

    folder = tmp_path_factory.mktemp("sweeps")
    scenario = scenario_file(folder)
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster:
        dask_out = run_sweep(scenario, RUNS, out=folder / "dask", base_seed=BASE_SEED,
                             scheduler=cluster.scheduler_address)
    local_out = run_sweep(scenario, RUNS, out=folder / "local", base_seed=BASE_SEED, workers=2)
    return {"scenario": scenario, "dask": dask_out, "local": local_out}


def read(folder: Path, name: str) -> pd.DataFrame:
    return pd.read_parquet(folder / f"{name}.parquet")


@pytest.mark.slow
def test_dask_sweep_writes_every_run_and_combined_tables(sweeps):
    out = sweeps["dask"]
    runs = read(out, "runs")
    assert list(runs.columns) == ["run", "seed", "status", "error", "wall_time_s", *PARAMS]
    assert runs["run"].tolist() == list(range(RUNS))
    assert runs["seed"].tolist() == [BASE_SEED + i for i in range(RUNS)]
    assert (runs["status"] == "ok").all() and (runs["error"] == "").all()
    assert sorted(p.name for p in (out / "runs").iterdir()) == [f"run_{i:04d}" for i in range(RUNS)]
    header = json.loads((out / "sweep.json").read_text())
    assert header["design"] == "lhs" and header["runs"] == RUNS and header["base_seed"] == BASE_SEED
    assert list(header["parameters"]) == PARAMS and header["executor"].startswith("dask.distributed tcp://")
    assert header["finished"] is not None and header["wall_time_s"] > 0
    for name in ("agents", "market", "events"):
        combined = read(out, name)
        per_run = pd.read_parquet(out / "runs" / "run_0000" / f"{name}.parquet")
        assert list(combined.columns) == ["run", *PARAMS, *per_run.columns]
        assert combined["run"].nunique() == RUNS
        # each run's rows carry that run's sampled values, and its own table is reproduced exactly
        first = combined.drop_duplicates("run").set_index("run")[PARAMS]
        pd.testing.assert_frame_equal(first, runs.set_index("run")[PARAMS], check_dtype=False)
        five = combined[combined["run"] == 5].drop(columns=["run", *PARAMS]).reset_index(drop=True)
        pd.testing.assert_frame_equal(five, pd.read_parquet(out / "runs" / "run_0005" / f"{name}.parquet"))
    assert {"date", "agent", "kind", "h100e", "largest_cluster_gpus"} <= set(read(out, "agents").columns)
    manifest = json.loads((out / "runs" / "run_0003" / "manifest.json").read_text())
    assert manifest["seed"] == BASE_SEED + 3 and manifest["sweep"]["run"] == 3
    assert manifest["parameters"]["supplier"]["supply_growth_multiplier"] == runs.loc[3, PARAMS[0]]
    assert "sweep" not in manifest["parameters"]  # the [sweep] table never reaches the model


@pytest.mark.slow
def test_local_pool_reproduces_dask_exactly(sweeps):
    for name in ("agents", "market", "events"):
        pd.testing.assert_frame_equal(read(sweeps["local"], name), read(sweeps["dask"], name))
    pd.testing.assert_frame_equal(read(sweeps["local"], "runs").drop(columns="wall_time_s"),
                                  read(sweeps["dask"], "runs").drop(columns="wall_time_s"))
    assert json.loads((sweeps["local"] / "sweep.json").read_text())["executor"].startswith("ProcessPoolExecutor")


@pytest.mark.slow
def test_sampled_runs_differ_and_match_their_parameters(sweeps):
    agents = read(sweeps["local"], "agents")
    end = agents[agents["date"] == agents["date"].max()].groupby("run")["h100e"].sum()
    assert end.nunique() > RUNS // 2  # the sampled supply growth changes outcomes


@pytest.mark.slow
def test_resume_reruns_only_missing_or_changed_runs(sweeps, tmp_path):
    out = tmp_path / "resumed"
    shutil.copytree(sweeps["local"], out)
    for run in (3, 11):
        shutil.rmtree(out / "runs" / f"run_{run:04d}")
    changed = out / "runs" / "run_0004" / "manifest.json"  # a folder made with another seed must be redone
    manifest = json.loads(changed.read_text())
    changed.write_text(json.dumps({**manifest, "seed": 999}))
    stray = out / "runs" / ".run_0007.x1y2"  # temp folder of a run killed hard in an earlier attempt
    stray.mkdir()
    before = {p.name: (p / "manifest.json").stat().st_mtime_ns for p in (out / "runs").glob("run_*")}

    assert main(["sweep", str(sweeps["scenario"]), "--runs", str(RUNS), "--seed", str(BASE_SEED), "--out", str(out),
                 "--workers", "2", "--resume", "--quiet"]) == 0

    after = {p.name: (p / "manifest.json").stat().st_mtime_ns for p in (out / "runs").glob("run_*")}
    rerun = sorted(name for name in after if after[name] != before.get(name))
    assert rerun == ["run_0003", "run_0004", "run_0011"]
    assert not stray.exists()
    for name in ("agents", "market", "events"):
        pd.testing.assert_frame_equal(read(out, name), read(sweeps["local"], name))
    assert (read(out, "runs")["status"] == "ok").sum() == RUNS


@pytest.mark.slow
def test_resume_refuses_another_scenario_or_design(sweeps, tmp_path, capsys):
    out = tmp_path / "other"
    shutil.copytree(sweeps["local"], out)
    other = scenario_file(tmp_path, SWEEP_TABLE.replace("high = 1.5 }", "high = 2.5 }"), name="other.toml")
    cases = [
        ([str(other), "--runs", str(RUNS), "--seed", str(BASE_SEED)], "[sweep] parameters"),
        ([str(sweeps["scenario"]), "--runs", str(RUNS), "--seed", "8"], "--seed"),
        ([str(sweeps["scenario"]), "--runs", "21", "--seed", str(BASE_SEED)], "--runs"),
        ([str(sweeps["scenario"]), "--runs", str(RUNS), "--seed", str(BASE_SEED), "--set", "transit_months=2"],
         "resolved scenario parameters"),
    ]
    stamp = (out / "runs.parquet").stat().st_mtime_ns
    for args, expected in cases:
        assert main(["sweep", *args, "--out", str(out), "--resume", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "sweep.json: --resume" in err and expected in err, err
    assert main(["sweep", str(sweeps["scenario"]), "--runs", "2", "--out", str(out), "--quiet"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert (out / "runs.parquet").stat().st_mtime_ns == stamp  # nothing was touched


def fail_on_some_seeds(params: dict, seed: int):
    """A run function that breaks for seeds 1 and 4 (picklable, so worker processes can use it)."""
    if seed in (1, 4):
        raise RuntimeError(f"injected failure\nfor seed {seed}")
    return run_params(params, seed)


@pytest.mark.slow
def test_failed_runs_are_recorded_and_the_sweep_finishes(tmp_path):
    scenario = scenario_file(tmp_path, "", end="2024-12")
    out = run_sweep(scenario, 6, out=tmp_path / "out", workers=2, runner=fail_on_some_seeds)
    runs = read(out, "runs")
    assert runs["status"].tolist() == ["ok", "failed", "ok", "ok", "failed", "ok"]
    failed = runs[runs["status"] == "failed"]
    assert failed["error"].str.startswith("RuntimeError: injected failure for seed").all()
    assert failed["error"].str.contains(r"test_sweep\.py:\d+", regex=True).all()  # where it raised
    assert not (out / "runs" / "run_0001").exists() and (out / "runs" / "run_0002" / "manifest.json").is_file()
    assert sorted(read(out, "agents")["run"].unique()) == [0, 2, 3, 5]
    header = json.loads((out / "sweep.json").read_text())
    assert header["design"] == "seeds" and header["parameters"] == {} and list(runs.columns) == [
        "run", "seed", "status", "error", "wall_time_s"]


@pytest.mark.slow
def test_cli_exits_1_when_runs_fail(tmp_path, capsys, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    import model.sweep

    real = model.sweep.run_sweep
    pool = ThreadPoolExecutor(1)  # the executor parameter: any concurrent.futures executor works

    def with_failures(*args, **kwargs):
        return real(*args, **{**kwargs, "executor": pool, "runner": fail_on_some_seeds})

    monkeypatch.setattr(model.sweep, "run_sweep", with_failures)
    scenario = scenario_file(tmp_path, "", end="2024-06")
    with pool:
        assert main(["sweep", str(scenario), "--runs", "3", "--out", str(tmp_path / "t")]) == 1
    captured = capsys.readouterr()
    assert "(3 runs, 2 ok, 1 failed)" in captured.out
    assert "airace: 1 of 3 runs failed (run 1: RuntimeError: injected failure for seed 1" in captured.err
    assert read(tmp_path / "t", "runs")["status"].tolist() == ["ok", "failed", "ok"]
    assert json.loads((tmp_path / "t" / "sweep.json").read_text())["executor"] == "ThreadPoolExecutor"


# -- design -----------------------------------------------------------------------------------------------------
def test_lhs_is_stratified_and_seeded():
    u = lhs_unit(50, 3, seed=11)
    assert u.shape == (50, 3) and ((u >= 0) & (u < 1)).all()
    for j in range(3):
        assert sorted((u[:, j] * 50).astype(int)) == list(range(50))  # one point in each of 50 equal bins
    assert np.array_equal(u, lhs_unit(50, 3, seed=11)) and not np.array_equal(u, lhs_unit(50, 3, seed=12))


def test_design_samples_lie_in_bounds_and_fill_every_stratum(tmp_path):
    n = 30
    params = load_scenario_dict(scenario_file(tmp_path))
    design = build_design(params, n, base_seed=3, source="sw.toml")
    columns = {p: [s[p] for s in design.samples] for p in PARAMS}
    growth = np.array(columns["supplier.supply_growth_multiplier"])
    assert ((growth >= 0.5) & (growth < 1.5)).all()
    assert sorted(((growth - 0.5) / 1.0 * n).astype(int)) == list(range(n))
    capex = np.array(columns["kinds.neocloud.capex_multiplier"])
    assert ((capex >= 0.6) & (capex <= 1.4)).all()
    a, b = (0.6 - 1.0) / 0.2, (1.4 - 1.0) / 0.2
    cdf = stats.truncnorm.cdf(capex, a, b, loc=1.0, scale=0.2)
    assert sorted(np.minimum((cdf * n + 1e-9).astype(int), n - 1)) == list(range(n))  # strata of the CDF
    assert sorted(columns["supplier.delay_months.vr_nvl72"]) == [0] * 10 + [3] * 10 + [6] * 10
    lead = columns["kinds.lab.construction_lead_months"]
    assert all(isinstance(v, int) and 2 <= v <= 8 for v in lead)  # an int in the scenario stays an int
    run = design.run_params(4, source="test")
    assert run["supplier"]["supply_growth_multiplier"] == growth[4] and "sweep" not in run
    assert "sweep" in params  # the loaded scenario is not modified
    again = build_design(params, n, base_seed=3, source="sw.toml")
    assert again.samples == design.samples


def test_normal_without_bounds_uses_the_inverse_cdf(tmp_path):
    table = '[sweep]\n"kinds.neocloud.capex_multiplier" = { dist = "normal", mean = 1.0, sd = 0.2 }\n'
    design = build_design(load_scenario_dict(scenario_file(tmp_path, table)), 40, base_seed=0, source="x")
    x = np.array([s["kinds.neocloud.capex_multiplier"] for s in design.samples])
    u = lhs_unit(40, 1, seed=0)[:, 0]
    assert np.allclose(x, stats.norm.ppf(u, loc=1.0, scale=0.2))


BAD_TABLES = [
    ('"supplier.supply_growth_multiplierr" = { dist = "uniform", low = 0.5, high = 1.5 }',
     "'supplier.supply_growth_multiplierr'", "unknown scenario key", "did you mean 'supply_growth_multiplier'"),
    ('"supplier.supply_growth_multiplier" = { dist = "unifrom", low = 0.5, high = 1.5 }',
     "supplier.supply_growth_multiplier'.dist", "unknown distribution 'unifrom'", "did you mean 'uniform'"),
    ('"supplier.supply_growth_multiplier" = { dist = "uniform", low = 0.5 }',
     "supplier.supply_growth_multiplier", "needs 'high'", ""),
    ('"supplier.supply_growth_multiplier" = { dist = "uniform", low = 1.5, high = 0.5 }',
     "supplier.supply_growth_multiplier", "expected low < high", "low = 1.5"),
    ('"supplier.supply_growth_multiplier" = { dist = "uniform", low = "a", high = 0.5 }',
     "supplier.supply_growth_multiplier'.low", "expected a finite number", "'a'"),
    ('"supplier.supply_growth_multiplier" = { dist = "uniform", low = 0.5, hgh = 1.5 }',
     "supplier.supply_growth_multiplier'.hgh", "unknown field", "did you mean 'high'"),
    ('"kinds.neocloud.capex_multiplier" = { dist = "normal", mean = 1.0, sd = 0 }',
     "capex_multiplier'.sd", "expected a positive standard deviation", "got 0"),
    ('"supplier.delay_months.vr_nvl72" = { dist = "choice", values = [] }',
     "vr_nvl72'.values", "expected a non-empty list", ""),
    ('"supplier.delay_months.vr_nvl72" = { dist = "choice", values = [0, "soon"] }',
     "supplier.delay_months.vr_nvl72", "expected a number", "soon"),
    ('"supplier.delay_months" = { dist = "choice", values = [0, 3] }',
     "'supplier.delay_months'", "is a table", "vr_nvl72"),
    ('"start" = { dist = "uniform", low = 0, high = 1 }', "'start'", "not a number", "choice"),
    ('"supplier.supply_growth_multiplier" = 1.5', "supplier.supply_growth_multiplier", "expected a table like",
     "1.5"),
]


@pytest.mark.parametrize(("entry", "field", "problem", "hint"), BAD_TABLES)
def test_bad_sweep_table_exits_2_with_one_line(tmp_path, capsys, entry, field, problem, hint):
    scenario = scenario_file(tmp_path, f"[sweep]\n{entry}\n")
    assert main(["sweep", str(scenario), "--runs", "3", "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert str(scenario) in err and "[sweep]" in err and field in err and problem in err and hint in err, err
    assert not (tmp_path / "out").exists()


def test_sweep_must_be_a_table(tmp_path):
    with pytest.raises(InputError, match=r"sw.toml: sweep: expected a table"):
        build_design({"sweep": 3, "a": 1}, 2, 0, "sw.toml")


@pytest.mark.parametrize(("args", "expected"), [
    (["--runs", "0"], "--runs: expected a positive whole number, got '0'"),
    (["--runs", "many"], "--runs: expected a positive whole number, got 'many'"),
    ([], "the following arguments are required: --runs"),
    (["--runs", "2", "--workers", "0"], "--workers: expected a positive whole number"),
    (["--runs", "2", "--workers", "2", "--scheduler", "tcp://127.0.0.1:8786"], "not allowed with argument"),
    (["--runs", "2", "--seed", "-1"], "--seed: expected a whole number >= 0, got '-1'"),
])
def test_bad_arguments_exit_2(tmp_path, capsys, args, expected):
    scenario = scenario_file(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(["sweep", str(scenario), *args, "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err, err


@pytest.mark.parametrize(("args", "expected"), [
    (["--set", "supplier.supply_growth_multiplier=2"], "--set supplier.supply_growth_multiplier: this parameter "
     "is sampled by"),
    (["--set", "supplier.supply_growht_multiplier=2"], "did you mean 'supply_growth_multiplier'"),
    (["--scheduler", "nonsense://x"], "--scheduler 'nonsense://x': not a Dask address"),
])
def test_bad_values_exit_2_with_one_line(tmp_path, capsys, args, expected):
    scenario = scenario_file(tmp_path)
    assert main(["sweep", str(scenario), "--runs", "2", *args, "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err, err


def test_progress_bar_on_stderr_and_quiet(tmp_path, capsys):
    scenario = scenario_file(tmp_path, "", end="2024-03")
    assert main(["sweep", str(scenario), "--runs", "2", "--workers", "1", "--out", str(tmp_path / "a")]) == 0
    captured = capsys.readouterr()
    assert "2/2" in captured.err and "failed=0" in captured.err
    assert f"wrote {tmp_path / 'a'}/ (2 runs, 2 ok, 0 failed)" in captured.out
    assert main(["sweep", str(scenario), "--runs", "2", "--workers", "1", "--out", str(tmp_path / "b"),
                 "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    assert math.isfinite(read(tmp_path / "b", "runs")["wall_time_s"].sum())


def slow_run(params: dict, seed: int):
    """The real run, slowed down so that a sweep can be stopped half-way."""
    import time

    time.sleep(0.3)
    return run_params(params, seed)


CHILD = """
import signal, sys
sys.path.insert(0, sys.argv[1])
signal.signal(signal.SIGINT, signal.default_int_handler)
import model.sweep, test_sweep
real = model.sweep.run_sweep
model.sweep.run_sweep = lambda *a, **k: real(*a, **{**k, "runner": test_sweep.slow_run})
from model.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.slow
def test_sweep_stopped_by_sigterm_resumes_to_the_same_tables(sweeps, tmp_path):
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "stopped"
    args = ["sweep", str(sweeps["scenario"]), "--runs", str(RUNS), "--seed", str(BASE_SEED), "--workers", "2",
            "--out", str(out), "--quiet"]
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(Path(__file__).parent), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while len(list((out / "runs").glob("run_*"))) < 4 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1 and stderr.strip().endswith("airace: interrupted"), stderr
    finished = sorted(p.name for p in (out / "runs").iterdir())
    assert 4 <= len(finished) < RUNS and all(name.startswith("run_") for name in finished)  # no temp folders
    assert json.loads((out / "sweep.json").read_text())["finished"] is None
    recorded = read(out, "runs")
    assert (recorded["status"] == "ok").all() and len(recorded) <= len(finished)
    before = {name: (out / "runs" / name / "manifest.json").stat().st_mtime_ns for name in finished}

    run_sweep(sweeps["scenario"], RUNS, out=out, base_seed=BASE_SEED, workers=2, resume=True)
    assert all((out / "runs" / n / "manifest.json").stat().st_mtime_ns == t for n, t in before.items())
    for name in ("agents", "market", "events"):
        pd.testing.assert_frame_equal(read(out, name), read(sweeps["local"], name))
