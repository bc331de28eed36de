"""`airace viz`: the browser app (Mesa SolaraViz) on localhost."""

from __future__ import annotations

import argparse
import sys

from model.cli.args import EXIT_ERROR, RAW, positive_int, seed


def register(sub) -> None:
    v = sub.add_parser("viz", help="explore a scenario live in the browser (Mesa SolaraViz)",
                       description="Start the browser app on localhost: step, play and reset the race month by "
                       "month, choose a scenario and move its knobs (Vera Rubin delay, supply growth, capex per "
                       "kind, power lead time, seed), and watch the scoreboard of firsts, compute and shares, "
                       "clusters, NVIDIA revenue and backlog, rental prices and events. Works offline. Apply runs "
                       "the settings shown; Reset replays the current run. Ctrl-C stops the server.",
                       epilog="Examples:\n  airace viz\n  airace viz scenarios/baseline.toml --port 8766\n  "
                       "airace viz scenarios/baseline.toml --host 0.0.0.0 --seed 3",
                       formatter_class=RAW)
    v.add_argument("scenario", nargs="?", help="scenario file (default: the repository's scenarios/baseline.toml)")
    v.add_argument("--port", type=positive_int, default=8765, help="port to listen on (default 8765)")
    v.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine only)")
    v.add_argument("--seed", type=seed, default=0, help="initial random seed (default 0; the app has a slider too)")
    v.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    # The viz package imports solara and Mesa's visualisation stack: only when this command runs.
    from model.viz import launch

    missing = launch.missing_packages()
    if missing:
        print("airace: error: the browser app needs " + ", ".join(missing)
              + "; install the viz extra: pip install -e '.[viz]'", file=sys.stderr)
        return EXIT_ERROR
    from model.scenario.mesa_scenario import DEFAULT_SCENARIO_FILE

    return launch.serve(args.scenario or DEFAULT_SCENARIO_FILE, host=args.host, port=args.port, seed=args.seed)
