"""`airace perf train|serve`: the performance model on one job, or on every row of a CSV (`--batch`)."""

from __future__ import annotations

import argparse
import re

from model.cli.args import EXIT_ERROR, EXIT_OK, RAW, Parser, positive_float, positive_int
from model.cli.batch import MAX_JOB_GPUS, evaluate_rows, positive_number, read_rows, whole_number
from model.errors import InputError, dumps_strict


def month(text: str) -> str:
    """A YYYY-MM month (the software era to assume)."""
    if not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", text):
        raise argparse.ArgumentTypeError(f"expected a month YYYY-MM, got {text!r}")
    return text


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
    t.add_argument("--precision", choices=("bf16", "fp8", "nvfp4", "int8"),
                   help="GEMM precision (int8: TPU-style quantised matmuls, where the catalog has an int8 peak)")
    t.add_argument("--seq-len", type=positive_int, help="sequence length in tokens")
    t.add_argument("--global-batch", type=positive_int, help="global batch in sequences")
    t.add_argument("--tokens", type=positive_float, help="tokens to train (gives time_to_train_s)")
    t.add_argument("--date", type=month, help="software release to assume, YYYY-MM (default: mature software)")
    _add_output_flags(t)
    t.set_defaults(func=_train)
    s = perf_sub.add_parser("serve", help="serving throughput and latency",
                            description="Search serving layouts, batch sizes and disaggregated prefill/decode "
                            "pools: the best output tokens/s per GPU that meets a latency target, with time to "
                            "first token, time per output token and the layout; or the whole throughput-versus-"
                            "interactivity frontier (--pareto, one JSON object per line).",
                            epilog="Examples:\n  airace perf serve --system gb200_nvl72 --gpus 72 --workload "
                            "deepseek-r1 --precision nvfp4 --input-tokens 1024 --output-tokens 1024\n"
                            "  airace perf serve --system gb300_nvl72 --gpus 72 --workload deepseek-r1 --precision "
                            "nvfp4 --input-tokens 8192 --output-tokens 1024 --min-user-tokens-per-s 50 --max-ttft-s 2\n"
                            "  airace perf serve --system vr_nvl72 --gpus 72 --workload deepseek-r1 --precision nvfp4 "
                            "--input-tokens 32768 --output-tokens 1024 --prefill-system rubin_cpx\n"
                            "  airace perf serve --system hgx_b200 --gpus 8 --workload llama3-70b --precision nvfp4 "
                            "--input-tokens 1024 --output-tokens 1024 --pareto",
                            formatter_class=RAW)
    s.add_argument("--system", help="catalog key, e.g. gb200_nvl72")
    s.add_argument("--gpus", type=positive_int, help="GPUs serving")
    s.add_argument("--workload", help="workload key, e.g. deepseek-r1")
    s.add_argument("--precision", choices=("fp8", "nvfp4"), help="weight precision")
    s.add_argument("--input-tokens", type=positive_int, help="input tokens per request")
    s.add_argument("--output-tokens", type=positive_int, help="output tokens per request")
    s.add_argument("--scenario", choices=("offline", "server", "interactive"), default="offline",
                   help="presets: offline = max throughput; server/interactive = MLPerf's p99 latency limits")
    s.add_argument("--min-user-tokens-per-s", type=positive_float, metavar="X",
                   help="slowest acceptable output rate one user sees (1 / TPOT); replaces the preset's limits")
    s.add_argument("--max-ttft-s", type=positive_float, metavar="Y", help="longest acceptable time to first token")
    s.add_argument("--prefill-system", metavar="KEY",
                   help="run prefill on another system's GPUs (disaggregated), e.g. rubin_cpx; --gpus counts both")
    s.add_argument("--pareto", action="store_true",
                   help="print the throughput-versus-interactivity frontier, one JSON object per line")
    s.add_argument("--date", type=month, help="software release to assume, YYYY-MM (default: mature software)")
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


def _with_vendor(result: dict, system: str | None) -> dict:
    """The result with `system` (the catalog key) and its `vendor` first, where the system is known."""
    from model.hardware import systems

    key = result.get("system") or system
    known = systems().get(key) if isinstance(key, str) else None
    if known is None:
        return result
    rest = {k: v for k, v in result.items() if k != "system"}
    return {"system": key, "vendor": known.vendor, **rest}


def _emit(result: dict) -> None:
    print(dumps_strict(result), flush=True)


def check_gpus(gpus: int, name: str = "--gpus") -> int:
    """The same bounds for training and serving jobs: a whole number from 1 to `MAX_JOB_GPUS`."""
    if isinstance(gpus, bool) or not isinstance(gpus, int) or not 1 <= gpus <= MAX_JOB_GPUS:
        raise InputError(f"{name}: expected a whole number between 1 and {MAX_JOB_GPUS:,} (one job), got {gpus!r}")
    return gpus


def serve_uses_every_gpu(result, gpus: int):
    """An aggregated serving answer counts only when its layout uses every GPU it is given (replicas x instance
    size), as a training layout must split every GPU evenly; otherwise it is infeasible, with the reason. A
    disaggregated answer may leave GPUs of a rack idle (an NVL72 rarely splits into two pools that fill it); it
    stays an answer, its per-GPU throughput counts every GPU given, and its `reason` says how many are idle."""
    from dataclasses import replace

    layout = getattr(result, "layout", None) or {}
    if not result.feasible or not layout.get("replicas"):
        return result
    if layout.get("disaggregated"):
        used = int(layout.get("prefill_gpus", 0)) + int(layout.get("decode_gpus", 0))
        if used >= gpus:
            return result
        return replace(result, reason=f"the best layout leaves {gpus - used} of {gpus} GPUs idle (prefill "
                       f"{layout.get('prefill_gpus')} + decode {layout.get('decode_gpus')}); throughput per GPU "
                       "counts them")
    size = layout.get("tp", 1) * layout.get("pp", 1)
    used = int(layout["replicas"]) * int(max(size, layout.get("ep", 1)))
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
    from model.hardware import get_system

    _print_result(_with_vendor(result.to_dict(), get_system(args.system).key), args.json)
    return EXIT_OK if result.feasible else EXIT_ERROR


TRAIN_COLUMNS = ("system", "gpus", "workload", "precision", "seq_len", "global_batch_seqs")
TRAIN_OPTIONAL = ("tokens", "date")
SERVE_COLUMNS = ("system", "gpus", "workload", "precision", "input_tokens", "output_tokens")
SERVE_OPTIONAL = ("scenario", "date", "min_user_tokens_per_s", "max_ttft_s", "prefill_system")


def _cell(cells: dict[str, str], name: str) -> str | None:
    return (cells.get(name) or "").strip() or None


def _row_month(cells: dict[str, str]) -> str | None:
    text = _cell(cells, "date")
    if text is not None and not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", text):
        raise InputError(f"date: expected a month YYYY-MM, got {text!r}")
    return text


def _train_row(cells: dict[str, str]) -> dict:
    from model.performance import training

    tokens = _cell(cells, "tokens")
    result = training.train_estimate(
        cells["system"].strip(), check_gpus(whole_number(cells["gpus"], "gpus"), "gpus"), cells["workload"].strip(),
        cells["precision"].strip(), whole_number(cells["seq_len"], "seq_len", high=1 << 24),
        whole_number(cells["global_batch_seqs"], "global_batch_seqs", high=1 << 30),
        positive_number(tokens, "tokens") if tokens else None, date=_row_month(cells))
    return _with_vendor(result.to_dict(), cells["system"].strip())


def _serve_row(cells: dict[str, str]) -> dict:
    from model.performance import serving

    gpus = check_gpus(whole_number(cells["gpus"], "gpus"), "gpus")
    rate, ttft = _cell(cells, "min_user_tokens_per_s"), _cell(cells, "max_ttft_s")
    result = serving.serve_estimate(
        cells["system"].strip(), gpus, cells["workload"].strip(), cells["precision"].strip(),
        whole_number(cells["input_tokens"], "input_tokens", high=1 << 24),
        whole_number(cells["output_tokens"], "output_tokens", high=1 << 24),
        scenario=_cell(cells, "scenario") or "offline", date=_row_month(cells),
        min_user_tokens_per_s=positive_number(rate, "min_user_tokens_per_s") if rate else None,
        max_ttft_s=positive_number(ttft, "max_ttft_s") if ttft else None,
        prefill_system=_cell(cells, "prefill_system"))
    return _with_vendor(serve_uses_every_gpu(result, gpus).to_dict(), cells["system"].strip())


def _train(args: argparse.Namespace) -> int:
    from model.performance import training  # lazy: numpy and the catalog load only for this command

    return _run_perf(args, "train", TRAIN_COLUMNS, TRAIN_OPTIONAL, _train_row,
                     ("system", "gpus", "workload", "precision", "seq_len", "global_batch"),
                     lambda: training.train_estimate(args.system, args.gpus, args.workload, args.precision,
                                                     args.seq_len, args.global_batch, args.tokens, date=args.date))


def _serve(args: argparse.Namespace) -> int:
    from model.performance import serving  # lazy: numpy and the catalog load only for this command

    required = ("system", "gpus", "workload", "precision", "input_tokens", "output_tokens")
    if args.pareto and not args.batch:
        missing = [n for n in required if getattr(args, n) is None]
        if missing:
            raise InputError("perf serve --pareto: missing " + ", ".join("--" + m.replace("_", "-") for m in missing))
        check_gpus(args.gpus)
        for point in serving.serve_pareto(args.system, args.gpus, args.workload, args.precision, args.input_tokens,
                                          args.output_tokens, date=args.date, max_ttft_s=args.max_ttft_s,
                                          prefill_system=args.prefill_system):
            _emit(point)
        return EXIT_OK
    return _run_perf(args, "serve", SERVE_COLUMNS, SERVE_OPTIONAL, _serve_row, required,
                     lambda: serve_uses_every_gpu(
                         serving.serve_estimate(args.system, args.gpus, args.workload, args.precision,
                                                args.input_tokens, args.output_tokens, scenario=args.scenario,
                                                date=args.date, min_user_tokens_per_s=args.min_user_tokens_per_s,
                                                max_ttft_s=args.max_ttft_s, prefill_system=args.prefill_system),
                         args.gpus))
