"""Fuzzing the command line with hypothesis: scenario overrides across every schema field (range edges, just past
them, non-finite, huge, wrong types) and hostile batch CSV rows.

Every case must end with exit code 0, 1 or 2, never a traceback nor an internal error, at most one line on stderr;
printed JSON is strict; a finished run's tables hold no NaN (except where a value does not exist: a frontier run
that fits no cluster, a rental price before a system is sold) and no negative quantity; nothing is written outside
--out; and a run's work is bounded (a time limit per case, performance-model questions within the capability
grid, sites within what the schema's power bounds allow). Runs are in-process and three months long, so the suite
stays within about a minute on two cores.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args, get_origin

import annotated_types
import pandas as pd
import pytest
from conftest import BASELINE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model.cli import main
from model.hardware.systems import SYSTEM_KEYS
from model.market.model import MarketModel
from model.scenario import load_scenario
from model.scenario.schema import MAX_MW, MIN_SITE_MW, Scenario

HORIZON = "end=2024-03"  # three months (the horizon itself is fuzzed only within the first year)
HORIZON_MONTHS = 3
CASE_TIME_LIMIT_S = 60  # per case; a warm three-month run takes ~0.2 s
MAY_BE_NAN = ("frontier_run_days", "reference_run_cluster_gpus", "rental_usd_per_gpu_hour_")  # no cluster fits the
# reference run (days and its cluster); the system is not sold yet
SCALE = float(os.environ.get("AIRACE_FUZZ_SCALE", "1"))  # e.g. 10 for a deeper search by hand (not seeded then)
DERANDOMIZE = SCALE == 1
CASES = {"scenario": 0, "scenario_ok": 0, "batch": 0, "batch_rows": 0}  # what the suite drew (printed at the end)


# -- the schema's leaves and their ranges -----------------------------------------------------------------------
def _leaves(tree: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _leaves(value, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, tree


def _bounds(dotted: str) -> tuple[float | None, float | None]:
    """(low, high) of a field from the schema's annotations along its path (None where open)."""
    annotation: Any = Scenario
    low = high = None
    for part in dotted.split("."):
        annotation, metadata = _strip(annotation)
        fields = getattr(annotation, "model_fields", None)
        if fields is not None:
            if part not in fields:
                return None, None
            info = fields[part]
            annotation = info.annotation
            metadata = list(info.metadata)
        elif get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]
            metadata = []
        else:
            return None, None
    annotation, metadata2 = _strip(annotation)
    items = []
    for item in [*metadata, *metadata2]:
        items += list(getattr(item, "metadata", [item]))  # Field(...) inside Annotated carries its own metadata
    for item in items:
        if isinstance(item, annotated_types.Ge | annotated_types.Gt):
            low = float(getattr(item, "ge", getattr(item, "gt", 0.0)))
        if isinstance(item, annotated_types.Le | annotated_types.Lt):
            high = float(getattr(item, "le", getattr(item, "lt", 0.0)))
    return low, high


def _strip(annotation: Any) -> tuple[Any, list]:
    """The type inside Annotated/Optional/Union, with the Annotated metadata met on the way."""
    metadata: list = []
    while True:
        args = get_args(annotation)
        if hasattr(annotation, "__metadata__"):
            metadata += list(annotation.__metadata__)
            annotation = args[0]
        elif get_origin(annotation) is not None and type(None) in args or str(get_origin(annotation)) in (
                "typing.Union", "<class 'types.UnionType'>"):
            annotation = next(a for a in args if a is not type(None))
        else:
            return annotation, metadata


BASE_TREE = load_scenario(BASELINE).tree
LEAVES = sorted({path: value for path, value in _leaves(BASE_TREE)}.items())
# Keys the baseline leaves out but the schema knows: a delay for every system, a volume delay, an owner's share.
LEAVES += [(f"supplier.volume_delay_months.{k}", 0) for k in SYSTEM_KEYS]
LEAVES += [(f"supplier.delay_months.{k}", 0) for k in SYSTEM_KEYS if f"supplier.delay_months.{k}" not in BASE_TREE]
LEAVES += [("hyperscaler.microsoft.ai_systems_share", 0.3), ("lab.openai.frontier_flop_factor", 1.0)]
LEAVES = [(p, v) for p, v in LEAVES if p not in ("start", "end", "sweep")]

HOSTILE_NUMBERS = [0, -1, 1, 0.5, 1e-300, 1e9, 1e308, -1e308, math.inf, -math.inf, math.nan, 10**30, -(10**30)]


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return str(value)


def _edges(low: float | None, high: float | None) -> list[float]:
    """The range's edges and just past them."""
    out: list[float] = []
    for edge in (low, high):
        if edge is not None and math.isfinite(edge):
            step = max(abs(edge) * 1e-9, 1e-12)
            out += [edge, edge - step, edge + step]
    return out


@st.composite
def override(draw) -> str:
    path, like = draw(st.sampled_from(LEAVES))
    low, high = _bounds(path)
    if isinstance(like, bool):
        value = draw(st.sampled_from([True, False, 1, "yes"]))
    elif isinstance(like, (int, float)):
        numbers = st.sampled_from(_edges(low, high) + HOSTILE_NUMBERS)
        inside = (st.floats(min_value=low if low is not None else -1e6, max_value=high if high is not None else 1e6)
                  if isinstance(like, float) else
                  st.integers(min_value=int(low) if low is not None else -1000,
                              max_value=min(int(high), 10**6) if high is not None else 10**6))
        value = draw(st.one_of(numbers, inside, st.sampled_from(["abc", "", [1, 2]])))
        if isinstance(like, int) and isinstance(value, float) and math.isfinite(value) and draw(st.booleans()):
            value = int(value)  # whole-number fields: a whole number, mostly
    elif isinstance(like, list):
        value = draw(st.lists(st.sampled_from([0, 1, 0.5, 2, -1, math.inf, 1e9, "x"]), max_size=4))
    else:  # strings: months, systems, workloads, precisions
        value = draw(st.sampled_from([like, "", "2024-13", "2101-01", "1999-01", "hgx_h999", "fp4", "x" * 200]))
    return f"{path}={_toml(value)}"


@st.composite
def valid_override(draw) -> str:
    """A value inside the field's range, often at an edge: what must always run."""
    numeric = [(p, v) for p, v in LEAVES if isinstance(v, (int, float)) and not isinstance(v, bool)]
    path, like = draw(st.sampled_from(numeric))
    low, high = _bounds(path)
    low = like if low is None else low
    high = max(like, low) if high is None else high
    if isinstance(like, int) and not isinstance(like, float):
        value: Any = draw(st.one_of(st.sampled_from([math.ceil(low), math.floor(high)]),
                                    st.integers(min_value=math.ceil(low), max_value=math.floor(high))))
    else:
        step = max(abs(high - low) * 1e-9, 1e-12)
        value = draw(st.one_of(st.sampled_from([low + step, high - step, low, high]),
                               st.floats(min_value=low, max_value=high)))
    return f"{path}={_toml(value)}"


horizons = st.sampled_from([HORIZON, "end=2024-01", "end=2024-02", "end=2023-12", "end=2024-00", "end=2100-13"])


# -- running a case ---------------------------------------------------------------------------------------------
class CaseTimeout(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    def fire(signum, frame):
        raise CaseTimeout(f"case took over {seconds} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


MODELS: list[MarketModel] = []


@pytest.fixture(scope="module", autouse=True)
def record_models():
    """Keep each run's model to count its work (sites, performance-model questions)."""
    real_run = MarketModel.run

    def run(self, *args, **kwargs):
        MODELS.append(self)
        return real_run(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(MarketModel, "run", run)
        yield
    print(f"\nfuzz cases drawn: {CASES}")


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse errors
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def check_ended_cleanly(code: int, err: str) -> None:
    assert code in (0, 1, 2), (code, err)
    assert "Traceback" not in err and "internal error" not in err, err
    assert len(err.strip().splitlines()) <= 1, err


def _reject_constant(name: str):
    raise AssertionError(f"non-standard JSON constant {name}")


def check_tables(out: Path) -> None:
    json.loads((out / "manifest.json").read_text(), parse_constant=_reject_constant)
    for name in ("agents", "market", "events"):
        df = pd.read_parquet(out / f"{name}.parquet")
        for col in df.select_dtypes("number").columns:
            values = df[col]
            if not col.startswith(MAY_BE_NAN):
                assert not values.isna().any(), f"{name}.{col} has NaN"
            assert not (values < 0).any(), f"{name}.{col} has a negative value"
            assert not values.isin([math.inf, -math.inf]).any(), f"{name}.{col} is not finite"


def check_bounded_work(model: MarketModel) -> None:
    from model.capability.table import MAX_ASKED_FLOP

    frontier = model.capability.frontier
    grid_rows = frontier.top + 1
    grid_columns = math.ceil(math.log(MAX_ASKED_FLOP / 1e20, 4)) + 2
    assert frontier.cells_asked() <= len(SYSTEM_KEYS) * grid_rows * grid_columns
    buyers = [a for a in model.agents if getattr(a, "fleet", None) is not None]
    sites = sum(len(a.fleet.sites) for a in buyers)
    assert sites <= len(buyers) * (HORIZON_MONTHS + 2) * MAX_MW / MIN_SITE_MW


@settings(max_examples=int(160 * SCALE), deadline=None, derandomize=DERANDOMIZE, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sets=st.lists(override(), min_size=1, max_size=3), horizon=horizons)
def test_fuzz_scenario_overrides(sets, horizon):
    CASES["scenario"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        parent = Path(tmp)
        out = parent / "out"
        argv = ["run", str(BASELINE), "--out", str(out), "--quiet", "--set", horizon]
        for item in sets:
            argv += ["--set", item]
        MODELS.clear()
        with time_limit(CASE_TIME_LIMIT_S):
            code, stdout, err = cli(*argv)
        check_ended_cleanly(code, err)
        assert [p.name for p in parent.iterdir()] == (["out"] if code == 0 else [])  # nothing else, no temporary
        if code == 0:
            CASES["scenario_ok"] += 1
            check_tables(out)
            assert len(MODELS) == 1
            check_bounded_work(MODELS[0])
        else:
            assert code == 2 and stdout == "", (code, err)  # a bad value is bad input, never anything else


@settings(max_examples=int(60 * SCALE), deadline=None, derandomize=DERANDOMIZE, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sets=st.lists(valid_override(), min_size=1, max_size=4))
def test_fuzz_values_in_range(sets):
    """Values inside the schema's ranges either run (tables clean, work bounded) or break a documented relation
    between fields (exit 2 naming it): never anything else."""
    CASES["scenario"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        argv = ["run", str(BASELINE), "--out", str(out), "--quiet", "--set", HORIZON]
        for item in sets:
            argv += ["--set", item]
        MODELS.clear()
        with time_limit(CASE_TIME_LIMIT_S):
            code, _, err = cli(*argv)
        check_ended_cleanly(code, err)
        assert code in (0, 2)
        if code == 0:
            CASES["scenario_ok"] += 1
            check_tables(out)
            check_bounded_work(MODELS[0])


# -- hostile batch rows ---------------------------------------------------------------------------------------------
HOSTILE_TEXT = ["", " ", "inf", "-inf", "nan", "1e400", "-1", "0", "0.5", "1e30", "9" * 40, "8", "72", "512",
                "4608", "abc", '"', "a,b", "\x00", "\u00e9", "\ufeff", "\ud800"]
CELLS = {
    "system": st.sampled_from(["hgx_h100", "gb200_nvl72", "gb300_nvl72", "hgx_h999", "", "HGX_H100"]),
    "gpus": st.sampled_from(HOSTILE_TEXT),
    "workload": st.sampled_from(["llama3-70b", "gpt3-175b", "deepseek-r1", "nope", ""]),
    "precision": st.sampled_from(["fp8", "bf16", "nvfp4", "fp4", "int3", ""]),
    "number": st.sampled_from(HOSTILE_TEXT + ["2048", "1024", "128"]),
}


@st.composite
def batch_file(draw) -> tuple[str, bytes]:
    command = draw(st.sampled_from(["train", "serve"]))
    if command == "train":
        columns = ["system", "gpus", "workload", "precision", "seq_len", "global_batch_seqs", "tokens"]
    else:
        columns = ["system", "gpus", "workload", "precision", "input_tokens", "output_tokens", "scenario"]
    rows = []
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        cells = [draw(CELLS.get(c, CELLS["number"])) for c in columns]
        rows.append(",".join(cells))
    text = ",".join(columns) + "\n" + "\n".join(rows) + ("\n" if rows else "")
    data = text.encode("utf-8", errors="surrogatepass")
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    if draw(st.integers(min_value=0, max_value=4)) == 0:
        data = draw(st.binary(max_size=64)) + data  # junk before the header
    if draw(st.integers(min_value=0, max_value=4)) == 0:
        data += draw(st.binary(max_size=32))  # junk at the end
    return command, data


@settings(max_examples=int(120 * SCALE), deadline=None, derandomize=DERANDOMIZE, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(case=batch_file())
def test_fuzz_batch_rows(case):
    command, data = case
    CASES["batch"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cases.csv"
        path.write_bytes(data)
        with time_limit(CASE_TIME_LIMIT_S):
            code, stdout, err = cli("perf", command, "--batch", str(path))
        check_ended_cleanly(code, err)
        lines = stdout.splitlines()
        CASES["batch_rows"] += len(lines)
        rows = [json.loads(line, parse_constant=_reject_constant) for line in lines]
        assert [r["row"] for r in rows] == list(range(1, len(rows) + 1))
        if code == 2:
            assert rows == []  # a file that cannot be used prints nothing
        else:
            assert rows, "a usable file has rows"
            assert (code == 1) == any("error" in r for r in rows)
        for r in rows:
            for key in ("tflops_per_gpu", "output_tokens_per_s", "step_time_s", "ttft_s", "memory_gb_per_gpu"):
                if r.get(key) is not None:
                    assert r[key] >= 0
        assert [p.name for p in Path(tmp).iterdir()] == ["cases.csv"]


# -- a few through a real process -----------------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["run", str(BASELINE), "--set", "frontier.min_run_growth=inf", "--quiet"],
    ["run", str(BASELINE), "--set", "=5", "--quiet"],
    ["perf", "train", "--batch", "BATCH"],
])
def test_fuzz_cases_in_a_real_process(argv, tmp_path):
    batch = tmp_path / "b.csv"
    batch.write_bytes(b"\xef\xbb\xbfsystem,gpus,workload,precision,seq_len,global_batch_seqs\n"
                      b"hgx_h100,1e400,x,fp8,1,1\nhgx_h100,\xff,x,fp8,1,1\n")
    argv = [str(batch) if a == "BATCH" else a for a in argv]
    done = subprocess.run([sys.executable, "-m", "model", *argv, "--out" if argv[0] == "run" else "",
                           str(tmp_path / "o") if argv[0] == "run" else ""][: len(argv) + (2 if argv[0] == "run"
                                                                                           else 0)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    check_ended_cleanly(done.returncode, done.stderr)
    assert done.returncode in (1, 2)
    for line in done.stdout.splitlines():
        json.loads(line, parse_constant=_reject_constant)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.csv"]
