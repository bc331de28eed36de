"""`airace perf train|serve`: the performance model on one job, or on every row of a CSV (`--batch`)."""

from __future__ import annotations

import argparse

from model.cli.args import EXIT_ERROR, EXIT_OK, RAW, Parser, positive_float, positive_int
from model.cli.batch import MAX_JOB_GPUS, evaluate_rows, positive_number, read_rows, whole_number
from model.errors import InputError, dumps_strict


def register(sub) -> None:
    perf = sub.add_parser("perf", help="performance model: how fast a cluster trains or serves a model",
                          description="Evaluate the built-in cluster performance model.")
    perf_sub = perf.add_subparsers(dest="perf_command", required=True, parser_class=Parser)
    t = perf_sub.add_parser("train", help="training throughput, best layout and time to train",
                            description="Search parallel layouts (TP, PP, DP/ZeRO, CP, EP, micro-batch, recompute) "
                            "and report the best: model TFLOP/s per GPU, step time, MFU, memory, time to train.",
                            epilog="Example:\n  airace perf train --system gb300_nvl72 --gpus 4608 --workload "
                            "llama3.1-405b --precision fp8 --seq-len 8192 --global-batch 2048 --tokens 1.5e13",
                            formatter_class=RAW)
    t.add_argument("--system", help="catalog key, e.g. gb300_nvl72")
    t.add_argument("--gpus", type=positive_int, help="GPUs in the job")
    t.add_argument("--workload", help="workload key, e.g. llama3.1-405b")
    t.add_argument("--precision", choices=("bf16", "fp8", "nvfp4"), help="GEMM precision")
    t.add_argument("--seq-len", type=positive_int, help="sequence length in tokens")
    t.add_argument("--global-batch", type=positive_int, help="global batch in sequences")
    t.add_argument("--tokens", type=positive_float, help="tokens to train (gives time_to_train_s)")
    _add_output_flags(t)
    t.set_defaults(func=_train)
    s = perf_sub.add_parser("serve", help="serving throughput and latency",
                            description="Search serving layouts and batch sizes: output tokens/s (cluster and "
                            "per GPU), time to first token, time per output token.",
                            epilog="Example:\n  airace perf serve --system gb200_nvl72 --gpus 72 --workload "
                            "deepseek-r1 --precision nvfp4 --input-tokens 1024 --output-tokens 1024",
                            formatter_class=RAW)
    s.add_argument("--system", help="catalog key, e.g. gb200_nvl72")
    s.add_argument("--gpus", type=positive_int, help="GPUs serving")
    s.add_argument("--workload", help="workload key, e.g. deepseek-r1")
    s.add_argument("--precision", choices=("fp8", "nvfp4"), help="weight precision")
    s.add_argument("--input-tokens", type=positive_int, help="input tokens per request")
    s.add_argument("--output-tokens", type=positive_int, help="output tokens per request")
    s.add_argument("--scenario", choices=("offline", "server", "interactive"), default="offline",
                   help="offline: max throughput; server/interactive: best throughput under latency limits")
    _add_output_flags(s)
    s.set_defaults(func=_serve)


def _add_output_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--batch", metavar="FILE.csv",
                        help="evaluate one job per CSV row (UTF-8, header naming the flags' names with underscores); "
                        "one JSON line per row as it is computed, a bad row's line has `row` and `error`; exit 1 if "
                        "any row failed, 2 if the file cannot be used")
    parser.add_argument("--json", action="store_true", help="print one JSON object (strict JSON: null where a "
                        "number is not finite)")


def _print_result(result: dict, as_json: bool) -> None:
    if as_json:
        print(dumps_strict(result))
        return
    for key, value in result.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in value.items())
        elif isinstance(value, float):
            value = f"{value:.4g}"
        print(f"{key:>28}: {value}")


def _emit(result: dict) -> None:
    print(dumps_strict(result), flush=True)


def check_gpus(gpus: int, name: str = "--gpus") -> int:
    """The same bounds for training and serving jobs: a whole number from 1 to `MAX_JOB_GPUS`."""
    if isinstance(gpus, bool) or not isinstance(gpus, int) or not 1 <= gpus <= MAX_JOB_GPUS:
        raise InputError(f"{name}: expected a whole number between 1 and {MAX_JOB_GPUS:,} (one job), got {gpus!r}")
    return gpus


def serve_uses_every_gpu(result, gpus: int):
    """A serving answer counts only when its layout uses every GPU it is given (replicas x instance size), as a
    training layout must split every GPU evenly; otherwise the answer is infeasible, with the reason."""
    from dataclasses import replace

    layout = getattr(result, "layout", None) or {}
    replicas, size = layout.get("replicas"), layout.get("tp", 1) * layout.get("pp", 1)
    if not result.feasible or not replicas:
        return result
    used = int(replicas) * int(size)
    if "ep" in layout and layout.get("ep", 1) > size:
        used = int(replicas) * int(layout["ep"])
    if used == gpus:
        return result
    return replace(result, feasible=False, reason=f"no serving layout splits {gpus} GPUs evenly into replicas "
                   f"(the best uses {used}); give a multiple of the instance size")


def _run_perf(args: argparse.Namespace, name: str, columns: tuple[str, ...], optional: tuple[str, ...],
              evaluate_row, required: tuple[str, ...], estimate) -> int:
    """Shared shape of `perf train` and `perf serve`: batch mode, required flags, one result."""
    if args.batch:
        rows = read_rows(args.batch, columns, optional)
        failed = evaluate_rows(rows, columns + optional, evaluate_row, _emit)
        return EXIT_ERROR if failed else EXIT_OK
    missing = [n for n in required if getattr(args, n) is None]
    if missing:
        raise InputError(f"perf {name}: missing " + ", ".join("--" + m.replace("_", "-") for m in missing)
                         + " (or give --batch FILE.csv)")
    check_gpus(args.gpus)
    result = estimate()
    _print_result(result.to_dict(), args.json)
    return EXIT_OK if result.feasible else EXIT_ERROR


TRAIN_COLUMNS = ("system", "gpus", "workload", "precision", "seq_len", "global_batch_seqs")
SERVE_COLUMNS = ("system", "gpus", "workload", "precision", "input_tokens", "output_tokens")


def _train_row(cells: dict[str, str]) -> dict:
    from model.performance import training

    tokens = (cells.get("tokens") or "").strip()
    result = training.train_estimate(
        cells["system"].strip(), check_gpus(whole_number(cells["gpus"], "gpus"), "gpus"), cells["workload"].strip(),
        cells["precision"].strip(), whole_number(cells["seq_len"], "seq_len", high=1 << 24),
        whole_number(cells["global_batch_seqs"], "global_batch_seqs", high=1 << 30),
        positive_number(tokens, "tokens") if tokens else None)
    return result.to_dict()


def _serve_row(cells: dict[str, str]) -> dict:
    from model.performance import serving

    gpus = check_gpus(whole_number(cells["gpus"], "gpus"), "gpus")
    scenario = (cells.get("scenario") or "").strip() or "offline"
    result = serving.serve_estimate(
        cells["system"].strip(), gpus, cells["workload"].strip(), cells["precision"].strip(),
        whole_number(cells["input_tokens"], "input_tokens", high=1 << 24),
        whole_number(cells["output_tokens"], "output_tokens", high=1 << 24), scenario=scenario)
    return serve_uses_every_gpu(result, gpus).to_dict()


def _train(args: argparse.Namespace) -> int:
    from model.performance import training

    return _run_perf(args, "train", TRAIN_COLUMNS, ("tokens",), _train_row,
                     ("system", "gpus", "workload", "precision", "seq_len", "global_batch"),
                     lambda: training.train_estimate(args.system, args.gpus, args.workload, args.precision,
                                                     args.seq_len, args.global_batch, args.tokens))


def _serve(args: argparse.Namespace) -> int:
    from model.performance import serving

    return _run_perf(args, "serve", SERVE_COLUMNS, ("scenario",), _serve_row,
                     ("system", "gpus", "workload", "precision", "input_tokens", "output_tokens"),
                     lambda: serve_uses_every_gpu(
                         serving.serve_estimate(args.system, args.gpus, args.workload, args.precision,
                                                args.input_tokens, args.output_tokens, scenario=args.scenario),
                         args.gpus))
