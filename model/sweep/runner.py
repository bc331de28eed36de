"""Run a sweep: one seeded run per task through any `concurrent.futures.Executor`, then the combined tables.

The same loop drives a local `ProcessPoolExecutor` and dask.distributed's `Client.get_executor()`. A task gets the
resolved parameter tree (workers read no files), runs the model, writes its own result folder atomically and
returns a small status record; a run that raises becomes a `failed` record and the sweep goes on. The sweep folder
layout is the one in the shared notes (sweep.json, runs.parquet, runs/run_NNNN/, combined tables).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import copy
import json
import multiprocessing
import os
import select
import shutil
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from model.errors import InputError
from model.results.folders import (
    MANIFEST,
    RUNS_DIR,
    RUNS_TABLE,
    SWEEP_JSON,
    check_output_folder,
    remove_stale_temporaries,
    run_folder_name,
    table_file,
    write_json,
    write_parquet,
    write_result_folder,
)
from model.results.read import read_table
from model.results.schema import TABLE_NAMES
from model.sweep.design import Design, build_design, canonical_json, params_sha256, toml_literal

RUN_COLUMNS = ["run", "seed", "status", "error", "wall_time_s"]
RUNS_TABLE_EVERY_S = 2.0  # rewrite runs.parquet at most this often while runs finish
DEFAULT_RUN_TIMEOUT_S = 1800.0
"""A run that takes longer is recorded as failed. The baseline to 2030 takes about 2 s and to 2050 about 10 s on
one core; half an hour is far beyond any run of a valid scenario and still ends a sweep that meets a bug."""


SCHEDULER_GRACE_S = 10.0  # a Dask client reconnecting for longer than this has lost its scheduler


class SchedulerLost(RuntimeError):
    """The Dask scheduler went away during a sweep (the runs recorded so far are kept)."""


class RunTimedOut(Exception):
    """A run took longer than the sweep's per-run time limit."""


def _raise_timed_out(signum, frame) -> None:  # noqa: ARG001
    raise RunTimedOut("the run took longer than --run-timeout-s")


@contextmanager
def _time_limit(seconds: float | None) -> Iterator[None]:
    """Raise `RunTimedOut` in the block after `seconds` (SIGALRM: a local worker's main thread only; elsewhere, as
    in a Dask worker's thread, the sweep's parent abandons the run after `abandon_after_s`)."""
    if not seconds or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return
    previous = signal.signal(signal.SIGALRM, _raise_timed_out)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def abandon_after_s(timeout_s: float) -> float:
    """Seconds after submission when the parent gives up on a run that has not reported (a queued run waits for
    at most one other run per worker before it starts)."""
    return 2 * timeout_s + 60.0


def die_with_parent(sweep_pid: int) -> None:
    """Worker initializer: end this worker as soon as the sweep process `sweep_pid` is gone, so a sweep killed
    with SIGKILL leaves no worker behind (nor the fork server and resource tracker, which exit when the last
    worker does). A worker's parent is the fork server, which each worker keeps alive (Python passes it the fork
    server's liveness pipe), so the kernel's parent-death signal cannot do this: a daemon thread waits on the
    sweep process (a pidfd on Linux, else a check every second) and exits the worker at once."""
    thread = threading.Thread(target=_exit_when_gone, args=(sweep_pid,), name="airace-die-with-parent",
                              daemon=True)
    thread.start()


def _exit_when_gone(pid: int) -> None:
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux, or the process is already gone
        fd = None
    if fd is not None:
        select.select([fd], [], [])  # readable when the process ends
        os._exit(1)
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(1)
        except PermissionError:
            pass
        time.sleep(1.0)


@dataclass(frozen=True)
class RunTask:
    """Everything a worker needs for one run; the parameters are already resolved (no file reads on workers)."""

    run: int
    seed: int
    params: dict
    out_dir: str
    manifest: dict
    timeout_s: float | None = None


def _one_line(exc: BaseException) -> str:
    """`Type: message (file:line)` of the innermost frame, on one line, for runs.parquet."""
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        where = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}{where}" if text else f"{type(exc).__name__}{where}"


def execute_run(task: RunTask, runner: Callable | None = None) -> dict:
    """Worker side of one run: run, write the result folder atomically, return a status record (never raises)."""
    from model.interrupts import terminate_as_interrupt

    t0 = time.perf_counter()
    record = {"run": task.run, "seed": task.seed}
    try:
        with terminate_as_interrupt():
            if runner is None:
                from model.market import run_params as runner
            with _time_limit(task.timeout_s):
                result = runner(copy.deepcopy(task.params), task.seed)
            write_result_folder(task.out_dir, result.tables(), {**task.manifest, **result.manifest})
    except RunTimedOut:
        return {**record, "status": "failed", "error": f"RunTimedOut: no result within --run-timeout-s "
                f"{task.timeout_s:g} s", "wall_time_s": time.perf_counter() - t0}
    except Exception as exc:  # noqa: BLE001 - a failing run is data for the sweep, not a crash of it
        return {**record, "status": "failed", "error": _one_line(exc), "wall_time_s": time.perf_counter() - t0}
    return {**record, "status": "ok", "error": "", "wall_time_s": time.perf_counter() - t0}


# -- sweep folder -----------------------------------------------------------------------------------------------
def _runs_table(records: dict[int, dict], design: Design) -> pd.DataFrame:
    rows = []
    for run in sorted(records):
        rec = records[run]
        rows.append({**{c: rec[c] for c in RUN_COLUMNS}, **design.samples[run]})
    df = pd.DataFrame(rows, columns=RUN_COLUMNS + design.parameter_names)
    return df.astype({"run": "int64", "seed": "int64", "wall_time_s": "float64"})


def _with_run_columns(df: pd.DataFrame, run: int, sample: dict[str, Any]) -> pd.DataFrame:
    """`run` first, then the sampled parameter columns, then the run's own columns."""
    front = {"run": pd.Series(run, index=df.index, dtype="int64")}
    for path, value in sample.items():
        front[path] = pd.Series([value] * len(df), index=df.index, dtype=object if isinstance(value, list) else None)
    return pd.concat([pd.DataFrame(front, index=df.index), df], axis=1)


def combine_tables(out: Path, records: dict[int, dict], design: Design) -> dict[str, pd.DataFrame]:
    """Concatenate the ok runs' tables (in run order) into the sweep's combined tables."""
    ok = [run for run in sorted(records) if records[run]["status"] == "ok"]
    combined = {}
    for name in TABLE_NAMES:
        frames = [read_table(out / RUNS_DIR / run_folder_name(run), name) for run in ok]
        frames = [_with_run_columns(df, run, design.samples[run]) for run, df in zip(ok, frames, strict=True)]
        nonempty = [f for f in frames if len(f)] or frames[:1]
        combined[name] = (pd.concat(nonempty, ignore_index=True) if nonempty
                          else pd.DataFrame(columns=["run", *design.parameter_names]))
    return combined


def _check_resume(out: Path, header: dict, resume: bool, keep: Sequence[Path] = ()) -> None:
    """Refuse to mix sweeps or lose files: an existing folder is reused only with --resume, only when it is a
    sweep folder, and only for the same design."""
    check_output_folder(out, "sweep", keep=keep)  # absent, empty, or a sweep folder; a file is exit 1
    if not out.exists() or not any(out.iterdir()):
        return
    sweep_json = out / SWEEP_JSON
    if not resume:
        raise InputError(f"{out}: --out folder already exists and is not empty; pass --resume to continue "
                         "that sweep, or choose another --out")
    if not sweep_json.is_file():
        raise InputError(f"{out}: --resume: not a sweep folder (no sweep.json); choose another --out")
    try:
        old = json.loads(sweep_json.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{sweep_json}: --resume: unreadable sweep.json ({exc})") from None
    checks = [("params_sha256", "the resolved scenario parameters (file or --set) differ"),
              ("design", "design"), ("parameters", "[sweep] parameters"), ("base_seed", "--seed")]
    if header["design"] != "seeds":  # a sampled design of another size is another design
        checks.append(("runs", "--runs (a Latin hypercube of another size is another design)"))
    for key, what in checks:
        if canonical_json(old.get(key)) != canonical_json(header[key]):
            shown = "" if key == "params_sha256" else f": folder has {old.get(key)!r}, this sweep {header[key]!r}"
            raise InputError(f"{sweep_json}: --resume: {what}{shown} (scenario {old.get('scenario_file')!r}); "
                             "a different scenario or design cannot resume this folder, choose another --out")


def _finished_runs(out: Path, tasks: list[RunTask]) -> dict[int, dict]:
    """Runs whose folder is complete and was made with the same seed and parameters (skipped by --resume)."""
    done = {}
    for task in tasks:
        folder = Path(task.out_dir)
        manifest_file = folder / MANIFEST
        if not manifest_file.is_file() or not all(table_file(folder, n).is_file() for n in TABLE_NAMES):
            continue
        try:
            manifest = json.loads(manifest_file.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if manifest.get("seed") == task.seed and (canonical_json(manifest.get("parameters"))
                                                  == canonical_json(json.loads(canonical_json(task.params)))):
            done[task.run] = {"run": task.run, "seed": task.seed, "status": "ok", "error": "",
                              "wall_time_s": float(manifest.get("wall_time_s", float("nan")))}
    return done


# -- executors --------------------------------------------------------------------------------------------------
def default_workers() -> int:
    count = os.process_cpu_count() if hasattr(os, "process_cpu_count") else os.cpu_count()
    return max(1, count or 1)


def _local_pool(workers: int) -> cf.ProcessPoolExecutor:
    """Workers from a fork server with the model preloaded: fast to start, and safe when the parent has threads."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["model.sweep.runner", "model.market"])
    else:  # pragma: no cover - not Linux
        ctx = multiprocessing.get_context("spawn")
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=die_with_parent,
                                  initargs=(os.getpid(),))


def _dask_executor(address: str):
    import logging

    from distributed import Client
    from distributed.comm import get_address_host, parse_address
    from distributed.comm.registry import get_backend

    expected = "expected an address like tcp://HOST:8786 of a running `dask scheduler`"
    try:  # check the address first: a Client that failed to start hangs for seconds when it is collected
        get_backend(parse_address(address)[0])
        get_address_host(address)
    except (ValueError, TypeError) as exc:
        raise InputError(f"--scheduler {address!r}: not a Dask address ({exc}); {expected}") from None
    try:
        client = Client(address, timeout="10s", set_as_default=False)
    except (OSError, ValueError, TypeError) as exc:
        raise InputError(f"--scheduler {address!r}: cannot connect to a Dask scheduler ({_one_line(exc)}); "
                         f"{expected}") from None
    # The sweep reports a lost scheduler or worker itself (failed runs, one line); distributed's own log lines
    # (CommClosedError tracebacks while a Client closes after Ctrl-C or a killed scheduler, some of them logged by
    # tornado's IOLoop as "tornado.application" errors) would bury it.
    for name in ["distributed", "tornado.application", *logging.root.manager.loggerDict]:
        if name.startswith(("distributed", "tornado.application")):
            logging.getLogger(name).setLevel(logging.CRITICAL)
    return client, client.get_executor(pure=False)


# -- the sweep --------------------------------------------------------------------------------------------------
def run_sweep(scenario: Path | str, runs: int, *, out: Path | str | None = None, base_seed: int = 0,
              overrides: Sequence[str] = (), workers: int | None = None, scheduler: str | None = None,
              executor: cf.Executor | None = None, resume: bool = False, progress: bool = False,
              runner: Callable | None = None, run_timeout_s: float | None = DEFAULT_RUN_TIMEOUT_S) -> Path:
    """Run `runs` seeded runs of a scenario (sampling its `[sweep]` table) and write the sweep folder; return it.

    Execution: `executor` if given (left open), else dask.distributed at `scheduler`, else a local process pool of
    `workers` (default: all cores). `runner(params, seed) -> Results` replaces `model.market.run_params` (tests).
    A run that takes longer than `run_timeout_s` is recorded as failed (None: no limit).
    The local pool starts its workers from a fork server, so a script calling this needs the usual
    `if __name__ == "__main__":` guard (notebooks and `python -c` need nothing).
    """
    from model.scenario import apply_overrides, load_scenario_dict, scenario_hash

    t0 = time.perf_counter()
    started = datetime.now(UTC).isoformat()
    path = Path(scenario)
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise InputError(f"--runs {runs!r}: expected a positive whole number")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise InputError(f"--workers {workers!r}: expected a positive whole number")
    if isinstance(base_seed, bool) or not isinstance(base_seed, int) or base_seed < 0:
        raise InputError(f"--seed {base_seed!r}: expected a whole number >= 0 (run i uses seed BASE+i)")
    if run_timeout_s is not None and not (isinstance(run_timeout_s, (int, float)) and 0 < run_timeout_s < 1e9):
        raise InputError(f"--run-timeout-s {run_timeout_s!r}: expected a positive number of seconds")
    if scheduler is not None and workers is not None:
        raise InputError("--workers and --scheduler: give one (Dask workers are started with `dask worker`)")
    params = apply_overrides(load_scenario_dict(path), list(overrides))
    design = build_design(params, runs, base_seed, str(path))
    for item in overrides:
        key = item.split("=", 1)[0].strip()
        if key in design.parameter_names:
            raise InputError(f"--set {key}: this parameter is sampled by {path}'s [sweep] table; "
                             "remove it from one of them")
    out_dir = Path(out) if out is not None else Path("results") / f"{path.stem}_sweep"
    out_dir = out_dir.resolve()

    header = {"scenario_file": str(path), "scenario_sha256": scenario_hash(path),
              "params_sha256": params_sha256(design.base_params), "overrides": list(overrides), "runs": runs,
              "base_seed": base_seed, "parameters": design.spec_table(), "design": design.design,
              "package_version": _package_version(), "started": started, "finished": None, "wall_time_s": None,
              "executor": None}
    _check_resume(out_dir, header, resume, keep=[path])
    runs_dir = out_dir / RUNS_DIR
    tasks = []
    for run in range(runs):
        run_params = design.run_params(run, source=f"{path}: [sweep] run {run}")
        sampled = [f"{k}={toml_literal(v)}" for k, v in design.samples[run].items()]
        manifest = {"scenario_file": str(path), "scenario_sha256": header["scenario_sha256"],
                    "overrides": list(overrides) + sampled, "sweep": {"dir": str(out_dir), "run": run}}
        tasks.append(RunTask(run, base_seed + run, run_params, str(runs_dir / run_folder_name(run)), manifest,
                             run_timeout_s))
    records = _finished_runs(out_dir, tasks) if resume else {}
    todo = [t for t in tasks if t.run not in records]

    client = None  # connect before touching the folder: a bad --scheduler leaves nothing behind
    own_executor = executor is None
    if executor is not None:
        description, in_flight = type(executor).__name__, 2 * default_workers()
    elif scheduler is not None:
        client, executor = _dask_executor(scheduler)
        description = f"dask.distributed {scheduler}"
        in_flight = 2 * max(1, sum(client.nthreads().values()))
    else:
        workers = workers or default_workers()
        executor = _local_pool(min(workers, max(1, len(todo))))
        description, in_flight = f"ProcessPoolExecutor(max_workers={workers})", 2 * workers
    header["executor"] = description
    try:
        runs_dir.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(runs_dir, unmarked=True)  # temporary folders of runs killed hard (SIGKILL) earlier
        remove_stale_temporaries(out_dir)  # and of sweep.json, runs.parquet, the combined tables
        for task in todo:  # a folder left from other parameters must not survive a failed rerun
            if Path(task.out_dir).exists():
                shutil.rmtree(task.out_dir)
        write_json(out_dir / SWEEP_JSON, header)
        try:
            _drive(executor, todo, records, runner, max(2, in_flight), out_dir, design, runs, progress,
                   None if run_timeout_s is None else abandon_after_s(run_timeout_s),
                   None if client is None else (lambda: client.status == "running"))
        except Exception as exc:
            if client is not None and client.status != "running":
                raise SchedulerLost(f"--scheduler {scheduler}: the Dask scheduler went away ({_one_line(exc)}); "
                                    f"{len(records)} runs are recorded in {out_dir / RUNS_TABLE}; continue with "
                                    "--resume") from None
            raise
    finally:
        if own_executor:
            if client is not None:
                with contextlib.suppress(Exception):  # a scheduler that went away cannot be told goodbye
                    executor.shutdown(wait=False)
                    client.close()
            else:
                executor.shutdown(wait=True, cancel_futures=True)  # running tasks finish their folders
        if records:
            write_parquet(out_dir / RUNS_TABLE, _runs_table(records, design))
    for name, df in combine_tables(out_dir, records, design).items():
        write_parquet(table_file(out_dir, name), df)
    header.update(finished=datetime.now(UTC).isoformat(), wall_time_s=time.perf_counter() - t0)
    write_json(out_dir / SWEEP_JSON, header)
    return out_dir


def _drive(executor: cf.Executor, todo: list[RunTask], records: dict[int, dict], runner: Callable | None,
           in_flight: int, out_dir: Path, design: Design, runs: int, progress: bool,
           abandon_s: float | None = None, connected: Callable[[], bool] | None = None) -> None:
    """Submit at most `in_flight` runs at a time, record each as it finishes, keep runs.parquet current. A run
    with no answer `abandon_s` after submission (a Dask worker thread cannot be interrupted) is recorded failed.
    `connected` (Dask) says whether the scheduler is still there; lost for `SCHEDULER_GRACE_S`, the sweep stops
    (pending futures of a lost scheduler may never finish nor be cancelled)."""
    from tqdm import tqdm

    from model.interrupts import terminate_as_interrupt

    failed = sum(r["status"] == "failed" for r in records.values())
    bar = tqdm(total=runs, initial=len(records), unit="run", desc="sweep", file=sys.stderr, disable=not progress,
               dynamic_ncols=True, smoothing=0.1)
    bar.set_postfix(failed=failed, refresh=False)
    queue = iter(todo)
    pending: dict[cf.Future, RunTask] = {}
    submitted: dict[cf.Future, float] = {}
    last_write = time.monotonic()
    lost_since: float | None = None
    try:
        with terminate_as_interrupt():
            while True:
                if connected is not None:
                    if connected():
                        lost_since = None
                    elif lost_since is None:
                        lost_since = time.monotonic()
                    elif time.monotonic() - lost_since > SCHEDULER_GRACE_S:
                        raise ConnectionError(f"no connection to the scheduler for {SCHEDULER_GRACE_S:g} s")
                while len(pending) < in_flight and (task := next(queue, None)) is not None:
                    future = executor.submit(execute_run, task, runner)
                    pending[future], submitted[future] = task, time.monotonic()
                if not pending:
                    break
                done, _ = cf.wait(pending, timeout=1.0, return_when=cf.FIRST_COMPLETED)
                if abandon_s is not None:
                    now = time.monotonic()
                    for future in [f for f in pending if f not in done and now - submitted[f] > abandon_s]:
                        task = pending.pop(future)
                        future.cancel()
                        records[task.run] = {"run": task.run, "seed": task.seed, "status": "failed",
                                             "error": f"RunTimedOut: no answer within {abandon_s:g} s of submission "
                                                      "(abandoned)", "wall_time_s": now - submitted[future]}
                        failed += 1
                        bar.set_postfix(failed=failed, refresh=False)
                        bar.update(1)
                for future in done:
                    record = _record(future, pending.pop(future))
                    records[record["run"]] = record
                    failed += record["status"] == "failed"
                    bar.set_postfix(failed=failed, refresh=False)
                    bar.update(1)
                if done and time.monotonic() - last_write > RUNS_TABLE_EVERY_S:
                    write_parquet(out_dir / RUNS_TABLE, _runs_table(records, design))
                    last_write = time.monotonic()
    finally:
        for future in pending:
            future.cancel()
        bar.close()


def _record(future: cf.Future, task: RunTask) -> dict:
    """The task's own record, or a failed record when the worker itself broke (process died, task lost, a Dask
    future cancelled because its scheduler went away)."""
    try:
        exc = future.exception()
    except cf.CancelledError:
        return {"run": task.run, "seed": task.seed, "status": "failed",
                "error": "cancelled: the worker or the Dask scheduler went away", "wall_time_s": float("nan")}
    if exc is None:
        return future.result()
    if not isinstance(exc, Exception):  # KeyboardInterrupt/SystemExit in a worker: the user is stopping us
        raise exc
    return {"run": task.run, "seed": task.seed, "status": "failed", "error": _one_line(exc),
            "wall_time_s": float("nan")}


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("airace")
    except PackageNotFoundError:
        return "unknown"
