"""`airace sweep`: run a scenario many times (seeds or its `[sweep]` design) and summarise the sweep folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from model.cli.args import RAW, positive_float, positive_int, seed


def register(sub) -> None:
    sw = sub.add_parser("sweep", help="run a scenario many times (seeds or its [sweep] design), locally or on Dask",
                        description="Run N seeded runs of a scenario (run i uses seed BASE+i). If the scenario has "
                        "a [sweep] table, its parameters (uniform, normal, choice by dotted path) are sampled by "
                        "Latin hypercube. Writes OUT/sweep.json, OUT/runs.parquet (status per run), one result "
                        "folder per run under OUT/runs/, and combined agents/market/events tables. Exit 1 if "
                        "any run failed (listed in runs.parquet).",
                        epilog="Examples:\n  airace sweep scenarios/baseline.toml --runs 100 --out results/sw\n"
                        "  airace sweep scenarios/baseline.toml --runs 100 --out results/sw --resume\n"
                        "  airace sweep scenarios/baseline.toml --runs 1000 --scheduler tcp://10.0.0.5:8786\n"
                        "  (on the cluster: `dask scheduler`, then `dask worker tcp://10.0.0.5:8786 --nthreads 1 "
                        "--nworkers auto`; OUT must be on a filesystem the workers share)",
                        formatter_class=RAW)
    sw.add_argument("scenario", help="scenario file, e.g. scenarios/baseline.toml")
    sw.add_argument("--runs", type=positive_int, required=True, help="number of runs")
    where = sw.add_mutually_exclusive_group()
    where.add_argument("--workers", type=positive_int, help="local worker processes (default: all cores)")
    where.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on this Dask scheduler's workers")
    sw.add_argument("--out", help="sweep folder (default results/<scenario name>_sweep)")
    sw.add_argument("--seed", type=seed, default=0, help="base seed: run i uses seed BASE+i (default 0)")
    sw.add_argument("--resume", action="store_true",
                    help="continue a sweep folder: keep finished runs with the same parameters, run the rest")
    sw.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override a scenario value by dotted path for every run; repeatable")
    sw.add_argument("--run-timeout-s", type=positive_float, default=None, metavar="SECONDS",
                    help="a run that takes longer is recorded as failed (default 1800)")
    sw.add_argument("--quiet", action="store_true", help="no progress bar or summary, only errors")
    sw.set_defaults(func=sweep_command)


def sweep_command(args: argparse.Namespace) -> int:
    """Run the sweep; exit 0 when every run is ok, 1 when some failed (they are listed in runs.parquet)."""
    import pandas as pd

    from model.sweep import run_sweep
    from model.sweep.runner import DEFAULT_RUN_TIMEOUT_S, SchedulerLost

    timeout = DEFAULT_RUN_TIMEOUT_S if args.run_timeout_s is None else args.run_timeout_s
    try:
        out = run_sweep(args.scenario, args.runs, out=args.out, base_seed=args.seed, overrides=list(args.set),
                        workers=args.workers, scheduler=args.scheduler, resume=args.resume,
                        progress=not args.quiet, run_timeout_s=timeout)
    except SchedulerLost as exc:
        print(f"airace: error: {exc}", file=sys.stderr)
        return 1
    runs = pd.read_parquet(Path(out) / "runs.parquet")
    failed = runs[runs["status"] == "failed"]
    if not args.quiet:
        print(f"wrote {out}/ ({len(runs)} runs, {len(runs) - len(failed)} ok, {len(failed)} failed)")
    if len(failed):
        first = failed.iloc[0]
        print(f"airace: {len(failed)} of {len(runs)} runs failed (run {first['run']}: {first['error']}); "
              f"see {out}/runs.parquet; rerun them with --resume", file=sys.stderr)
        return 1
    return 0
