"""`airace run` interrupted by SIGINT or SIGTERM while the model runs or while it writes leaves no partial result
folder and no temporary folder (and an earlier result folder at the same place stays whole)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from conftest import agents_table, events_table, market_table

from model.interrupts import Terminated, signals_held, terminate_as_interrupt
from model.results import conform, read_folder
from model.results.folders import write_result_folder

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "scenarios" / "baseline.toml"

# `airace run` in a child process, with one pause patched in where the parent should kill it: "run" pauses inside
# the model run, "write" pauses after the first table is in the temporary folder. The child writes MARKER first.
CHILD = """
import signal, sys, time
from pathlib import Path
signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with SIGINT ignored
marker, point, argv = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]

def pause():
    marker.write_text("paused")
    time.sleep(60)

if point == "run":
    import model.market
    real_run = model.market.run_params
    def run_params(params, seed=0):
        result = real_run(params, seed)
        pause()
        return result
    model.market.run_params = run_params
else:
    import pandas as pd
    real_to_parquet = pd.DataFrame.to_parquet
    def to_parquet(self, path, *args, **kwargs):
        real_to_parquet(self, path, *args, **kwargs)
        pause()
    pd.DataFrame.to_parquet = to_parquet
from model.cli import main
sys.exit(main(argv))
"""


def run_and_kill(tmp_path: Path, point: str, sig: int, out: Path) -> subprocess.CompletedProcess:
    marker = tmp_path / f"marker-{point}-{sig}"
    args = ["run", str(BASELINE), "--out", str(out), "--seed", "3", "--set", "end=2024-06", "--quiet"]
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(marker), point, *args], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not marker.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            out_text, err_text = proc.communicate()
            pytest.fail(f"child never reached {point!r}: rc={proc.returncode} {err_text[-2000:]}")
        time.sleep(0.02)
    if point == "write":  # the temporary folder really is there, half written, when the signal arrives
        assert [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]
    proc.send_signal(sig)
    try:
        stdout, stderr = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def tiny_tables(h100e: float) -> dict[str, pd.DataFrame]:
    """A whole (if small) result: one agent, one month."""
    return {"agents": agents_table([("2024-01", "aws", "hyperscaler", h100e)]),
            "market": market_table("2024-01", [1e9]), "events": events_table([])}


@pytest.mark.slow
@pytest.mark.parametrize("point", ["run", "write"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_interrupted_run_leaves_nothing(tmp_path, point, sig):
    parent = tmp_path / "results"
    parent.mkdir()
    out = parent / "baseline"
    done = run_and_kill(tmp_path, point, sig, out)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "airace: interrupted"
    assert list(parent.iterdir()) == []  # no result folder, no .baseline.* temporary folder


@pytest.mark.slow
def test_interrupted_overwrite_keeps_the_old_folder_whole(tmp_path):
    parent = tmp_path / "results"
    out = parent / "baseline"
    old = tiny_tables(99.0)
    manifest = {"seed": 99, "parameters": {}, "package_version": "0.1.0"}  # what marks a result folder
    write_result_folder(out, old, manifest)
    done = run_and_kill(tmp_path, "write", signal.SIGTERM, out)
    assert done.returncode == 1
    assert [p.name for p in parent.iterdir()] == ["baseline"]
    kept = read_folder(out)
    assert kept.manifest == manifest
    pd.testing.assert_frame_equal(kept.agents.drop(columns="run"), conform("agents", old["agents"]))


@pytest.mark.slow
def test_uninterrupted_run_writes_a_whole_readable_folder(tmp_path):
    out = tmp_path / "results" / "ok"
    done = subprocess.run([sys.executable, "-m", "model", "run", str(BASELINE), "--out", str(out), "--seed", "3",
                           "--set", "end=2024-06", "--quiet"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["agents.parquet", "events.parquet", "manifest.json",
                                                     "market.parquet"]
    assert [p.name for p in out.parent.iterdir()] == ["ok"]
    assert json.loads((out / "manifest.json").read_text())["seed"] == 3
    assert out.stat().st_mode & 0o777 == 0o777 & ~_umask()  # an ordinary folder, not mkdtemp's 0700


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_write_error_mid_write_cleans_up_and_restores(tmp_path, monkeypatch):
    out = tmp_path / "r"
    write_result_folder(out, tiny_tables(1.0), {"v": 1})
    calls = []

    def failing(self, path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, path, *args, **kwargs)

    real = pd.DataFrame.to_parquet
    monkeypatch.setattr(pd.DataFrame, "to_parquet", failing)
    with pytest.raises(KeyboardInterrupt):
        write_result_folder(out, tiny_tables(2.0), {"v": 2})
    assert [p.name for p in tmp_path.iterdir()] == ["r"]
    kept = read_folder(out)
    assert kept.manifest == {"v": 1} and kept.agents["h100e"].tolist() == [1.0]


def test_signals_are_held_over_a_critical_section_then_delivered():
    steps = []
    with pytest.raises(Terminated), terminate_as_interrupt():
        with signals_held():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            steps.append("finished the section")
        steps.append("not reached")
    assert steps == ["finished the section"]
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
