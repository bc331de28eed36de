"""`airace sweep`: run a scenario many times (seeds or its `[sweep]` design) and summarise the sweep folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd


def sweep_command(args: argparse.Namespace) -> int:
    """Run the sweep; exit 0 when every run is ok, 1 when some failed (they are listed in runs.parquet)."""
    from model.sweep import run_sweep

    out = run_sweep(args.scenario, args.runs, out=args.out, base_seed=args.seed, overrides=list(args.set),
                    workers=args.workers, scheduler=args.scheduler, resume=args.resume, progress=not args.quiet)
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
