"""Start the browser app: `solara run model/viz/app.py` with the scenario and seed passed in the environment.

The app runs in its own process (Solara's server), so the scenario is handed over as $AIRACE_VIZ_SCENARIO (an
absolute path) and the seed as $AIRACE_VIZ_SEED. The server runs in production mode (no file watching, minified
front-end files) and never calls out: the front-end comes from the `solara-assets` package, and the version check
and telemetry are switched off. Bad input (missing scenario, port in use) is found here, before the server starts.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
from pathlib import Path

from model.errors import InputError
from model.scenario import load_scenario

ENV_SCENARIO = "AIRACE_VIZ_SCENARIO"  # read by model.viz.controls in the server process
ENV_SEED = "AIRACE_VIZ_SEED"
APP_PATH = Path(__file__).with_name("app.py")
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
VIZ_PACKAGES = ("solara", "solara_assets", "ipyvuetify", "altair", "plotly")


def missing_packages() -> list[str]:
    """The app's packages that are not installed (the `viz` extra)."""
    return [name for name in VIZ_PACKAGES if importlib.util.find_spec(name) is None]


def check_port(host: str, port: int) -> None:
    """Raise InputError when the port cannot be bound (in use, or a bad host)."""
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
    except OSError as exc:
        raise InputError(f"--host/--port: cannot listen on {host}:{port} ({exc.strerror or exc}); "
                         "expected a free port, e.g. --port 8766") from None


def free_port(host: str = DEFAULT_HOST) -> int:
    """A port that is free right now (for tests and screenshots)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def command(host: str, port: int) -> list[str]:
    """The `solara run` command line for the app."""
    return [sys.executable, "-m", "solara", "run", str(APP_PATH), "--host", host, "--port", str(port),
            "--production", "--no-open", "--no-check-version", "--log-level", "warning"]


def environment(scenario: str | Path, seed: int) -> dict[str, str]:
    """The server's environment: ours plus the scenario, the seed, and no telemetry."""
    env = dict(os.environ)
    env[ENV_SCENARIO] = str(Path(scenario).resolve())
    env[ENV_SEED] = str(int(seed))
    env["SOLARA_TELEMETRY_MIXPANEL_ENABLE"] = "False"
    # Solara warns once that plain http on 127.0.0.1 gets samesite=lax cookies: expected for a local app.
    quiet = "ignore:Cookies with samesite=none require https:UserWarning"
    env["PYTHONWARNINGS"] = ",".join(w for w in (env.get("PYTHONWARNINGS"), quiet) if w)
    return env


def validate(scenario: str | Path, host: str, port: int) -> None:
    """Fail early, with one line, on a scenario that does not load or a port that is taken."""
    load_scenario(scenario)
    if not 0 < port < 65536:
        raise InputError(f"--port: {port} is not a port number; expected 1-65535")
    check_port(host, port)


def start(scenario: str | Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, seed: int = 0,
          **popen_kwargs) -> subprocess.Popen:
    """Start the server in the background (the caller stops it)."""
    return subprocess.Popen(command(host, port), env=environment(scenario, seed), **popen_kwargs)


def serve(scenario: str | Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, seed: int = 0) -> int:
    """Run the server in the foreground until Ctrl-C; returns its exit code."""
    validate(scenario, host, port)
    print(f"airace viz: {scenario} (seed {seed}) at http://{host}:{port}/  (Ctrl-C stops)", flush=True)
    proc = start(scenario, host, port, seed)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        return 0
