"""The `airace` command (also `python -m model`).

Exit codes: 0 success, 2 bad input (one line naming file, field, value and expectation), 1 anything else.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, fields

from model import __version__
from model.errors import InputError

EXIT_OK, EXIT_ERROR, EXIT_BAD_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on bad arguments already; keep its message to one line."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


# -- catalog ---------------------------------------------------------------------------------------------------
def _cmd_catalog(args: argparse.Namespace) -> int:
    from model.hardware import systems, workloads

    if args.json:
        out = {"systems": {}, "workloads": {}}
        for key, system in systems().items():
            entry = {f.name: getattr(system, f.name) for f in fields(system) if f.name != "sources"}
            entry["sources"] = {f: asdict(s) for f, s in system.sources.items()}
            entry["derived"] = system.rack_figures()
            out["systems"][key] = entry
        for key, w in workloads().items():
            entry = asdict(w)
            entry.update(params_total=w.params_total, params_active=w.params_active,
                         flops_per_token_seq8192=w.flops_per_token(8192))
            out["workloads"][key] = entry
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return EXIT_OK
    header = (f"{'key':<19} {'status':<10} {'GPUs':>4} {'BF16 TF':>8} {'FP8 TF':>7} {'FP4 TF':>7} {'HBM GB':>6} "
              f"{'TB/s':>5} {'NVL':>4} {'NVL GB/s':>8} {'NIC Gb/s':>8} {'kW':>6} {'price $M':>13} {'first':>7} "
              f"{'volume':>7}")
    print("NVIDIA systems (per-GPU dense peaks; sources: airace catalog --json)")
    print(header)
    print("-" * len(header))
    for key, s in systems().items():
        fp4 = f"{s.fp4_dense_tflops:7.0f}" if s.fp4_dense_tflops else f"{'-':>7}"
        price = f"{s.price_usd_low / 1e6:.2f}-{s.price_usd_high / 1e6:.2f}"
        print(f"{key:<19} {s.status:<10} {s.gpus_per_system:>4} {s.bf16_dense_tflops:>8.0f} {s.fp8_dense_tflops:>7.0f} "
              f"{fp4} {s.hbm_gb:>6.0f} {s.hbm_tb_s:>5.1f} {s.nvlink_domain_gpus:>4} {s.nvlink_gb_s:>8.0f} "
              f"{s.scaleout_gbit_s:>8.0f} {s.system_power_kw:>6.1f} {price:>13} {s.first_shipment:>7} {s.volume:>7}")
    kinds = [src.kind for s in systems().values() for src in s.sources.values()]
    print(f"\n{len(kinds)} sourced values: " + ", ".join(f"{kinds.count(k)} {k}" for k in sorted(set(kinds))))
    print("\nWorkloads (parameters computed from shape)")
    for key, w in workloads().items():
        moe = f", MoE {w.experts_active}/{w.experts_routed}" if w.is_moe else ""
        print(f"  {key:<22} {w.params_total / 1e9:8.1f}B total, {w.params_active / 1e9:7.1f}B active{moe}")
    return EXIT_OK


# -- perf ------------------------------------------------------------------------------------------------------
def _print_result(result: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in value.items())
        elif isinstance(value, float):
            value = f"{value:.4g}"
        print(f"{key:>28}: {value}")


def _run_perf(args: argparse.Namespace, name: str, batch, required: tuple[str, ...], estimate) -> int:
    """Shared shape of `perf train` and `perf serve`: batch mode, required flags, one result."""
    if args.batch:
        for row in batch(args.batch):
            print(json.dumps(row))
        return EXIT_OK
    missing = [n for n in required if getattr(args, n) is None]
    if missing:
        raise InputError(f"perf {name}: missing " + ", ".join("--" + m.replace("_", "-") for m in missing)
                         + " (or give --batch FILE.csv)")
    result = estimate()
    _print_result(result.to_dict(), args.json)
    return EXIT_OK if result.feasible else EXIT_ERROR


def _cmd_perf_train(args: argparse.Namespace) -> int:
    from model.performance import training

    return _run_perf(args, "train", training.train_batch,
                     ("system", "gpus", "workload", "precision", "seq_len", "global_batch"),
                     lambda: training.train_estimate(args.system, args.gpus, args.workload, args.precision,
                                                     args.seq_len, args.global_batch, args.tokens))


def _cmd_perf_serve(args: argparse.Namespace) -> int:
    from model.performance import serving

    return _run_perf(args, "serve", serving.serve_batch,
                     ("system", "gpus", "workload", "precision", "input_tokens", "output_tokens"),
                     lambda: serving.serve_estimate(args.system, args.gpus, args.workload, args.precision,
                                                    args.input_tokens, args.output_tokens, scenario=args.scenario))


# -- run -------------------------------------------------------------------------------------------------------
def _cmd_run(args: argparse.Namespace) -> int:
    from model.cli_run import run_command

    return run_command(args)


# -- viz -------------------------------------------------------------------------------------------------------
def _cmd_viz(args: argparse.Namespace) -> int:
    from model.viz import launch

    missing = launch.missing_packages()
    if missing:
        print("airace: error: the browser app needs " + ", ".join(missing)
              + "; install the viz extra: pip install -e '.[viz]'", file=sys.stderr)
        return EXIT_ERROR
    from model.scenario.mesa_scenario import DEFAULT_SCENARIO_FILE

    scenario = args.scenario or DEFAULT_SCENARIO_FILE
    return launch.serve(scenario, host=args.host, port=args.port, seed=args.seed)


# -- sweep -----------------------------------------------------------------------------------------------------
def _cmd_sweep(args: argparse.Namespace) -> int:
    from model.cli_sweep import sweep_command

    return sweep_command(args)


# -- compare ---------------------------------------------------------------------------------------------------
def _cmd_compare(args: argparse.Namespace) -> int:
    from model.compare import compare_command

    return compare_command(args)


def _add_output_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--batch", metavar="FILE.csv", help="evaluate many cases; one JSON object per line")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _command_plugins() -> list:
    """Subcommands that other packages of the project register under the `airace.commands` entry point group
    (the analysis package adds `report`), so that this module does not depend on them."""
    from importlib.metadata import entry_points

    return [ep.load() for ep in sorted(entry_points(group="airace.commands"), key=lambda ep: ep.name)]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="airace",
        description="airace: an agent-based model of the AI infrastructure race (NVIDIA systems, hyperscalers, "
        "neoclouds, labs) with a built-in cluster performance model.",
        epilog="Examples:\n  airace catalog\n  airace perf train --system gb300_nvl72 --gpus 4608 --workload "
        "llama3.1-405b --precision fp8 --seq-len 8192 --global-batch 2048\n  airace run scenarios/baseline.toml "
        "--out results/baseline",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"airace {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("catalog", help="list NVIDIA systems and workloads with their key figures",
                       description="Systems (HGX H100 … Feynman) with per-GPU specs, dates and prices, and the "
                       "workload catalog. --json prints everything, with the source URL and kind of every value.")
    p.add_argument("--json", action="store_true", help="print the whole catalog as one JSON object")
    p.set_defaults(func=_cmd_catalog)

    perf = sub.add_parser("perf", help="performance model: how fast a cluster trains or serves a model",
                          description="Evaluate the built-in cluster performance model.")
    perf_sub = perf.add_subparsers(dest="perf_command", required=True, parser_class=_Parser)
    t = perf_sub.add_parser("train", help="training throughput, best layout and time to train",
                            description="Search parallel layouts (TP, PP, DP/ZeRO, CP, EP, micro-batch, recompute) "
                            "and report the best: model TFLOP/s per GPU, step time, MFU, memory, time to train.")
    t.add_argument("--system", help="catalog key, e.g. gb300_nvl72")
    t.add_argument("--gpus", type=_positive_int, help="GPUs in the job")
    t.add_argument("--workload", help="workload key, e.g. llama3.1-405b")
    t.add_argument("--precision", choices=("bf16", "fp8", "nvfp4"), help="GEMM precision")
    t.add_argument("--seq-len", type=_positive_int, help="sequence length in tokens")
    t.add_argument("--global-batch", type=_positive_int, help="global batch in sequences")
    t.add_argument("--tokens", type=_positive_float, help="tokens to train (gives time_to_train_s)")
    _add_output_flags(t)
    t.set_defaults(func=_cmd_perf_train)
    s = perf_sub.add_parser("serve", help="serving throughput and latency",
                            description="Search serving layouts and batch sizes: output tokens/s (cluster and "
                            "per GPU), time to first token, time per output token.")
    s.add_argument("--system", help="catalog key, e.g. gb200_nvl72")
    s.add_argument("--gpus", type=_positive_int, help="GPUs serving")
    s.add_argument("--workload", help="workload key, e.g. deepseek-r1")
    s.add_argument("--precision", choices=("fp8", "nvfp4"), help="weight precision")
    s.add_argument("--input-tokens", type=_positive_int, help="input tokens per request")
    s.add_argument("--output-tokens", type=_positive_int, help="output tokens per request")
    s.add_argument("--scenario", choices=("offline", "server", "interactive"), default="offline",
                   help="offline: max throughput; server/interactive: best throughput under latency limits")
    _add_output_flags(s)
    s.set_defaults(func=_cmd_perf_serve)

    r = sub.add_parser("run", help="run a scenario and write a result folder",
                       description="Run a scenario month by month and write agents/market/events tables and a "
                       "manifest into a result folder (atomically).")
    r.add_argument("scenario", help="scenario file, e.g. scenarios/baseline.toml")
    r.add_argument("--seed", type=_seed, default=0, help="random seed, a whole number >= 0 (default 0)")
    r.add_argument("--out", help="result folder (default results/<scenario name>)")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario value by dotted path; repeatable")
    r.add_argument("--quiet", action="store_true", help="print nothing but errors")
    r.set_defaults(func=_cmd_run)

    for register in _command_plugins():
        register(sub)

    v = sub.add_parser("viz", help="explore a scenario live in the browser (Mesa SolaraViz)",
                       description="Start the browser app on localhost: step, play and reset the race month by "
                       "month, move the scenario knobs (Vera Rubin delay, supply growth, capex per kind, power lead "
                       "time, seed) and watch compute, clusters, NVIDIA revenue, rental prices and events. Works "
                       "offline. Sliders take effect on Reset. Ctrl-C stops the server.",
                       epilog="Examples:\n  airace viz\n  airace viz scenarios/baseline.toml --port 8766\n  "
                       "airace viz scenarios/baseline.toml --host 0.0.0.0 --seed 3",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    v.add_argument("scenario", nargs="?", help="scenario file (default: the repository's scenarios/baseline.toml)")
    v.add_argument("--port", type=_positive_int, default=8765, help="port to listen on (default 8765)")
    v.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine only)")
    v.add_argument("--seed", type=_seed, default=0, help="initial random seed (default 0; the app has a slider too)")
    v.set_defaults(func=_cmd_viz)

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
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    sw.add_argument("scenario", help="scenario file, e.g. scenarios/baseline.toml")
    sw.add_argument("--runs", type=_positive_int, required=True, help="number of runs")
    where = sw.add_mutually_exclusive_group()
    where.add_argument("--workers", type=_positive_int, help="local worker processes (default: all cores)")
    where.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on this Dask scheduler's workers")
    sw.add_argument("--out", help="sweep folder (default results/<scenario name>_sweep)")
    sw.add_argument("--seed", type=_seed, default=0, help="base seed: run i uses seed BASE+i (default 0)")
    sw.add_argument("--resume", action="store_true",
                    help="continue a sweep folder: keep finished runs with the same parameters, run the rest")
    sw.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override a scenario value by dotted path for every run; repeatable")
    sw.add_argument("--quiet", action="store_true", help="no progress bar or summary, only errors")
    sw.set_defaults(func=_cmd_sweep)

    c = sub.add_parser("compare", help="compare result folders and sweep folders side by side",
                       description="For each input (a result folder or a sweep folder): who leads by H100e at "
                       "each year end (with share), when each system first comes online and first reaches a "
                       "cluster at scale (agent and date; for sweeps the median date, 5-95%% interval and the most "
                       "frequent agent), and end-of-horizon total H100e, largest cluster and NVIDIA revenue per "
                       "year (median and 5-95%% interval across runs).",
                       epilog="Examples:\n  airace compare results/baseline results/slow_supply\n"
                       "  airace compare results/baseline_sweep results/other_sweep --out compare.csv\n"
                       "  airace compare results/baseline --json",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("inputs", nargs="+", metavar="FOLDER", help="result folders and/or sweep folders")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.add_argument("--out", metavar="FILE.csv", help="also write the comparison as a long CSV table")
    c.set_defaults(func=_cmd_compare)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except InputError as exc:
        print(f"airace: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        print("airace: interrupted", file=sys.stderr)
        return EXIT_ERROR
