"""The `airace` command (also `python -m model`).

Each subcommand is a module of this package with `register(subparsers)`; other packages of the project add theirs
through the `airace.commands` entry point group (the analysis package adds `report` and `compare`), so that
nothing here imports them. Commands import their heavy dependencies when they run, which keeps `airace --help` fast.

Exit codes: 0 success, 2 bad input (one line naming file, field, value and expectation), 1 anything else: an
error of the environment (permissions, a full disk, a file where a folder is expected) is one line naming the file;
an error nobody foresaw is one line too, `airace: internal error: ...` (set AIRACE_DEBUG=1 for the traceback).
"""

from __future__ import annotations

import asyncio
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from model import __version__
from model.cli import catalog, perf, run, sweep, viz
from model.cli.args import EXIT_BAD_INPUT, EXIT_ERROR, EXIT_OK, RAW, Parser
from model.errors import InputError, environment_message

__all__ = ["EXIT_BAD_INPUT", "EXIT_ERROR", "EXIT_OK", "build_parser", "main"]


def _command_plugins() -> list:
    """`register` functions of the `airace.commands` entry point group, by name."""
    from importlib.metadata import entry_points

    return [ep.load() for ep in sorted(entry_points(group="airace.commands"), key=lambda ep: ep.name)]


def build_parser() -> Parser:
    parser = Parser(
        prog="airace",
        description="airace: an agent-based model of the AI infrastructure race (NVIDIA systems, hyperscalers, "
        "neoclouds, labs) with a built-in cluster performance model.",
        epilog="Examples:\n  airace catalog\n  airace perf train --system gb300_nvl72 --gpus 4608 --workload "
        "llama3.1-405b --precision fp8 --seq-len 8192 --global-batch 2048\n  airace run scenarios/baseline.toml "
        "--out results/baseline",
        formatter_class=RAW,
    )
    parser.add_argument("--version", action="version", version=f"airace {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for register in (catalog.register, perf.register, run.register, *_command_plugins(), viz.register,
                     sweep.register):
        register(sub)
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
    except OSError as exc:  # the environment: permissions, a full disk, a file where a folder is expected
        print(f"airace: error: {environment_message(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except (Exception, asyncio.CancelledError) as exc:  # noqa: BLE001 - one line, never a traceback
        if os.environ.get("AIRACE_DEBUG"):
            raise
        print(f"airace: internal error: {internal_error_line(exc)} (AIRACE_DEBUG=1 shows the traceback; please "
              "report it)", file=sys.stderr)
        return EXIT_ERROR


def internal_error_line(exc: BaseException) -> str:
    """`Type: message (file:line)` of the innermost frame, on one line."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}{where}" if text else f"{type(exc).__name__}{where}"
